//! WriteBatch: LevelDB's encoding, round trips, append, and malformed bytes -> Corruption.

use lsm::batch::{BatchHandler, BatchOp, WriteBatch, HEADER_SIZE};
use lsm::key::ValueKind;
use lsm::memtable::{LookupResult, MemTable};
use lsm::Error;
use proptest::prelude::*;

#[derive(Default)]
struct Recorder(Vec<String>);

impl BatchHandler for Recorder {
    fn put(&mut self, key: &[u8], value: &[u8]) {
        self.0.push(format!("Put({}, {})", String::from_utf8_lossy(key), String::from_utf8_lossy(value)));
    }
    fn delete(&mut self, key: &[u8]) {
        self.0.push(format!("Delete({})", String::from_utf8_lossy(key)));
    }
}

#[test]
fn encoding_is_leveldbs() {
    let mut b = WriteBatch::new();
    assert_eq!(b.data(), &[0u8; HEADER_SIZE]);
    assert!(b.is_empty());
    b.put(b"foo", b"bar");
    b.delete(b"box");
    b.put(b"baz", b"boo");
    b.set_sequence(100);
    assert_eq!(b.count(), 3);
    assert_eq!(b.sequence(), 100);
    let mut expected = 100u64.to_le_bytes().to_vec();
    expected.extend_from_slice(&3u32.to_le_bytes());
    expected.extend_from_slice(b"\x01\x03foo\x03bar");
    expected.extend_from_slice(b"\x00\x03box");
    expected.extend_from_slice(b"\x01\x03baz\x03boo");
    assert_eq!(b.data(), &expected[..]);
    assert_eq!(b.approximate_size(), expected.len());

    let mut rec = Recorder::default();
    b.iterate(&mut rec).unwrap();
    assert_eq!(rec.0, ["Put(foo, bar)", "Delete(box)", "Put(baz, boo)"]);

    b.clear();
    assert_eq!((b.count(), b.sequence(), b.approximate_size()), (0, 0, HEADER_SIZE));
}

#[test]
fn append_and_insert_into_a_memtable() {
    let mut a = WriteBatch::new();
    a.set_sequence(200);
    a.put(b"a", b"va");
    let mut b = WriteBatch::new();
    b.set_sequence(999);
    b.delete(b"a");
    b.put(b"b", b"vb");
    a.append(&b);
    assert_eq!((a.count(), a.sequence()), (3, 200));
    let ops: Vec<BatchOp<'_>> = a.iter().map(|op| op.unwrap()).collect();
    assert_eq!(ops[1], BatchOp { kind: ValueKind::Deletion, key: b"a", value: b"" });

    let mem = MemTable::new();
    a.insert_into(&mem).unwrap();
    assert_eq!(mem.get(b"a", 200), LookupResult::Found(b"va".to_vec()));
    assert_eq!(mem.get(b"a", 201), LookupResult::Deleted);
    assert_eq!(mem.get(b"b", 201), LookupResult::NotFound);
    assert_eq!(mem.get(b"b", 202), LookupResult::Found(b"vb".to_vec()));
    // Appending an empty batch changes nothing.
    let before = a.clone();
    a.append(&WriteBatch::new());
    assert_eq!(a, before);
}

#[test]
fn malformed_data_is_corruption_naming_the_source() {
    let mut b = WriteBatch::new();
    b.put(b"key", b"value");
    b.delete(b"gone");
    let good = b.data().to_vec();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..5].to_vec(), "header"),
        (good[..good.len() - 1].to_vec(), "key"),
        (good[..HEADER_SIZE + 8].to_vec(), "value"),
        (
            {
                let mut d = good.clone();
                d[8] = 3;
                d
            },
            "counts 3",
        ),
        (
            {
                let mut d = good.clone();
                d[8] = 1;
                d
            },
            "more records",
        ),
        (
            {
                let mut d = good.clone();
                d[HEADER_SIZE] = 7;
                d
            },
            "kind 7",
        ),
    ];
    for (data, needle) in cases {
        match WriteBatch::from_data(data, "000009.log", 4242) {
            Err(Error::Corruption { file, offset, what }) => {
                assert_eq!((file.as_str(), offset), ("000009.log", 4242));
                assert!(what.contains(needle), "{what:?} should mention {needle:?}");
            }
            other => panic!("expected corruption mentioning {needle}, got {other:?}"),
        }
    }
    let back = WriteBatch::from_data(good.clone(), "x", 0).unwrap();
    assert_eq!(back, b);
}

fn op_strategy() -> impl Strategy<Value = (bool, Vec<u8>, Vec<u8>)> {
    (any::<bool>(), prop::collection::vec(any::<u8>(), 0..40), prop::collection::vec(any::<u8>(), 0..300))
}

proptest! {
    #[test]
    fn batches_round_trip(ops in prop::collection::vec(op_strategy(), 0..30), seq in any::<u64>()) {
        let mut b = WriteBatch::new();
        for (is_put, k, v) in &ops {
            if *is_put { b.put(k, v) } else { b.delete(k) }
        }
        b.set_sequence(seq);
        prop_assert_eq!(b.count() as usize, ops.len());
        let back = WriteBatch::from_data(b.data().to_vec(), "wal", 7).unwrap();
        prop_assert_eq!(back.sequence(), seq);
        let got: Vec<BatchOp<'_>> = back.iter().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(got.len(), ops.len());
        for (op, (is_put, k, v)) in got.iter().zip(&ops) {
            prop_assert_eq!(op.kind, if *is_put { ValueKind::Value } else { ValueKind::Deletion });
            prop_assert_eq!(op.key, &k[..]);
            prop_assert_eq!(op.value, if *is_put { &v[..] } else { &[][..] });
        }
    }

    #[test]
    fn random_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..200)) {
        match WriteBatch::from_data(data.clone(), "wal", 1) {
            Ok(b) => {
                // Whatever parses re-encodes to the same bytes.
                let mut again = WriteBatch::new();
                again.set_sequence(b.sequence());
                for op in b.iter() {
                    let op = op.unwrap();
                    match op.kind {
                        ValueKind::Value => again.put(op.key, op.value),
                        ValueKind::Deletion => again.delete(op.key),
                    }
                }
                prop_assert_eq!(again.data(), &data[..]);
            }
            Err(e) => prop_assert!(e.is_corruption()),
        }
        // The lazy iterator reports the same verdict.
        let lazy: Result<Vec<_>, _> = WriteBatch::iter_data(&data, "wal", 1).collect();
        prop_assert_eq!(lazy.is_ok(), WriteBatch::from_data(data.clone(), "wal", 1).is_ok());
    }

    #[test]
    fn mutated_batches_never_panic(
        ops in prop::collection::vec(op_strategy(), 1..10),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = WriteBatch::new();
        for (is_put, k, v) in &ops {
            if *is_put { b.put(k, v) } else { b.delete(k) }
        }
        let mut data = b.data().to_vec();
        for (i, x) in flips {
            let i = i.index(data.len());
            data[i] ^= x;
        }
        data.truncate(cut.index(data.len() + 1));
        if let Err(e) = WriteBatch::from_data(data, "wal", 3) {
            prop_assert!(e.is_corruption());
        }
    }
}

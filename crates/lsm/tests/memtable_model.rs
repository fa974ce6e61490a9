//! MemTable against a BTreeMap model: random puts and deletes at increasing sequences, reads at
//! random snapshots, iterator seeks and walks in both directions, and concurrent readers.

use std::collections::BTreeMap;
use std::sync::Arc;

use lsm::iter::InternalIterator;
use lsm::key::{compare_internal, internal_key, parse_internal_key, ValueKind, MAX_SEQUENCE};
use lsm::memtable::{LookupResult, MemTable};
use proptest::prelude::*;

/// Model: (user key, sequence) -> (kind, value). Iteration order of the memtable is user key
/// ascending then sequence descending; the model sorts its entries that way.
type Model = BTreeMap<(Vec<u8>, std::cmp::Reverse<u64>), (ValueKind, Vec<u8>)>;

fn model_get(m: &Model, key: &[u8], snap: u64) -> LookupResult {
    let from = (key.to_vec(), std::cmp::Reverse(snap));
    match m.range(from..).next() {
        Some(((k, _), (kind, v))) if k == key => match kind {
            ValueKind::Value => LookupResult::Found(v.clone()),
            ValueKind::Deletion => LookupResult::Deleted,
        },
        _ => LookupResult::NotFound,
    }
}

fn model_entries(m: &Model) -> Vec<(Vec<u8>, Vec<u8>)> {
    m.iter().map(|((k, s), (kind, v))| (internal_key(k, s.0, *kind), v.clone())).collect()
}

#[derive(Debug, Clone)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Get(Vec<u8>, u64),
    Seek(Vec<u8>, u64, usize, usize),
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    // A small alphabet so that keys repeat and share prefixes.
    prop::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(b'b'), Just(0xff)], 0..4)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (key(), prop::collection::vec(any::<u8>(), 0..20)).prop_map(|(k, v)| Op::Put(k, v)),
        2 => key().prop_map(Op::Delete),
        3 => (key(), 0u64..80).prop_map(|(k, s)| Op::Get(k, s)),
        2 => (key(), 0u64..80, 0usize..6, 0usize..6).prop_map(|(k, s, f, b)| Op::Seek(k, s, f, b)),
    ]
}

fn check_walk(mem: &MemTable, model: &Model, target: &[u8], fwd: usize, back: usize) {
    let entries = model_entries(model);
    let start = entries.partition_point(|(k, _)| compare_internal(k, target).is_lt());
    let mut it = mem.iter();
    it.seek(target);
    let mut i = start;
    for _ in 0..fwd {
        if i >= entries.len() {
            assert!(!it.valid());
            break;
        }
        assert!(it.valid());
        assert_eq!((it.key(), it.value()), (&entries[i].0[..], &entries[i].1[..]));
        it.next();
        i += 1;
    }
    if i >= entries.len() {
        assert!(!it.valid());
        // Re-enter from the end.
        it.seek_to_last();
        if entries.is_empty() {
            assert!(!it.valid());
            return;
        }
        i = entries.len() - 1;
    }
    for _ in 0..back {
        assert!(it.valid());
        assert_eq!(it.key(), &entries[i].0[..]);
        it.prev();
        if i == 0 {
            assert!(!it.valid());
            return;
        }
        i -= 1;
    }
    assert!(it.status().is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn memtable_matches_model(ops in prop::collection::vec(op(), 1..120)) {
        let mem = MemTable::new();
        let mut model = Model::new();
        let mut seq = 0u64;
        let mut usage = mem.approximate_memory_usage();
        for op in ops {
            match op {
                Op::Put(k, v) => {
                    seq += 1;
                    mem.add(seq, ValueKind::Value, &k, &v);
                    model.insert((k, std::cmp::Reverse(seq)), (ValueKind::Value, v));
                }
                Op::Delete(k) => {
                    seq += 1;
                    mem.add(seq, ValueKind::Deletion, &k, b"");
                    model.insert((k, std::cmp::Reverse(seq)), (ValueKind::Deletion, Vec::new()));
                }
                Op::Get(k, s) => {
                    prop_assert_eq!(mem.get(&k, s), model_get(&model, &k, s));
                    prop_assert_eq!(mem.get(&k, MAX_SEQUENCE), model_get(&model, &k, MAX_SEQUENCE));
                }
                Op::Seek(k, s, f, b) => {
                    check_walk(&mem, &model, &internal_key(&k, s, ValueKind::Value), f, b);
                }
            }
            let now = mem.approximate_memory_usage();
            prop_assert!(now >= usage);
            usage = now;
        }
        prop_assert_eq!(mem.len(), model.len());
        // A full walk both ways.
        let entries = model_entries(&model);
        let mut it = mem.iter();
        prop_assert!(!it.valid());
        it.seek_to_first();
        for (k, v) in &entries {
            prop_assert!(it.valid());
            prop_assert_eq!((it.key(), it.value()), (&k[..], &v[..]));
            it.next();
        }
        prop_assert!(!it.valid());
        it.seek_to_last();
        for (k, _) in entries.iter().rev() {
            prop_assert!(it.valid());
            prop_assert_eq!(it.key(), &k[..]);
            it.prev();
        }
        prop_assert!(!it.valid());
    }
}

#[test]
fn empty_table() {
    let mem = MemTable::new();
    assert_eq!(mem.get(b"k", MAX_SEQUENCE), LookupResult::NotFound);
    let mut it = mem.iter();
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"anything");
    assert!(!it.valid());
    assert!(mem.is_empty());
}

#[test]
fn readers_see_a_sorted_list_while_a_writer_adds() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<MemTable>();

    let mem = Arc::new(MemTable::new());
    const N: u64 = 20_000;
    let writer = {
        let mem = Arc::clone(&mem);
        std::thread::spawn(move || {
            for i in 0..N {
                let k = (i.wrapping_mul(0x9e37_79b9) % 5000).to_be_bytes();
                mem.add(i + 1, ValueKind::Value, &k, &i.to_le_bytes());
            }
        })
    };
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let mem = Arc::clone(&mem);
            std::thread::spawn(move || {
                let mut walks = 0;
                loop {
                    let done = mem.len() as u64 == N;
                    let mut it = mem.iter();
                    it.seek_to_first();
                    let mut prev: Option<Vec<u8>> = None;
                    let mut n = 0;
                    while it.valid() {
                        let k = it.key().to_vec();
                        let p = parse_internal_key(&k).unwrap();
                        // Every value matches its key's sequence number.
                        assert_eq!(it.value(), &(p.seq - 1).to_le_bytes());
                        if let Some(prev) = &prev {
                            assert!(compare_internal(prev, &k).is_lt());
                        }
                        prev = Some(k);
                        n += 1;
                        it.next();
                    }
                    walks += 1;
                    if done {
                        assert_eq!(n, N);
                        return walks;
                    }
                }
            })
        })
        .collect();
    writer.join().unwrap();
    for r in readers {
        assert!(r.join().unwrap() >= 1);
    }
    // An iterator outlives the table handle.
    let mut it = mem.iter();
    drop(mem);
    it.seek_to_last();
    assert!(it.valid());
}

//! Fuzzing every decoder of the engine's on-disk formats: the WAL reader, SST blocks (data and
//! index), the footer, the filter block, a whole table (footer, index, filter and data blocks
//! together), version edits (the MANIFEST's records) and write batches (the WAL's records).
//!
//! Each target gets random bytes and, more usefully, valid encodings damaged by byte flips,
//! insertions, deletions and truncations. A decoder must return data or an error, never panic,
//! hang or allocate without bound. CI runs a few hundred cases per target; a long run sets
//! `FLASHKV_FUZZ_CASES` (e.g. `FLASHKV_FUZZ_CASES=2000000 cargo test --release -p lsm --test
//! fuzz_decoders`).

mod sst_common;

use std::sync::Arc;

use lsm::iter::InternalIterator;
use lsm::sst::block::Block;
use lsm::sst::filter::{BloomPolicy, FilterBlockBuilder, FilterBlockReader, FilterLayout, TableFilter};
use lsm::sst::format::{Footer, FOOTER_SIZE};
use lsm::version::VersionEdit;
use lsm::wal::{LogReader, LogWriter, ReadMode};
use lsm::{Options, ReadOptions, WriteBatch};
use proptest::prelude::*;
use proptest::test_runner::Config;
use sst_common::{build, ikey, open};
use storage::{Fs, MemFs};

fn config() -> Config {
    let cases = std::env::var("FLASHKV_FUZZ_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(256);
    Config { cases, failure_persistence: None, ..Config::default() }
}

/// One damage to a valid encoding.
#[derive(Clone, Debug)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, u8),
    Remove(usize),
    Truncate(usize),
    /// A 4-byte little-endian field overwritten (lengths, offsets, counts).
    Word(usize, u32),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let e = prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(p, x)| Edit::Flip(p, x)),
        (any::<usize>(), any::<u8>()).prop_map(|(p, x)| Edit::Insert(p, x)),
        any::<usize>().prop_map(Edit::Remove),
        any::<usize>().prop_map(Edit::Truncate),
        (any::<usize>(), prop_oneof![Just(0u32), Just(u32::MAX), Just(1 << 31), any::<u32>()])
            .prop_map(|(p, w)| Edit::Word(p, w)),
    ];
    proptest::collection::vec(e, 1..6)
}

fn damage(mut bytes: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = bytes.len().max(1);
        match *e {
            Edit::Flip(p, x) if !bytes.is_empty() => bytes[p % n] ^= x,
            Edit::Insert(p, x) => bytes.insert(p % (bytes.len() + 1), x),
            Edit::Remove(p) if !bytes.is_empty() => {
                bytes.remove(p % n);
            }
            Edit::Truncate(p) => bytes.truncate(p % n),
            Edit::Word(p, w) if bytes.len() >= 4 => {
                let at = p % (bytes.len() - 3);
                bytes[at..at + 4].copy_from_slice(&w.to_le_bytes());
            }
            _ => {}
        }
    }
    bytes
}

/// Valid bytes damaged, or random bytes.
fn input(valid: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => edits().prop_map(move |e| damage(valid.clone(), &e)),
        1 => proptest::collection::vec(any::<u8>(), 0..2048),
    ]
}

/// Walks an iterator forwards and backwards and seeks, bounded, then asks its status.
fn exercise(it: &mut dyn InternalIterator, probes: &[Vec<u8>]) {
    it.seek_to_first();
    let mut n = 0;
    while it.valid() && n < 100_000 {
        let _ = (it.key().len(), it.value().len());
        it.next();
        n += 1;
    }
    it.seek_to_last();
    for _ in 0..64 {
        if !it.valid() {
            break;
        }
        it.prev();
    }
    for p in probes {
        it.seek(p);
        if it.valid() {
            let _ = it.key();
        }
    }
    let _ = it.status();
}

fn entries(n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n).map(|i| (ikey(&format!("key{i:05}"), 7), format!("value-{i}-{}", "v".repeat(i % 30)).into_bytes())).collect()
}

fn valid_table(opts: &Options) -> Vec<u8> {
    let fs = MemFs::new();
    build(&fs, "t.sst", opts, &entries(300));
    storage::read_all(&fs, "t.sst").unwrap()
}

fn valid_log() -> Vec<u8> {
    let fs = MemFs::new();
    let mut w = LogWriter::new(fs.create("l.log").unwrap());
    for i in 0..40usize {
        // Some records span blocks (32 KiB): fragments FIRST / MIDDLE / LAST.
        let len = if i % 13 == 5 { 40_000 } else { 10 + i * 17 };
        w.add_record(&vec![i as u8; len]).unwrap();
    }
    drop(w);
    storage::read_all(&fs, "l.log").unwrap()
}

fn valid_edit() -> Vec<u8> {
    let mut e = VersionEdit {
        log_number: Some(12),
        next_file_number: Some(40),
        last_sequence: Some(9_999),
        comparator: Some("leveldb.BytewiseComparator".into()),
        ..VersionEdit::default()
    };
    e.add_file(1, 20, 4096, ikey("a", 1), ikey("m", 2));
    e.add_file(3, 21, 8192, ikey("n", 3), ikey("z", 4));
    e.delete_file(0, 7);
    e.encode()
}

fn valid_batch() -> Vec<u8> {
    let mut b = WriteBatch::new();
    for i in 0..20 {
        b.put(format!("k{i}").as_bytes(), &vec![b'x'; i * 3]);
        if i % 4 == 0 {
            b.delete(format!("k{}", i / 2).as_bytes());
        }
    }
    b.set_sequence(77);
    b.data().to_vec()
}

fn valid_filter() -> Vec<u8> {
    let mut b = FilterBlockBuilder::new(BloomPolicy::new(10));
    for block in 0..4u64 {
        b.start_block(block * 4096);
        for i in 0..50 {
            b.add_key(format!("key{block}-{i}").as_bytes());
        }
    }
    b.finish()
}

fn valid_table_filter() -> Vec<u8> {
    let mut b = FilterBlockBuilder::with_layout(BloomPolicy::new(10), FilterLayout::PerTable);
    for i in 0..200 {
        b.add_key(format!("key{i}").as_bytes());
    }
    b.finish()
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn wal_reader(bytes in input(valid_log())) {
        for mode in [ReadMode::Paranoid, ReadMode::Lenient, ReadMode::PointInTime] {
            let fs = MemFs::new();
            storage::write_all(&fs, "l.log", &bytes, true).unwrap();
            let mut r = LogReader::new(fs.open("l.log").unwrap(), mode);
            let mut total = 0u64;
            while let Ok(Some(rec)) = r.next_record() {
                total += rec.len() as u64;
                prop_assert!(total <= bytes.len() as u64, "records hold more bytes than the file");
            }
            let _ = (r.problems().len(), r.tail(), r.dropped());
        }
    }

    #[test]
    fn sst_block(bytes in input({
        let t = valid_table(&Options::default());
        let f = Footer::decode(&t[t.len() - FOOTER_SIZE..], "t", 0).unwrap();
        t[f.index.offset as usize..(f.index.offset + f.index.size) as usize].to_vec()
    }), probe in proptest::collection::vec(any::<u8>(), 0..24)) {
        if let Ok(block) = Block::new(bytes, "t.sst", 0) {
            exercise(&mut block.iter(), &[probe, ikey("key00150", 7)]);
        }
    }

    #[test]
    fn footer(bytes in input({
        let t = valid_table(&Options::default());
        t[t.len() - FOOTER_SIZE..].to_vec()
    })) {
        let _ = Footer::decode(&bytes, "t.sst", 0);
    }

    #[test]
    fn filter_block(bytes in input(valid_filter()), offset in 0u64..1 << 20, key in proptest::collection::vec(any::<u8>(), 0..16)) {
        if let Some(r) = FilterBlockReader::new(bytes) {
            let _ = r.num_filters();
            let _ = r.key_may_match(offset, &key);
            let _ = r.key_may_match(4096, b"key1-3");
        }
    }

    #[test]
    fn per_table_filter(bytes in input(valid_table_filter()), key in proptest::collection::vec(any::<u8>(), 0..16)) {
        let f = TableFilter::read(FilterLayout::PerTable, bytes).expect("a per-table filter is never refused");
        let _ = f.table_may_match(&key);
        let _ = f.table_may_match(b"key1-3");
        assert!(f.block_may_match(0, &key));
    }

    #[test]
    fn whole_table(bytes in input(valid_table(&Options { block_size: 512, ..Options::default() })),
                   verify in any::<bool>()) {
        let fs = MemFs::new();
        storage::write_all(&fs, "t.sst", &bytes, true).unwrap();
        let opts = Options { block_size: 512, paranoid_checks: verify, ..Options::default() };
        if let Ok(t) = open(&fs, "t.sst", 1, &opts, None) {
            let ro = ReadOptions { verify_checksums: verify, ..ReadOptions::default() };
            exercise(&mut t.iter(&ro), &[ikey("key00100", 9), ikey("zzz", 1)]);
            let _ = t.get(&ikey("key00042", 9), &ro);
            let _ = Arc::clone(&t).approximate_offset_of(&ikey("key00200", 9));
        }
    }

    #[test]
    fn version_edit(bytes in input(valid_edit())) {
        let _ = VersionEdit::decode(&bytes, "MANIFEST-000001", 0, 7);
    }

    #[test]
    fn write_batch(bytes in input(valid_batch())) {
        if let Ok(b) = WriteBatch::from_data(bytes.clone(), "000003.log", 0) {
            let mut n = 0u64;
            for op in b.iter() {
                if op.is_err() {
                    break;
                }
                n += 1;
                prop_assert!(n <= bytes.len() as u64, "more operations than bytes");
            }
        }
    }
}

//! Scans over a damaged SST stop at the damage: nothing past a block that failed to read or verify
//! is yielded, the error names the file (and the block's offset), and every entry yielded before it
//! is one the database holds.
//!
//! The database: 20,000 keys compacted into the deepest level, then a newer SST above it that
//! overwrites 1,000 of them, deletes 500 and adds 6,000. Skipping the newer SST where it is
//! damaged would surface the older versions below it and the keys it deleted, so a scan that goes
//! on past the damage returns wrong data before its error. Damaged here: the newer SST's first
//! data block, a block in its middle, its index block, its filter block, and the whole file
//! replaced by an older copy of itself (a file of the same name and number from an earlier state).
//!
//! A damaged filter block is the one case that is not an error: the filter is a hint that neither
//! a scan nor a correct get needs, so the table is read without it (as RocksDB and LevelDB do) and
//! the database's statistics name it.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use lsm::sst::format::{Footer, FOOTER_SIZE};
use lsm::sst::BlockHandle;
use lsm::{Db, Error, Options, ReadOptions, WriteOptions};
use storage::{Env, Fs, MemFs};

mod sst_common;
use sst_common::handles;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn options() -> Options {
    Options { create_if_missing: true, write_buffer_size: 4 << 20, ..Options::default() }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("value{i:06}-{round}-{}", "v".repeat(80)).into_bytes()
}

/// Builds the database (closed) and its contents. The newer round adds `adds` keys; the 1,000
/// overwrites and 500 deletes are always there. Returns the newer SST's path.
fn build(adds: u32) -> (MemFs, Model, String) {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options()).unwrap();
    let w = WriteOptions::default();
    let mut model = Model::new();
    for i in 0..20_000 {
        db.put(&w, &key(i), &value(i, 0)).unwrap();
        model.insert(key(i), value(i, 0));
    }
    db.compact_range(None, None).unwrap();
    let deep = db.files_per_level().iter().rposition(|&n| n > 0).unwrap();
    for i in 0..1_000 {
        // Overwrites and deletes spread over the whole key range, adds after it and between.
        db.put(&w, &key(i * 20), &value(i * 20, 1)).unwrap();
        model.insert(key(i * 20), value(i * 20, 1));
        if i < 500 {
            db.delete(&w, &key(i * 40 + 7)).unwrap();
            model.remove(&key(i * 40 + 7));
        }
    }
    for i in 0..adds {
        let k = 20_000 + i;
        db.put(&w, &key(k), &value(k, 1)).unwrap();
        model.insert(key(k), value(k, 1));
    }
    db.flush().unwrap();
    db.wait_for_background().unwrap();
    let levels = db.files_per_level();
    assert_eq!(levels.iter().rposition(|&n| n > 0), Some(deep), "{levels:?}");
    assert_eq!(levels.iter().sum::<usize>(), levels[deep] + 1, "one newer SST above the deep level: {levels:?}");
    db.close().unwrap();
    let newest = ssts(&mem).pop().unwrap();
    (mem, model, newest)
}

fn ssts(fs: &dyn Fs) -> Vec<String> {
    let mut v: Vec<String> =
        fs.list("db").unwrap().into_iter().filter(|n| n.ends_with(".ldb")).map(|n| format!("db/{n}")).collect();
    v.sort();
    v
}

/// A copy of the database's files, to damage.
fn copy(mem: &MemFs) -> MemFs {
    let to = MemFs::new();
    to.create_dir_all("db").unwrap();
    for name in mem.list("db").unwrap() {
        let path = format!("db/{name}");
        storage::write_all(&to, &path, &storage::read_all(mem, &path).unwrap(), true).unwrap();
    }
    to
}

fn open(fs: &MemFs) -> Db {
    Db::open(Env::new(Arc::new(fs.clone())), "db", options()).unwrap()
}

/// The table's blocks: (first data block, a middle data block, index, filter).
fn blocks(bytes: &[u8], path: &str) -> (BlockHandle, BlockHandle, BlockHandle, BlockHandle) {
    let footer = Footer::decode(&bytes[bytes.len() - FOOTER_SIZE..], path, 0).unwrap();
    let data = handles(bytes, path, &footer.index);
    let filter = handles(bytes, path, &footer.metaindex)
        .into_iter()
        .find(|(k, _)| k.starts_with(b"filter."))
        .expect("the newer SST has a filter")
        .1;
    (data[0].1, data[data.len() / 2].1, footer.index, filter)
}

fn flip(fs: &MemFs, path: &str, offset: u64) {
    let mut bytes = storage::read_all(fs, path).unwrap();
    bytes[offset as usize] ^= 0x40;
    storage::write_all(fs, path, &bytes, true).unwrap();
}

/// Asserts `e` is corruption in `file` (at `offset`, when given).
fn assert_names(e: &Error, file: &str, offset: Option<u64>) {
    match e {
        Error::Corruption { file: f, offset: o, .. } => {
            assert_eq!(f, file, "{e}");
            if let Some(want) = offset {
                assert_eq!(*o, want, "{e}");
            }
        }
        other => panic!("expected corruption in {file}, got {other}"),
    }
}

/// Scans forward from `start`: what it yielded before its error (or all of it) and the error.
fn scan_from(db: &Db, start: Bound<&[u8]>) -> (Entries, Option<Error>) {
    let mut got = Vec::new();
    for r in db.scan(&ReadOptions::default(), start, Bound::Unbounded).unwrap() {
        match r {
            Ok(kv) => got.push(kv),
            Err(e) => return (got, Some(e)),
        }
    }
    (got, None)
}

/// How many of `got` differ from the model's entries at the same places (from `model`'s start).
fn differing<'a>(got: &[(Vec<u8>, Vec<u8>)], model: impl Iterator<Item = (&'a Vec<u8>, &'a Vec<u8>)>) -> usize {
    let mut model = model;
    got.iter().filter(|(k, v)| model.next() != Some((k, v))).count()
}

/// Walks backward from the last key: what it yielded (in key order) and the error.
fn scan_back(db: &Db) -> (Entries, Option<Error>) {
    let mut it = db.iter(&ReadOptions::default()).unwrap();
    it.seek_to_last();
    let mut got = Vec::new();
    while it.valid() {
        got.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    got.reverse();
    (got, it.status().err())
}

/// Every get answers as the model does or fails naming `file`; returns how many failed.
fn check_gets(db: &Db, model: &Model, file: &str) -> usize {
    let mut failed = 0;
    for i in 0..26_000 {
        match db.get(&ReadOptions::default(), &key(i)) {
            Ok(v) => assert_eq!(v.as_ref(), model.get(&key(i)), "key {i}"),
            Err(e) => {
                assert_names(&e, file, None);
                failed += 1;
            }
        }
    }
    failed
}

/// The scan of a damaged block stops at it: forward, nothing at or past it is yielded and what
/// came before is the model's start; backward, the model's end down to it; a scan that starts
/// past the damaged range reads on to the end.
fn check_stops_at_block(fs: &MemFs, model: &Model, sst: &str, damaged: BlockHandle, what: &str) {
    let db = open(fs);
    let (got, err) = scan_from(&db, Bound::Unbounded);
    let err = err.unwrap_or_else(|| panic!("{what}: the scan read {} entries and no error", got.len()));
    assert_names(&err, sst, Some(damaged.offset));
    // The first data block holds the first keys: nothing comes before it.
    assert_eq!(got.is_empty(), what == "first data block", "{what}: {} entries before the error", got.len());
    let d = differing(&got, model.iter());
    assert_eq!(d, 0, "{what}: {d} of the {} entries yielded before the error differ from the model", got.len());
    let (back, err) = scan_back(&db);
    assert_names(&err.expect("the backward walk meets the damage"), sst, Some(damaged.offset));
    let skipped = model.len() - back.len();
    assert_eq!(differing(&back, model.iter().skip(skipped)), 0, "{what}: backward");
    assert!(got.len() + back.len() < model.len(), "{what}: the damaged block's keys were yielded");
    assert!(check_gets(&db, model, sst) > 0, "{what}: no get met the damage");
    // The keys after the newer SST's damaged block and after its last key: a scan from there
    // never reads the damaged block.
    let from = key(25_000);
    let (tail, err) = scan_from(&db, Bound::Included(&from));
    assert!(err.is_none(), "{what}: {err:?}");
    assert_eq!(differing(&tail, model.range(from.clone()..)), 0, "{what}: tail");
    assert_eq!(tail.len(), model.range(from..).count(), "{what}: tail");
}

#[test]
fn a_scan_stops_at_a_damaged_data_block_of_the_newer_sst() {
    let (mem, model, sst) = build(6_000);
    let bytes = storage::read_all(&mem, &sst).unwrap();
    let (first, middle, _, _) = blocks(&bytes, &sst);
    for (block, what) in [(first, "first data block"), (middle, "middle data block")] {
        let fs = copy(&mem);
        flip(&fs, &sst, block.offset + 10);
        check_stops_at_block(&fs, &model, &sst, block, what);
    }
}

/// An SST whose index block is damaged, or replaced by an older copy of itself, cannot be opened:
/// every scan that needs it fails before yielding anything (the newer SST holds the first key).
#[test]
fn a_scan_of_an_sst_that_cannot_open_yields_nothing() {
    let (mem, model, sst) = build(6_000);
    let bytes = storage::read_all(&mem, &sst).unwrap();
    let (_, _, index, _) = blocks(&bytes, &sst);
    let (older, _, older_sst) = build(3_000);
    assert_eq!(older_sst, sst, "the same file number in the earlier state");
    let older_bytes = storage::read_all(&older, &sst).unwrap();
    assert_ne!(older_bytes, bytes);
    for what in ["index block", "older copy"] {
        let fs = copy(&mem);
        let offset = match what {
            "index block" => {
                flip(&fs, &sst, index.offset + 3);
                Some(index.offset)
            }
            _ => {
                storage::write_all(&fs, &sst, &older_bytes, true).unwrap();
                None
            }
        };
        let db = open(&fs);
        let (got, err) = scan_from(&db, Bound::Unbounded);
        assert_names(&err.expect("the scan must fail"), &sst, offset);
        assert_eq!(got.len(), 0, "{what}: {} entries yielded before the error", got.len());
        let (back, err) = scan_back(&db);
        assert_names(&err.expect("the backward walk must fail"), &sst, offset);
        assert_eq!(back.len(), 0, "{what}");
        assert!(check_gets(&db, &model, &sst) > 0, "{what}");
    }
}

/// A damaged filter block: the table is read without its filter, scans and gets return the whole
/// acknowledged state, and the statistics name the damage.
#[test]
fn a_damaged_filter_block_is_read_around_and_reported() {
    let (mem, model, sst) = build(6_000);
    let bytes = storage::read_all(&mem, &sst).unwrap();
    let (_, _, _, filter) = blocks(&bytes, &sst);
    flip(&mem, &sst, filter.offset + 2);
    let db = open(&mem);
    let (got, err) = scan_from(&db, Bound::Unbounded);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(got.len(), model.len());
    assert_eq!(differing(&got, model.iter()), 0);
    // Said while the file is there (the gets below may make a seek compaction rewrite it).
    let stats = db.property("leveldb.stats").unwrap();
    let line = stats.lines().find(|l| l.contains("filter")).unwrap_or_else(|| panic!("no word of it: {stats}"));
    assert!(line.contains(&sst) && line.contains(&format!("offset {}", filter.offset)), "{line}");
    let (back, err) = scan_back(&db);
    assert!(err.is_none() && back.len() == model.len() && differing(&back, model.iter()) == 0, "{err:?}");
    assert_eq!(check_gets(&db, &model, &sst), 0);
}

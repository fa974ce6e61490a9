//! Damaged files: a flipped byte in an SST data block, a WAL record or the MANIFEST gives a
//! Corruption error naming the file (SSTs with paranoid_checks, the WAL in a strict recovery mode),
//! never a panic and never wrong data.

use std::sync::Arc;

use lsm::{Db, Error, Options, ReadOptions, WriteOptions};
use storage::{Env, Fs, MemFs};

fn options(paranoid: bool) -> Options {
    Options {
        create_if_missing: true,
        paranoid_checks: paranoid,
        write_buffer_size: 64 << 10,
        block_cache_bytes: 0,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value{i:06}-{}", "v".repeat(80)).into_bytes()
}

/// Flips one byte of `path` at `offset` (rewriting the file through the Fs).
fn flip(fs: &dyn Fs, path: &str, offset: usize) {
    let mut bytes = storage::read_all(fs, path).unwrap();
    bytes[offset] ^= 0x40;
    storage::write_all(fs, path, &bytes, true).unwrap();
}

fn files(fs: &dyn Fs, suffix: &str) -> Vec<String> {
    fs.list("db")
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(suffix) || n.starts_with(suffix))
        .map(|n| format!("db/{n}"))
        .collect()
}

/// One output file holds all 3000 entries after a full compaction.
fn db_files_after_compaction() -> usize {
    1
}

fn assert_corruption_names(e: &Error, file: &str) {
    assert!(e.is_corruption(), "expected corruption, got {e}");
    assert!(e.to_string().contains(file), "'{e}' does not name {file}");
}

#[test]
fn a_flipped_byte_in_an_sst_block_is_reported_never_returned() {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(true)).unwrap();
    for i in 0..3000 {
        db.put(&WriteOptions::default(), &key(i), &value(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    db.close().unwrap();
    let ssts = files(&*fs, ".ldb");
    assert_eq!(ssts.len(), db_files_after_compaction(), "obsolete SSTs are deleted");
    let sst = ssts.into_iter().next().unwrap();
    flip(&*fs, &sst, 100);
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(true)).unwrap();
    let mut errors = 0;
    for i in 0..3000 {
        match db.get(&ReadOptions::default(), &key(i)) {
            Ok(Some(v)) => assert_eq!(v, value(i), "a corrupt block must not yield wrong data"),
            Ok(None) => panic!("key {i} vanished instead of an error"),
            Err(e) => {
                assert_corruption_names(&e, &sst);
                errors += 1;
            }
        }
    }
    assert!(errors > 0, "the damaged block was never reported");
    let scan: Result<Vec<_>, _> =
        db.scan(&ReadOptions::default(), std::ops::Bound::Unbounded, std::ops::Bound::Unbounded).unwrap().collect();
    assert_corruption_names(&scan.unwrap_err(), &sst);
}

#[test]
fn a_flipped_byte_in_a_wal_record_is_corruption_in_a_strict_mode() {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(true)).unwrap();
    for i in 0..200 {
        db.put(&WriteOptions { sync: true }, &key(i), &value(i)).unwrap();
    }
    drop(db);
    let wal = files(&*fs, ".log").into_iter().max().unwrap();
    flip(&*fs, &wal, 1000);
    let strict = Options { wal_recovery_mode: lsm::WalRecoveryMode::TolerateCorruptedTailRecords, ..options(true) };
    let e = Db::open(Env::new(Arc::clone(&fs)), "db", strict).err().expect("a strict open must fail");
    assert_corruption_names(&e, &wal);
    // In the default mode (point in time) the records before the damage come back, and nothing
    // after it.
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(false)).unwrap();
    let got: Vec<_> = db
        .scan(&ReadOptions::default(), std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(!got.is_empty() && got.len() < 200, "{} records recovered", got.len());
    for (i, (k, v)) in got.iter().enumerate() {
        assert_eq!((k, v), (&key(i as u32), &value(i as u32)), "recovered records are a prefix");
    }
}

#[test]
fn a_flipped_byte_in_the_manifest_is_corruption() {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(true)).unwrap();
    for round in 0..4 {
        for i in 0..500 {
            db.put(&WriteOptions::default(), &key(i + round * 500), &value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    db.close().unwrap();
    let manifest = files(&*fs, "MANIFEST-").into_iter().next().unwrap();
    // Inside the first record (the snapshot), with later edits after it.
    flip(&*fs, &manifest, 20);
    let e = Db::open(Env::new(Arc::clone(&fs)), "db", options(true)).err().expect("open must fail");
    assert_corruption_names(&e, &manifest);
}

#[test]
fn missing_current_and_missing_manifest_are_named() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let e = Db::open(Env::new(Arc::clone(&fs)), "db", Options::default()).err().unwrap();
    assert!(matches!(e, Error::NotFound { .. }) && e.to_string().contains("CURRENT"), "{e}");
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(false)).unwrap();
    db.close().unwrap();
    let manifest = files(&*fs, "MANIFEST-").into_iter().next().unwrap();
    fs.remove(&manifest).unwrap();
    let e = Db::open(Env::new(Arc::clone(&fs)), "db", options(false)).err().unwrap();
    assert!(e.to_string().contains("MANIFEST"), "{e}");
}

#[test]
fn oversized_keys_and_values_are_refused() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let o = Options { max_key_size: 10, max_value_size: 20, ..options(false) };
    let db = Db::open(Env::new(fs), "db", o).unwrap();
    let e = db.put(&WriteOptions::default(), &[1; 11], b"v").unwrap_err();
    assert!(matches!(e, Error::KeyTooLarge { len: 11, limit: 10 }), "{e}");
    let e = db.put(&WriteOptions::default(), b"k", &[1; 21]).unwrap_err();
    assert!(matches!(e, Error::ValueTooLarge { len: 21, limit: 20 }), "{e}");
    db.put(&WriteOptions::default(), b"k", b"ok").unwrap();
    assert_eq!(db.get(&ReadOptions::default(), b"k").unwrap(), Some(b"ok".to_vec()));
}

#[test]
fn a_full_device_stops_writes_but_keeps_every_acknowledged_one_readable() {
    let mem = MemFs::builder().capacity(2 << 20).build();
    let fs: Arc<dyn Fs> = Arc::new(mem);
    let db = Db::open(Env::new(fs), "db", Options { write_buffer_size: 64 << 10, ..options(false) }).unwrap();
    let mut acked = 0;
    let err = loop {
        match db.put(&WriteOptions::default(), &key(acked), &value(acked)) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
        assert!(acked < 1_000_000, "the device never filled");
    };
    assert!(err.to_string().contains("no space"), "{err}");
    // Writes stay refused; reads keep working for everything acknowledged.
    assert!(db.put(&WriteOptions::default(), b"more", b"x").is_err());
    for i in 0..acked {
        assert_eq!(db.get(&ReadOptions::default(), &key(i)).unwrap(), Some(value(i)), "key {i} of {acked}");
    }
}

/// The MANIFEST's last record damaged (a bad checksum) fails the open naming the MANIFEST and
/// the record's offset; cut after it was acted on (the SSTs it replaced are deleted), the open
/// fails naming the MANIFEST too, not a missing SST.
#[test]
fn a_damaged_or_cut_last_manifest_record_is_named_not_a_missing_sst() {
    for cut in [false, true] {
        let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(false)).unwrap();
        // Two overlapping rounds, each compacted down: the second ends with a merge into the
        // last level that deletes its inputs.
        for _ in 0..2 {
            for i in 0..500 {
                db.put(&WriteOptions::default(), &key(i), &value(i)).unwrap();
            }
            db.compact_range(None, None).unwrap();
        }
        drop(db);
        let manifest = files(&*fs, "MANIFEST-").into_iter().max().unwrap();
        let mut reader = lsm::wal::LogReader::new(fs.open(&manifest).unwrap(), lsm::wal::ReadMode::Paranoid);
        let mut last = 0;
        while reader.next_record().unwrap().is_some() {
            last = reader.last_record_offset() as usize;
        }
        let mut bytes = storage::read_all(&*fs, &manifest).unwrap();
        if cut {
            bytes.truncate(last + lsm::wal::HEADER_SIZE + 5);
        } else {
            *bytes.last_mut().unwrap() ^= 0x40;
        }
        storage::write_all(&*fs, &manifest, &bytes, true).unwrap();
        let e = Db::open(Env::new(Arc::clone(&fs)), "db", options(false)).err().expect("open must fail");
        assert_corruption_names(&e, &manifest);
        let msg = e.to_string();
        assert!(msg.contains(&format!("offset {last}")), "cut {cut}: {msg}");
        let what = if cut { "last record is cut" } else { "last record is damaged" };
        assert!(msg.contains(what), "cut {cut}: {msg}");
    }
}

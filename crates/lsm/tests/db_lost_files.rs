//! Files missing, cut or replaced: no open rolls the database back or loses writes silently.
//!
//! A database with known contents (a deep level, a newer SST that overwrites, deletes and adds
//! keys, and a WAL of 750 synced writes) has one file damaged at a time. Every open either
//! recovers every acknowledged write or fails naming the damaged file; what an open drops on
//! purpose is in its recovery report and the LOG; nothing is deleted that a repair could use.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use lsm::wal::{LogReader, ReadMode};
use lsm::{Db, Error, Options, ReadOptions, WalBreak, WalRecoveryMode, WriteOptions};
use storage::{Env, FaultFs, Fs, IoClass, MemFs, PosixFs};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 128 << 10,
        max_file_size: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32, round: u32) -> Vec<u8> {
    format!("value{i:06}-{round}-{}", "v".repeat(60)).into_bytes()
}

/// Checks `db` holds `model`, naming the first key that differs (not printing both maps).
fn assert_holds(db: &Db, model: &Model, context: &str) {
    let got = contents(db);
    if got != *model {
        let differs = model.iter().find(|(k, v)| got.get(*k) != Some(*v)).map(|(k, _)| k.clone());
        let extra = got.keys().find(|k| !model.contains_key(*k)).cloned();
        panic!(
            "{context}: {} keys, expected {}; first key lost or changed {:?}, first key back {:?}",
            got.len(),
            model.len(),
            differs.map(|k| String::from_utf8_lossy(&k).into_owned()),
            extra.map(|k| String::from_utf8_lossy(&k).into_owned())
        );
    }
}

fn contents(db: &Db) -> Model {
    db.scan(&ReadOptions::default(), Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect()
}

/// The database: 6,000 keys compacted into the deep levels; then an SST that overwrites, deletes
/// and adds keys; then 750 synced writes left in the WAL. Returns it closed, with its contents.
fn known_db() -> (MemFs, Model) {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options()).unwrap();
    let mut model = Model::new();
    let w = WriteOptions::default();
    for i in 0..6000 {
        db.put(&w, &key(i), &value(i, 0)).unwrap();
        model.insert(key(i), value(i, 0));
    }
    db.compact_range(None, None).unwrap();
    for i in (0..6000).step_by(7) {
        db.put(&w, &key(i), &value(i, 1)).unwrap();
        model.insert(key(i), value(i, 1));
        db.delete(&w, &key(i + 3)).unwrap();
        model.remove(&key(i + 3));
        db.put(&w, &key(10_000 + i), &value(i, 1)).unwrap();
        model.insert(key(10_000 + i), value(i, 1));
    }
    db.flush().unwrap();
    db.wait_for_background().unwrap();
    for i in 0..750 {
        db.put(&WriteOptions { sync: true }, &key(20_000 + i), &value(i, 2)).unwrap();
        model.insert(key(20_000 + i), value(i, 2));
    }
    db.close().unwrap();
    (mem, model)
}

/// A copy of `mem`'s files (the database and anything in `lost/`).
fn copy(mem: &MemFs) -> Arc<dyn Fs> {
    let to: Arc<dyn Fs> = Arc::new(MemFs::new());
    for dir in ["db", "db/lost"] {
        let Ok(names) = mem.list(dir) else { continue };
        to.create_dir_all(dir).unwrap();
        for name in names {
            let path = format!("{dir}/{name}");
            if let Ok(bytes) = storage::read_all(mem, &path) {
                storage::write_all(&*to, &path, &bytes, true).unwrap();
            }
        }
    }
    to
}

fn files(fs: &dyn Fs, dir: &str, suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = fs
        .list(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|n| n.ends_with(suffix) || n.starts_with(suffix))
        .map(|n| format!("{dir}/{n}"))
        .collect();
    v.sort();
    v
}

fn open(fs: &Arc<dyn Fs>, o: Options) -> lsm::Result<Db> {
    Db::open(Env::new(Arc::clone(fs)), "db", o)
}

fn the_wal(fs: &dyn Fs) -> String {
    files(fs, "db", ".log").pop().expect("a WAL")
}

/// Offsets of the MANIFEST's records.
fn record_offsets(fs: &dyn Fs, path: &str) -> Vec<u64> {
    let mut reader = LogReader::new(fs.open(path).unwrap(), ReadMode::Paranoid);
    let mut offsets = Vec::new();
    while reader.next_record().unwrap().is_some() {
        offsets.push(reader.last_record_offset());
    }
    offsets
}

#[test]
fn the_known_database_reopens_whole() {
    let (mem, model) = known_db();
    let fs = copy(&mem);
    assert!(files(&*fs, "db", ".ldb").len() > 3, "a deep level and a newer SST");
    let db = open(&fs, options()).unwrap();
    assert_holds(&db, &model, "reopened");
    assert!(db.recovery_report().is_clean(), "{}", db.recovery_report());
}

/// Every cut of the MANIFEST inside or at the start of its last two records: the open recovers
/// the acknowledged state or fails naming the MANIFEST; it never rolls back silently, and a
/// failed open deletes nothing.
#[test]
fn a_manifest_cut_anywhere_in_its_last_two_records_never_rolls_back_silently() {
    let (mem, model) = known_db();
    let base = copy(&mem);
    let manifest = files(&*base, "db", "MANIFEST-").pop().unwrap();
    let offsets = record_offsets(&*base, &manifest);
    assert!(offsets.len() >= 3, "{offsets:?}");
    let bytes = storage::read_all(&*base, &manifest).unwrap();
    let from = offsets[offsets.len() - 2] as usize;
    let (mut refused, mut recovered) = (0, 0);
    for cut in from..bytes.len() {
        let fs = copy(&mem);
        storage::write_all(&*fs, &manifest, &bytes[..cut], true).unwrap();
        let before = files(&*fs, "db", ".ldb");
        match open(&fs, options()) {
            Ok(db) => {
                assert_holds(&db, &model, &format!("cut at {cut} of {}", bytes.len()));
                recovered += 1;
            }
            Err(e) => {
                assert!(e.is_corruption() && e.to_string().contains(&manifest), "cut at {cut}: {e}");
                assert_eq!(files(&*fs, "db", ".ldb"), before, "cut at {cut}: a refused open deleted SSTs");
                refused += 1;
            }
        }
    }
    eprintln!(
        "MANIFEST cuts from offset {from} to {}: {refused} refused naming it, {recovered} recovered whole",
        bytes.len()
    );
    assert!(refused > 0, "the last edits matter here ({recovered} recovered)");
}

/// Cut by 3 bytes, the MANIFEST loses the flush that named the newest SST (its WAL is gone):
/// refused naming both; with `salvage` the open keeps the SST aside in lost/ and says so. Cut to
/// half, the edits left name SSTs that are gone: refused too, pointing at repair.
#[test]
fn a_cut_manifest_is_refused_and_salvage_keeps_the_files_aside() {
    let (mem, model) = known_db();
    let fs = copy(&mem);
    let manifest = files(&*fs, "db", "MANIFEST-").pop().unwrap();
    let bytes = storage::read_all(&*fs, &manifest).unwrap();
    storage::write_all(&*fs, &manifest, &bytes[..bytes.len() - 3], true).unwrap();
    let tables = files(&*fs, "db", ".ldb");
    let e = open(&fs, options()).err().expect("a MANIFEST that lost its last edit must not open");
    let msg = e.to_string();
    assert!(e.is_corruption() && msg.contains(&manifest) && msg.contains("salvage"), "{msg}");
    assert!(msg.contains(".ldb") && msg.contains(".log"), "the error names the SSTs and the WAL: {msg}");
    assert_eq!(files(&*fs, "db", ".ldb"), tables);

    let db = open(&fs, Options { salvage: true, ..options() }).unwrap();
    let report = db.recovery_report();
    assert!(!report.is_clean() && !report.set_aside.is_empty(), "{report}");
    assert!(contents(&db) != model, "the MANIFEST's state, without the newest SST");
    let mut kept = files(&*fs, "db", ".ldb");
    kept.extend(files(&*fs, "db/lost", ".ldb"));
    for t in &tables {
        let name = t.rsplit('/').next().unwrap();
        assert!(kept.iter().any(|k| k.ends_with(name)), "{t} was deleted");
    }
    let log = String::from_utf8(storage::read_all(&*fs, "db/LOG").unwrap()).unwrap();
    assert!(log.contains("lost/"), "{log}");

    let fs = copy(&mem);
    storage::write_all(&*fs, &manifest, &bytes[..bytes.len() / 2], true).unwrap();
    let e = open(&fs, options()).err().expect("a MANIFEST cut to half must not open");
    assert!(e.is_corruption() && e.to_string().contains(&manifest) && e.to_string().contains("repair"), "{e}");
}

/// The WAL the MANIFEST names, deleted or emptied: the loss is in the report and the LOG, and
/// `absolute_consistency` refuses the open.
#[test]
fn a_deleted_or_emptied_wal_is_reported_and_refused_in_absolute_consistency() {
    let (mem, _) = known_db();
    for emptied in [false, true] {
        let fs = copy(&mem);
        let wal = the_wal(&*fs);
        if emptied {
            storage::write_all(&*fs, &wal, b"", true).unwrap();
        } else {
            fs.remove(&wal).unwrap();
        }
        let strict = Options { wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency, ..options() };
        let e = open(&fs, strict).err().expect("absolute_consistency refuses a lost WAL");
        assert!(e.is_corruption() && e.to_string().contains(&wal), "emptied {emptied}: {e}");

        let db = open(&fs, options()).unwrap();
        let report = db.recovery_report();
        assert!(!report.is_clean(), "emptied {emptied}: the loss of 750 synced writes must be reported");
        let expected = |b: &WalBreak| match b {
            WalBreak::Empty { file } => emptied && *file == wal,
            WalBreak::Missing { file, .. } => !emptied && *file == wal,
            WalBreak::Gap { .. } => false,
        };
        assert!(report.breaks.iter().any(expected), "emptied {emptied}: {report}");
        let log = String::from_utf8(storage::read_all(&*fs, "db/LOG").unwrap()).unwrap();
        assert!(log.contains(&wal), "emptied {emptied}: {log}");
    }
}

/// A WAL in the middle of the chain gone: the later WAL's header shows the gap.
#[test]
fn a_gap_between_wals_is_reported() {
    let mem = MemFs::new();
    let fs: Arc<dyn Fs> = Arc::new(mem.clone());
    let o = Options { write_buffer_size: 1 << 20, ..options() };
    let db = open(&fs, o.clone()).unwrap();
    for i in 0..100 {
        db.put(&WriteOptions { sync: true }, &key(i), &value(i, 0)).unwrap();
    }
    drop(db);
    let fs2 = copy(&mem);
    // Write a second WAL by hand: a header at a sequence past what the first WAL holds.
    let wals = files(&*fs2, "db", ".log");
    let first = wals.last().unwrap().clone();
    let number: u64 = first.trim_start_matches("db/").trim_end_matches(".log").parse().unwrap();
    let mut header = lsm::WriteBatch::new();
    header.set_sequence(500);
    let mut batch = lsm::WriteBatch::new();
    batch.put(b"late", b"write");
    batch.set_sequence(500);
    let mut w = lsm::wal::LogWriter::new(fs2.create(&format!("db/{:06}.log", number + 1)).unwrap());
    w.add_record(header.data()).unwrap();
    w.add_record(batch.data()).unwrap();
    w.sync().unwrap();
    drop(w);
    let db = open(&fs2, o).unwrap();
    let report = db.recovery_report();
    assert!(report.breaks.iter().any(|b| matches!(b, WalBreak::Gap { from: 101, to: 499, .. })), "{report}");
    // Point in time: nothing after the gap is applied.
    assert_eq!(db.get(&ReadOptions::default(), b"late").unwrap(), None);
    assert_eq!(db.get(&ReadOptions::default(), &key(99)).unwrap(), Some(value(99, 0)));
}

/// `create_if_missing` on a database that lost CURRENT refuses, naming what is there, and
/// deletes nothing.
#[test]
fn create_if_missing_refuses_a_database_without_current() {
    let (mem, _) = known_db();
    let fs = copy(&mem);
    fs.remove("db/CURRENT").unwrap();
    let before = fs.list("db").unwrap();
    let e = open(&fs, options()).err().expect("must not create over a database");
    let msg = e.to_string();
    assert!(e.is_corruption() && msg.contains("db/CURRENT") && msg.contains("MANIFEST-"), "{msg}");
    assert!(msg.contains("repair"), "{msg}");
    assert_eq!(fs.list("db").unwrap(), before, "nothing deleted");
    // A directory with only what a crash while creating leaves opens as new.
    let fresh: Arc<dyn Fs> = Arc::new(MemFs::new());
    fresh.create_dir_all("db").unwrap();
    storage::write_all(&*fresh, "db/MANIFEST-000001", b"", true).unwrap();
    open(&fresh, options()).unwrap();
}

/// Repair rebuilds every acknowledged write from the SSTs and WALs when CURRENT and every
/// MANIFEST are gone, and after a MANIFEST cut to half.
#[test]
fn repair_recovers_every_acknowledged_write_without_current_or_manifest() {
    let (mem, model) = known_db();
    for case in ["no CURRENT or MANIFEST", "MANIFEST cut to half"] {
        let fs = copy(&mem);
        let manifest = files(&*fs, "db", "MANIFEST-").pop().unwrap();
        if case == "no CURRENT or MANIFEST" {
            fs.remove("db/CURRENT").unwrap();
            fs.remove(&manifest).unwrap();
        } else {
            let bytes = storage::read_all(&*fs, &manifest).unwrap();
            storage::write_all(&*fs, &manifest, &bytes[..bytes.len() / 2], true).unwrap();
        }
        let report = Db::repair(Env::new(Arc::clone(&fs)), "db", options()).unwrap();
        assert!(report.dropped_nothing(), "{case}: {report}");
        assert_eq!(report.wals.iter().map(|w| w.records_applied).sum::<u64>(), 750, "{case}: {report}");
        let db = open(&fs, Options { create_if_missing: false, ..options() }).unwrap();
        assert_holds(&db, &model, &format!("{case}: {report}"));
        assert!(db.recovery_report().is_clean(), "{case}");
        drop(db);
        assert!(!files(&*fs, "db/lost", ".log").is_empty(), "{case}: the converted WAL is kept in lost/");
    }
}

/// A flipped byte in an SST's data block: repair keeps the other blocks and says what it dropped.
#[test]
fn repair_keeps_the_readable_blocks_of_a_damaged_sst() {
    let (mem, _) = known_db();
    let fs = copy(&mem);
    let table = files(&*fs, "db", ".ldb").into_iter().next().unwrap();
    let mut bytes = storage::read_all(&*fs, &table).unwrap();
    bytes[100] ^= 0x40;
    storage::write_all(&*fs, &table, &bytes, true).unwrap();
    let report = Db::repair(Env::new(Arc::clone(&fs)), "db", options()).unwrap();
    let t = report.tables.iter().find(|t| t.file == table).expect("the damaged SST is in the report");
    assert_eq!(t.damaged_blocks, 1, "{report}");
    assert!(t.entries > 0 && !report.dropped_nothing(), "{report}");
    assert!(report.to_string().contains("damaged block"), "{report}");
    let db = open(&fs, Options { create_if_missing: false, ..options() }).unwrap();
    assert!(contents(&db).len() > 5000);
}

/// The error a bad-path repair gives names the directory.
#[test]
fn repair_of_a_missing_directory_names_it() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let e = Db::repair(Env::new(fs), "nowhere", options()).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }) && e.to_string().contains("nowhere"), "{e}");
}

/// A folder with none of a database's files (empty, or other files, LOCK alone) is refused before
/// anything is written: a repair pointed at the wrong folder must not make a database there.
#[test]
fn repair_refuses_a_folder_without_database_files_and_writes_nothing() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    for dir in ["empty", "other"] {
        fs.create_dir_all(dir).unwrap();
    }
    storage::write_all(&*fs, "other/demo.toml", b"title = \"x\"\n", true).unwrap();
    storage::write_all(&*fs, "other/notes.log.txt", b"", true).unwrap();
    storage::write_all(&*fs, "other/LOCK", b"", true).unwrap();
    for dir in ["empty", "other"] {
        let before = fs.list(dir).unwrap();
        let e = Db::repair(Env::new(Arc::clone(&fs)), dir, options()).unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, Error::NotFound { .. }) && msg.contains(dir), "{msg}");
        assert!(
            msg.contains("CURRENT") && msg.contains("MANIFEST") && msg.contains(".ldb") && msg.contains(".log"),
            "{msg}"
        );
        assert_eq!(fs.list(dir).unwrap(), before, "{dir}: the repair wrote into it");
    }
}

/// A write whose WAL append failed (the file system took the bytes into its buffer, then failed
/// to write them: a full disk) returns an error and is not there after a reopen, even though the
/// file system's buffer is flushed when the database closes.
#[test]
fn a_write_whose_wal_append_failed_is_not_applied_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let fault = FaultFs::new(Arc::new(PosixFs::new(dir.path()).unwrap()), 1);
    let fs: Arc<dyn Fs> = Arc::new(fault.clone());
    let db = open(&fs, options()).unwrap();
    db.put(&WriteOptions::default(), b"k", b"old").unwrap();
    // A put appends the record's header and payload, then flushes: the flush fails.
    fault.fail_nth(IoClass::Write, 3);
    let e = db.put(&WriteOptions::default(), b"k", b"new").unwrap_err();
    assert!(e.to_string().contains("injected"), "{e}");
    assert_eq!(db.get(&ReadOptions::default(), b"k").unwrap(), Some(b"old".to_vec()));
    drop(db);
    let db = open(&fs, options()).unwrap();
    assert_eq!(db.get(&ReadOptions::default(), b"k").unwrap(), Some(b"old".to_vec()), "the failed write came back");
}

/// The documented other half: a write whose append succeeded and whose sync failed was handed
/// to the file system whole; a reopen applies it if it is there (as LevelDB and RocksDB do).
#[test]
fn a_write_whose_sync_failed_may_survive_and_here_does() {
    let dir = tempfile::tempdir().unwrap();
    let fault = FaultFs::new(Arc::new(PosixFs::new(dir.path()).unwrap()), 1);
    let fs: Arc<dyn Fs> = Arc::new(fault.clone());
    let db = open(&fs, options()).unwrap();
    db.put(&WriteOptions::default(), b"k", b"old").unwrap();
    fault.fail_nth(IoClass::Sync, 1);
    assert!(db.put(&WriteOptions { sync: true }, b"k", b"new").is_err());
    drop(db);
    let db = open(&fs, options()).unwrap();
    assert_eq!(db.get(&ReadOptions::default(), b"k").unwrap(), Some(b"new".to_vec()));
}

/// A file set aside never replaces one kept in lost/ before: it takes the next free name.
#[test]
fn a_file_set_aside_never_replaces_one_kept_before() {
    let (mem, _) = known_db();
    let fs = copy(&mem);
    let wal = the_wal(&*fs);
    let name = wal.rsplit('/').next().unwrap().to_string();
    fs.create_dir_all("db/lost").unwrap();
    storage::write_all(&*fs, &format!("db/lost/{name}"), b"kept before", true).unwrap();
    // A damaged record in the middle: point in time drops what follows and keeps the WAL aside.
    let mut damaged = storage::read_all(&*fs, &wal).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    storage::write_all(&*fs, &wal, &damaged, true).unwrap();
    let db = open(&fs, options()).unwrap();
    let report = db.recovery_report();
    assert_eq!(report.set_aside, vec![format!("db/lost/{name}.1")], "{report}");
    assert_eq!(storage::read_all(&*fs, &format!("db/lost/{name}")).unwrap(), b"kept before");
    assert_eq!(storage::read_all(&*fs, &format!("db/lost/{name}.1")).unwrap(), damaged);
}

/// The WAL the MANIFEST names is gone and the next WAL starts right after the MANIFEST's last
/// sequence (what a lost edit that switched WALs with no write in between leaves): the report
/// names the missing WAL without an empty range of lost writes ("writes 8 to 7").
#[test]
fn a_missing_wal_followed_by_the_next_sequence_states_no_empty_range() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let db = open(&fs, options()).unwrap();
    for i in 0..100 {
        db.put(&WriteOptions::default(), &key(i), &value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_background().unwrap();
    db.close().unwrap();
    // The WAL after the flush holds no write: its header says it starts at sequence 101.
    let wal = the_wal(&*fs);
    let later = format!("db/{:06}.log", wal["db/".len()..wal.len() - 4].parse::<u64>().unwrap() + 10);
    let bytes = storage::read_all(&*fs, &wal).unwrap();
    storage::write_all(&*fs, &later, &bytes, true).unwrap();
    fs.remove(&wal).unwrap();
    let absolute = Options { wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency, ..options() };
    let msg = open(&fs, absolute).err().expect("absolute consistency refuses a missing WAL").to_string();
    assert!(msg.contains(&wal) && msg.contains("sequence 101") && !msg.contains("writes 101 to 100"), "{msg}");
    let db = open(&fs, options()).unwrap();
    let report = db.recovery_report().to_string();
    assert!(report.contains(&wal) && !report.contains("writes 101 to 100"), "{report}");
}

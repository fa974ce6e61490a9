//! WAL replay under each `WalRecoveryMode`: a damaged record in the middle of the log, a complete
//! final record with a bad checksum, and a torn tail (the file ends inside the last record). Each
//! gives the documented outcome (an error naming the WAL and offset, or the records the mode keeps)
//! and a recovery report that says what was dropped; nothing is ever dropped silently.

use std::sync::Arc;

use lsm::wal::{DropReason, LogReader, ReadMode, HEADER_SIZE};
use lsm::{Db, Options, ReadOptions, WalRecoveryMode, WriteOptions};
use storage::{Env, Fs, MemFs};

const RECORDS: u32 = 120;
const DAMAGED: usize = 60;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("value{i:06}-{}", "v".repeat(80)).into_bytes()
}

fn options(mode: WalRecoveryMode) -> Options {
    Options { create_if_missing: true, wal_recovery_mode: mode, ..Options::default() }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Damage {
    /// A payload byte of record `DAMAGED` flipped.
    Middle,
    /// A payload byte of the last record flipped (the record is complete).
    FinalChecksum,
    /// The file cut inside the last record.
    TornTail,
}

/// A database whose only WAL holds `RECORDS` synced puts, one record each, damaged as `damage`
/// says; returns the file system and the WAL's path.
fn damaged_db(damage: Damage) -> (Arc<dyn Fs>, String) {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(WalRecoveryMode::PointInTime)).unwrap();
    for i in 0..RECORDS {
        db.put(&WriteOptions { sync: true }, &key(i), &value(i)).unwrap();
    }
    drop(db);
    let wal = fs.list("db").unwrap().into_iter().filter(|n| n.ends_with(".log")).max().unwrap();
    let wal = format!("db/{wal}");
    let mut offsets = Vec::new();
    let mut reader = LogReader::new(fs.open(&wal).unwrap(), ReadMode::Paranoid);
    while reader.next_record().unwrap().is_some() {
        offsets.push(reader.last_record_offset() as usize);
    }
    // The first record is the WAL's header (an empty batch), not a put.
    offsets.remove(0);
    assert_eq!(offsets.len(), RECORDS as usize);
    let mut bytes = storage::read_all(&*fs, &wal).unwrap();
    match damage {
        Damage::Middle => bytes[offsets[DAMAGED] + HEADER_SIZE + 20] ^= 0x40,
        Damage::FinalChecksum => *bytes.last_mut().unwrap() ^= 0x40,
        Damage::TornTail => bytes.truncate(offsets[RECORDS as usize - 1] + HEADER_SIZE + 10),
    }
    storage::write_all(&*fs, &wal, &bytes, true).unwrap();
    (fs, wal)
}

/// The keys the database holds, checked against their values.
fn keys(db: &Db) -> Vec<u32> {
    (0..RECORDS)
        .filter(|&i| match db.get(&ReadOptions::default(), &key(i)).unwrap() {
            Some(v) => {
                assert_eq!(v, value(i), "key {i} has a wrong value");
                true
            }
            None => false,
        })
        .collect()
}

/// What a mode does with a damage: `None` for a refused open, else the keys kept, the readable
/// records dropped after the damage and the reason reported.
fn expected(mode: WalRecoveryMode, damage: Damage) -> Option<(Vec<u32>, u64, DropReason)> {
    use Damage::*;
    use WalRecoveryMode::*;
    let all_but = |gone: usize| (0..RECORDS).filter(|&i| i as usize != gone).collect::<Vec<u32>>();
    let last = RECORDS as usize - 1;
    match (mode, damage) {
        (AbsoluteConsistency, _) | (TolerateCorruptedTailRecords, Middle | FinalChecksum) => None,
        (TolerateCorruptedTailRecords | PointInTime | SkipAnyCorruptedRecords, TornTail) => {
            Some((all_but(last), 0, DropReason::Truncated))
        }
        (PointInTime | SkipAnyCorruptedRecords, FinalChecksum) => {
            Some((all_but(last), 0, DropReason::ChecksumMismatch))
        }
        (PointInTime, Middle) => {
            Some(((0..DAMAGED as u32).collect(), (RECORDS as usize - DAMAGED - 1) as u64, DropReason::ChecksumMismatch))
        }
        (SkipAnyCorruptedRecords, Middle) => Some((all_but(DAMAGED), 0, DropReason::ChecksumMismatch)),
    }
}

#[test]
fn every_mode_gives_its_documented_outcome_and_reports_what_it_dropped() {
    let modes = [
        WalRecoveryMode::TolerateCorruptedTailRecords,
        WalRecoveryMode::AbsoluteConsistency,
        WalRecoveryMode::PointInTime,
        WalRecoveryMode::SkipAnyCorruptedRecords,
    ];
    for mode in modes {
        for damage in [Damage::Middle, Damage::FinalChecksum, Damage::TornTail] {
            let case = format!("{mode} / {damage:?}");
            let (fs, wal) = damaged_db(damage);
            let opened = Db::open(Env::new(Arc::clone(&fs)), "db", options(mode));
            let Some((kept, dropped_records, reason)) = expected(mode, damage) else {
                let e = opened.err().unwrap_or_else(|| panic!("{case}: the open must fail"));
                let msg = e.to_string();
                assert!(e.is_corruption(), "{case}: {msg}");
                assert!(msg.contains(&wal) && msg.contains("offset"), "{case}: names the WAL and offset: {msg}");
                assert!(msg.contains(mode.name()), "{case}: names the mode: {msg}");
                continue;
            };
            let db = opened.unwrap_or_else(|e| panic!("{case}: {e}"));
            assert_eq!(keys(&db), kept, "{case}");
            let report = db.recovery_report();
            assert_eq!(report.mode, mode);
            assert!(!report.is_clean(), "{case}: the loss is reported");
            assert_eq!(report.records_applied(), kept.len() as u64, "{case}");
            assert_eq!(report.records_dropped(), dropped_records, "{case}");
            let w = &report.wals[0];
            assert_eq!(w.file, wal);
            assert_eq!(w.problems.len(), 1, "{case}: {:?}", w.problems);
            assert_eq!(w.problems[0].reason, reason, "{case}");
            assert!(report.bytes_dropped() >= w.problems[0].bytes && w.problems[0].bytes > 0, "{case}");
            assert_eq!(db.stats().recovery, report, "{case}: in the stats");
            let stats = db.property("leveldb.stats").unwrap();
            assert!(stats.contains("WAL recovery") && stats.contains(&wal), "{case}: {stats}");
            let log = String::from_utf8(storage::read_all(&*fs, "db/LOG").unwrap()).unwrap();
            assert!(log.contains(&wal) && log.contains(&format!("offset {}", w.problems[0].offset)), "{case}: {log}");
            // What was kept is durable, and the next open replays nothing damaged.
            db.close().unwrap();
            let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(mode)).unwrap();
            assert_eq!(keys(&db), kept, "{case}: after a reopen");
            assert!(db.recovery_report().is_clean(), "{case}: {}", db.recovery_report());
        }
    }
}

#[test]
fn a_clean_log_reports_nothing_dropped_and_writes_no_info_log() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(WalRecoveryMode::AbsoluteConsistency)).unwrap();
    for i in 0..10 {
        db.put(&WriteOptions { sync: true }, &key(i), &value(i)).unwrap();
    }
    drop(db);
    let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(WalRecoveryMode::AbsoluteConsistency)).unwrap();
    let report = db.recovery_report();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.records_applied(), 10);
    assert!(report.to_string().contains("nothing dropped"), "{report}");
    assert!(!fs.exists("db/LOG").unwrap());
}

#[test]
fn modes_parse_by_their_rocksdb_names() {
    for name in WalRecoveryMode::NAMES {
        assert_eq!(name.parse::<WalRecoveryMode>().unwrap().name(), name);
    }
    let e = "strict".parse::<WalRecoveryMode>().unwrap_err().to_string();
    assert!(e.contains("wal_recovery_mode") && e.contains("point_in_time"), "{e}");
    assert_eq!(WalRecoveryMode::default(), WalRecoveryMode::PointInTime);
}

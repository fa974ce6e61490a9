//! A memtable switch leaves the old WAL unsynced (as LevelDB and RocksDB do; `sync_closed_wal`
//! off, the flashkv profile), so a write that fills a memtable does not wait for megabytes to
//! reach the disk. What keeps that safe:
//! - a synced write syncs the closed WAL first, so it never survives a crash that loses the
//!   writes before it;
//! - a crash that loses the old WAL's tail stops replay there (point in time), so the writes that
//!   survive are a prefix;
//! - a recovery mode that refuses such a break instead has the old WAL synced at the switch.

mod gated_fs;

use std::sync::atomic::Ordering;
use std::sync::Arc;

use gated_fs::{Gate, GatedFs};
use lsm::{Db, Options, ReadOptions, WalRecoveryMode, WriteOptions};
use storage::{Env, Fs, MemFs, WriteHint};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn options(mode: WalRecoveryMode) -> Options {
    Options { create_if_missing: true, write_buffer_size: 64 << 10, wal_recovery_mode: mode, ..Options::default() }
}

/// The WAL syncs of a fill of 2 MB in 1 KiB writes (about 30 memtables), none of them synced,
/// and the flushes.
fn wal_syncs_of_a_fill(o: Options) -> (u64, u64) {
    let gate = Arc::new(Gate::default());
    let fs: Arc<dyn Fs> =
        Arc::new(GatedFs { inner: MemFs::new(), gate: Arc::clone(&gate), gated: |h| *h == WriteHint::Wal });
    let db = Db::open(Env::new(fs), "db", o).unwrap();
    for i in 0..2000 {
        db.put(&WriteOptions::default(), &key(i), &[1u8; 1000]).unwrap();
    }
    db.wait_for_background().unwrap();
    let flushes = db.stats().flushes;
    db.close().unwrap();
    (gate.syncs.load(Ordering::SeqCst), flushes)
}

#[test]
fn a_switch_leaves_the_old_wal_unsynced_unless_asked_or_the_recovery_mode_refuses_breaks() {
    let (syncs, flushes) = wal_syncs_of_a_fill(options(WalRecoveryMode::PointInTime));
    assert!(flushes >= 20, "{flushes} flushes");
    assert_eq!(syncs, 0, "point in time stops at a break: no WAL is synced without a synced write");
    for o in [
        Options { sync_closed_wal: true, ..options(WalRecoveryMode::PointInTime) },
        options(WalRecoveryMode::TolerateCorruptedTailRecords),
    ] {
        let (syncs, flushes) = wal_syncs_of_a_fill(o);
        assert!(syncs >= flushes, "{syncs} WAL syncs for {flushes} switches: each switch syncs the old WAL");
    }
}

#[test]
fn a_synced_write_makes_the_writes_in_the_closed_wal_durable_too() {
    // The flush of the full memtable is held in its SST's sync, so its writes are only in the WAL
    // the switch closed when the synced write comes, and when the power fails.
    let mem = MemFs::new();
    let gate = Arc::new(Gate::default());
    *gate.held.lock().unwrap() = true;
    let fs: Arc<dyn Fs> =
        Arc::new(GatedFs { inner: mem.clone(), gate: Arc::clone(&gate), gated: |h| *h == WriteHint::Flush });
    let db = Db::open(Env::new(fs), "db", options(WalRecoveryMode::PointInTime)).unwrap();
    // Writes until the first switch (a second WAL), then waits for the flush to reach its sync;
    // writing on could fill the new memtable too, and that write would wait for the held flush.
    let wals = || mem.list("db").unwrap().iter().filter(|n| n.ends_with(".log")).count();
    let mut written = 0;
    while wals() < 2 {
        db.put(&WriteOptions::default(), &key(written), &[2u8; 1000]).unwrap();
        written += 1;
        assert!(written < 1000, "no memtable switch");
    }
    let start = std::time::Instant::now();
    while gate.waiting.load(Ordering::SeqCst) == 0 {
        assert!(start.elapsed().as_secs() < 60, "the flush never synced its SST");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    db.put(&WriteOptions { sync: true }, b"synced", b"yes").unwrap();
    mem.crash();
    gate.open();
    drop(db);

    let db = Db::open(Env::new(Arc::new(mem)), "db", options(WalRecoveryMode::PointInTime)).unwrap();
    let r = ReadOptions::default();
    assert_eq!(db.get(&r, b"synced").unwrap().as_deref(), Some(&b"yes"[..]), "the synced write was lost");
    let lost = (0..written).filter(|&i| db.get(&r, &key(i)).unwrap().is_none()).count();
    assert_eq!(lost, 0, "{lost} of the {written} writes before the synced one were lost");
}

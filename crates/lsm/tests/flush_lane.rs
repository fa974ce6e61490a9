//! The flush lane (`Options::flush_lane`): flushes run on a background lane of their own, so a
//! full memtable never waits for a compaction's syncs or its install.
//!
//! A file system whose compaction outputs' syncs are held until the test lets them go shows it:
//! with the lane, memtables go on being flushed while a compaction is stuck in a sync; without it
//! the writer would wait for that sync. And the lane changes no data.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use flashsim::{BlockSsd, Preset, SimClock, SsdConfig};
use lsm::{Db, Options, ReadOptions, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{Env, Fs, MemFs, SimFs, SimFsOptions, WriteHint};

mod gated_fs;

use gated_fs::{Gate, GatedFs};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:012}").into_bytes()
}

#[test]
fn with_a_flush_lane_memtables_are_flushed_while_a_compaction_waits_in_a_sync() {
    let gate = Arc::new(Gate::default());
    *gate.held.lock().unwrap() = true;
    let fs: Arc<dyn Fs> = Arc::new(GatedFs {
        inner: MemFs::new(),
        gate: Arc::clone(&gate),
        gated: |hint| matches!(hint, WriteHint::Compaction { .. }),
    });
    let o = Options { create_if_missing: true, write_buffer_size: 64 << 10, flush_lane: true, ..Options::default() };
    let db = Arc::new(Db::open(Env::new(fs), "db", o).unwrap());
    let value = vec![7u8; 1000];
    // Random keys, so that level-0 tables overlap and the first compaction writes outputs.
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
    let mut i = 0;
    while gate.waiting.load(Ordering::SeqCst) == 0 {
        db.put(&WriteOptions::default(), &key(rng.next_u64() % 100_000), &value).unwrap();
        i += 1;
        assert!(i < 100_000, "no compaction output was ever synced");
    }
    // A compaction is stuck in a sync. Ten more memtables' worth of writes, on a thread of their
    // own so that a writer waiting behind the compaction fails the test instead of hanging it.
    let flushes_before = db.stats().flushes;
    let (done, finished) = mpsc::channel();
    let writer = Arc::clone(&db);
    let stop = Arc::new(AtomicBool::new(false));
    let stop_writer = Arc::clone(&stop);
    std::thread::spawn(move || {
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(4);
        for _ in 0..650 {
            if stop_writer.load(Ordering::SeqCst) {
                return;
            }
            writer.put(&WriteOptions::default(), &key(rng.next_u64() % 100_000), &value).unwrap();
        }
        done.send(()).unwrap();
    });
    let wrote = finished.recv_timeout(Duration::from_secs(60));
    let flushed = db.stats().flushes - flushes_before;
    let still_held = gate.waiting.load(Ordering::SeqCst) > 0;
    stop.store(true, Ordering::SeqCst);
    gate.open();
    assert!(wrote.is_ok(), "the writes waited behind the compaction's sync");
    assert!(still_held, "the compaction's sync was let go early");
    assert!(flushed >= 8, "only {flushed} flushes while the compaction waited");
    db.wait_for_background().unwrap();
}

/// Fills a femu SSD with 1 KiB values in random order; returns what a get of every key returns.
fn fill(flush_lane: bool) -> Vec<Option<Vec<u8>>> {
    const KEYS: u64 = 6_000;
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(256 << 20)).unwrap();
    let fs = SimFs::format(BlockSsd::new(cfg).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap();
    let o = Options {
        create_if_missing: true,
        write_buffer_size: 128 << 10,
        max_file_size: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        flush_lane,
        ..Options::default()
    };
    let db = Db::open(fs.env(), "db", o).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
    for _ in 0..KEYS * 2 {
        let mut v = vec![0u8; 1000];
        rng.fill_bytes(&mut v);
        db.put(&WriteOptions::default(), &key(rng.next_u64() % KEYS), &v).unwrap();
    }
    db.wait_for_background().unwrap();
    assert!(db.stats().compactions > 0);
    let values = (0..KEYS).map(|i| db.get(&ReadOptions::default(), &key(i)).unwrap()).collect();
    db.close().unwrap();
    values
}

#[test]
fn the_flush_lane_changes_no_data_in_simulated_time() {
    assert!(fill(false) == fill(true));
}

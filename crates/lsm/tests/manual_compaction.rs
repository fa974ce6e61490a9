//! `compact_range` under concurrent writers (real threads, a background worker): it finishes
//! while the writers still write. Each level is compacted once over the range, as LevelDB's
//! manual compaction does, so files that concurrent writes keep adding cannot keep it going, and
//! it takes the job slot ahead of the background worker's own compactions.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use lsm::{Db, Options, ReadOptions, WriteOptions};
use storage::{Env, Fs, MemFs};

#[test]
fn compact_range_finishes_while_writers_keep_writing() {
    let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
    let options = Options { create_if_missing: true, ..Options::default() };
    let db = Arc::new(Db::open(Env::new(fs), "db", options).unwrap());
    let key = |t: u64, i: u64| format!("{:08}", (i * 7919 + t * 104_729) % 2_000_000).into_bytes();
    // Enough for a database of several levels before the manual compaction starts.
    for i in 0..200_000 {
        db.put(&WriteOptions::default(), &key(9, i), &[b'v'; 400]).unwrap();
    }
    // Each writer writes until the manual compaction returns, or up to its budget: a compaction
    // that only ends once writers stop would exhaust it.
    const BUDGET: u64 = 2_000_000;
    let done = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicU64::new(0));
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let (db, done, written) = (Arc::clone(&db), Arc::clone(&done), Arc::clone(&written));
            std::thread::spawn(move || {
                let mut i = 0;
                while !done.load(Ordering::Relaxed) && i < BUDGET {
                    db.put(&WriteOptions::default(), &key(t, i), &[b'w'; 400]).unwrap();
                    i += 1;
                    written.fetch_add(1, Ordering::Relaxed);
                }
                i
            })
        })
        .collect();
    // Let the writers get going first.
    while written.load(Ordering::Relaxed) < 20_000 {
        std::thread::yield_now();
    }
    let t = std::time::Instant::now();
    db.compact_range(None, None).unwrap();
    eprintln!("compact_range took {:?}", t.elapsed());
    done.store(true, Ordering::Relaxed);
    let counts: Vec<u64> = writers.into_iter().map(|w| w.join().unwrap()).collect();
    assert!(counts.iter().all(|&n| n < BUDGET), "compact_range ran until the writers stopped: {counts:?}");
    assert!(db.get(&ReadOptions::default(), &key(0, 0)).unwrap().is_some());
    eprintln!("writes during compact_range: {counts:?}");
}

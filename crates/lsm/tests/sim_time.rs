//! Simulated time one can trust: on a simulated Env every lane's requests (the caller's gets and
//! puts, the background lane's flushes and compactions) reach the flash in simulated-time order, so
//! a get issued while a compaction is in flight waits only for what was queued on its die and
//! channel when it was issued, never for compaction work that lies after it in simulated time; and
//! the same run gives the same device history, operation for operation.

use std::sync::Arc;

use flashsim::{BlockSsd, Cause, HostLabel, OpKind, Preset, SimClock, SsdConfig, Timeline, Traced};
use lsm::{Db, Options, ReadOptions, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{SimFs, SimFsOptions};

const KEYS: u64 = 12_000;

fn key(i: u64) -> Vec<u8> {
    format!("key{i:012}").into_bytes()
}

/// A get and the simulated times it was issued and completed at.
struct Get {
    issued: u64,
    done: u64,
}

/// Loads `KEYS` 1 KiB values on a femu SSD (40 us reads, 200 us programs) that keeps a trace of
/// every NAND operation, then goes on writing while it reads: the background lane flushes and
/// compacts meanwhile. Returns the gets, the trace and the configuration.
fn run() -> (Vec<Get>, Vec<Traced>, SsdConfig) {
    let mut cfg = SsdConfig::from_preset(Preset::Femu, Some(256 << 20)).unwrap();
    cfg.media.trace = true;
    let fs = SimFs::format(BlockSsd::new(cfg.clone()).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap();
    let env = fs.env();
    let o = Options {
        create_if_missing: true,
        write_buffer_size: 256 << 10,
        max_file_size: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        block_cache_bytes: 64 << 10,
        ..Options::default()
    };
    let db = Db::open(env.clone(), "db", o).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    let value = |rng: &mut rand_pcg::Pcg64Mcg| {
        let mut v = vec![0u8; 1000];
        rng.fill_bytes(&mut v);
        v
    };
    for _ in 0..KEYS {
        let (k, v) = (key(rng.next_u64() % KEYS), value(&mut rng));
        db.put(&WriteOptions::default(), &k, &v).unwrap();
    }
    let mut gets = Vec::new();
    for _ in 0..3000 {
        let (k, v) = (key(rng.next_u64() % KEYS), value(&mut rng));
        db.put(&WriteOptions::default(), &k, &v).unwrap();
        let issued = env.now_nanos();
        db.get(&ReadOptions::default(), &key(rng.next_u64() % KEYS)).unwrap();
        gets.push(Get { issued, done: env.now_nanos() });
    }
    db.wait_for_background().unwrap();
    db.close().unwrap();
    let trace = fs.with_device(|d| d.media().trace().to_vec());
    (gets, trace, cfg)
}

fn is_compaction_output(op: &Traced) -> bool {
    op.kind == OpKind::Program && matches!(op.cause, Cause::Host(HostLabel::Compaction { .. }))
}

#[test]
fn a_get_during_a_compaction_waits_only_for_what_was_queued_when_it_was_issued() {
    let (gets, trace, cfg) = run();
    // The scenario: gets issued while a compaction was writing its outputs (programs of
    // compaction outputs issued within 5 ms before the get was issued and within 5 ms after).
    let outputs: Vec<u64> = trace.iter().filter(|op| is_compaction_output(op)).map(|op| op.at).collect();
    let near = |from: u64, to: u64| outputs.iter().any(|&t| t >= from && t < to);
    let during = gets
        .iter()
        .filter(|g| near(g.issued.saturating_sub(5_000_000), g.issued) && near(g.issued + 1, g.issued + 5_000_000));
    let during = during.count();
    let span = |g: &Get| g.done - g.issued;
    eprintln!(
        "gets {} during compactions {during}, outputs {}, max get {} us, last get at {} ms",
        gets.len(),
        outputs.len(),
        gets.iter().map(span).max().unwrap() / 1000,
        gets.last().unwrap().issued / 1_000_000
    );
    assert!(during >= 10, "the run must read while compactions write");

    // First-come first-served in issue-time order: replaying every operation sorted by the time
    // it was issued must give each one the completion it had. An operation that reached the
    // flash late (after one issued later in simulated time) would have waited behind that one,
    // and its replayed completion would differ.
    let mut order: Vec<usize> = (0..trace.len()).collect();
    order.sort_by_key(|&i| trace[i].at);
    let g = &cfg.media.geometry;
    let mut reference = Timeline::new(&cfg.media.timing, g.total_dies(), g.channels, g.page_size);
    let mut late = Vec::new();
    for &i in &order {
        let done = reference.replay(&trace[i]).done;
        if done != trace[i].done {
            late.push((i, trace[i], done));
        }
    }
    assert!(
        late.is_empty(),
        "{} of {} operations did not complete when service in issue-time order says, first: {:?}",
        late.len(),
        trace.len(),
        late.first()
    );
    // Reads are where it shows: a get's read waits for what its die held when it was issued.
    let reads = trace.iter().filter(|op| op.kind == OpKind::Read).count();
    assert!(reads > 1000);
}

#[test]
fn the_same_run_gives_the_same_device_history() {
    let (a, trace_a, _) = run();
    let (b, trace_b, _) = run();
    assert_eq!(trace_a, trace_b);
    let times = |g: &[Get]| g.iter().map(|g| (g.issued, g.done)).collect::<Vec<_>>();
    assert_eq!(times(&a), times(&b));
}

#[test]
fn an_env_made_by_the_file_system_cannot_run_the_engine_on_the_wall_clock() {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap();
    let fs = SimFs::format(BlockSsd::new(cfg).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap();
    // However the file system reaches the engine, its Env is the simulated one.
    let env = storage::Env::new(Arc::new(fs.clone()));
    assert!(env.clock().is_some());
    let db = Db::open(env.clone(), "db", Options { create_if_missing: true, ..Options::default() }).unwrap();
    db.put(&WriteOptions { sync: true }, b"k", b"v").unwrap();
    assert!(env.now_nanos() > 0, "the synced write took simulated time");
}

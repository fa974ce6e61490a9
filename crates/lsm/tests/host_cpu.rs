//! The host's CPU in simulated time (`lsm::cpu`): each lane is charged exactly its counted work
//! times the model's coefficients, a lane's parts still sum to its time, the same run charges the
//! same, and the model decides whether a workload is CPU-bound or flash-bound.

use std::sync::Arc;

use flashsim::{BlockSsd, Lane, LaneTime, Preset, SimClock, SsdConfig};
use lsm::cpu::{CpuCounts, CpuModel, Term};
use lsm::{Db, DbStats, Options, ReadOptions, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{SimFs, SimFsOptions};

fn key(i: u64) -> Vec<u8> {
    format!("key{i:012}").into_bytes()
}

/// A model with a different, non-round cost for every term.
fn model() -> CpuModel {
    let mut m = CpuModel::default();
    for (i, t) in Term::ALL.into_iter().enumerate() {
        m.set(t, 0.25 + 37.3 * i as f64);
    }
    m
}

struct Run {
    /// The foreground's time over the gets alone.
    gets: LaneTime,
    fg: LaneTime,
    bg: LaneTime,
    fg_end: u64,
    stats: DbStats,
}

/// `keys` 1000-byte values written at random, then `gets` random gets and a scan of 500 keys, on a
/// femu SSD with `cache` bytes of block cache, under `model`.
fn run(model: Option<CpuModel>, keys: u64, gets: u64, cache: usize) -> Run {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(256 << 20)).unwrap();
    let clock = SimClock::new();
    let fs = SimFs::format(BlockSsd::new(cfg).unwrap(), clock.clone(), SimFsOptions::default()).unwrap();
    let o = Options {
        create_if_missing: true,
        write_buffer_size: 256 << 10,
        max_file_size: 256 << 10,
        max_bytes_for_level_base: 1 << 20,
        block_cache_bytes: cache,
        cpu: model,
        ..Options::default()
    };
    let db = Db::open(fs.env(), "db", o).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
    for _ in 0..keys {
        let mut v = vec![0u8; 1000];
        rng.fill_bytes(&mut v);
        db.put(&WriteOptions::default(), &key(rng.next_u64() % keys), &v).unwrap();
    }
    db.wait_for_background().unwrap();
    let before = clock.spent(Lane::Foreground);
    for _ in 0..gets {
        db.get(&ReadOptions::default(), &key(rng.next_u64() % keys)).unwrap();
    }
    let after = clock.spent(Lane::Foreground);
    let gets = LaneTime {
        read_ns: after.read_ns - before.read_ns,
        cpu_ns: after.cpu_ns - before.cpu_ns,
        ..LaneTime::default()
    };
    let mut it = db.iter(&ReadOptions::default()).unwrap();
    it.seek(&key(keys / 2));
    for _ in 0..500 {
        it.next();
    }
    drop(it);
    db.wait_for_background().unwrap();
    let stats = db.stats();
    let fg_end = clock.now();
    db.close().unwrap();
    Run { gets, fg: clock.spent(Lane::Foreground), bg: clock.spent(Lane::Background), fg_end, stats }
}

fn cost_ns(m: &CpuModel, c: &CpuCounts) -> u64 {
    m.cost_ps(c) / 1000
}

#[test]
fn each_lane_is_charged_its_counts_times_the_model() {
    let m = model();
    let r = run(Some(m), 8_000, 2_000, 64 << 10);
    let (fg, bg) = (&r.stats.cpu_foreground, &r.stats.cpu_background);
    // Every term the workload exercises was counted, on the lane that does it.
    for t in
        [Term::WriteByte, Term::Insert, Term::MemtableStep, Term::Get, Term::TableProbe, Term::BlockSearch, Term::Seek]
    {
        assert!(fg.get(t) > 0, "foreground {}: {fg:?}", t.name());
    }
    assert_eq!(fg.next, 500);
    assert_eq!(fg.insert, 8_000);
    assert_eq!(fg.get, 2_000);
    for t in [
        Term::KeyFlushed,
        Term::KeyMerged,
        Term::BlockBuilt,
        Term::BlockByte,
        Term::FilterKey,
        Term::BlockRead,
        Term::ReadByte,
    ] {
        assert!(bg.get(t) > 0, "background {}: {bg:?}", t.name());
    }
    assert_eq!(bg.write_byte + bg.get + bg.insert, 0, "a job does no user operation: {bg:?}");
    // Charged time = counts x coefficients (in ps, truncated once per lane: the flush lane and
    // the compaction lane are two background lanes, whose truncations may lose a nanosecond).
    assert_eq!(r.fg.cpu_ns, cost_ns(&m, fg));
    let bg_cost = cost_ns(&m, bg);
    assert!(r.bg.cpu_ns <= bg_cost && bg_cost - r.bg.cpu_ns < 2, "{} vs {bg_cost}", r.bg.cpu_ns);
    // A core per lane by default: nobody queued for one. Parts still sum to the lane's time.
    assert_eq!(r.fg.cpu_queue_ns + r.bg.cpu_queue_ns, 0);
    assert_eq!(r.fg.total_ns(), r.fg_end);
}

#[test]
fn without_a_model_work_is_counted_and_nothing_is_charged() {
    let on = run(Some(model()), 3_000, 500, 64 << 10);
    let off = run(None, 3_000, 500, 64 << 10);
    assert_eq!((off.fg.cpu_ns, off.bg.cpu_ns), (0, 0));
    assert!(on.fg.cpu_ns > 0 && on.bg.cpu_ns > 0);
    assert!(on.fg_end > off.fg_end, "computing takes simulated time: {} vs {}", on.fg_end, off.fg_end);
    // The same work, whatever it is charged: the counts do not depend on the model ...
    assert_eq!(off.stats.cpu_foreground.insert, on.stats.cpu_foreground.insert);
    assert_eq!(off.stats.cpu_foreground.get, on.stats.cpu_foreground.get);
    // ... and the same run charges the same.
    let again = run(Some(model()), 3_000, 500, 64 << 10);
    assert_eq!((again.fg, again.bg, again.fg_end), (on.fg, on.bg, on.fg_end));
    assert_eq!(again.stats.cpu_background, on.stats.cpu_background);
}

/// Rates of the order of this machine's (a get ~2 us, a read byte ~0.3 ns): a get answered from
/// the block cache costs only CPU, a get that reads the flash (40 us a page) mostly waits for it.
fn realistic() -> CpuModel {
    let mut m = CpuModel::default();
    for (t, ns) in [
        (Term::Get, 1500.0),
        (Term::TableProbe, 250.0),
        (Term::BlockSearch, 400.0),
        (Term::BlockRead, 500.0),
        (Term::ReadByte, 0.3),
        (Term::WriteByte, 1.0),
        (Term::Insert, 1400.0),
        (Term::KeyFlushed, 150.0),
        (Term::KeyMerged, 200.0),
        (Term::BlockByte, 1.0),
        (Term::BlockBuilt, 2000.0),
        (Term::FilterKey, 30.0),
    ] {
        m.set(t, ns);
    }
    m
}

#[test]
fn cached_gets_are_cpu_bound_and_flash_gets_flash_bound() {
    let m = realistic();
    // 1,000 keys (about 1 MB) in a 16 MiB block cache: after the first reads (about 800 pages),
    // gets never reach the flash.
    let cached = run(Some(m), 1_000, 200_000, 16 << 20);
    let cached_reads = cached.stats.cpu_foreground.block_read;
    // 20,000 keys (20 MB) behind a 64 KiB cache: nearly every get reads a page.
    let flash = run(Some(m), 20_000, 20_000, 64 << 10);
    let flash_reads = flash.stats.cpu_foreground.block_read;
    assert!(flash_reads > 10 * cached_reads, "{flash_reads} vs {cached_reads}");
    let (c, f) = (&cached.gets, &flash.gets);
    assert!(c.cpu_ns > 5 * c.read_ns, "cached gets: cpu {} ns, reads {} ns", c.cpu_ns, c.read_ns);
    assert!(f.read_ns > 5 * f.cpu_ns, "flash gets: cpu {} ns, reads {} ns", f.cpu_ns, f.read_ns);
}

#[test]
fn lanes_that_share_one_core_wait_for_it() {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(256 << 20)).unwrap();
    let clock = SimClock::new();
    clock.set_host_cores(1);
    let fs = SimFs::format(BlockSsd::new(cfg).unwrap(), clock.clone(), SimFsOptions::default()).unwrap();
    let o = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        cpu: Some(realistic()),
        ..Options::default()
    };
    let db = Arc::new(Db::open(fs.env(), "db", o).unwrap());
    for i in 0..5_000u64 {
        db.put(&WriteOptions::default(), &key(i * 7919 % 5_000), &[7u8; 1000]).unwrap();
    }
    db.wait_for_background().unwrap();
    let (fg, bg) = (clock.spent(Lane::Foreground), clock.spent(Lane::Background));
    assert!(fg.cpu_queue_ns > 0, "the writer waited for the compactions' core: {fg:?}");
    assert!(bg.cpu_queue_ns > 0, "the compactions waited for the writer's core: {bg:?}");
}

/// Without a model (a calibration's runs, or any wall-clock run) an iterator's steps are not
/// charged as they go; `stats` is a charge point of its own, so the counts it returns hold the
/// steps of an iterator that is still open.
#[test]
fn stats_hold_the_steps_of_an_open_iterator() {
    let env = storage::Env::new(Arc::new(storage::MemFs::new()));
    let db = Db::open(env, "db", Options { create_if_missing: true, ..Options::default() }).unwrap();
    for i in 0..1_000u64 {
        db.put(&WriteOptions::default(), &key(i), b"value").unwrap();
    }
    let mut it = db.iter(&ReadOptions::default()).unwrap();
    it.seek(&key(100));
    for _ in 0..700 {
        it.next();
    }
    let s = db.stats();
    assert_eq!((s.cpu_foreground.seek, s.cpu_foreground.next), (1, 700));
    drop(it);
    assert_eq!(db.stats().cpu_foreground.next, 700, "the steps are counted once");
}

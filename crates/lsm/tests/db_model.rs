//! Model-based property test of the engine: random puts, deletes, batches, gets, scans, snapshots,
//! flushes, compactions, reopens and crashes, against a BTreeMap. After a crash every synced write
//! must be present and the surviving unsynced writes must form a prefix of the write order: the
//! database must equal the model as of some write at or after the last synced one (no holes, no
//! resurrected deletes). Runs under both Envs: on MemFs (crash drops unsynced data) with a real
//! background thread, and on SimFs and ZoneFs (power cut) with the background lane in simulated
//! time.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use flashsim::{SimClock, ZonedConfig, ZonedSsd};
use lsm::{CompactionStyle, Db, Options, ReadOptions, WriteBatch, WriteOptions};
use proptest::prelude::*;
use storage::{AllocPolicy, Env, Fs, GcOptions, MemFs, PageCacheConfig, SimFs, SimFsOptions, ZoneFs, ZoneFsOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Clone, Debug)]
enum Op {
    Put { key: u8, len: u16, sync: bool },
    Delete { key: u8, sync: bool },
    Batch { puts: Vec<(u8, u16)>, deletes: Vec<u8>, sync: bool },
    Get { key: u8 },
    Scan { from: u8, to: u8 },
    TakeSnapshot,
    ReadSnapshot { which: u8, key: u8 },
    Flush,
    Compact,
    Reopen,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (any::<u8>(), 0..600u16, prop::bool::weighted(0.2)).prop_map(|(key, len, sync)| Op::Put { key, len, sync }),
        5 => (any::<u8>(), prop::bool::weighted(0.2)).prop_map(|(key, sync)| Op::Delete { key, sync }),
        3 => (prop::collection::vec((any::<u8>(), 0..300u16), 0..6), prop::collection::vec(any::<u8>(), 0..4), any::<bool>())
            .prop_map(|(puts, deletes, sync)| Op::Batch { puts, deletes, sync }),
        6 => any::<u8>().prop_map(|key| Op::Get { key }),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(from, to)| Op::Scan { from, to }),
        1 => Just(Op::TakeSnapshot),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(which, key)| Op::ReadSnapshot { which, key }),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        2 => Just(Op::Crash),
    ]
}

fn key(k: u8) -> Vec<u8> {
    format!("key{:03}", k % 64).into_bytes()
}

fn value(k: u8, len: u16, serial: u64) -> Vec<u8> {
    let mut v = format!("v{serial}-{k}-").into_bytes();
    v.resize(len as usize + v.len(), b'a' + (serial % 26) as u8);
    v
}

fn options() -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 4 << 10,
        max_file_size: 8 << 10,
        max_bytes_for_level_base: 32 << 10,
        block_size: 512,
        l0_compaction_trigger: 2,
        l0_slowdown_writes_trigger: 3,
        l0_stop_writes_trigger: 4,
        max_open_files: 8,
        block_cache_bytes: 16 << 10,
        ..Options::default()
    }
}

/// The file system under test and how to crash it.
struct Setup {
    fs: Arc<dyn Fs>,
    crash: Box<dyn Fn()>,
    options: Options,
}

fn mem_env() -> Setup {
    let mem = MemFs::new();
    let c = mem.clone();
    Setup { fs: Arc::new(mem), crash: Box::new(move || c.crash()), options: options() }
}

/// Page cache sizes the flash file systems run with: none, 4 pages (written back under pressure
/// all the time), 1 MiB; the engine's files opened for direct I/O or not.
const CACHES: [u64; 3] = [0, 16 << 10, 1 << 20];

/// SimFs with a page cache of `cache` bytes.
fn sim_env(cache: u64) -> Setup {
    let clock = SimClock::new();
    let mut cfg = flashsim::SsdConfig::from_preset(flashsim::Preset::Femu, Some(64 << 20)).unwrap();
    cfg.spare_factor = 0.2;
    let dev = flashsim::BlockSsd::new(cfg).unwrap();
    let fs =
        SimFs::format(dev, clock.clone(), SimFsOptions { journal_region_pages: 48, alloc_window_pages: 16 }).unwrap();
    fs.set_page_cache(PageCacheConfig::with_capacity(cache)).unwrap();
    let c = fs.clone();
    Setup { fs: Arc::new(fs), crash: Box::new(move || c.power_cut().unwrap()), options: options() }
}

/// ZoneFs over a small zoned SSD (4 planes, zones of 16 pages per plane = 256 KiB, 64 zones),
/// placing by `policy`, with host zone GC and a page cache of `cache` bytes.
fn zone_env(policy: AllocPolicy, cache: u64) -> Setup {
    let clock = SimClock::new();
    let g = flashsim::Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 64,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 64,
    };
    let zone = 4 * g.block_bytes();
    let dev = ZonedSsd::new(ZonedConfig::new(g, flashsim::Preset::Femu.timing(), zone)).unwrap();
    let opts = ZoneFsOptions { policy, gc: Some(GcOptions::default()), ..ZoneFsOptions::default() };
    let fs = ZoneFs::format(dev, clock.clone(), opts).unwrap();
    fs.set_page_cache(PageCacheConfig::with_capacity(cache)).unwrap();
    let c = fs.clone();
    Setup { fs: Arc::new(fs), crash: Box::new(move || c.power_cut().unwrap()), options: options() }
}

fn contents(db: &Db) -> Model {
    db.scan(&ReadOptions::default(), Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect()
}

fn run(ops: Vec<Op>, env: Setup) -> Result<(), TestCaseError> {
    let mut db = Some(Db::open(Env::new(Arc::clone(&env.fs)), "db", env.options.clone()).unwrap());
    // history[i] = model after the i-th write; synced_upto = index of the last synced write.
    let mut history: Vec<Model> = vec![Model::new()];
    let mut synced_upto = 0usize;
    let mut snapshots: Vec<(lsm::Snapshot, Model)> = Vec::new();
    let mut serial = 0u64;
    for op in ops {
        let d = db.as_ref().unwrap();
        let model = history.last().unwrap().clone();
        match op {
            Op::Put { key: k, len, sync } => {
                serial += 1;
                let v = value(k, len, serial);
                d.put(&WriteOptions { sync }, &key(k), &v).unwrap();
                let mut m = model;
                m.insert(key(k), v);
                history.push(m);
                if sync {
                    synced_upto = history.len() - 1;
                }
            }
            Op::Delete { key: k, sync } => {
                d.delete(&WriteOptions { sync }, &key(k)).unwrap();
                let mut m = model;
                m.remove(&key(k));
                history.push(m);
                if sync {
                    synced_upto = history.len() - 1;
                }
            }
            Op::Batch { puts, deletes, sync } => {
                let mut b = WriteBatch::new();
                let mut m = model;
                for (k, len) in puts {
                    serial += 1;
                    let v = value(k, len, serial);
                    b.put(&key(k), &v);
                    m.insert(key(k), v);
                }
                for k in deletes {
                    b.delete(&key(k));
                    m.remove(&key(k));
                }
                d.write(&WriteOptions { sync }, b).unwrap();
                history.push(m);
                if sync {
                    synced_upto = history.len() - 1;
                }
            }
            Op::Get { key: k } => {
                prop_assert_eq!(d.get(&ReadOptions::default(), &key(k)).unwrap(), model.get(&key(k)).cloned());
            }
            Op::Scan { from, to } => {
                let (a, b) = (key(from).min(key(to)), key(from).max(key(to)));
                let got: Vec<_> = d
                    .scan(&ReadOptions::default(), Bound::Included(&a), Bound::Excluded(&b))
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect();
                let want: Vec<_> = model.range(a..b).map(|(k, v)| (k.clone(), v.clone())).collect();
                prop_assert_eq!(got, want);
                // Backward over everything.
                let mut it = d.iter(&ReadOptions::default()).unwrap();
                it.seek_to_last();
                let mut back = Vec::new();
                while it.valid() {
                    back.push(it.key().to_vec());
                    it.prev();
                }
                back.reverse();
                prop_assert_eq!(back, model.keys().cloned().collect::<Vec<_>>());
            }
            Op::TakeSnapshot => {
                if snapshots.len() < 4 {
                    snapshots.push((d.snapshot(), model));
                }
            }
            Op::ReadSnapshot { which, key: k } => {
                if !snapshots.is_empty() {
                    let (s, m) = &snapshots[which as usize % snapshots.len()];
                    let r = ReadOptions { snapshot: Some(s.sequence()), ..Default::default() };
                    prop_assert_eq!(d.get(&r, &key(k)).unwrap(), m.get(&key(k)).cloned());
                }
            }
            Op::Flush => d.flush().unwrap(),
            Op::Compact => d.compact_range(None, None).unwrap(),
            Op::Reopen => {
                snapshots.clear();
                db.take().unwrap().close().unwrap();
                db = Some(Db::open(Env::new(Arc::clone(&env.fs)), "db", env.options.clone()).unwrap());
                prop_assert_eq!(contents(db.as_ref().unwrap()), model);
            }
            Op::Crash => {
                snapshots.clear();
                drop(db.take());
                (env.crash)();
                let reopened = Db::open(Env::new(Arc::clone(&env.fs)), "db", env.options.clone()).unwrap();
                let got = contents(&reopened);
                let j = (synced_upto..history.len()).rev().find(|&j| history[j] == got);
                prop_assert!(
                    j.is_some(),
                    "after a crash the database matches no prefix at or after the last synced write {} of {}",
                    synced_upto,
                    history.len() - 1
                );
                history.truncate(j.unwrap() + 1);
                synced_upto = history.len() - 1;
                db = Some(reopened);
            }
        }
    }
    let d = db.take().unwrap();
    prop_assert_eq!(&contents(&d), history.last().unwrap());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn engine_on_memfs_matches_the_model(ops in prop::collection::vec(op(), 1..250)) {
        run(ops, mem_env())?;
    }

    #[test]
    fn engine_under_every_compaction_strategy_matches_the_model(
        ops in prop::collection::vec(op(), 1..250),
        style in prop::sample::select(vec![CompactionStyle::Leveled, CompactionStyle::Gear, CompactionStyle::LifetimeLeveling]),
    ) {
        let mut env = mem_env();
        env.options.compaction = style;
        run(ops, env)?;
    }

    #[test]
    fn engine_on_zonefs_under_every_strategy_matches_the_model(
        ops in prop::collection::vec(op(), 1..250),
        style in prop::sample::select(vec![CompactionStyle::Leveled, CompactionStyle::Gear, CompactionStyle::LifetimeLeveling]),
        policy in prop::sample::select(vec![AllocPolicy::Shared, AllocPolicy::PerLevel, AllocPolicy::Lifetime]),
        cache in prop::sample::select(CACHES.to_vec()),
        direct in any::<bool>(),
    ) {
        let mut env = zone_env(policy, cache);
        env.options.compaction = style;
        (env.options.direct_reads, env.options.direct_writes) = (direct, direct);
        run(ops, env)?;
    }

    #[test]
    fn engine_on_simfs_in_simulated_time_matches_the_model(
        ops in prop::collection::vec(op(), 1..250),
        cache in prop::sample::select(CACHES.to_vec()),
        direct_reads in any::<bool>(),
        direct_writes in any::<bool>(),
    ) {
        let mut env = sim_env(cache);
        (env.options.direct_reads, env.options.direct_writes) = (direct_reads, direct_writes);
        run(ops, env)?;
    }
}

//! Fault injection: read, write, sync and metadata errors (and torn writes) at random points never
//! corrupt the database. Every failed operation returns an error; after a crash and a reopen without
//! faults, the database equals the model as of some write at or after the last acknowledged synced
//! one (a failed write may or may not have reached the WAL). Reads under faults return the right
//! value or an error, never a wrong value. Under both Envs: over MemFs with a real background
//! thread, and over SimFs with the background lane in simulated time.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use lsm::{Db, Options, ReadOptions, WriteOptions};
use rand::{Rng, RngExt, SeedableRng};
use storage::{Env, FaultFs, Fs, IoClass, MemFs, SimFs, SimFsOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 4 << 10,
        max_file_size: 8 << 10,
        max_bytes_for_level_base: 32 << 10,
        block_size: 512,
        l0_compaction_trigger: 2,
        l0_slowdown_writes_trigger: 6,
        l0_stop_writes_trigger: 8,
        ..Options::default()
    }
}

fn contents(db: &Db) -> Model {
    db.scan(&ReadOptions::default(), Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect()
}

/// The file system under the faults, and how to crash it.
struct Base {
    fs: Arc<dyn Fs>,
    crash: Box<dyn Fn()>,
}

fn mem() -> Base {
    let mem = MemFs::new();
    let m = mem.clone();
    Base { fs: Arc::new(mem), crash: Box::new(move || m.crash()) }
}

fn sim() -> Base {
    let cfg = flashsim::SsdConfig::from_preset(flashsim::Preset::Femu, Some(64 << 20)).unwrap();
    let opts = SimFsOptions { journal_region_pages: 48, alloc_window_pages: 16 };
    let sim = SimFs::format(flashsim::BlockSsd::new(cfg).unwrap(), flashsim::SimClock::new(), opts).unwrap();
    let s = sim.clone();
    Base { fs: Arc::new(sim), crash: Box::new(move || s.power_cut().unwrap()) }
}

/// Opens with faults off (recovery itself is tested without injection) and checks the contents.
fn recover(
    fault: &FaultFs,
    base: &Base,
    fs: &Arc<dyn Fs>,
    history: &mut Vec<Model>,
    synced: &mut usize,
    seed: u64,
) -> Db {
    fault.set_enabled(false);
    (base.crash)();
    let db = Db::open(Env::new(Arc::clone(fs)), "db", options())
        .unwrap_or_else(|e| panic!("seed {seed}: reopen failed: {e}"));
    let got = contents(&db);
    let j = (*synced..history.len()).rev().find(|&j| history[j] == got).unwrap_or_else(|| {
        panic!("seed {seed}: contents match no write at or after the last synced {synced} of {}", history.len() - 1)
    });
    history.truncate(j + 1);
    *synced = j;
    fault.set_enabled(true);
    db
}

#[test]
fn injected_faults_never_corrupt_the_database() {
    run(mem, 40);
}

#[test]
fn injected_faults_never_corrupt_the_database_in_simulated_time() {
    run(sim, 20);
}

fn run(base: fn() -> Base, seeds: u64) {
    let mut failures_seen = 0;
    for seed in 0..seeds {
        let base = base();
        let fault = FaultFs::new(Arc::clone(&base.fs), seed);
        let fs: Arc<dyn Fs> = Arc::new(fault.clone());
        let mut db = Db::open(Env::new(Arc::clone(&fs)), "db", options()).unwrap();
        fault.set_probability(IoClass::Write, 0.004);
        fault.set_probability(IoClass::Sync, 0.01);
        fault.set_probability(IoClass::Read, 0.004);
        fault.set_probability(IoClass::Metadata, 0.004);
        fault.set_torn_writes(0.5);
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        let mut history = vec![Model::new()];
        let mut synced = 0;
        for i in 0..1500u64 {
            let k = format!("k{:03}", rng.next_u64() % 80).into_bytes();
            let roll = rng.random_range(0..100);
            if roll < 15 {
                match db.get(&ReadOptions::default(), &k) {
                    Ok(v) => assert_eq!(v, history.last().unwrap().get(&k).cloned(), "seed {seed}: wrong value read"),
                    Err(_) => failures_seen += 1,
                }
                continue;
            }
            let sync = rng.random_range(0..10) == 0;
            let mut m = history.last().unwrap().clone();
            let r = if roll < 25 {
                m.remove(&k);
                db.delete(&WriteOptions { sync }, &k)
            } else {
                let v = format!("{i}-{}", "x".repeat(rng.random_range(0..300))).into_bytes();
                m.insert(k.clone(), v.clone());
                db.put(&WriteOptions { sync }, &k, &v)
            };
            history.push(m);
            match r {
                Ok(()) if sync => synced = history.len() - 1,
                Ok(()) => {}
                Err(_) => {
                    failures_seen += 1;
                    drop(db);
                    db = recover(&fault, &base, &fs, &mut history, &mut synced, seed);
                }
            }
        }
        drop(db);
        recover(&fault, &base, &fs, &mut history, &mut synced, seed);
    }
    assert!(failures_seen > seeds, "the faults must actually hit: only {failures_seen} failures");
}

//! RemapCom through the whole engine: the same random workload (puts, overwrites, deletes, values of
//! 100 B to 4 KiB, aligned blocks) ends with identical contents, equal to a model, whether remap is
//! off, base or full; also across a crash in the middle of the run (MemFs, compactions running on the
//! background thread) and a power cut on SimFs in simulated time. RemapCom must actually act: with
//! base and full some UDBs are cloned, with off none.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use flashsim::SimClock;
use lsm::{Accepted, Db, DbStats, Error, Options, ReadOptions, RemapMode, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{Env, Fs, MemFs, SimFs, SimFsOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const MODES: [RemapMode; 3] = [RemapMode::Off, RemapMode::Base, RemapMode::Full];

fn options(mode: RemapMode) -> Options {
    Options {
        create_if_missing: true,
        align_blocks: true,
        remap: mode,
        write_buffer_size: 64 << 10,
        max_file_size: 64 << 10,
        max_bytes_for_level_base: 256 << 10,
        ..Options::default()
    }
}

fn contents(db: &Db) -> Model {
    db.scan(&ReadOptions::default(), Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap()).collect()
}

/// `ops` random writes (synced, so a crash loses none) from `rng` into `db` and `model`; every so
/// often a read is checked against the model.
fn writes(db: &Db, model: &mut Model, rng: &mut rand_pcg::Pcg64Mcg, ops: usize, sync: bool) {
    let wo = WriteOptions { sync };
    for _ in 0..ops {
        let k = format!("user{:06}", rng.next_u64() % 3000).into_bytes();
        let roll = rng.next_u64() % 100;
        if roll < 12 {
            db.delete(&wo, &k).unwrap();
            model.remove(&k);
        } else if roll < 17 {
            let got = db.get(&ReadOptions::default(), &k).unwrap();
            assert_eq!(got.as_ref(), model.get(&k), "read of {k:?}");
        } else {
            let len = 100 + (rng.next_u64() % (4096 - 100)) as usize;
            let mut v = format!("{}:", rng.next_u64()).into_bytes();
            v.resize(len, b'a' + (len % 26) as u8);
            db.put(&wo, &k, &v).unwrap();
            model.insert(k, v);
        }
    }
}

/// Sums the RemapCom counters over the levels: (found, cloned).
fn udbs(stats: &DbStats) -> (u64, u64) {
    stats.levels.iter().fold((0, 0), |(f, c), l| (f + l.udbs_found, c + l.udbs_cloned))
}

fn check_remap_acted(mode: RemapMode, found_cloned: (u64, u64), what: &str) {
    let (found, cloned) = found_cloned;
    match mode {
        RemapMode::Off => assert_eq!((found, cloned), (0, 0), "{what}: off finds nothing"),
        _ => {
            assert!(found > 0, "{what}: {mode} found no UDB");
            assert!(cloned > 0, "{what}: {mode} cloned no UDB");
            assert!(cloned <= found);
        }
    }
}

#[test]
fn modes_give_identical_contents_on_memfs() {
    let mut results = Vec::new();
    for mode in MODES {
        let fs: Arc<dyn Fs> = Arc::new(MemFs::new());
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(mode)).unwrap();
        let mut model = Model::new();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(11);
        writes(&db, &mut model, &mut rng, 6000, false);
        db.compact_range(None, None).unwrap();
        db.wait_for_background().unwrap();
        let got = contents(&db);
        assert!(got == model, "{mode}: contents differ from the model");
        check_remap_acted(mode, udbs(&db.stats()), "memfs");
        results.push(got);
    }
    assert!(results[0] == results[1] && results[1] == results[2]);
}

#[test]
fn modes_survive_a_crash_while_compacting_on_memfs() {
    let mut results = Vec::new();
    for mode in MODES {
        let mem = MemFs::new();
        let fs: Arc<dyn Fs> = Arc::new(mem.clone());
        let mut model = Model::new();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(12);
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(mode)).unwrap();
        writes(&db, &mut model, &mut rng, 4000, true);
        assert!(db.stats().compactions > 0, "compactions ran before the crash");
        // Power loss while the background thread is still compacting what those writes left due;
        // the dying engine's later I/O fails (its handles are stale) and nothing it did is needed.
        mem.crash();
        drop(db);
        mem.crash();
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", options(mode)).unwrap();
        assert!(contents(&db) == model, "{mode}: synced writes lost in the crash");
        writes(&db, &mut model, &mut rng, 3000, true);
        db.compact_range(None, None).unwrap();
        db.wait_for_background().unwrap();
        let got = contents(&db);
        assert!(got == model, "{mode}: contents differ from the model");
        check_remap_acted(mode, udbs(&db.stats()), "memfs after crash");
        results.push(got);
    }
    assert!(results[0] == results[1] && results[1] == results[2]);
}

#[test]
fn modes_survive_a_power_cut_on_simfs() {
    let mut results = Vec::new();
    for mode in MODES {
        let clock = SimClock::new();
        let cfg = flashsim::SsdConfig::from_preset(flashsim::Preset::Femu, Some(256 << 20)).unwrap();
        let sim = SimFs::format(flashsim::BlockSsd::new(cfg).unwrap(), clock.clone(), SimFsOptions::default()).unwrap();
        let fs: Arc<dyn Fs> = Arc::new(sim.clone());
        let o = options(mode);
        let mut model = Model::new();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(13);
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", o.clone()).unwrap();
        writes(&db, &mut model, &mut rng, 4000, true);
        let before = udbs(&db.stats());
        sim.power_cut().unwrap();
        drop(db);
        let db = Db::open(Env::new(Arc::clone(&fs)), "db", o).unwrap();
        assert!(contents(&db) == model, "{mode}: synced writes lost in the power cut");
        writes(&db, &mut model, &mut rng, 3000, true);
        db.compact_range(None, None).unwrap();
        let got = contents(&db);
        assert!(got == model, "{mode}: contents differ from the model");
        let after = udbs(&db.stats());
        check_remap_acted(mode, (before.0 + after.0, before.1 + after.1), "simfs");
        let remapped = sim.with_device(|d| d.counters().ftl.remapped_pages);
        match mode {
            RemapMode::Off => assert_eq!(remapped, 0, "off remaps nothing"),
            _ => assert!(remapped > 0, "{mode}: no page was remapped on the device"),
        }
        results.push(got);
    }
    assert!(results[0] == results[1] && results[1] == results[2]);
}

#[test]
fn remap_needs_aligned_blocks() {
    for mode in [RemapMode::Base, RemapMode::Full] {
        let o = Options { align_blocks: false, ..options(mode) };
        let accepted = Accepted::OnlyWhile { value: "off", option: "align_blocks", is: "false" };
        match o.validate() {
            Err(Error::InvalidOption { option: "remap", value, accepted: a }) => {
                assert_eq!((value, a), (mode.to_string(), accepted));
            }
            other => panic!("{mode} without align_blocks: {other:?}"),
        }
        let r = Db::open(Env::new(Arc::new(MemFs::new())), "db", o);
        assert!(matches!(r, Err(Error::InvalidOption { option: "remap", .. })));
    }
    let off = Options { align_blocks: false, ..options(RemapMode::Off) };
    off.validate().unwrap();
}

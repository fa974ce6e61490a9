//! The same workload on PosixFs, MemFs and SimFs (in simulated time) ends with identical contents:
//! the engine's behaviour does not depend on the file system under it, nor on its Env (real threads,
//! or lanes of simulated time).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use flashsim::SimClock;
use lsm::{Db, Options, ReadOptions, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{Env, Fs, MemFs, PosixFs, SimFs, SimFsOptions};

fn workload(fs: Arc<dyn Fs>) -> (u64, BTreeMap<Vec<u8>, Vec<u8>>) {
    let o = Options {
        create_if_missing: true,
        write_buffer_size: 32 << 10,
        max_file_size: 32 << 10,
        max_bytes_for_level_base: 128 << 10,
        ..Options::default()
    };
    let db = Db::open(Env::new(fs), "db", o).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(2024);
    let mut model = BTreeMap::new();
    for i in 0..30_000u64 {
        let k = format!("user{:08}", rng.next_u64() % 5000).into_bytes();
        if i % 7 == 0 {
            db.delete(&WriteOptions::default(), &k).unwrap();
            model.remove(&k);
        } else {
            let v = format!("{i}:{}", "z".repeat((rng.next_u64() % 200) as usize)).into_bytes();
            db.put(&WriteOptions::default(), &k, &v).unwrap();
            model.insert(k, v);
        }
    }
    db.compact_range(None, Some(b"user00002500")).unwrap();
    let mut checksum = 0u64;
    let mut contents = BTreeMap::new();
    for kv in db.scan(&ReadOptions::default(), Bound::Unbounded, Bound::Unbounded).unwrap() {
        let (k, v) = kv.unwrap();
        checksum = checksum
            .wrapping_mul(1_000_003)
            .wrapping_add(crc32c::crc32c(&k) as u64 ^ (crc32c::crc32c(&v) as u64) << 32);
        contents.insert(k, v);
    }
    assert_eq!(contents, model);
    (checksum, contents)
}

#[test]
fn posix_mem_and_sim_give_identical_contents() {
    let dir = tempfile::tempdir().unwrap();
    let posix = workload(Arc::new(PosixFs::new(dir.path()).unwrap()));
    let mem = workload(Arc::new(MemFs::new()));
    let clock = SimClock::new();
    let cfg = flashsim::SsdConfig::from_preset(flashsim::Preset::Femu, Some(256 << 20)).unwrap();
    let sim_fs = SimFs::format(flashsim::BlockSsd::new(cfg).unwrap(), clock.clone(), SimFsOptions::default()).unwrap();
    let sim = workload(Arc::new(sim_fs));
    assert_eq!(posix.0, mem.0, "PosixFs and MemFs differ");
    assert_eq!(mem.0, sim.0, "MemFs and SimFs differ");
    assert!(clock.time(flashsim::Lane::Background) > 0, "simulation charged background work to its lane");
}

//! The LSM-in-device baseline against the `HashMap` model (`common::model`): random puts,
//! overwrites, deletes, gets and exist calls on a small device where flushes, compactions into
//! several levels and GC run; every get returns the last value written (decoded from the flash
//! pages), and the device's structures agree with each other and with the media after every case.
//! Rarely written keys sink to the deep levels, and deletes of them leave tombstones that must
//! shadow them until a compaction meets them.

mod common;

use common::model::{long_workload, op, run};
use common::small_lsm_config;
use flashsim::{Cause, HostLabel};
use kvssd::{KvDevice, LsmInDevice};
use proptest::prelude::*;

fn lsm() -> LsmInDevice {
    LsmInDevice::new(small_lsm_config()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn lsm_in_device_matches_a_hashmap(ops in prop::collection::vec(op(), 1..1500)) {
        run(lsm(), &ops)?;
    }
}

/// The model test's mix, long enough that flushes, compactions into several levels and GC run
/// many times (asserted here, where the workload is known).
#[test]
fn flushes_compactions_into_several_levels_and_gc_run_and_every_value_survives() {
    let dev = run(lsm(), &long_workload(6000)).unwrap();
    let c = dev.counters();
    let s = dev.stats();
    assert!(c.cause(Cause::Host(HostLabel::Flush)).programs > 0 && s.flushes > 100, "{s:?}");
    for level in 1..=5u8 {
        assert!(c.cause(Cause::DeviceCompaction { level }).programs > 0, "compaction into L{level} ran: {s:?}");
        assert!(s.compactions[level as usize] > 0, "{s:?}");
    }
    assert!(c.cause(Cause::Gc).erases > 10 && s.gc_moved_pages > 0, "GC ran and moved pages: {s:?}");
    assert!(dev.media().wear().max_erases > 1, "blocks were reused");
    assert!(s.lookup_ssts_read > 1000, "lookups read SSTs: {s:?}");
    assert!(dev.level_bytes(4) > 0 && dev.level_bytes(5) > 0, "the deep levels hold data");
}

#[test]
fn the_same_workload_gives_the_same_device() {
    let ops = long_workload(3000);
    let (a, b) = (run(lsm(), &ops).unwrap(), run(lsm(), &ops).unwrap());
    assert_eq!(a.counters(), b.counters());
    assert_eq!(a.stats(), b.stats());
    assert_eq!(a.media().idle_at(), b.media().idle_at());
}

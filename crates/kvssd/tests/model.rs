//! PLSC against the `HashMap` model (`common::model`): random puts, overwrites, deletes, gets and
//! exist calls on a small device where compaction and GC run; every get returns the last value
//! written, and the device's structures agree with each other and with the media after every case.

mod common;

use common::model::{long_workload, op, run};
use common::small_config;
use flashsim::Cause;
use kvssd::{KvDevice, Plsc};
use proptest::prelude::*;

fn plsc() -> Plsc {
    Plsc::new(small_config()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn plsc_matches_a_hashmap(ops in prop::collection::vec(op(), 1..1500)) {
        run(plsc(), &ops)?;
    }
}

/// The model test's mix, long enough that both levels' compaction and GC run many times (asserted
/// here, where the workload is known).
#[test]
fn compaction_of_both_levels_and_gc_run_and_every_value_survives() {
    let dev = run(plsc(), &long_workload(6000)).unwrap();
    let c = dev.counters();
    let s = dev.stats();
    assert!(c.cause(Cause::DeviceCompaction { level: 0 }).programs > 0, "L0 compaction ran: {s:?}");
    assert!(c.cause(Cause::DeviceCompaction { level: 1 }).programs > 0, "L1 compaction ran: {s:?}");
    assert!(c.cause(Cause::Gc).erases > 0 && s.gc_moved_pages > 0, "GC ran and moved pages: {s:?}");
    assert!(s.compactions[0] > 10 && s.compactions[1] > 10 && s.gc_runs > 10, "{s:?}");
    assert!(dev.media().wear().max_erases > 1, "blocks were reused");
}

#[test]
fn the_same_workload_gives_the_same_device() {
    let ops = long_workload(3000);
    let (a, b) = (run(plsc(), &ops).unwrap(), run(plsc(), &ops).unwrap());
    assert_eq!(a.counters(), b.counters());
    assert_eq!(a.stats(), b.stats());
    assert_eq!(a.media().idle_at(), b.media().idle_at());
}

//! DFTL-KV against the `HashMap` model (`common::model`) on the small device where GC runs many
//! times, with the map in RAM and with a CMT of a few entries or a few translation pages (loads
//! and stores, and translation pages moved by GC).

mod common;

use common::model::{kv_op, long_kv_workload, run};
use common::{small_dftl_kv, small_dftl_kv_pages};
use flashsim::Cause;
use kvssd::{DftlKv, KvDevice};
use proptest::prelude::*;

fn dftl(ram: Option<u64>) -> DftlKv {
    DftlKv::new(small_dftl_kv(ram)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn dftl_kv_matches_a_hashmap(
        ram in prop::sample::select(vec![None, Some(14u64), Some(140), Some(512), Some(1024), Some(4096)]),
        pages in any::<bool>(),
        ops in prop::collection::vec(kv_op(), 1..4000),
    ) {
        // 14 B under the pages reading would hold no page.
        let cfg = if pages { small_dftl_kv_pages(ram.map(|r| r.max(512))) } else { small_dftl_kv(ram) };
        run(DftlKv::new(cfg).unwrap(), &ops)?;
    }
}

#[test]
fn gc_and_translation_io_run_and_every_value_survives() {
    let ops = long_kv_workload(8000);
    let dev = run(dftl(None), &ops).unwrap();
    let s = dev.stats();
    let c = dev.counters();
    assert!(s.gc_runs > 50 && s.gc_moved_pages > 0, "{s:?}");
    assert_eq!(c.cause(Cause::Gc).erases, s.gc_runs);
    assert_eq!(c.cause(Cause::Mapping), Default::default(), "no translation I/O with the map in RAM");

    let dev = run(dftl(Some(1024)), &ops).unwrap();
    let s = dev.stats();
    let m = dev.counters().cause(Cause::Mapping);
    assert!(s.mapping.loads > 100 && s.mapping.stores > 100, "{:?}", s.mapping);
    assert!(s.deferred_stores > 0, "GC moved pages whose entries were not cached: {s:?}");
    assert_eq!(m.reads, s.mapping.loads + s.mapping.store_reads);
    assert_eq!(m.programs, s.mapping.stores);
    assert_eq!(m.busy_ns, s.mapping.load_ns + s.mapping.store_ns);
}

#[test]
fn the_same_workload_gives_the_same_device() {
    let ops = long_kv_workload(3000);
    for ram in [None, Some(1024)] {
        let (a, b) = (run(dftl(ram), &ops).unwrap(), run(dftl(ram), &ops).unwrap());
        assert_eq!(a.counters(), b.counters());
        assert_eq!(a.stats(), b.stats());
        assert_eq!(a.media().idle_at(), b.media().idle_at());
    }
}

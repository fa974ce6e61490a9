//! KVFTL and its variants against the `HashMap` model (`common::model`): random puts, overwrites,
//! deletes, gets, exist calls and flushes on a small device where GC runs many times, with all
//! tables in RAM and with a table cache of a few entries (mapping loads and stores, and GC of
//! mapping blocks); every get returns the last value written, and the device's structures agree
//! with each other and with the media after every case.

mod common;

use common::model::{kv_op, long_kv_workload, run};
use common::{kv_variants, small_kvftl};
use flashsim::Cause;
use kvssd::{KvDevice, Kvftl, Variant};
use proptest::prelude::*;

fn kvftl(variant: Variant, ram: Option<u64>) -> Kvftl {
    Kvftl::new(small_kvftl(variant, ram)).unwrap()
}

fn variant() -> impl Strategy<Value = Variant> {
    prop::sample::select(kv_variants().to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn kvftl_matches_a_hashmap(v in variant(), ops in prop::collection::vec(kv_op(), 1..4000)) {
        run(kvftl(v, None), &ops)?;
    }

    #[test]
    fn kvftl_with_a_tiny_table_cache_matches_a_hashmap(
        v in variant(),
        ram in prop::sample::select(vec![8u64, 64, 512]),
        ops in prop::collection::vec(kv_op(), 1..4000),
    ) {
        run(kvftl(v, Some(ram)), &ops)?;
    }
}

/// The model's mix, long enough that GC collects many blocks of every variant, and that under a
/// RAM budget table pages are loaded, stored, and their blocks collected (asserted here, where
/// the workload is known).
#[test]
fn gc_and_mapping_io_run_and_every_value_survives() {
    let ops = long_kv_workload(8000);
    for v in kv_variants() {
        let dev = run(kvftl(v, None), &ops).unwrap();
        let s = dev.stats();
        let c = dev.counters();
        assert!(s.gc_runs > 50 && s.gc_moved_partitions > 0 && s.gc_live_page_copies > 0, "{v}: {s:?}");
        assert!(c.cause(Cause::Gc).erases == s.gc_runs && c.cause(Cause::Gc).programs > 0, "{v}");
        assert_eq!(c.cause(Cause::Mapping), Default::default(), "{v}: no table I/O with tables in RAM");
        assert!(s.buffer_reads > 0, "{v}: some gets hit a page buffer");
        assert!(dev.media().wear().max_erases > 1, "{v}: blocks were reused");

        let dev = run(kvftl(v, Some(64)), &ops).unwrap();
        let s = dev.stats();
        let m = dev.counters().cause(Cause::Mapping);
        assert!(s.mapping.loads > 100 && s.mapping.stores > 100, "{v}: {:?}", s.mapping);
        assert_eq!(m.reads, s.mapping.loads + s.mapping.store_reads, "{v}");
        assert_eq!(m.programs, s.mapping.stores, "{v}");
        assert_eq!(m.busy_ns, s.mapping.load_ns + s.mapping.store_ns, "{v}");
        assert!(s.gc_mapping_victims > 0 && s.gc_moved_table_pages > 0, "{v}: mapping blocks collected: {s:?}");
    }
}

#[test]
fn the_same_workload_gives_the_same_device() {
    let ops = long_kv_workload(3000);
    for ram in [None, Some(64)] {
        let (a, b) = (run(kvftl(Variant::Pure, ram), &ops).unwrap(), run(kvftl(Variant::Pure, ram), &ops).unwrap());
        assert_eq!(a.counters(), b.counters());
        assert_eq!(a.stats(), b.stats());
        assert_eq!(a.media().idle_at(), b.media().idle_at());
    }
}

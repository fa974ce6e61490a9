//! Accounting identities of KVFTL and DFTL-KV: every flash program, read and erase is counted
//! under exactly one of host, GC and mapping (so programs = host + GC + mapping pages), erases are
//! GC's alone, the device's own counts match the media's, mapping time is the mapping cause's die
//! time, and identical runs give identical counters.

mod common;

use common::{key, kv_variants, small_dftl_kv, small_kvftl, value, Churn, Lcg};
use flashsim::{Cause, CauseCounts, FlashCounters, Nanos, Preset};
use kvssd::{DftlKv, KvDevice, Kvftl};

/// [`common::churn`] of the key-value FTLs' mix: `n` requests, values up to 2 KiB, 160 keys.
fn churn<D: KvDevice + 'static>(dev: D, n: u64) -> D {
    common::churn(dev, Churn::kv(n))
}

fn causes(c: &FlashCounters) -> [CauseCounts; 3] {
    [c.cause(Cause::HOST), c.cause(Cause::Gc), c.cause(Cause::Mapping)]
}

/// The identities every key-value FTL keeps.
fn adds_up(c: &FlashCounters, busy: Nanos, what: &str) {
    let [host, gc, map] = causes(c);
    assert_eq!(c.programs, host.programs + gc.programs + map.programs, "{what}");
    assert_eq!(c.reads, host.reads + gc.reads + map.reads, "{what}");
    assert_eq!(c.erases, gc.erases, "{what}: only GC erases");
    assert_eq!(host.erases + map.erases, 0, "{what}");
    assert_eq!(c.sum(|_| true).programs, c.programs, "{what}: no other cause did anything");
    assert_eq!(c.busy_ns, host.busy_ns + gc.busy_ns + map.busy_ns, "{what}");
    assert_eq!(c.busy_ns, busy, "{what}: the dies' own busy time");
    assert_eq!(c.copybacks, 0, "{what}: GC reads and programs, no copyback");
}

#[test]
fn kvftl_counts_add_up_by_cause() {
    let timing = Preset::Kvftl.timing();
    let read_ns = timing.read_ns + timing.page_transfer_ns(512);
    for v in kv_variants() {
        for ram in [None, Some(64)] {
            let what = format!("{v} {ram:?}");
            let dev = churn(Kvftl::new(small_kvftl(v, ram)).unwrap(), 6000);
            dev.check().unwrap();
            let c = dev.counters();
            let s = dev.stats();
            adds_up(c, dev.media().total_die_busy(), &what);
            let [host, gc, map] = causes(c);
            assert!(gc.programs > 0 && gc.erases > 0, "{what}: GC ran: {s:?}");
            assert_eq!(gc.erases, s.gc_runs, "{what}");
            assert_eq!(gc.reads, s.gc_live_page_copies, "{what}: each live page read once");
            assert_eq!((host.reads, host.programs), (s.host_page_reads, s.host_page_programs), "{what}");
            assert_eq!((c.reads, c.programs, c.erases), (s.page_reads, s.page_programs, s.erases), "{what}");
            assert_eq!(map.reads, s.mapping.loads + s.mapping.store_reads, "{what}");
            assert_eq!(map.programs, s.mapping.stores, "{what}");
            assert_eq!(map.busy_ns, s.mapping.load_ns + s.mapping.store_ns, "{what}");
            assert_eq!(s.mapping.load_ns, s.mapping.loads * read_ns, "{what}: a load is one page read");
            assert_eq!(ram.is_some(), s.mapping.loads > 0, "{what}: table I/O only under a RAM budget");
            assert_eq!(s.partitions_per_value.values(), s.puts);
            assert_eq!(s.static_ram_bytes, s.live_keys * 6);
            let w = dev.work();
            assert_eq!((w.gc_runs, w.gc_moved_pages, w.dram_hits), (s.gc_runs, s.gc_live_page_copies, s.buffer_reads));
        }
    }
}

#[test]
fn dftl_kv_counts_add_up_by_cause() {
    for ram in [None, Some(1024)] {
        let what = format!("dftl-kv {ram:?}");
        let dev = churn(DftlKv::new(small_dftl_kv(ram)).unwrap(), 6000);
        dev.check().unwrap();
        let c = dev.counters();
        let s = dev.stats();
        adds_up(c, dev.media().total_die_busy(), &what);
        let [host, gc, map] = causes(c);
        assert!(gc.programs > 0 && gc.erases > 0, "{what}: GC ran: {s:?}");
        assert_eq!((gc.erases, gc.reads, gc.programs), (s.gc_runs, s.gc_moved_pages, s.gc_moved_pages), "{what}");
        assert_eq!(host.programs, s.lpas_put, "{what}: a host program per LPA put");
        assert_eq!(map.reads, s.mapping.loads + s.mapping.store_reads, "{what}");
        assert_eq!(map.programs, s.mapping.stores, "{what}");
        assert_eq!(map.busy_ns, s.mapping.load_ns + s.mapping.store_ns, "{what}");
        assert_eq!(ram.is_some(), s.mapping.loads > 0, "{what}");
        assert_eq!(s.static_ram_bytes, s.live_keys * 26 + s.gtd_bytes);
    }
}

#[test]
fn identical_runs_give_identical_counters() {
    for ram in [None, Some(64)] {
        let a = churn(Kvftl::new(small_kvftl(kvssd::Variant::WS, ram)).unwrap(), 3000);
        let b = churn(Kvftl::new(small_kvftl(kvssd::Variant::WS, ram)).unwrap(), 3000);
        assert_eq!((a.counters(), a.stats(), a.work()), (b.counters(), b.stats(), b.work()));
        assert_eq!(a.media().idle_at(), b.media().idle_at());
    }
    let a = churn(DftlKv::new(small_dftl_kv(Some(1024))).unwrap(), 3000);
    let b = churn(DftlKv::new(small_dftl_kv(Some(1024))).unwrap(), 3000);
    assert_eq!((a.counters(), a.stats(), a.work()), (b.counters(), b.stats(), b.work()));
}

/// The paper's Fig. 10 on small values: KVFTL packs them into shared pages (100 % utilisation),
/// DFTL-KV spends a page on each, so it programs far more and uses its space far worse.
#[test]
fn on_small_values_kvftl_programs_fewer_pages_and_wastes_nothing() {
    let mut kv = Kvftl::new(small_kvftl(kvssd::Variant::Pure, None)).unwrap();
    let mut dftl = DftlKv::new(small_dftl_kv(None)).unwrap();
    let mut r = Lcg(3);
    for seq in 0..3000u64 {
        let (k, v) = (key(r.below(100) as usize), value(seq, 1 + r.below(200) as usize));
        kv.store(0, &k, &v).unwrap();
        dftl.store(0, &k, &v).unwrap();
    }
    let (ks, ds) = (kv.stats(), dftl.stats());
    assert_eq!(ks.utilisation(), 1.0);
    assert!(ds.utilisation() < 0.25, "{}", ds.utilisation());
    assert!(
        ks.host_page_programs * 3 < ds.host_page_programs,
        "{} vs {}",
        ks.host_page_programs,
        ds.host_page_programs
    );
}

//! Accounting identities of the LSM-in-device baseline: every flash program, read and erase is
//! counted under exactly one of the causes it uses (host flush programs and lookup reads, device
//! compaction by output level, GC), GC's page moves are copybacks, and erases are GC's alone.

mod common;

use common::{small_lsm_config, Churn};
use flashsim::{Cause, CauseCounts, FlashCounters, HostLabel};
use kvssd::{KvDevice, LsmConfig, LsmInDevice};

/// [`common::churn`] of a fresh device, checked.
fn churn(cfg: LsmConfig) -> LsmInDevice {
    let dev = common::churn(LsmInDevice::new(cfg).unwrap(), Churn::SMALL);
    dev.check().unwrap();
    dev
}

/// Host (flush label), host (no label), compaction into each level, GC.
fn causes(c: &FlashCounters, levels: u8) -> (CauseCounts, CauseCounts, Vec<CauseCounts>, CauseCounts) {
    (
        c.cause(Cause::Host(HostLabel::Flush)),
        c.cause(Cause::HOST),
        (0..levels).map(|level| c.cause(Cause::DeviceCompaction { level })).collect(),
        c.cause(Cause::Gc),
    )
}

fn check_identities(dev: &LsmInDevice) {
    let c = dev.counters();
    let s = dev.stats();
    let (flush, host, compaction, gc) = causes(c, dev.config().levels);
    let sum = |f: fn(&CauseCounts) -> u64| compaction.iter().map(f).sum::<u64>();
    assert!(flush.programs > 0 && sum(|c| c.programs) > 0 && gc.erases > 0 && gc.programs > 0, "{s:?}");
    assert!(compaction.iter().filter(|c| c.programs > 0).count() >= 3, "compactions into 3 levels or more: {s:?}");
    assert_eq!(c.programs, flush.programs + sum(|c| c.programs) + gc.programs, "programs: host + compaction + GC");
    assert_eq!(host.programs, 0, "every host program is a flush");
    assert_eq!(flush.reads, 0, "a flush reads nothing");
    assert_eq!(c.reads, host.reads + sum(|c| c.reads) + gc.reads, "reads: lookups + compaction + GC");
    assert_eq!(c.erases, gc.erases, "only GC erases");
    assert_eq!(gc.erases, s.gc_runs);
    assert_eq!(c.sum(|_| true).programs, c.programs, "no other cause did anything");
    assert_eq!(c.busy_ns, flush.busy_ns + host.busy_ns + sum(|c| c.busy_ns) + gc.busy_ns);
    assert_eq!(c.busy_ns, dev.media().total_die_busy());
    // Compaction writes into level 1 and deeper, never into L0.
    assert_eq!((compaction[0].programs, compaction[0].reads), (0, 0));
    // Every lookup that reached flash read whole SSTs: at least one page per SST.
    assert!(host.reads >= s.lookup_ssts_read && s.lookup_ssts_read > 0);
    // A flush writes one L0 SST of 1 to 4 pages (4 KiB memtable, 1 KiB pages).
    assert!(flush.programs >= s.flushes && flush.programs <= 4 * s.flushes);
}

#[test]
fn programs_reads_and_erases_add_up_by_cause_and_gc_moves_are_copybacks() {
    let dev = churn(small_lsm_config());
    check_identities(&dev);
    let c = dev.counters();
    let gc = c.cause(Cause::Gc);
    // Every GC move is a copyback inside its plane: one read and one program each.
    assert_eq!(c.copybacks, gc.programs);
    assert_eq!(gc.reads, gc.programs);
    assert_eq!(c.copybacks, dev.stats().gc_moved_pages);
}

#[test]
fn without_copyback_gc_moves_are_plain_reads_and_programs() {
    let mut cfg = small_lsm_config();
    cfg.copyback = false;
    let dev = churn(cfg);
    check_identities(&dev);
    assert_eq!(dev.counters().copybacks, 0);
    assert_eq!(dev.counters().cause(Cause::Gc).programs, dev.stats().gc_moved_pages);
}

#[test]
fn striped_the_identities_hold_too() {
    let mut cfg = small_lsm_config();
    cfg.stripe = true;
    check_identities(&churn(cfg));
}

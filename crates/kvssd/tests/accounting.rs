//! Accounting identities: every flash program, read and erase is counted under exactly one of the
//! causes PLSC uses (host I/O, device compaction by level, GC), GC's page moves are copybacks, and
//! erases are GC's alone.

mod common;

use common::{small_config, Churn};
use flashsim::{Cause, FlashCounters};
use kvssd::{KvDevice, Plsc, PlscConfig};

/// [`common::churn`] of a fresh device, checked.
fn churn(cfg: PlscConfig) -> Plsc {
    let dev = common::churn(Plsc::new(cfg).unwrap(), Churn::SMALL);
    dev.check().unwrap();
    dev
}

fn causes(c: &FlashCounters) -> [flashsim::CauseCounts; 4] {
    [
        c.cause(Cause::HOST),
        c.cause(Cause::DeviceCompaction { level: 0 }),
        c.cause(Cause::DeviceCompaction { level: 1 }),
        c.cause(Cause::Gc),
    ]
}

#[test]
fn programs_reads_and_erases_add_up_by_cause_and_gc_moves_are_copybacks() {
    let dev = churn(small_config());
    let c = dev.counters();
    let [host, l0, l1, gc] = causes(c);
    assert!(l0.programs > 0 && l1.programs > 0 && gc.erases > 0 && gc.programs > 0, "{:?}", dev.stats());
    assert_eq!(c.programs, host.programs + l0.programs + l1.programs + gc.programs);
    assert_eq!(c.reads, host.reads + l0.reads + l1.reads + gc.reads);
    assert_eq!(c.erases, gc.erases, "only GC erases");
    assert_eq!(host.erases + l0.erases + l1.erases, 0);
    assert_eq!(c.sum(|_| true).programs, c.programs, "no other cause did anything");
    // Every GC move is a copyback inside its plane: one read and one program each.
    assert_eq!(c.copybacks, gc.programs);
    assert_eq!(gc.reads, gc.programs);
    assert_eq!(c.copybacks, dev.stats().gc_moved_pages);
    assert_eq!(gc.erases, dev.stats().gc_runs);
    // Busy time too: the causes' shares are the whole.
    assert_eq!(c.busy_ns, host.busy_ns + l0.busy_ns + l1.busy_ns + gc.busy_ns);
    assert_eq!(c.busy_ns, dev.media().total_die_busy());
    // Host programs are the flushes' L0 USTs: at most one page per plane per flush.
    let planes = dev.media().geometry().total_planes() as u64;
    assert!(host.programs <= dev.stats().flushes * planes && host.programs >= dev.stats().flushes);
}

#[test]
fn without_copyback_gc_moves_are_plain_reads_and_programs() {
    let mut cfg = small_config();
    cfg.copyback = false;
    let dev = churn(cfg);
    let c = dev.counters();
    let [host, l0, l1, gc] = causes(c);
    assert_eq!(c.copybacks, 0);
    assert!(gc.programs > 0);
    assert_eq!(gc.programs, dev.stats().gc_moved_pages);
    assert_eq!(c.programs, host.programs + l0.programs + l1.programs + gc.programs);
}

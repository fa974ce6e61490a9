//! ZoneFs against the contract every file system keeps: the behavioural suite (with each placement
//! policy, with and without host GC), and the crash contract of MemFs through power cuts (random
//! histories run side by side with MemFs, on zones small enough that zones fill, die, are reset
//! and collected during the history).

mod common;

use std::sync::Arc;

use common::history_op;
use flashsim::{Geometry, Preset, SimClock, ZonedConfig, ZonedSsd};
use proptest::prelude::*;
use storage::conformance::run_all;
use storage::history::{check_history, random_history, HistoryError, Op, Problem, Step, Subject};
use storage::{AllocPolicy, Fs, FsError, GcOptions, MemFs, PageCacheConfig, ZoneFs, ZoneFsOptions};

/// 4 planes (2 channels x 2 planes per die), `pages_per_block` pages of 4 KiB; zones of one block
/// per plane.
fn device(pages_per_block: u32, blocks_per_plane: u32) -> ZonedSsd {
    let g = Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane,
        pages_per_block,
        page_size: 4096,
        oob_size: 64,
    };
    let zone = 4 * g.block_bytes();
    ZonedSsd::new(ZonedConfig::new(g, Preset::Femu.timing(), zone)).unwrap()
}

fn zonefs(policy: AllocPolicy, gc: bool, pages_per_block: u32, blocks_per_plane: u32) -> ZoneFs {
    let opts = ZoneFsOptions { policy, gc: gc.then(GcOptions::default), ..ZoneFsOptions::default() };
    ZoneFs::format(device(pages_per_block, blocks_per_plane), SimClock::new(), opts).unwrap()
}

/// A ZoneFs with a page cache of `cache` bytes.
fn cached(policy: AllocPolicy, pages_per_block: u32, blocks_per_plane: u32, cache: u64) -> ZoneFs {
    let fs = zonefs(policy.clone(), true, pages_per_block, blocks_per_plane);
    fs.set_page_cache(PageCacheConfig::with_capacity(cache)).unwrap();
    fs
}

#[test]
fn zonefs_with_a_page_cache_passes_the_behavioural_suite() {
    // Three pages (dirty pages pushed out under pressure) and 1 MiB.
    for cache in [12 << 10, 1 << 20] {
        for policy in [AllocPolicy::Shared, AllocPolicy::PerLevel] {
            run_all(&|| Arc::new(cached(policy.clone(), 64, 32, cache)) as Arc<dyn Fs>);
        }
    }
}

#[test]
fn zonefs_passes_the_behavioural_suite_with_every_policy() {
    for (policy, gc) in [
        (AllocPolicy::Shared, false),
        (AllocPolicy::PerLevel, true),
        (AllocPolicy::Lifetime, false),
        (AllocPolicy::Shared, true),
    ] {
        // 1 MiB zones, 32 of them: room for the suite's 8 MiB file.
        run_all(&|| Arc::new(zonefs(policy.clone(), gc, 64, 32)) as Arc<dyn Fs>);
    }
}

fn subjects_on(fs: ZoneFs) -> Vec<Subject> {
    let handle = fs.clone();
    vec![
        Subject::mem(MemFs::new()),
        Subject {
            name: format!("{fs:?}"),
            fs: Arc::new(fs),
            crash: Box::new(move || handle.power_cut().expect("remount after power cut")),
        },
    ]
}

/// The harness's histories without `CloneInto` (clone_range into the middle of a file), which a
/// zoned file system refuses; `AppendCloned` stays (it copies).
fn without_clone_into(ops: Vec<Op>) -> Vec<Op> {
    ops.into_iter().filter(|o| !matches!(o, Op::CloneInto { .. })).collect()
}

/// Runs `ops` on MemFs and a fresh ZoneFs from `make`. The devices are small on purpose (zones
/// fill, die, are reset and collected by GC within a history), so a history may outgrow one: MemFs
/// has no capacity. Then the history is checked up to the operation that ran out of space, which
/// must be a clean `NoSpace`. Returns the ZoneFs, and whether the history was cut.
fn check(ops: &[Op], make: &dyn Fn() -> ZoneFs) -> Result<(ZoneFs, bool), HistoryError> {
    let fs = make();
    match check_history(ops, subjects_on(fs.clone())) {
        Ok(()) => Ok((fs, false)),
        Err(HistoryError { step: Step::Op { index, .. }, problem: Problem::Fs(e), .. })
            if matches!(*e, FsError::NoSpace { .. }) =>
        {
            let fs = make();
            check_history(&ops[..index], subjects_on(fs.clone()))?;
            Ok((fs, true))
        }
        Err(e) => Err(e),
    }
}

const POLICIES: [AllocPolicy; 3] = [AllocPolicy::Shared, AllocPolicy::PerLevel, AllocPolicy::Lifetime];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn zonefs_keeps_the_crash_contract_of_memfs(ops in proptest::collection::vec(history_op(false), 1..150), p in 0..3usize) {
        // 16 KiB zones (one 4 KiB page per plane), 8 data zones.
        let r = check(&ops, &|| zonefs(POLICIES[p].clone(), true, 1, 10));
        prop_assert!(r.is_ok(), "{:?}", r.err());
        let fs = r.unwrap().0;
        prop_assert!(fs.check_consistency().is_ok(), "{:?}", fs.check_consistency());
    }

    #[test]
    fn zonefs_with_a_page_cache_keeps_the_crash_contract_of_memfs(
        ops in proptest::collection::vec(history_op(false), 1..150),
        p in 0..3usize,
        pages in prop_oneof![Just(3u64), Just(64u64)],
    ) {
        let r = check(&ops, &|| cached(POLICIES[p].clone(), 1, 10, pages * 4096));
        prop_assert!(r.is_ok(), "{:?}", r.err());
        let fs = r.unwrap().0;
        prop_assert!(fs.check_consistency().is_ok(), "{:?}", fs.check_consistency());
    }
}

#[test]
fn long_seeded_histories_with_a_page_cache() {
    for (policy, pages) in [(AllocPolicy::Shared, 3), (AllocPolicy::Lifetime, 64)] {
        for seed in 0..8 {
            let ops = without_clone_into(random_history(seed, 400));
            let (fs, _) = check(&ops, &|| cached(policy.clone(), 1, 8, pages * 4096))
                .unwrap_or_else(|e| panic!("{} with {pages} pages seed {seed}: {e}", policy.name()));
            fs.check_consistency().unwrap();
        }
    }
}

#[test]
fn long_seeded_histories_with_power_cuts_and_gc() {
    for policy in POLICIES {
        let (mut c, mut cut) = (storage::zone::ZoneFsCounters::default(), 0);
        for seed in 0..16 {
            let ops = without_clone_into(random_history(seed, 400));
            // 16 KiB zones, 6 data zones: histories reuse zones and run GC.
            let (fs, was_cut) = check(&ops, &|| zonefs(policy.clone(), true, 1, 8))
                .unwrap_or_else(|e| panic!("{} seed {seed}: {e}", policy.name()));
            fs.check_consistency().unwrap();
            let n = fs.zone_report().counters;
            (c.resets, c.gc_runs, c.padding_bytes) =
                (c.resets + n.resets, c.gc_runs + n.gc_runs, c.padding_bytes + n.padding_bytes);
            cut += was_cut as u32;
        }
        eprintln!(
            "{}: {} resets, {} GC runs, {} padding bytes, {cut} of 16 histories cut at NoSpace",
            policy.name(),
            c.resets,
            c.gc_runs,
            c.padding_bytes
        );
        assert!(
            c.resets > 0 && c.gc_runs > 0 && c.padding_bytes > 0,
            "{}: the histories reset zones, ran GC and padded syncs",
            policy.name()
        );
        assert!(cut <= 4, "{}: most histories fit the device", policy.name());
    }
}

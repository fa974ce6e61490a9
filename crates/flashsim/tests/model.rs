//! Model-based property test: random writes, reads, trims, remaps and power cuts on a small device
//! under GC pressure, checked against a map of LPN -> page bytes. After every operation the FTL's
//! own invariants must hold; after every power cut every LPN must read exactly what the model says.

use std::collections::HashMap;

use flashsim::Ftl;
use flashsim::{
    BlockSsd, Cause, DataMode, FlashError, GcDestination, GcPolicy, Geometry, HostLabel, MappingMode, SsdConfig, Timing,
};

/// Host I/O without a label.
const L: HostLabel = HostLabel::Unlabelled;
use proptest::prelude::*;

const PAGE: usize = 512;

#[derive(Clone, Debug)]
enum Op {
    Write { lpn: u64, pages: u64, tag: u8 },
    Read { lpn: u64, pages: u64 },
    Trim { lpn: u64, pages: u64 },
    Remap { src: u64, dst: u64, pages: u64 },
    PowerCut,
}

fn op(user: u64) -> impl Strategy<Value = Op> {
    let lpn = 0..user;
    prop_oneof![
        6 => (lpn.clone(), 1..5u64, any::<u8>()).prop_map(|(lpn, pages, tag)| Op::Write { lpn, pages, tag }),
        2 => (lpn.clone(), 1..5u64).prop_map(|(lpn, pages)| Op::Read { lpn, pages }),
        1 => (lpn.clone(), 1..9u64).prop_map(|(lpn, pages)| Op::Trim { lpn, pages }),
        2 => (lpn.clone(), lpn, 1..9u64).prop_map(|(src, dst, pages)| Op::Remap { src, dst, pages }),
        1 => Just(Op::PowerCut),
    ]
}

fn config(policy: GcPolicy, copyback: bool, multi_plane: bool, dftl: bool) -> SsdConfig {
    let geometry = Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 12,
        pages_per_block: 8,
        page_size: PAGE as u32,
        oob_size: 16,
    };
    let timing = Timing { read_ns: 50_000, program_ns: 500_000, erase_ns: 3_000_000, transfer_ps_per_byte: 10_000 };
    let mut cfg = SsdConfig::new(geometry, timing);
    cfg.spare_factor = 0.4;
    cfg.gc_policy = policy;
    cfg.copyback = copyback;
    cfg.media.multi_plane = multi_plane;
    cfg.remap_segment_entries = 4;
    if dftl {
        cfg.mapping = MappingMode::Dftl { cmt_entries: 16 };
    }
    cfg
}

fn page_bytes(tag: u8, lpn: u64, i: u64) -> Vec<u8> {
    let mut p = vec![tag; PAGE];
    p[..8].copy_from_slice(&(lpn + i).to_le_bytes());
    p
}

fn expect(model: &HashMap<u64, Vec<u8>>, lpn: u64) -> Vec<u8> {
    model.get(&lpn).cloned().unwrap_or_else(|| vec![0; PAGE])
}

fn check_all(ssd: &mut BlockSsd, model: &HashMap<u64, Vec<u8>>, t: &mut u64) -> Result<(), TestCaseError> {
    let mut buf = vec![0; PAGE];
    for lpn in 0..ssd.user_pages() {
        *t = ssd.read(*t, lpn, &mut buf, L).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&buf, &expect(model, lpn), "LPN {}", lpn);
    }
    Ok(())
}

fn run(ops: Vec<Op>, cfg: SsdConfig) -> Result<(), TestCaseError> {
    let mut ssd = BlockSsd::new(cfg).unwrap();
    let user = ssd.user_pages();
    let mut model: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut t = 0u64;
    for op in ops {
        match op {
            Op::Write { lpn, pages, tag } => {
                let pages = pages.min(user - lpn);
                let data: Vec<u8> = (0..pages).flat_map(|i| page_bytes(tag, lpn, i)).collect();
                let done = ssd.write(t, lpn, &data, L).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(done > t, "a program takes time");
                t = done;
                for i in 0..pages {
                    model.insert(lpn + i, page_bytes(tag, lpn, i));
                }
            }
            Op::Read { lpn, pages } => {
                let pages = pages.min(user - lpn);
                let mut buf = vec![0; pages as usize * PAGE];
                t = ssd.read(t, lpn, &mut buf, L).map_err(|e| TestCaseError::fail(e.to_string()))?;
                for i in 0..pages {
                    let got = &buf[i as usize * PAGE..(i as usize + 1) * PAGE];
                    prop_assert_eq!(got, &expect(&model, lpn + i)[..], "LPN {}", lpn + i);
                }
            }
            Op::Trim { lpn, pages } => {
                let pages = pages.min(user - lpn);
                t = ssd.trim(t, lpn, pages).map_err(|e| TestCaseError::fail(e.to_string()))?;
                for l in lpn..lpn + pages {
                    model.remove(&l);
                }
            }
            Op::Remap { src, dst, pages } => {
                let pages = pages.min(user - src).min(user - dst);
                let r = ssd.remap(t, src, dst, pages);
                if src < dst + pages && dst < src + pages {
                    prop_assert!(matches!(r, Err(FlashError::OverlappingRemap { .. })), "{:?}", r);
                    continue;
                }
                t = r.map_err(|e| TestCaseError::fail(e.to_string()))?;
                for i in 0..pages {
                    match model.get(&(src + i)).cloned() {
                        Some(p) => model.insert(dst + i, p),
                        None => model.remove(&(dst + i)),
                    };
                }
            }
            Op::PowerCut => {
                ssd.power_cut();
                check_all(&mut ssd, &model, &mut t)?;
            }
        }
        if let Err(e) = ssd.check_consistency() {
            return Err(TestCaseError::fail(e.to_string()));
        }
        check_accounting(&ssd)?;
    }
    ssd.power_cut();
    ssd.check_consistency().map_err(|e| TestCaseError::fail(e.to_string()))?;
    check_all(&mut ssd, &model, &mut t)
}

/// Every NAND operation is counted once, under the cause that made it: host pages under the
/// host's label, relocations and erases under GC, translation pages under mapping; the causes add
/// up to the totals.
fn check_accounting(ssd: &BlockSsd) -> Result<(), TestCaseError> {
    let c = ssd.counters();
    let (f, ftl) = (c.flash, c.ftl);
    let host = f.cause(Cause::HOST);
    prop_assert_eq!(host.programs, ftl.host_write_pages);
    prop_assert!(host.reads <= ftl.host_read_pages, "unmapped pages read as zeros without NAND");
    prop_assert_eq!(host.erases, 0);
    let gc = f.cause(Cause::Gc);
    prop_assert_eq!(gc.programs, ftl.gc_copied_pages);
    prop_assert_eq!(gc.reads, ftl.gc_copied_pages);
    prop_assert_eq!(gc.erases, ftl.gc_runs);
    let mapping = f.cause(Cause::Mapping);
    prop_assert_eq!((mapping.programs, mapping.reads), (ftl.translation_writes, ftl.translation_reads));
    let all = f.sum(|_| true);
    prop_assert_eq!((all.reads, all.programs, all.erases, all.busy_ns), (f.reads, f.programs, f.erases, f.busy_ns));
    prop_assert_eq!(host.programs + gc.programs + mapping.programs, f.programs, "no other cause programs here");
    prop_assert_eq!(f.erases, ftl.gc_runs);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn greedy_copyback_matches_model(ops in proptest::collection::vec(op(230), 1..600)) {
        run(ops, config(GcPolicy::Greedy, true, true, false))?;
    }

    #[test]
    fn greedy_in_plane_copyback_matches_model(ops in proptest::collection::vec(op(230), 1..600)) {
        let mut cfg = config(GcPolicy::Greedy, true, true, false);
        cfg.gc_destination = GcDestination::InPlane;
        run(ops, cfg)?;
    }

    #[test]
    fn fifo_in_plane_dftl_matches_model(ops in proptest::collection::vec(op(230), 1..600)) {
        let mut cfg = config(GcPolicy::Fifo, true, true, true);
        cfg.gc_destination = GcDestination::InPlane;
        run(ops, cfg)?;
    }

    #[test]
    fn fifo_without_copyback_matches_model(ops in proptest::collection::vec(op(230), 1..600)) {
        run(ops, config(GcPolicy::Fifo, false, false, false))?;
    }

    #[test]
    fn cost_benefit_dftl_matches_model(ops in proptest::collection::vec(op(230), 1..600)) {
        run(ops, config(GcPolicy::cost_benefit(), true, true, true))?;
    }
}

#[test]
fn the_model_device_is_small_enough_to_force_gc() {
    let cfg = config(GcPolicy::Greedy, true, true, false);
    let mut ssd = BlockSsd::new(cfg).unwrap();
    assert!(ssd.user_pages() >= 230, "strategies draw LPNs below 230; device has {}", ssd.user_pages());
    let page = vec![7u8; PAGE];
    let mut t = 0;
    for i in 0..5_000u64 {
        t = ssd.write(t, (i * 7919) % ssd.user_pages(), &page, L).unwrap();
    }
    assert!(ssd.counters().ftl.gc_runs > 100);
    ssd.check_consistency().unwrap();
}

/// Uniform overwrites of the model device: (copybacks, GC copied pages, simulated ns).
fn overwrite(destination: GcDestination, copyback: bool) -> (u64, u64, u64) {
    let mut cfg = config(GcPolicy::Greedy, copyback, true, false);
    cfg.gc_destination = destination;
    let mut ssd = BlockSsd::new(cfg).unwrap();
    let page = vec![7u8; PAGE];
    let (mut t, mut x) = (0, 0x9e37_79b9_7f4a_7c15u64);
    for _ in 0..5_000u64 {
        // xorshift: uniform random LPNs, so that victims hold valid pages.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t = ssd.write(t, x % ssd.user_pages(), &page, L).unwrap();
    }
    ssd.check_consistency().unwrap();
    let ftl = ssd.counters().ftl;
    (ssd.counters().flash.copybacks, ftl.gc_copied_pages, t)
}

#[test]
fn in_plane_gc_relocates_by_copyback_and_spread_gc_never_does() {
    let (spread_cb, spread_copied, _) = overwrite(GcDestination::Spread, true);
    assert!(spread_copied > 1_000, "the device does GC: {spread_copied} pages copied");
    assert_eq!(spread_cb, 0, "a plane is collected once its frontier is full: every copy leaves the plane");

    let (cb, copied, t_cb) = overwrite(GcDestination::InPlane, true);
    assert!(cb * 10 >= copied * 9, "in-plane GC copies by copyback when the room is there: {cb} of {copied}");
    let (no_cb, copied_no_cb, t_no_cb) = overwrite(GcDestination::InPlane, false);
    assert_eq!(no_cb, 0);
    assert_eq!(copied_no_cb, copied, "copyback changes how a page moves, not which pages GC moves");
    assert!(t_no_cb > t_cb, "without copyback every copy crosses the channel twice: {t_no_cb} vs {t_cb} ns");
}

#[test]
fn metadata_only_reads_are_errors_not_fake_data() {
    let mut cfg = config(GcPolicy::Greedy, true, true, false);
    cfg.media.store = DataMode::MetadataOnly;
    let mut ssd = BlockSsd::new(cfg).unwrap();
    let t = ssd.write(0, 3, &vec![1; PAGE], L).unwrap();
    let mut buf = vec![0; PAGE];
    assert!(matches!(ssd.read(t, 3, &mut buf, L), Err(FlashError::NoData { lpn: 3 })));
    // An unmapped page reads as zeros (deterministic read after TRIM), which is not made up.
    ssd.read(t, 4, &mut buf, L).unwrap();
    assert_eq!(buf, vec![0; PAGE]);
}

#[test]
fn sparse_file_mode_keeps_data_across_gc_and_power_cut() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(GcPolicy::Greedy, true, true, false);
    cfg.media.store = DataMode::SparseFile(dir.path().join("nand.img"));
    let mut ssd = BlockSsd::new(cfg).unwrap();
    let mut t = 0;
    let user = ssd.user_pages();
    for round in 0..8u8 {
        for lpn in 0..user {
            t = ssd.write(t, lpn, &page_bytes(round, lpn, 0), L).unwrap();
        }
    }
    ssd.power_cut();
    let mut buf = vec![0; PAGE];
    for lpn in 0..user {
        t = ssd.read(t, lpn, &mut buf, L).unwrap();
        assert_eq!(buf, page_bytes(7, lpn, 0));
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let mut ssd = BlockSsd::new(config(GcPolicy::Greedy, true, true, false)).unwrap();
    let user = ssd.user_pages();
    let e = ssd.write(0, user, &vec![0; PAGE], L).unwrap_err();
    assert!(matches!(e, FlashError::OutOfRange { .. }), "{e}");
    let e = ssd.write(0, 0, &vec![0; PAGE + 1], L).unwrap_err();
    assert!(e.to_string().contains("misaligned write"), "{e}");
    let e = ssd.remap(0, 0, 2, 4).unwrap_err();
    assert!(matches!(e, FlashError::OverlappingRemap { .. }), "{e}");
    let mut cfg = config(GcPolicy::Greedy, true, true, false);
    cfg.spare_factor = 0.01;
    let e = BlockSsd::new(cfg).err().unwrap();
    assert!(e.to_string().contains("spare_factor"), "{e}");
}

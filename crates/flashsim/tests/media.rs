//! The media layer alone, against a model of NAND: per block a write pointer and the bytes of each
//! programmed page. Programs only at the write pointer, reads only of programmed pages, erase
//! resets a block, relocation moves a page and its owner; contents are dropped when a page is
//! invalidated. Every operation's counts and busy time land in its cause, and the causes add up
//! to the totals and to the dies' own busy time.

use std::collections::HashMap;

use flashsim::media::NO_OWNER;
use flashsim::{Cause, DataMode, FlashError, Geometry, HostLabel, Media, MediaConfig, PageWrite, Timing};
use proptest::prelude::*;

const PAGE: usize = 512;
const PPB: u32 = 4;

fn geometry(channels: u32, dies: u32, planes: u32) -> Geometry {
    Geometry {
        channels,
        chips_per_channel: 1,
        dies_per_chip: dies,
        planes_per_die: planes,
        blocks_per_plane: 4,
        pages_per_block: PPB,
        page_size: PAGE as u32,
        oob_size: 16,
    }
}

fn timing() -> Timing {
    Timing { read_ns: 50_000, program_ns: 500_000, erase_ns: 3_000_000, transfer_ps_per_byte: 10_000 }
}

fn media(store: DataMode) -> Media {
    let mut cfg = MediaConfig::new(geometry(2, 1, 2), timing());
    cfg.store = store;
    Media::new(&cfg).unwrap()
}

const CAUSES: [Cause; 4] =
    [Cause::Host(HostLabel::Wal), Cause::Gc, Cause::Mapping, Cause::DeviceCompaction { level: 1 }];

#[derive(Clone, Debug)]
enum Op {
    Program { block: u32, tag: u8, cause: usize },
    Read { block: u32, page: u32, cause: usize },
    Invalidate { block: u32, page: u32 },
    Relocate { block: u32, page: u32, to: u32, copyback: bool },
    Erase { block: u32, cause: usize },
}

fn op(blocks: u32) -> impl Strategy<Value = Op> {
    let b = 0..blocks;
    prop_oneof![
        5 => (b.clone(), any::<u8>(), 0..4usize).prop_map(|(block, tag, cause)| Op::Program { block, tag, cause }),
        3 => (b.clone(), 0..PPB + 1, 0..4usize).prop_map(|(block, page, cause)| Op::Read { block, page, cause }),
        2 => (b.clone(), 0..PPB).prop_map(|(block, page)| Op::Invalidate { block, page }),
        2 => (b.clone(), 0..PPB, b.clone(), any::<bool>())
            .prop_map(|(block, page, to, copyback)| Op::Relocate { block, page, to, copyback }),
        1 => (b, 0..4usize).prop_map(|(block, cause)| Op::Erase { block, cause }),
    ]
}

/// A programmed page: its contents while valid, and the owner in its OOB.
type ModelPage = (Option<Vec<u8>>, u32);

/// What NAND must hold: per block, the programmed pages.
#[derive(Default)]
struct Model {
    blocks: HashMap<u32, Vec<ModelPage>>,
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut m = media(DataMode::Memory);
    let blocks = m.geometry().total_blocks() as u32;
    let mut model = Model::default();
    let mut t = 0;
    let mut buf = vec![0u8; PAGE];
    for op in ops {
        match op {
            Op::Program { block, tag, cause } => {
                let pages = model.blocks.entry(block).or_default();
                let page = pages.len() as u32;
                let ppn = block * PPB + page.min(PPB - 1);
                let data = vec![tag; PAGE];
                let r = m.program(&[PageWrite { ppn, ready: t, owner: tag as u32, data: Some(&data) }], CAUSES[cause]);
                if page >= PPB {
                    // The block is full: its last page is behind the write pointer.
                    prop_assert!(matches!(r, Err(FlashError::ProgramOutOfOrder { .. })), "{r:?}");
                    continue;
                }
                t = r.map_err(|e| TestCaseError::fail(e.to_string()))?;
                pages.push((Some(data), tag as u32));
            }
            Op::Read { block, page, cause } => {
                let ppn = block * PPB + page.min(PPB - 1);
                let programmed = model.blocks.get(&block).map_or(0, |p| p.len()) as u32;
                let r = m.read(&[(ppn, t)], CAUSES[cause]);
                if page.min(PPB - 1) >= programmed {
                    prop_assert!(matches!(r, Err(FlashError::UnwrittenPage { .. })), "{r:?}");
                    continue;
                }
                t = r.map_err(|e| TestCaseError::fail(e.to_string()))?;
                let (contents, owner) = &model.blocks[&block][page.min(PPB - 1) as usize];
                let has = m.contents(ppn, &mut buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(has, contents.is_some());
                if let Some(c) = contents {
                    prop_assert_eq!(&buf, c);
                }
                prop_assert_eq!(m.oob(ppn).0, *owner);
            }
            Op::Invalidate { block, page } => {
                let ppn = block * PPB + page;
                if let Some(p) = model.blocks.get_mut(&block).and_then(|b| b.get_mut(page as usize)) {
                    m.invalidate(ppn);
                    p.0 = None;
                }
            }
            Op::Relocate { block, page, to, copyback } => {
                let Some(&(Some(_), _)) = model.blocks.get(&block).and_then(|b| b.get(page as usize)) else {
                    continue;
                };
                let dst_page = model.blocks.get(&to).map_or(0, |p| p.len()) as u32;
                if to == block || dst_page >= PPB {
                    continue;
                }
                let (src, dst) = (block * PPB + page, to * PPB + dst_page);
                let before = *m.counters();
                t = m.relocate(t, src, dst, 77, copyback, Cause::Gc).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let d = m.counters().delta(&before);
                let same_plane = m.geometry().plane_of_block(block) == m.geometry().plane_of_block(to);
                prop_assert_eq!(d.copybacks, (copyback && same_plane) as u64, "copyback only inside a plane");
                prop_assert_eq!((d.reads, d.programs), (1, 1));
                let moved = model.blocks.get_mut(&block).unwrap()[page as usize].0.take();
                model.blocks.entry(to).or_default().push((moved, 77));
                prop_assert!(!m.is_valid(src) && m.is_valid(dst));
            }
            Op::Erase { block, cause } => {
                t = m.erase(t, block, CAUSES[cause]).map_err(|e| TestCaseError::fail(e.to_string()))?;
                model.blocks.remove(&block);
                prop_assert_eq!(m.write_pointer(block), 0);
                prop_assert_eq!(m.oob(block * PPB).0, NO_OWNER);
            }
        }
        // The media's state is the model's.
        for b in 0..blocks {
            let pages = model.blocks.get(&b).map_or(&[][..], |p| &p[..]);
            prop_assert_eq!(m.write_pointer(b), pages.len() as u32, "block {}", b);
            let valid = pages.iter().filter(|p| p.0.is_some()).count() as u32;
            prop_assert_eq!(m.valid_pages(b), valid, "block {}", b);
        }
        check_identities(&m)?;
    }
    Ok(())
}

/// Programs, reads, erases and busy time: the totals are the sums over causes, and busy time is
/// what the dies themselves were busy.
fn check_identities(m: &Media) -> Result<(), TestCaseError> {
    let c = m.counters();
    let all = c.sum(|_| true);
    prop_assert_eq!(all.programs, c.programs);
    prop_assert_eq!(all.reads, c.reads);
    prop_assert_eq!(all.erases, c.erases);
    prop_assert_eq!(all.busy_ns, c.busy_ns);
    prop_assert_eq!(c.busy_ns, m.total_die_busy());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn media_matches_the_nand_model(ops in proptest::collection::vec(op(16), 1..300)) {
        run(ops)?;
    }
}

#[test]
fn programs_only_at_the_write_pointer_and_reads_only_what_was_programmed() {
    let mut m = media(DataMode::Memory);
    let page = vec![1u8; PAGE];
    let w = |ppn, owner| PageWrite { ppn, ready: 0, owner, data: Some(&page) };
    let e = m.program(&[w(1, 0)], Cause::HOST).unwrap_err();
    assert!(matches!(e, FlashError::ProgramOutOfOrder { block: 0, page: 1, write_pointer: 0 }), "{e}");
    m.program(&[w(0, 5), w(1, 6)], Cause::HOST).unwrap();
    let e = m.program(&[w(0, 7)], Cause::HOST).unwrap_err();
    assert!(e.to_string().contains("write pointer is at page 2"), "{e}");
    let e = m.read(&[(2, 0)], Cause::HOST).unwrap_err();
    assert!(matches!(e, FlashError::UnwrittenPage { ppn: 2, .. }), "{e}");
    assert!(matches!(m.read(&[(u32::MAX - 1, 0)], Cause::HOST), Err(FlashError::NoSuchPage { .. })));
    // Erase: the block takes programs from page 0 again and counts its wear.
    m.erase(0, 0, Cause::Gc).unwrap();
    m.program(&[w(0, 8)], Cause::HOST).unwrap();
    assert_eq!((m.erase_count(0), m.oob(0).0), (1, 8));
    let wear = m.wear();
    assert_eq!((wear.min_erases, wear.max_erases), (0, 1));
}

#[test]
fn invalidated_pages_leave_the_store() {
    for store in [DataMode::Memory, DataMode::TempFile(std::env::temp_dir())] {
        let mut m = media(store);
        let page = vec![9u8; PAGE];
        for ppn in 0..PPB {
            m.program(&[PageWrite { ppn, ready: 0, owner: ppn, data: Some(&page) }], Cause::HOST).unwrap();
        }
        let mut buf = vec![0; PAGE];
        m.invalidate(2);
        assert!(!m.contents(2, &mut buf).unwrap(), "an invalid page keeps no contents");
        assert!(m.contents(3, &mut buf).unwrap() && buf == page);
        assert_eq!(m.valid_pages(0), PPB - 1);
    }
    // Memory holds the live pages, not everything ever programmed.
    let mut m = media(DataMode::Memory);
    let page = vec![3u8; PAGE];
    let mut t = 0;
    for round in 0..200 {
        let block = round % 4;
        for p in 0..PPB {
            let ppn = block * PPB + p;
            t = m.program(&[PageWrite { ppn, ready: t, owner: 0, data: Some(&page) }], Cause::HOST).unwrap();
            m.invalidate(ppn);
        }
        t = m.erase(t, block, Cause::Gc).unwrap();
    }
    assert_eq!(m.resident_bytes(), (flashsim::media::SLOTS_PER_CHUNK * PAGE) as u64, "one chunk of slots");
}

#[test]
fn parallel_dies_overlap_and_a_shared_channel_serialises_transfers() {
    let t = timing();
    let x = t.page_transfer_ns(PAGE as u32);
    // Two dies on one channel, one plane each.
    let mut m = Media::new(&MediaConfig::new(geometry(1, 2, 1), t.clone())).unwrap();
    let blocks_per_die = m.geometry().blocks_per_plane;
    let (a, b) = (0, blocks_per_die * PPB); // first page of die 0 and of die 1
    let page = vec![0u8; PAGE];
    let done = m
        .program(
            &[
                PageWrite { ppn: a, ready: 0, owner: 0, data: Some(&page) },
                PageWrite { ppn: b, ready: 0, owner: 0, data: Some(&page) },
            ],
            Cause::HOST,
        )
        .unwrap();
    // The second die waits for the bus only, then programs in parallel with the first.
    assert_eq!(done, 2 * x + t.program_ns);
    let t0 = m.idle_at();
    let done = m.read(&[(a, t0), (b, t0)], Cause::Gc).unwrap();
    assert_eq!(done, t0 + t.read_ns + 2 * x, "array reads overlap, transfers queue on the channel");
    // Two pages on one die: serial.
    let mut m = Media::new(&MediaConfig::new(geometry(1, 1, 1), t.clone())).unwrap();
    let done = m
        .program(
            &[
                PageWrite { ppn: 0, ready: 0, owner: 0, data: None },
                PageWrite { ppn: 1, ready: 0, owner: 0, data: None },
            ],
            Cause::HOST,
        )
        .unwrap();
    assert_eq!(done, 2 * (x + t.program_ns));
    // Two planes of one die, same page offset: one multi-plane program.
    let mut m = Media::new(&MediaConfig::new(geometry(1, 1, 2), t.clone())).unwrap();
    let other_plane = m.geometry().blocks_per_plane * PPB;
    let done = m
        .program(
            &[
                PageWrite { ppn: 0, ready: 0, owner: 0, data: None },
                PageWrite { ppn: other_plane, ready: 0, owner: 0, data: None },
            ],
            Cause::HOST,
        )
        .unwrap();
    assert_eq!(done, 2 * x + t.program_ns);
    assert_eq!(m.counters().multi_plane_ops, 1);
    assert_eq!(m.counters().busy_ns, m.total_die_busy());
}

#[test]
fn every_cause_gets_its_own_pages_and_time() {
    let mut m = media(DataMode::MetadataOnly);
    let w = |ppn| PageWrite { ppn, ready: 0, owner: 0, data: None };
    m.program(&[w(0), w(1)], Cause::Host(HostLabel::Wal)).unwrap();
    m.program(&[w(2)], Cause::Mapping).unwrap();
    m.read(&[(0, 0)], Cause::Host(HostLabel::Compaction { level: 3 })).unwrap();
    m.relocate(0, 1, PPB * 2, 1, false, Cause::Gc).unwrap();
    m.erase(0, 0, Cause::Gc).unwrap();
    let c = m.counters();
    let t = timing();
    let x = t.page_transfer_ns(PAGE as u32);
    let wal = c.cause(Cause::Host(HostLabel::Wal));
    assert_eq!((wal.programs, wal.reads), (2, 0));
    assert_eq!(c.cause(Cause::Mapping).programs, 1);
    assert_eq!(c.cause(Cause::Host(HostLabel::Compaction { level: 3 })).reads, 1);
    let gc = c.cause(Cause::Gc);
    assert_eq!((gc.reads, gc.programs, gc.erases), (1, 1, 1));
    assert!(gc.busy_ns >= t.read_ns + x + x + t.program_ns + t.erase_ns);
    let names: Vec<String> = c.by_cause_report().into_iter().map(|r| r.cause).collect();
    assert_eq!(names, ["host.wal", "host.compaction.L3", "gc", "mapping"]);
    let shares: f64 = c.by_cause_report().iter().map(|r| r.busy_share).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
}

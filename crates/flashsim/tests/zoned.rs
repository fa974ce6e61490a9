//! ZonedSsd: every zone state x command of the NVMe ZNS state machine, the open and active limits,
//! timing of the zone stripe, erase accounting of resets, and power cuts.

mod common;

use common::{geometry, name, timing, PAGE};
use flashsim::{Cause, DataMode, FlashError, HostLabel, ZoneInfo, ZoneState, ZonedConfig, ZonedSsd};

const L: HostLabel = HostLabel::Unlabelled;

/// Zones of one block per plane (16 pages), 12 of them writable.
fn config() -> ZonedConfig {
    let mut c = ZonedConfig::new(geometry(), timing(), 4 * 4 * PAGE as u64);
    c.zone_capacity = 12 * PAGE as u64;
    c
}

fn device(max_open: Option<u32>, max_active: Option<u32>) -> ZonedSsd {
    let mut c = config();
    c.max_open_zones = max_open;
    c.max_active_zones = max_active;
    ZonedSsd::new(c).unwrap()
}

fn page(tag: u8) -> Vec<u8> {
    vec![tag; PAGE]
}

#[derive(Clone, Copy, Debug)]
enum Start {
    Empty,
    ImplicitlyOpened,
    ExplicitlyOpenedUnwritten,
    ExplicitlyOpenedWritten,
    Closed,
    FullWritten,
    FullFinished,
    ReadOnly,
    Offline,
}

/// Brings zone 1 of a fresh device to `s`.
fn prepare(s: Start) -> ZonedSsd {
    let mut d = device(None, None);
    let z = 1;
    match s {
        Start::Empty => {}
        Start::ImplicitlyOpened => {
            d.write(0, z, 0, &page(1), L).unwrap();
        }
        Start::ExplicitlyOpenedUnwritten => d.open(z).unwrap(),
        Start::ExplicitlyOpenedWritten => {
            d.open(z).unwrap();
            d.write(0, z, 0, &page(1), L).unwrap();
        }
        Start::Closed => {
            d.write(0, z, 0, &page(1), L).unwrap();
            d.close(z).unwrap();
        }
        Start::FullWritten => {
            d.write(0, z, 0, &vec![1; 12 * PAGE], L).unwrap();
        }
        Start::FullFinished => d.finish(z).unwrap(),
        Start::ReadOnly => {
            d.write(0, z, 0, &page(1), L).unwrap();
            d.fail_zone(z, ZoneState::ReadOnly).unwrap();
        }
        Start::Offline => d.fail_zone(z, ZoneState::Offline).unwrap(),
    }
    d
}

#[derive(Clone, Copy, Debug)]
enum Cmd {
    Write,
    Append,
    Open,
    Close,
    Finish,
    Reset,
    TakeOffline,
}

fn run(d: &mut ZonedSsd, c: Cmd) -> Result<(), FlashError> {
    let z = 1;
    let wp = d.zone(z).unwrap().write_pointer;
    match c {
        Cmd::Write => d.write(0, z, wp, &page(9), L).map(|_| ()),
        Cmd::Append => d.append(0, z, &page(9), L).map(|(off, _)| assert_eq!(off, wp, "append returns the offset")),
        Cmd::Open => d.open(z),
        Cmd::Close => d.close(z),
        Cmd::Finish => d.finish(z),
        Cmd::Reset => d.reset(0, z).map(|_| ()),
        Cmd::TakeOffline => d.offline(z),
    }
}

#[test]
fn every_state_and_command_follows_the_zns_state_machine() {
    use Cmd::*;
    use Start as S;
    use ZoneState::*;
    const INVALID: &str = "InvalidZoneStateTransition";
    type Row = (Start, [Result<ZoneState, &'static str>; 7]);
    // Columns: write, append, open, close, finish, reset, offline.
    #[rustfmt::skip]
    let table: [Row; 9] = [
        (S::Empty, [Ok(ImplicitlyOpened), Ok(ImplicitlyOpened), Ok(ExplicitlyOpened), Err(INVALID), Ok(Full), Ok(Empty), Err(INVALID)]),
        (S::ImplicitlyOpened, [Ok(ImplicitlyOpened), Ok(ImplicitlyOpened), Ok(ExplicitlyOpened), Ok(Closed), Ok(Full), Ok(Empty), Err(INVALID)]),
        // Closing an opened zone whose write pointer is at the zone start empties it.
        (S::ExplicitlyOpenedUnwritten, [Ok(ExplicitlyOpened), Ok(ExplicitlyOpened), Ok(ExplicitlyOpened), Ok(Empty), Ok(Full), Ok(Empty), Err(INVALID)]),
        (S::ExplicitlyOpenedWritten, [Ok(ExplicitlyOpened), Ok(ExplicitlyOpened), Ok(ExplicitlyOpened), Ok(Closed), Ok(Full), Ok(Empty), Err(INVALID)]),
        (S::Closed, [Ok(ImplicitlyOpened), Ok(ImplicitlyOpened), Ok(ExplicitlyOpened), Ok(Closed), Ok(Full), Ok(Empty), Err(INVALID)]),
        (S::FullWritten, [Err("ZoneIsFull"), Err("ZoneIsFull"), Err(INVALID), Err(INVALID), Ok(Full), Ok(Empty), Err(INVALID)]),
        (S::FullFinished, [Err("ZoneIsFull"), Err("ZoneIsFull"), Err(INVALID), Err(INVALID), Ok(Full), Ok(Empty), Err(INVALID)]),
        (S::ReadOnly, [Err("ZoneIsReadOnly"), Err("ZoneIsReadOnly"), Err(INVALID), Err(INVALID), Err(INVALID), Err(INVALID), Ok(Offline)]),
        (S::Offline, [Err("ZoneIsOffline"), Err("ZoneIsOffline"), Err(INVALID), Err(INVALID), Err(INVALID), Err(INVALID), Ok(Offline)]),
    ];
    let cmds = [Write, Append, Open, Close, Finish, Reset, TakeOffline];
    let mut failures = Vec::new();
    for (start, row) in table {
        for (cmd, want) in cmds.iter().zip(row) {
            let mut d = prepare(start);
            let before = d.zone(1).unwrap();
            let got = run(&mut d, *cmd);
            let after = d.zone(1).unwrap();
            let ok = match (&got, want) {
                (Ok(()), Ok(state)) => after.state == state,
                (Err(e), Err(n)) => name(e) == n && after == before,
                _ => false,
            };
            if !ok {
                failures.push(format!("{start:?} x {cmd:?}: got {got:?} -> {:?}, want {want:?}", after.state));
            }
            // Write pointers follow the command.
            if ok && got.is_ok() {
                let wp = match cmd {
                    Write | Append => before.write_pointer + 1,
                    Finish => 12,
                    Reset => 0,
                    _ => before.write_pointer,
                };
                let wp = if after.state == Full { 12 } else { wp };
                if after.write_pointer != wp && !matches!(after.state, ReadOnly | Offline) {
                    failures.push(format!("{start:?} x {cmd:?}: write pointer {} != {wp}", after.write_pointer));
                }
            }
            d.check_consistency().unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn writes_off_the_write_pointer_or_past_the_capacity_are_refused() {
    let mut d = device(None, None);
    d.write(0, 0, 0, &page(1), L).unwrap();
    let e = d.write(0, 0, 3, &page(1), L).unwrap_err();
    assert!(matches!(e, FlashError::ZoneInvalidWrite { zone: 0, offset: 3, write_pointer: 1 }), "{e}");
    let e = d.write(0, 0, 1, &vec![0; 12 * PAGE], L).unwrap_err();
    assert!(matches!(e, FlashError::ZoneBoundaryError { zone: 0, offset: 1, pages: 12, limit: 12, .. }), "{e}");
    let e = d.append(0, 0, &vec![0; 12 * PAGE], L).unwrap_err();
    assert_eq!(name(&e), "ZoneBoundaryError");
    assert!(e.to_string().contains("zone 0"), "{e}");
    // Reads may go up to the zone size, not past it.
    let mut buf = vec![0; 4 * PAGE];
    d.read(0, 0, 12, &mut buf, L).unwrap();
    assert_eq!(name(&d.read(0, 0, 13, &mut buf, L).unwrap_err()), "ZoneBoundaryError");
    assert_eq!(name(&d.write(0, 99, 0, &page(1), L).unwrap_err()), "NoSuchZone");
    assert_eq!(d.zone(0).unwrap().write_pointer, 1, "refused writes change nothing");
    assert!(matches!(d.write(0, 0, 1, &[0; 100], L), Err(FlashError::Misaligned { .. })));
    // An offline zone cannot be read.
    d.fail_zone(2, ZoneState::Offline).unwrap();
    assert_eq!(name(&d.read(0, 2, 0, &mut buf, L).unwrap_err()), "ZoneIsOffline");
    assert_eq!(name(&d.fail_zone(2, ZoneState::ReadOnly).unwrap_err()), "InvalidZoneStateTransition");
    assert_eq!(name(&d.fail_zone(3, ZoneState::Closed).unwrap_err()), "InvalidZoneStateTransition");
}

#[test]
fn the_open_limit_closes_the_oldest_implicitly_opened_zone_and_the_active_limit_refuses() {
    let mut d = device(Some(2), Some(3));
    let state = |d: &ZonedSsd, z| d.zone(z).unwrap().state;
    d.write(0, 0, 0, &page(1), L).unwrap();
    d.write(0, 1, 0, &page(1), L).unwrap();
    assert_eq!(d.open_and_active_zones(), (2, 2));
    d.write(0, 2, 0, &page(1), L).unwrap();
    assert_eq!(state(&d, 0), ZoneState::Closed, "the oldest implicitly opened zone was closed");
    assert_eq!((state(&d, 1), state(&d, 2)), (ZoneState::ImplicitlyOpened, ZoneState::ImplicitlyOpened));
    assert_eq!(d.open_and_active_zones(), (2, 3));
    // A fourth active zone is refused, and nothing was closed for it.
    let e = d.write(0, 3, 0, &page(1), L).unwrap_err();
    assert!(matches!(e, FlashError::TooManyActiveZones { zone: 3, limit: 3, .. }), "{e}");
    assert_eq!(name(&d.open(3).unwrap_err()), "TooManyActiveZones");
    assert_eq!(d.open_and_active_zones(), (2, 3));
    assert_eq!(state(&d, 1), ZoneState::ImplicitlyOpened);
    // Explicit opens take the open resources; then no implicitly opened zone is left to close.
    d.open(0).unwrap(); // closes zone 1 (the oldest implicitly opened)
    assert_eq!(state(&d, 1), ZoneState::Closed);
    d.open(2).unwrap(); // implicitly -> explicitly opened, no new resource
    let e = d.write(0, 1, 1, &page(1), L).unwrap_err();
    assert!(matches!(e, FlashError::TooManyOpenZones { zone: 1, limit: 2, .. }), "{e}");
    assert_eq!(name(&d.open(1).unwrap_err()), "TooManyOpenZones");
    // Finishing a zone releases its resources.
    d.finish(0).unwrap();
    assert_eq!(d.open_and_active_zones(), (1, 2));
    d.write(0, 1, 1, &page(1), L).unwrap();
    assert_eq!(state(&d, 1), ZoneState::ImplicitlyOpened);
    // Filling a zone releases them too.
    d.write(0, 1, 2, &vec![2; 10 * PAGE], L).unwrap();
    assert_eq!(state(&d, 1), ZoneState::Full);
    assert_eq!(d.open_and_active_zones(), (1, 1));
    // Closing an opened zone with nothing written frees its active resource as well.
    d.open(5).unwrap();
    assert_eq!(d.open_and_active_zones(), (2, 2));
    d.close(5).unwrap();
    assert_eq!((state(&d, 5), d.open_and_active_zones()), (ZoneState::Empty, (1, 1)));
}

#[test]
fn data_reads_back_and_unwritten_pages_read_as_zeros_without_flash_work() {
    let mut d = device(None, None);
    let data: Vec<u8> = (0..5 * PAGE).map(|i| (i / PAGE) as u8 + 1).collect();
    d.write(0, 3, 0, &data[..2 * PAGE], L).unwrap();
    let (off, _) = d.append(0, 3, &data[2 * PAGE..], L).unwrap();
    assert_eq!(off, 2);
    let mut buf = vec![7; 8 * PAGE];
    let reads = d.media().counters().reads;
    d.read(0, 3, 0, &mut buf, L).unwrap();
    assert_eq!(&buf[..5 * PAGE], &data[..]);
    assert!(buf[5 * PAGE..].iter().all(|&b| b == 0));
    assert_eq!(d.media().counters().reads - reads, 5, "only the programmed pages are read");
    // A finished zone reads its written part, then zeros.
    d.finish(3).unwrap();
    d.read(0, 3, 4, &mut buf[..4 * PAGE], L).unwrap();
    assert_eq!(&buf[..PAGE], &data[4 * PAGE..]);
    assert!(buf[PAGE..4 * PAGE].iter().all(|&b| b == 0));
    // Pages written without data are an error to read, not made-up bytes.
    d.write_no_data(0, 4, 0, 2, L).unwrap();
    assert!(matches!(d.read(0, 4, 0, &mut buf[..PAGE], L), Err(FlashError::NoData { .. })));
}

#[test]
fn a_stripe_of_one_page_per_plane_programs_in_parallel_and_one_plane_serialises() {
    // Multi-plane off, so that each plane's program is separate: one page per plane overlaps on
    // 4 planes of 2 channels x 2 planes only across dies; use 4 dies of one plane each instead.
    let mut g = geometry();
    g.channels = 4;
    g.planes_per_die = 1;
    let wide = ZonedSsd::new(ZonedConfig::new(g.clone(), timing(), 4 * 4 * PAGE as u64)).unwrap();
    let narrow = ZonedSsd::new(ZonedConfig::new(g, timing(), 4 * PAGE as u64)).unwrap();
    assert_eq!((wide.planes_per_zone(), narrow.planes_per_zone()), (4, 1));
    let program = |mut d: ZonedSsd| d.write(0, 0, 0, &vec![5; 4 * PAGE], L).unwrap();
    let (t_wide, t_narrow) = (program(wide), program(narrow));
    let one = timing().program_ns + timing().page_transfer_ns(PAGE as u32);
    assert!(t_wide <= one + 4 * timing().page_transfer_ns(PAGE as u32), "4 planes: {t_wide} ns, one program {one}");
    assert_eq!(t_narrow, 4 * one, "one plane: 4 programs in a row");
    // With two planes per die, a stripe over both planes of a die is one multi-plane program.
    let mut multi = ZonedSsd::new(config()).unwrap();
    let t = multi.write(0, 0, 0, &vec![5; 4 * PAGE], L).unwrap();
    assert!(t < 2 * timing().program_ns, "{t}");
    assert_eq!(multi.media().counters().multi_plane_ops, 2);
}

#[test]
fn resets_erase_only_programmed_blocks_and_count_by_cause() {
    // Zones of 2 blocks per plane (32 pages), whole zone writable.
    let mut d = ZonedSsd::new(ZonedConfig::new(geometry(), timing(), 8 * 4 * PAGE as u64)).unwrap();
    assert_eq!(d.zone_capacity_pages(), 32);
    // 5 pages: planes 0..4 get one page each in their first block, plane of page 4 no new block.
    d.write(0, 0, 0, &vec![1; 5 * PAGE], HostLabel::Flush).unwrap();
    let idle = d.idle_at();
    let done = d.reset(idle, 0).unwrap();
    assert_eq!(d.counters().flash.erases, 4, "one erased block per plane touched");
    assert_eq!(done, idle + 2 * timing().erase_ns, "two dies erase at once, two blocks each");
    // 20 pages reach the second block of every plane: 8 blocks.
    d.write(done, 0, 0, &vec![1; 20 * PAGE], L).unwrap();
    d.reset_labelled(done, 0, HostLabel::ZoneGc).unwrap();
    let c = d.counters();
    assert_eq!(c.flash.erases, 12);
    assert_eq!(c.flash.cause(Cause::Host(HostLabel::ZoneGc)).erases, 8);
    assert_eq!(c.flash.cause(Cause::Host(HostLabel::Flush)).programs, 5);
    // A finished zone with nothing written erases nothing; an Empty zone's reset is a no-op.
    d.finish(1).unwrap();
    d.reset(done, 1).unwrap();
    d.reset(done, 2).unwrap();
    assert_eq!(d.counters().flash.erases, 12);
    assert_eq!(d.zone_resets(), 3, "the empty zone's reset is not counted");
    assert_eq!(d.wear().max_erases, 2);
    let r = d.report();
    assert_eq!(r.flash_program_bytes, 25 * PAGE as u64);
    assert_eq!(r.device_write_amplification, Some(1.0), "no device GC");
    assert_eq!(r.erases, 12);
}

#[test]
fn a_power_cut_rebuilds_zones_from_the_media() {
    let mut c = config();
    c.max_open_zones = Some(3);
    c.media.store = DataMode::TempFile(std::env::temp_dir());
    let mut d = ZonedSsd::new(c).unwrap();
    d.write(0, 0, 0, &vec![1; 3 * PAGE], L).unwrap(); // implicitly opened
    d.open(1).unwrap(); // explicitly opened, nothing written
    d.write(0, 2, 0, &vec![2; 2 * PAGE], L).unwrap();
    d.close(2).unwrap(); // closed
    d.write(0, 3, 0, &vec![3; PAGE], L).unwrap();
    d.finish(3).unwrap(); // finished with an unwritten tail
    d.write(0, 4, 0, &vec![4; 12 * PAGE], L).unwrap(); // full by writing
    d.write(0, 5, 0, &vec![5; PAGE], L).unwrap();
    d.fail_zone(5, ZoneState::ReadOnly).unwrap();
    d.fail_zone(6, ZoneState::Offline).unwrap();
    d.power_cut();
    let s: Vec<(ZoneState, u64)> = d.zones().iter().map(|z: &ZoneInfo| (z.state, z.write_pointer)).collect();
    use ZoneState::*;
    assert_eq!(
        &s[..8],
        &[(Closed, 3), (Empty, 0), (Closed, 2), (Full, 12), (Full, 12), (ReadOnly, 1), (Offline, 0), (Empty, 0)]
    );
    assert_eq!(d.open_and_active_zones(), (0, 2));
    d.check_consistency().unwrap();
    let mut buf = vec![0; 4 * PAGE];
    d.read(0, 0, 0, &mut buf, L).unwrap();
    assert_eq!(&buf[..3 * PAGE], &vec![1; 3 * PAGE][..]);
    assert!(buf[3 * PAGE..].iter().all(|&b| b == 0));
    d.read(0, 3, 0, &mut buf, L).unwrap();
    assert_eq!(&buf[..PAGE], &vec![3; PAGE][..]);
    // Writing continues at the rebuilt write pointer.
    d.write(0, 0, 3, &page(9), L).unwrap();
    assert_eq!(d.zone(0).unwrap().state, ImplicitlyOpened);
    assert_eq!(d.counters().ftl.power_cuts, 1);
}

#[test]
fn bad_configurations_are_refused_when_the_device_is_built() {
    let mut c = config();
    c.zone_size = 3 * 4 * PAGE as u64; // 3 blocks over 4 planes
    c.zone_capacity = c.zone_size;
    let e = ZonedSsd::new(c).err().unwrap().to_string();
    assert!(e.contains("zone_size") && e.contains("4 planes"), "{e}");
}

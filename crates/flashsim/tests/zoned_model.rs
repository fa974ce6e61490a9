//! Model-based property test of ZonedSsd: random writes, appends, zone management, device faults
//! and power cuts, checked against a plain model (each zone a list of pages, a state and a few
//! flags, the open and active counts found by scanning). Every command's outcome, every zone
//! report and every read must agree with the model.

mod common;

use common::{geometry, name, timing, PAGE};
use flashsim::{HostLabel, ZoneState, ZonedConfig, ZonedSsd};
use proptest::prelude::*;

const L: HostLabel = HostLabel::Unlabelled;
const ZONES: u32 = 8;
const CAP: usize = 12;
const SIZE: u64 = 16;

#[derive(Clone, Debug)]
enum Op {
    Write { zone: u32, pages: usize, skew: i8, tag: u8 },
    Append { zone: u32, pages: usize, tag: u8 },
    Open(u32),
    Close(u32),
    Finish(u32),
    Reset(u32),
    Offline(u32),
    Fail { zone: u32, offline: bool },
    Read { zone: u32, offset: u64, pages: u64 },
    PowerCut,
}

fn op() -> impl Strategy<Value = Op> {
    let z = 0..ZONES + 1; // one past the last zone: NoSuchZone
    prop_oneof![
        8 => (z.clone(), 1..6usize, prop_oneof![8 => Just(0i8), 1 => Just(1), 1 => Just(-1)], any::<u8>())
            .prop_map(|(zone, pages, skew, tag)| Op::Write { zone, pages, skew, tag }),
        4 => (z.clone(), 1..6usize, any::<u8>()).prop_map(|(zone, pages, tag)| Op::Append { zone, pages, tag }),
        2 => z.clone().prop_map(Op::Open),
        2 => z.clone().prop_map(Op::Close),
        2 => z.clone().prop_map(Op::Finish),
        2 => z.clone().prop_map(Op::Reset),
        1 => z.clone().prop_map(Op::Offline),
        1 => (z.clone(), any::<bool>()).prop_map(|(zone, offline)| Op::Fail { zone, offline }),
        3 => (z, 0..SIZE + 2, 1..6u64).prop_map(|(zone, offset, pages)| Op::Read { zone, offset, pages }),
        1 => Just(Op::PowerCut),
    ]
}

#[derive(Clone, Debug)]
struct MZone {
    pages: Vec<Vec<u8>>,
    state: ZoneState,
    finished: bool,
    failed: bool,
    opened_at: u64,
}

struct Model {
    zones: Vec<MZone>,
    max_open: Option<u32>,
    max_active: Option<u32>,
    clock: u64,
}

type Outcome = Result<(), &'static str>;

impl Model {
    fn new(max_open: Option<u32>, max_active: Option<u32>) -> Model {
        let z = MZone { pages: Vec::new(), state: ZoneState::Empty, finished: false, failed: false, opened_at: 0 };
        Model { zones: vec![z; ZONES as usize], max_open, max_active, clock: 0 }
    }

    fn count(&self, f: impl Fn(ZoneState) -> bool) -> u32 {
        self.zones.iter().filter(|z| f(z.state)).count() as u32
    }

    fn wp(&self, z: usize) -> u64 {
        match self.zones[z].state {
            ZoneState::Full => CAP as u64,
            _ => self.zones[z].pages.len() as u64,
        }
    }

    /// Empty or Closed -> `to`, taking resources (closing the oldest implicitly opened zone).
    fn take(&mut self, z: usize, to: ZoneState) -> Outcome {
        let open = |s: ZoneState| matches!(s, ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened);
        let active = |s: ZoneState| open(s) || s == ZoneState::Closed;
        if self.zones[z].state == ZoneState::Empty && self.max_active.is_some_and(|m| self.count(active) >= m) {
            return Err("TooManyActiveZones");
        }
        if self.max_open.is_some_and(|m| self.count(open) >= m) {
            let victim = (0..self.zones.len())
                .filter(|&v| self.zones[v].state == ZoneState::ImplicitlyOpened)
                .min_by_key(|&v| self.zones[v].opened_at);
            match victim {
                Some(v) => self.zones[v].state = ZoneState::Closed,
                None => return Err("TooManyOpenZones"),
            }
        }
        self.clock += 1;
        self.zones[z].opened_at = self.clock;
        self.zones[z].state = to;
        Ok(())
    }

    fn write(&mut self, z: usize, offset: Option<u64>, pages: Vec<Vec<u8>>) -> Outcome {
        let written = self.zones[z].pages.len() as u64;
        match self.zones[z].state {
            ZoneState::Full => return Err("ZoneIsFull"),
            ZoneState::ReadOnly => return Err("ZoneIsReadOnly"),
            ZoneState::Offline => return Err("ZoneIsOffline"),
            _ => {}
        }
        if offset.is_some_and(|o| o != written) {
            return Err("ZoneInvalidWrite");
        }
        if written as usize + pages.len() > CAP {
            return Err("ZoneBoundaryError");
        }
        if matches!(self.zones[z].state, ZoneState::Empty | ZoneState::Closed) {
            self.take(z, ZoneState::ImplicitlyOpened)?;
        }
        self.zones[z].pages.extend(pages);
        if self.zones[z].pages.len() == CAP {
            self.zones[z].state = ZoneState::Full;
        }
        Ok(())
    }

    fn manage(&mut self, z: usize, op: &Op) -> Outcome {
        use ZoneState::*;
        let s = self.zones[z].state;
        let zone = &mut self.zones[z];
        match (op, s) {
            (Op::Open(_), Empty | Closed) => return self.take(z, ExplicitlyOpened),
            (Op::Open(_), ImplicitlyOpened | ExplicitlyOpened) => zone.state = ExplicitlyOpened,
            (Op::Close(_), ImplicitlyOpened | ExplicitlyOpened) => {
                zone.state = if zone.pages.is_empty() { Empty } else { Closed }
            }
            (Op::Close(_), Closed) | (Op::Finish(_), Full) | (Op::Reset(_), Empty) => {}
            (Op::Finish(_), Empty | ImplicitlyOpened | ExplicitlyOpened | Closed) => {
                zone.finished = zone.pages.len() < CAP;
                zone.state = Full;
            }
            (Op::Reset(_), ImplicitlyOpened | ExplicitlyOpened | Closed | Full) => {
                *zone = MZone { pages: Vec::new(), state: Empty, finished: false, failed: false, opened_at: 0 };
            }
            (Op::Offline(_), ReadOnly | Offline) => zone.state = Offline,
            _ => return Err("InvalidZoneStateTransition"),
        }
        Ok(())
    }

    fn power_cut(&mut self) {
        for z in &mut self.zones {
            if !z.failed {
                z.state = if z.finished || z.pages.len() == CAP {
                    ZoneState::Full
                } else if z.pages.is_empty() {
                    ZoneState::Empty
                } else {
                    ZoneState::Closed
                };
            }
        }
    }

    fn read(&self, z: usize, offset: u64, pages: u64) -> Result<Vec<u8>, &'static str> {
        if self.zones[z].state == ZoneState::Offline {
            return Err("ZoneIsOffline");
        }
        if offset + pages > SIZE {
            return Err("ZoneBoundaryError");
        }
        let mut out = Vec::new();
        for p in offset..offset + pages {
            out.extend(self.zones[z].pages.get(p as usize).cloned().unwrap_or_else(|| vec![0; PAGE]));
        }
        Ok(out)
    }
}

fn pages(n: usize, tag: u8, zone: u32, from: u64) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| {
            let mut p = vec![tag; PAGE];
            p[..4].copy_from_slice(&zone.to_le_bytes());
            p[4..12].copy_from_slice(&(from + i as u64).to_le_bytes());
            p
        })
        .collect()
}

fn run(ops: Vec<Op>, max_open: Option<u32>, max_active: Option<u32>) -> Result<(), TestCaseError> {
    let mut cfg = ZonedConfig::new(geometry(), timing(), SIZE * PAGE as u64);
    cfg.zone_capacity = (CAP * PAGE) as u64;
    cfg.max_open_zones = max_open;
    cfg.max_active_zones = max_active;
    let mut d = ZonedSsd::new(cfg).unwrap();
    prop_assert_eq!(d.num_zones(), ZONES);
    let mut m = Model::new(max_open, max_active);
    let mut t = 0u64;
    for (i, op) in ops.iter().enumerate() {
        let zone = match op {
            Op::Write { zone, .. } | Op::Append { zone, .. } | Op::Fail { zone, .. } | Op::Read { zone, .. } => *zone,
            Op::Open(z) | Op::Close(z) | Op::Finish(z) | Op::Reset(z) | Op::Offline(z) => *z,
            Op::PowerCut => 0,
        };
        let z = zone as usize;
        let exists = zone < ZONES;
        let got: Result<(), &'static str> = match op {
            Op::Write { pages: n, skew, tag, .. } => {
                let wp = d.zone(zone).map_or(0, |i| i.write_pointer);
                let offset = (wp as i64 + *skew as i64).max(0) as u64;
                let data = pages(*n, *tag, zone, offset);
                let r = d.write(t, zone, offset, &data.concat(), L).map(|done| t = t.max(done));
                if exists {
                    let want = m.write(z, Some(offset), data);
                    prop_assert_eq!(r.as_ref().map_err(name).err(), want.err(), "op {} {:?}", i, op);
                }
                r.map_err(|e| name(&e))
            }
            Op::Append { pages: n, tag, .. } => {
                let from = d.zone(zone).map_or(0, |i| i.write_pointer);
                let data = pages(*n, *tag, zone, from);
                let r = d.append(t, zone, &data.concat(), L);
                if exists {
                    let want = m.write(z, None, data);
                    prop_assert_eq!(r.as_ref().map_err(name).err(), want.err(), "op {} {:?}", i, op);
                    if let Ok((off, _)) = r {
                        prop_assert_eq!(off, from, "append offset");
                    }
                }
                r.map(|_| ()).map_err(|e| name(&e))
            }
            Op::Open(_) | Op::Close(_) | Op::Finish(_) | Op::Reset(_) | Op::Offline(_) => {
                let r = match op {
                    Op::Open(_) => d.open(zone),
                    Op::Close(_) => d.close(zone),
                    Op::Finish(_) => d.finish(zone),
                    Op::Reset(_) => d.reset(t, zone).map(|done| t = t.max(done)),
                    _ => d.offline(zone),
                };
                if exists {
                    let want = m.manage(z, op);
                    prop_assert_eq!(r.as_ref().map_err(name).err(), want.err(), "op {} {:?}", i, op);
                }
                r.map_err(|e| name(&e))
            }
            Op::Fail { offline, .. } => {
                let to = if *offline { ZoneState::Offline } else { ZoneState::ReadOnly };
                let r = d.fail_zone(zone, to);
                if exists {
                    let allowed = !(to == ZoneState::ReadOnly && m.zones[z].state == ZoneState::Offline);
                    prop_assert_eq!(r.is_ok(), allowed, "op {} {:?}", i, op);
                    if allowed {
                        m.zones[z].state = to;
                        m.zones[z].failed = true;
                    }
                }
                r.map_err(|e| name(&e))
            }
            Op::Read { offset, pages: n, .. } => {
                let mut buf = vec![0xAA; *n as usize * PAGE];
                let r = d.read(t, zone, *offset, &mut buf, L);
                if exists {
                    match (&r, m.read(z, *offset, *n)) {
                        (Ok(_), Ok(want)) => prop_assert!(buf == want, "op {} {:?}: data differs", i, op),
                        (Err(e), Err(w)) => prop_assert_eq!(name(e), w, "op {} {:?}", i, op),
                        (r, w) => prop_assert!(false, "op {} {:?}: got {:?}, model {:?}", i, op, r, w),
                    }
                }
                r.map(|done| t = t.max(done)).map_err(|e| name(&e))
            }
            Op::PowerCut => {
                d.power_cut();
                m.power_cut();
                Ok(())
            }
        };
        if !exists {
            prop_assert_eq!(got, Err("NoSuchZone"), "op {} {:?}", i, op);
        }
        for zi in 0..ZONES {
            let info = d.zone(zi).unwrap();
            let mz = &m.zones[zi as usize];
            prop_assert_eq!(info.state, mz.state, "after op {} {:?}: zone {} state", i, op, zi);
            if !matches!(mz.state, ZoneState::ReadOnly | ZoneState::Offline) {
                prop_assert_eq!(info.write_pointer, m.wp(zi as usize), "after op {} {:?}: zone {} wp", i, op, zi);
            }
        }
        if let Err(e) = d.check_consistency() {
            prop_assert!(false, "after op {} {:?}: {}", i, op, e);
        }
        if matches!(op, Op::PowerCut) {
            for zi in 0..ZONES {
                let mut buf = vec![0; SIZE as usize * PAGE];
                let r = d.read(t, zi, 0, &mut buf, L);
                if let Ok(want) = m.read(zi as usize, 0, SIZE) {
                    prop_assert!(r.is_ok() && buf == want, "zone {} after a power cut", zi);
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn zoned_ssd_matches_the_model(ops in proptest::collection::vec(op(), 1..150)) {
        run(ops, None, None)?;
    }

    #[test]
    fn zoned_ssd_matches_the_model_under_open_and_active_limits(ops in proptest::collection::vec(op(), 1..150)) {
        run(ops, Some(2), Some(3))?;
    }
}

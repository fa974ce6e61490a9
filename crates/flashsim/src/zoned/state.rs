//! The NVMe ZNS zone state machine and its open / active resource accounting.
//!
//! States (ZNS command set, "zone states"): Empty (ZSE), Implicitly Opened (ZSIO), Explicitly
//! Opened (ZSEO), Closed (ZSC), Full (ZSF), Read Only (ZSRO), Offline (ZSO). Opened zones hold an
//! open resource and an active resource, closed zones an active resource only.
//!
//! Transitions, and the edge cases where the specification leaves a choice (we follow QEMU's NVMe
//! ZNS emulation, the reference implementation of the command set, except where noted):
//! - write / Zone Append: Full -> Zone Is Full, Read Only -> Zone Is Read Only, Offline -> Zone Is
//!   Offline; then not at the write pointer -> Zone Invalid Write; then past the zone capacity ->
//!   Zone Boundary Error; then Empty or Closed open implicitly (ZSIO). Opening needs an active
//!   resource when Empty (else Too Many Active Zones) and an open resource (when none is free, the
//!   device first closes the implicitly opened zone that was opened longest ago; when there is
//!   none, Too Many Open Zones). Unlike QEMU, the active limit is checked before any zone is
//!   closed, so a refused command changes nothing. Writing the last page of the capacity makes
//!   the zone Full and releases its resources.
//! - Open: Empty / Closed -> ZSEO (resources as above, implicit close included); ZSIO -> ZSEO;
//!   ZSEO stays; Full, Read Only, Offline -> Invalid Zone State Transition.
//! - Close: ZSIO / ZSEO -> Closed, or Empty when the write pointer is still at the zone start (as
//!   ZBC/ZAC and Linux's null_blk do; QEMU keeps such a zone Closed). We take Empty because a zone
//!   with nothing written is then the same whether it was closed or lost power, and Empty holds
//!   no active resource. Closed stays; Empty, Full, Read Only, Offline -> Invalid Zone State
//!   Transition.
//! - Finish: Empty / ZSIO / ZSEO / Closed -> Full (the write pointer moves to the end of the
//!   capacity; nothing is programmed), releasing resources; Full stays; Read Only, Offline ->
//!   Invalid Zone State Transition.
//! - Reset: any state but Read Only and Offline -> Empty (Invalid Zone State Transition for those).
//! - Offline (host command): Read Only -> Offline; Offline stays; any other -> Invalid Zone State
//!   Transition.
//! - Read Only and Offline are entered by the device only (fault injection: `fail_zone`), from any
//!   state, releasing the zone's resources.

use crate::error::{FlashError, Result};
use crate::zoned::zone_state::ZoneState;

/// One zone's state. `finished` and `failed` are the device's persistent zone descriptor bits;
/// everything else is rebuilt from the media after a power cut.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Zone {
    pub state: ZoneState,
    /// Pages programmed since the last reset (the write pointer, unless the zone was finished).
    pub written: u64,
    /// Finished before its capacity was written: Full with an unwritten tail.
    pub finished: bool,
    /// Read Only or Offline, entered by the device.
    pub failed: Option<ZoneState>,
    /// When the zone was last opened (implicit close takes the oldest).
    opened_at: u64,
}

/// Every zone's state and the open / active resources in use.
#[derive(Clone, Debug)]
pub(crate) struct Zones {
    zones: Vec<Zone>,
    open: u32,
    active: u32,
    max_open: Option<u32>,
    max_active: Option<u32>,
    capacity: u64,
    opens: u64,
}

impl Zones {
    pub fn new(n: u32, capacity_pages: u64, max_open: Option<u32>, max_active: Option<u32>) -> Zones {
        let empty = Zone { state: ZoneState::Empty, written: 0, finished: false, failed: None, opened_at: 0 };
        Zones {
            zones: vec![empty; n as usize],
            open: 0,
            active: 0,
            max_open,
            max_active,
            capacity: capacity_pages,
            opens: 0,
        }
    }

    pub fn len(&self) -> u32 {
        self.zones.len() as u32
    }

    pub fn get(&self, zone: u32) -> Result<&Zone> {
        self.zones.get(zone as usize).ok_or(FlashError::NoSuchZone { zone, zones: self.len() })
    }

    /// Zones in an opened state, and in an opened or closed state.
    pub fn resources(&self) -> (u32, u32) {
        (self.open, self.active)
    }

    /// The write pointer as the host sees it: the end of the capacity once the zone is Full.
    pub fn write_pointer(&self, zone: u32) -> Result<u64> {
        let z = self.get(zone)?;
        Ok(if z.state == ZoneState::Full { self.capacity } else { z.written })
    }

    /// Checks a write (or, with `offset` = `None`, an append) of `pages` pages and returns the
    /// offset it goes to. Changes nothing.
    pub fn check_write(&self, zone: u32, offset: Option<u64>, pages: u64, op: &'static str) -> Result<u64> {
        let z = self.get(zone)?;
        match z.state {
            ZoneState::Full => return Err(FlashError::ZoneIsFull { zone, op }),
            ZoneState::ReadOnly => return Err(FlashError::ZoneIsReadOnly { zone, op }),
            ZoneState::Offline => return Err(FlashError::ZoneIsOffline { zone, op }),
            _ => {}
        }
        let at = offset.unwrap_or(z.written);
        if at != z.written {
            return Err(FlashError::ZoneInvalidWrite { zone, offset: at, write_pointer: z.written });
        }
        if at + pages > self.capacity {
            return Err(FlashError::ZoneBoundaryError { zone, op, offset: at, pages, limit: self.capacity });
        }
        Ok(at)
    }

    /// Opens `zone` implicitly for a write (a no-op for an opened zone).
    pub fn open_for_write(&mut self, zone: u32, op: &'static str) -> Result<()> {
        match self.get(zone)?.state {
            ZoneState::Empty | ZoneState::Closed => self.acquire(zone, ZoneState::ImplicitlyOpened, op),
            _ => Ok(()),
        }
    }

    /// `pages` more pages are programmed; the zone is Full when its capacity is.
    pub fn advance(&mut self, zone: u32, pages: u64) {
        let capacity = self.capacity;
        let z = &mut self.zones[zone as usize];
        z.written += pages;
        if z.written >= capacity {
            self.set(zone, ZoneState::Full);
        }
    }

    pub fn open(&mut self, zone: u32) -> Result<()> {
        match self.get(zone)?.state {
            ZoneState::Empty | ZoneState::Closed => self.acquire(zone, ZoneState::ExplicitlyOpened, "open"),
            ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened => {
                self.set(zone, ZoneState::ExplicitlyOpened);
                Ok(())
            }
            from => Err(FlashError::InvalidZoneStateTransition { zone, from, command: "open" }),
        }
    }

    pub fn close(&mut self, zone: u32) -> Result<()> {
        let z = *self.get(zone)?;
        match z.state {
            ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened => {
                self.set(zone, if z.written == 0 { ZoneState::Empty } else { ZoneState::Closed });
                Ok(())
            }
            ZoneState::Closed => Ok(()),
            from => Err(FlashError::InvalidZoneStateTransition { zone, from, command: "close" }),
        }
    }

    pub fn finish(&mut self, zone: u32) -> Result<()> {
        let z = *self.get(zone)?;
        match z.state {
            ZoneState::ReadOnly | ZoneState::Offline => {
                Err(FlashError::InvalidZoneStateTransition { zone, from: z.state, command: "finish" })
            }
            ZoneState::Full => Ok(()),
            _ => {
                self.zones[zone as usize].finished = z.written < self.capacity;
                self.set(zone, ZoneState::Full);
                Ok(())
            }
        }
    }

    /// Checks that `zone` may be reset (the caller erases its blocks, then calls `reset_done`).
    pub fn check_reset(&self, zone: u32) -> Result<()> {
        match self.get(zone)?.state {
            from @ (ZoneState::ReadOnly | ZoneState::Offline) => {
                Err(FlashError::InvalidZoneStateTransition { zone, from, command: "reset" })
            }
            _ => Ok(()),
        }
    }

    pub fn reset_done(&mut self, zone: u32) {
        self.set(zone, ZoneState::Empty);
        let z = &mut self.zones[zone as usize];
        z.written = 0;
        z.finished = false;
    }

    /// The host's Offline command.
    pub fn offline(&mut self, zone: u32) -> Result<()> {
        match self.get(zone)?.state {
            ZoneState::ReadOnly | ZoneState::Offline => {
                self.fail(zone, ZoneState::Offline);
                Ok(())
            }
            from => Err(FlashError::InvalidZoneStateTransition { zone, from, command: "offline" }),
        }
    }

    /// The device puts `zone` in Read Only or Offline.
    pub fn fail(&mut self, zone: u32, to: ZoneState) {
        self.set(zone, to);
        self.zones[zone as usize].failed = Some(to);
    }

    /// After a power cut: `written` pages found on the media for each zone. Opened zones come back
    /// Closed (Empty when nothing was written), Full stays Full, failed zones keep their state.
    pub fn rebuild(&mut self, written: impl Iterator<Item = u64>) {
        self.open = 0;
        self.active = 0;
        let capacity = self.capacity;
        for (z, w) in self.zones.iter_mut().zip(written) {
            z.written = w;
            z.state = match z.failed {
                Some(s) => s,
                None if z.finished || w >= capacity => ZoneState::Full,
                None if w > 0 => ZoneState::Closed,
                None => ZoneState::Empty,
            };
            if z.state.is_active() {
                self.active += 1;
            }
        }
    }

    /// Takes the resources to move `zone` (Empty or Closed) to an opened state `to`.
    fn acquire(&mut self, zone: u32, to: ZoneState, op: &'static str) -> Result<()> {
        let needs_active = self.zones[zone as usize].state == ZoneState::Empty;
        if let Some(limit) = self.max_active {
            if needs_active && self.active >= limit {
                return Err(FlashError::TooManyActiveZones { zone, op, limit });
            }
        }
        if let Some(limit) = self.max_open {
            if self.open >= limit {
                let victim = (0..self.len())
                    .filter(|&z| self.zones[z as usize].state == ZoneState::ImplicitlyOpened)
                    .min_by_key(|&z| self.zones[z as usize].opened_at);
                match victim {
                    Some(v) => self.close(v)?,
                    None => return Err(FlashError::TooManyOpenZones { zone, op, limit }),
                }
            }
        }
        self.opens += 1;
        self.zones[zone as usize].opened_at = self.opens;
        self.set(zone, to);
        Ok(())
    }

    /// Moves `zone` to `to`, keeping the resource counts.
    fn set(&mut self, zone: u32, to: ZoneState) {
        let from = self.zones[zone as usize].state;
        self.open = self.open - from.is_open() as u32 + to.is_open() as u32;
        self.active = self.active - from.is_active() as u32 + to.is_active() as u32;
        self.zones[zone as usize].state = to;
    }
}

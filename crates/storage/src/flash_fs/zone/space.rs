//! Streams and zones: which zone a stream writes, how a stream gets a new zone within the
//! device's open and active limits, writing a stream's pages, and resetting zones that died.
//!
//! A stream is where a placement class (or, under the lifetime policy, a single file) appends; GC
//! copies go to a GC stream per class, so that they do not mix with new data. A stream keeps its
//! zone until the zone is full (or finished to free an active token for another stream).

use flashsim::{HostLabel, Nanos, SimClock, ZoneState};

use super::alloc::{Choice, OpenZone, ZoneClass};
use super::extent::Extent;
use super::state::{StreamKey, ZoneUse};
use super::St;
use crate::error::{FsError, Result};
use crate::flash_fs::{device_error, label};
use crate::fs::WriteHint;

impl St {
    /// A zone's state and write pointer (an out-of-range zone reads as Offline and full).
    pub(crate) fn zone_state(&self, z: u32) -> (ZoneState, u64) {
        self.dev.zone(z).map_or((ZoneState::Offline, self.capacity_pages()), |i| (i.state, i.write_pointer))
    }

    pub(crate) fn capacity_pages(&self) -> u64 {
        self.dev.zone_capacity_pages()
    }

    /// Pages that can still be written in `z`.
    pub(crate) fn room(&self, z: u32) -> u64 {
        match self.zone_state(z) {
            (ZoneState::Full | ZoneState::ReadOnly | ZoneState::Offline, _) => 0,
            (_, wp) => self.capacity_pages() - wp,
        }
    }

    pub(crate) fn data_zones(&self) -> std::ops::Range<u32> {
        self.place.first_data_zone..self.dev.num_zones()
    }

    pub(crate) fn is_current(&self, z: u32) -> bool {
        self.place.streams.values().any(|&s| s == z)
    }

    pub(crate) fn empty_data_zones(&self) -> u32 {
        self.data_zones().filter(|&z| self.zone_state(z).0 == ZoneState::Empty).count() as u32
    }

    fn count_data_zones(&self, f: impl Fn(ZoneState) -> bool) -> u32 {
        self.data_zones().filter(|&z| f(self.zone_state(z).0)).count() as u32
    }

    /// The stream and class of a file.
    pub(crate) fn stream_of(&self, ino: u64, hint: WriteHint) -> (StreamKey, ZoneClass) {
        let class = self.place.alloc.class(hint);
        let key = if self.place.alloc.stream_per_file() { StreamKey::File(ino) } else { StreamKey::Class(class) };
        (key, class)
    }

    /// The zone `key` writes next, getting one when it has none with room: GC first when allowed
    /// and due, then the policy's choice, then (for a new zone) an active token and the first
    /// empty data zone.
    pub(crate) fn stream_zone(
        &mut self,
        clock: &SimClock,
        key: StreamKey,
        class: ZoneClass,
        gc_allowed: bool,
        op: &'static str,
        path: &str,
    ) -> Result<u32> {
        if let Some(&z) = self.place.streams.get(&key) {
            if self.room(z) > 0 {
                return Ok(z);
            }
            self.place.streams.remove(&key);
        }
        if gc_allowed {
            self.maybe_gc(clock, op, path)?;
        }
        let open: Vec<OpenZone> = self
            .data_zones()
            .filter(|&z| {
                matches!(self.zone_state(z).0, ZoneState::ImplicitlyOpened | ZoneState::Closed) && !self.is_current(z)
            })
            .filter_map(|z| {
                let class = self.place.zones[z as usize].class?;
                Some(OpenZone { zone: z, class, free_pages: self.room(z) })
            })
            .filter(|o| o.free_pages > 0)
            .collect();
        let active = self.count_data_zones(|s| s.is_active());
        let token_free = self.place.active_budget.is_none_or(|b| active < b);
        if let Choice::Reuse(z) = self.place.alloc.choose(class, &open, token_free) {
            if open.iter().any(|o| o.zone == z) {
                self.place.streams.insert(key, z);
                return Ok(z);
            }
        }
        while self.place.active_budget.is_some_and(|b| self.count_data_zones(|s| s.is_active()) >= b) {
            if !self.free_active_token(clock.now(), key)? {
                break;
            }
        }
        let Some(z) = self.data_zones().find(|&z| self.zone_state(z).0 == ZoneState::Empty) else {
            return Err(FsError::NoSpace {
                op,
                path: path.to_string(),
                detail: format!(
                    "no empty zone left for class {class:?} ({} data zones, {} live bytes; host zone GC {})",
                    self.data_zones().len(),
                    self.place.zones.iter().map(|z| z.live).sum::<u64>(),
                    if self.place.opts.gc.is_some() {
                        format!("could not free one: {}", self.gc_blocker())
                    } else {
                        "is off".to_string()
                    }
                ),
            });
        };
        self.place.zones[z as usize] = ZoneUse { live: 0, class: Some(class), last_write: self.place.tick };
        self.place.streams.insert(key, z);
        Ok(z)
    }

    /// Finishes the fullest partly written zone to free an active token: one no stream writes if
    /// there is one, else another stream's. False if there is none.
    fn free_active_token(&mut self, at: Nanos, keep: StreamKey) -> Result<bool> {
        let kept = self.place.streams.get(&keep).copied();
        let candidates: Vec<u32> =
            self.data_zones().filter(|&z| self.zone_state(z).0.is_active() && Some(z) != kept).collect();
        let fullest = |zs: &mut dyn Iterator<Item = u32>| zs.min_by_key(|&z| (self.room(z), z));
        let victim = fullest(&mut candidates.iter().copied().filter(|&z| !self.is_current(z)))
            .or_else(|| fullest(&mut candidates.iter().copied()));
        let Some(z) = victim else { return Ok(false) };
        self.place.streams.retain(|_, s| *s != z);
        self.dev.finish(z).map_err(|e| device_error("finish", "", e))?;
        self.place.counters.finishes += 1;
        self.reset_if_dead(at, z)?;
        Ok(true)
    }

    /// Before writing `z`: when it is not open and the open budget is taken, closes the least
    /// recently written open data zone.
    fn make_open_room(&mut self, z: u32) -> Result<()> {
        let Some(budget) = self.place.open_budget else { return Ok(()) };
        if self.zone_state(z).0.is_open() || self.count_data_zones(|s| s.is_open()) < budget {
            return Ok(());
        }
        let lru = self
            .data_zones()
            .filter(|&o| o != z && self.zone_state(o).0.is_open())
            .min_by_key(|&o| (self.place.zones[o as usize].last_write, o));
        if let Some(o) = lru {
            self.dev.close(o).map_err(|e| device_error("close", "", e))?;
        }
        Ok(())
    }

    /// Writes whole pages `data` (of which `bytes` are data, the rest the padding of the last
    /// page) through stream `key`, moving to new zones as zones fill. Each extent goes to `sink` as
    /// soon as it is written: a GC run that a later zone of the same write triggers must find it
    /// in its file (a zone whose live bytes no file holds would be reset under it). Returns when
    /// the last write completes.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn write_stream(
        &mut self,
        clock: &SimClock,
        key: StreamKey,
        class: ZoneClass,
        data: &[u8],
        bytes: u64,
        label: HostLabel,
        gc_allowed: bool,
        op: &'static str,
        path: &str,
        sink: &mut dyn FnMut(&mut St, Extent),
    ) -> Result<Nanos> {
        let ps = self.page_size;
        let mut done = clock.now();
        let (mut rest, mut left) = (data, bytes);
        while !rest.is_empty() {
            let z = self.stream_zone(clock, key, class, gc_allowed, op, path)?;
            let (_, wp) = self.zone_state(z);
            let n = (self.room(z) as usize).min(rest.len() / ps);
            self.make_open_room(z)?;
            let at = clock.now();
            let t = self.dev.write(at, z, wp, &rest[..n * ps], label).map_err(|e| device_error(op, path, e))?;
            done = done.max(t);
            let ext_bytes = ((n * ps) as u64).min(left);
            self.place.tick += 1;
            let u = &mut self.place.zones[z as usize];
            u.live += ext_bytes;
            u.last_write = self.place.tick;
            sink(self, Extent { zone: z, start: wp as u32, bytes: ext_bytes });
            if self.room(z) == 0 {
                self.place.streams.remove(&key);
            }
            rest = &rest[n * ps..];
            left -= ext_bytes;
        }
        Ok(done)
    }

    /// Writes a file's whole pages through its stream, adding each extent to the file as it is
    /// written; returns the data bytes written (all of `bytes` unless it fails part way) and the
    /// completion time.
    pub(crate) fn write_file_pages(
        &mut self,
        clock: &SimClock,
        ino: u64,
        hint: WriteHint,
        data: &[u8],
        bytes: u64,
        path: &str,
    ) -> (u64, Result<Nanos>) {
        let (key, class) = self.stream_of(ino, hint);
        let ps = self.page_size as u64;
        let mut written = (0u64, 0u64); // data bytes, pages
        let mut sink = |st: &mut St, e: Extent| {
            written.0 += e.bytes;
            written.1 += e.pages(ps);
            if let Some(i) = st.inodes.get_mut(&ino) {
                i.push_extent(e, ps);
            }
        };
        let r = self.write_stream(clock, key, class, data, bytes, label(hint), true, "append", path, &mut sink);
        self.stats.add_write(hint, written.1 * ps);
        (written.0, r)
    }

    /// Resets data zone `z` if nothing in it is live and no stream writes it.
    pub(crate) fn reset_if_dead(&mut self, at: Nanos, z: u32) -> Result<Option<Nanos>> {
        if z < self.place.first_data_zone || self.place.zones[z as usize].live > 0 || self.is_current(z) {
            return Ok(None);
        }
        match self.zone_state(z).0 {
            ZoneState::Empty | ZoneState::ReadOnly | ZoneState::Offline => Ok(None),
            _ => self.reset_zone(at, z, "reset").map(Some),
        }
    }

    /// Resets data zone `z` (its erases counted as unlabelled host work).
    pub(crate) fn reset_zone(&mut self, at: Nanos, z: u32, op: &'static str) -> Result<Nanos> {
        self.reset_zone_labelled(at, z, op, HostLabel::Unlabelled)
    }

    pub(crate) fn reset_zone_labelled(
        &mut self,
        at: Nanos,
        z: u32,
        op: &'static str,
        label: HostLabel,
    ) -> Result<Nanos> {
        let done = self.dev.reset_labelled(at, z, label).map_err(|e| device_error(op, "", e))?;
        self.place.counters.resets += 1;
        self.place.zones[z as usize] = ZoneUse::default();
        self.place.streams.retain(|_, s| *s != z);
        Ok(done)
    }
}

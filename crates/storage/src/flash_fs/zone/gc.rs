//! Host zone GC: when a stream needs a zone and at most `free_zones_trigger` empty data zones are
//! left, reclaim zones by copying their live extents elsewhere.
//!
//! Greedy: the victim is the written data zone (full, finished, or partly written and closed) with
//! the fewest live bytes that no stream is writing, if copying it frees anything (its live extents
//! take fewer pages than were written to it). Each of
//! its live extents is read and appended to the GC stream of the victim's class (kept apart from
//! new data), and the files' extent maps are updated in memory; then every moved extent that a
//! durable record points at gets a new record, committed to the journal; only then is the victim
//! reset. A power cut before the commit leaves the durable state pointing at the victim, which is
//! intact; after it, the victim holds nothing live and is reset at mount. GC runs inline and the
//! current lane waits for it (reads, copies, commit, reset) in simulated time. Its copies count as
//! host writes with label `ZoneGc` and in `zone_gc_bytes`, its reads in `read_bytes` (and as
//! `ZoneGc` reads on the device).

use flashsim::{HostLabel, SimClock, Wait, ZoneState};

use super::alloc::ZoneClass;
use super::extent::Extent;
use super::state::{GcStep, StreamKey};
use super::St;
use crate::error::{FsError, Result};
use crate::flash_fs::records::Record;

impl St {
    /// Runs GC while it is due and can make progress.
    pub(crate) fn maybe_gc(&mut self, clock: &SimClock, op: &'static str, path: &str) -> Result<()> {
        let Some(gc) = self.place.opts.gc else { return Ok(()) };
        // Each run frees at most one zone; more runs than zones cannot be progress.
        for _ in 0..self.data_zones().len() {
            if self.empty_data_zones() > gc.free_zones_trigger {
                break;
            }
            if !self.gc_once(clock, op, path)? {
                break;
            }
        }
        Ok(())
    }

    /// The greedy victim: the written data zone no stream writes with the fewest live bytes, among
    /// those whose live extents take fewer pages than were written to them (copying the others
    /// frees nothing: a zone of one-page extents each holding a few synced bytes is "mostly dead"
    /// by bytes but costs a whole zone to copy). A partly written zone that no stream writes any
    /// more (the lifetime policy leaves one behind each time a file closes) is a candidate too:
    /// its unwritten pages are not free space until it is reset.
    fn gc_victim(&self) -> Option<u32> {
        let ps = self.page_size as u64;
        let mut live_pages = vec![0u64; self.place.zones.len()];
        for e in self.inodes.values().flat_map(|i| i.extents.iter()) {
            live_pages[e.zone as usize] += e.pages(ps);
        }
        self.data_zones()
            .filter(|&z| !self.is_current(z))
            .filter(|&z| match self.zone_state(z) {
                (ZoneState::Full, _) => live_pages[z as usize] < self.capacity_pages(),
                (ZoneState::Closed | ZoneState::ImplicitlyOpened | ZoneState::ExplicitlyOpened, wp) => {
                    live_pages[z as usize] < wp
                }
                _ => false,
            })
            .min_by_key(|&z| (self.place.zones[z as usize].live, z))
    }

    /// Where `victim`'s live extents would go (the GC stream of its class), the pages they take,
    /// and the pages free for them.
    fn gc_cost(&self, victim: u32) -> (StreamKey, ZoneClass, u64, u64) {
        let ps = self.page_size as u64;
        let class = self.place.zones[victim as usize].class.unwrap_or(ZoneClass::Shared);
        let key = StreamKey::Gc(class);
        let needed = self.inodes.values().flat_map(|i| i.extents.iter()).filter(|e| e.zone == victim);
        let needed: u64 = needed.map(|e| e.pages(ps)).sum();
        let room = self.place.streams.get(&key).map_or(0, |&z| self.room(z))
            + self.empty_data_zones() as u64 * self.capacity_pages();
        (key, class, needed, room)
    }

    /// Why GC cannot free a zone now (for the out-of-space error).
    pub(crate) fn gc_blocker(&self) -> String {
        let Some(victim) = self.gc_victim() else {
            let written = self.data_zones().filter(|&z| self.zone_state(z).0 != ZoneState::Empty).count();
            let current = self.data_zones().filter(|&z| self.is_current(z)).count();
            return format!(
                "nothing to collect: of {written} written data zones, {current} are being written and the others \
                 hold only live pages"
            );
        };
        let (_, _, needed, room) = self.gc_cost(victim);
        format!(
            "the least live zone ({victim}, {} live bytes) needs {needed} pages copied and {room} are free",
            self.place.zones[victim as usize].live
        )
    }

    /// One GC run; false when there is no victim or no room to copy it.
    fn gc_once(&mut self, clock: &SimClock, op: &'static str, path: &str) -> Result<bool> {
        let Some(victim) = self.gc_victim() else { return Ok(false) };
        let ps = self.page_size as u64;
        // The live extents, by file, in file order.
        let mut moves: Vec<(u64, usize, Extent)> = Vec::new();
        for (&ino, inode) in &self.inodes {
            for (k, e) in inode.extents.iter().enumerate() {
                if e.zone == victim {
                    moves.push((ino, k, *e));
                }
            }
        }
        let (key, class, needed, room) = self.gc_cost(victim);
        if needed > room {
            return Ok(false);
        }
        let start = clock.now();
        let mut t = start;
        let mut page = Vec::new();
        // Extents of one file are replaced from the last, so that earlier indexes stay valid.
        moves.sort_by_key(|m| (m.0, std::cmp::Reverse(m.1)));
        let mut touched: Vec<u64> = Vec::new();
        for (n, (ino, k, e)) in moves.iter().copied().enumerate() {
            let pages = e.pages(ps);
            page.resize((pages * ps) as usize, 0);
            let read = self
                .dev
                .read(start, victim, e.start as u64, &mut page, HostLabel::ZoneGc)
                .map_err(|err| crate::flash_fs::device_error("gc", path, err))?;
            self.stats.read_bytes += pages * ps;
            // The copy is programmed once its pages are read (the lane waits for GC anyway).
            clock.wait(read, Wait::Gc);
            let mut new = Vec::new();
            let mut sink = |_: &mut St, x: Extent| new.push(x);
            let r = self.write_stream(clock, key, class, &page, e.bytes, HostLabel::ZoneGc, false, op, path, &mut sink);
            let copied: u64 = new.iter().map(|x| x.pages(ps)).sum::<u64>() * ps;
            self.stats.zone_gc_bytes += copied;
            self.place.counters.gc_copied_bytes += copied;
            let written = r?;
            t = t.max(read).max(written);
            self.place.zones[victim as usize].live -= e.bytes;
            if let Some(inode) = self.inodes.get_mut(&ino) {
                inode.extents.splice(k..k + 1, new);
            }
            touched.push(ino);
            if n == 0 && self.take_crash(GcStep::AfterFirstCopy) {
                return Err(crashed(path, GcStep::AfterFirstCopy));
            }
        }
        if self.take_crash(GcStep::AfterCopies) {
            return Err(crashed(path, GcStep::AfterCopies));
        }
        touched.dedup();
        let records: Vec<Record<Extent>> = touched
            .iter()
            .filter(|ino| self.meta.inodes.contains_key(ino))
            .filter_map(|&ino| {
                let i = self.inodes.get(&ino)?;
                Some(self.meta.inode_record(ino, i.synced_len, i.hint, i.durable_extents()))
            })
            .collect();
        let committed = self.commit(t, records)?;
        if self.take_crash(GcStep::AfterCommit) {
            return Err(crashed(path, GcStep::AfterCommit));
        }
        let done = self.reset_zone_labelled(committed, victim, "gc", HostLabel::ZoneGc)?;
        self.place.counters.gc_runs += 1;
        clock.wait(done, Wait::Gc);
        Ok(true)
    }

    fn take_crash(&mut self, step: GcStep) -> bool {
        if self.place.gc_crash == Some(step) {
            self.place.gc_crash = None;
            return true;
        }
        false
    }
}

fn crashed(path: &str, step: GcStep) -> FsError {
    FsError::Io {
        op: "gc",
        path: path.to_string(),
        source: std::io::Error::other(format!("simulated power loss during host zone GC ({step:?})")),
    }
}

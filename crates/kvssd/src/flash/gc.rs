//! GC, the mechanism: SSDSim's greedy GC as PLSC changed it, shared by every device.
//!
//! A victim is the closed block with the most invalid pages (of the whole device, or of the plane
//! that needs a page). Its valid pages move into their plane's open block, by copyback when the
//! device has it on; for each moved page the device names the page's owner (written to the new
//! page's OOB) and fixes its own map ([`Owners`]); then the block is erased, once the copies are
//! programmed. Every copy and the erase are charged to `Cause::Gc`.
//!
//! When GC runs is each device's policy: [`Flash::collect_while_low`] below a free-page threshold
//! of the device, [`Flash::collect_planes_while_low`] below one of a plane,
//! [`Flash::make_room`] when a plane has no page for the device's data.

use std::ops::AddAssign;

use flashsim::{Cause, Nanos};

use super::Flash;
use crate::error::{KvError, Result};

/// A device's map from its pages to what owns them, which GC reads and fixes.
pub trait Owners {
    /// The owner of valid page `ppn` (a UST's UTID, an SST's number), `None` if nothing owns it.
    fn owner_of(&self, ppn: u32) -> Option<u32>;

    /// GC moved valid page `from` to `to`: the owner's page list must follow.
    fn moved(&mut self, from: u32, to: u32);
}

/// What GC did: victims erased, valid pages moved, and the simulated time from the start of each
/// collection to its erase, summed (the time the request that set GC off waited for it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    pub victims: u64,
    pub moved_pages: u64,
    pub ns: u64,
    /// When the last erase was done (the start time if nothing was collected).
    pub done: Nanos,
}

impl AddAssign for GcWork {
    fn add_assign(&mut self, other: GcWork) {
        self.victims += other.victims;
        self.moved_pages += other.moved_pages;
        self.ns += other.ns;
        self.done = self.done.max(other.done);
    }
}

impl Flash {
    /// Collects victims from `at` while fewer than `threshold` pages are free and some block has
    /// an invalid page.
    pub fn collect_while_low(&mut self, threshold: u64, owners: &mut impl Owners, at: Nanos) -> Result<GcWork> {
        let mut work = GcWork { done: at, ..GcWork::default() };
        while self.space.free_pages() < threshold {
            let Some(victim) = self.space.victim(&self.media, None) else { break };
            work += self.collect(victim, owners, at)?;
        }
        Ok(work)
    }

    /// Collects victims of each plane from `at` while that plane has fewer than `threshold` free
    /// pages and one of its blocks has an invalid page (SSDSim's trigger, counted per plane).
    pub fn collect_planes_while_low(&mut self, threshold: u64, owners: &mut impl Owners, at: Nanos) -> Result<GcWork> {
        let mut work = GcWork { done: at, ..GcWork::default() };
        for plane in 0..self.space.planes() {
            while self.space.free_in(plane) < threshold {
                let Some(victim) = self.space.victim(&self.media, Some(plane)) else { break };
                work += self.collect(victim, owners, at)?;
            }
        }
        Ok(work)
    }

    /// Makes sure `plane` has a page for data, collecting one of its blocks if it has none; `op`
    /// names the write in a [`KvError::DeviceFull`].
    pub fn make_room(&mut self, plane: usize, owners: &mut impl Owners, at: Nanos, op: &'static str) -> Result<GcWork> {
        if self.space.has_room(plane) {
            return Ok(GcWork { done: at, ..GcWork::default() });
        }
        let victim =
            self.space.victim(&self.media, Some(plane)).ok_or(KvError::DeviceFull { op, plane: plane as u32 })?;
        self.collect(victim, owners, at)
    }

    /// Collects `block` from `at`: moves its valid pages, erases it.
    fn collect(&mut self, block: u32, owners: &mut impl Owners, at: Nanos) -> Result<GcWork> {
        let plane = self.space.plane_of(block);
        let ppb = self.media.geometry().pages_per_block;
        let first = block * ppb;
        let mut copied = at;
        let mut moved = 0;
        for ppn in first..first + self.media.write_pointer(block) {
            if !self.media.is_valid(ppn) {
                continue;
            }
            let owner = owners.owner_of(ppn).ok_or_else(|| KvError::Inconsistent {
                reason: format!("valid PPN {ppn} of GC victim block {block} has no owner in the device's map"),
            })?;
            // A victim has an invalid page, so its valid pages fit the frontier and the reserve.
            let dst =
                self.space.take(plane, true).ok_or(KvError::DeviceFull { op: "a GC copy", plane: plane as u32 })?;
            copied = copied.max(self.media.relocate(at, ppn, dst, owner, self.copyback, Cause::Gc)?);
            owners.moved(ppn, dst);
            moved += 1;
        }
        let done = self.media.erase(copied, block, Cause::Gc)?;
        self.space.erased(block);
        Ok(GcWork { victims: 1, moved_pages: moved, ns: done - at, done })
    }
}

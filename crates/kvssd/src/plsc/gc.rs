//! GC: PLSC's physical reclamation, SSDSim's greedy GC with PLSC's one change.
//!
//! Runs when fewer pages than `gc_threshold_pages` are free (after each flush and its compaction),
//! and when a plane has no page for a UST. The victim is the closed block with the most invalid
//! pages (of the whole device, or of the plane that needs a page). Its valid pages move by copyback
//! into their plane's open block (pages of dropped USTs are already invalid); for each moved page
//! the PPNtoUTID map names its UST, whose PPN list is corrected; then the block is erased, once the
//! copies are programmed.

use flashsim::{Cause, Nanos};

use super::Plsc;
use crate::error::{KvError, Result};

impl Plsc {
    /// Collects victims from `at` while fewer pages than the threshold are free and some block has
    /// an invalid page; returns when the last erase is done.
    pub(super) fn collect_while_low(&mut self, at: Nanos) -> Result<Nanos> {
        let mut done = at;
        while self.space.free_pages() < self.cfg.gc_threshold_pages {
            let Some(victim) = self.space.victim(&self.media, None) else { break };
            done = done.max(self.collect(victim, at)?);
        }
        Ok(done)
    }

    /// Makes sure `plane` has a page for a UST, collecting one of its blocks if it has none.
    pub(super) fn make_room(&mut self, plane: usize, at: Nanos, op: &'static str) -> Result<Nanos> {
        if self.space.has_room(plane) {
            return Ok(at);
        }
        let victim =
            self.space.victim(&self.media, Some(plane)).ok_or(KvError::DeviceFull { op, plane: plane as u32 })?;
        self.collect(victim, at)
    }

    /// Collects `block` from `at`: moves its valid pages, erases it. Returns when the erase is done.
    fn collect(&mut self, block: u32, at: Nanos) -> Result<Nanos> {
        let plane = self.space.plane_of(block);
        let ppb = self.media.geometry().pages_per_block;
        let first = block * ppb;
        let mut copied = at;
        for ppn in first..first + self.media.write_pointer(block) {
            if !self.media.is_valid(ppn) {
                continue;
            }
            let utid = self.usts.utid_of(ppn).ok_or_else(|| KvError::Inconsistent {
                reason: format!("valid PPN {ppn} of GC victim block {block} belongs to no UST in the PPNtoUTID map"),
            })?;
            // A victim has an invalid page, so its valid pages fit the frontier and the reserve.
            let dst =
                self.space.take(plane, true).ok_or(KvError::DeviceFull { op: "a GC copy", plane: plane as u32 })?;
            copied = copied.max(self.media.relocate(at, ppn, dst, utid, self.cfg.copyback, Cause::Gc)?);
            self.usts.moved(ppn, dst);
            self.stats.gc_moved_pages += 1;
        }
        let done = self.media.erase(copied, block, Cause::Gc)?;
        self.space.erased(block);
        self.stats.gc_runs += 1;
        self.stats.gc_ns += done - at;
        Ok(done)
    }
}

//! Garbage collection: pick a victim inside a plane by policy, relocate its valid pages (where
//! `space` says: the plane's own frontier by copyback, else other planes' frontiers over the
//! channels), erase it once the copies are programmed, and give it back to its plane. Under
//! `GcDestination::InPlane` a plane is collected before its frontier fills, so that the own
//! frontier has that room.
//!
//! A page can be shared by several LPNs after remaps. Its owners are the LPN its OOB names (when
//! that LPN still maps to it by OOB) plus the remap-log entries of the victim's segment, exactly
//! what a Remap-SSD controller can know without a full reverse map. The relocated copy's OOB names
//! one owner; the others get fresh remap entries in the destination block's segment.
//!
//! When GC runs: after a write (background: its operations join the dies' queues with the write
//! that set it off, and run as the dies get free, beside the host's) for every plane whose
//! frontier filled (under `InPlane`: whose frontier's room fell to its victim's valid pages) and
//! that has no free block it may open, and then while relocations have taken
//! blocks out of the device-wide reserve; and when no plane has room for a host page (foreground:
//! the host waits).

use crate::cause::Cause;
use crate::error::{FlashError, Result};
use crate::ftl::Ftl;
use crate::media::NO_OWNER;
use crate::ssd::space::Space;
use crate::ssd::BlockSsd;
use crate::timing::Nanos;

/// Pages of a victim ahead of the one whose owner is looked up, whose owners' map entries are
/// prefetched.
const GC_PREFETCH_AHEAD: u32 = 16;

impl BlockSsd {
    /// Background GC from `at`: each plane whose frontier filled (in-plane: whose frontier has just
    /// room for its victim's copies) and that has no block it may open gets one (its own victim is
    /// collected); then, while relocations have taken blocks out of the device-wide reserve, the
    /// best victim of the whole device is collected.
    pub(crate) fn collect_pending(&mut self, at: Nanos) -> Result<()> {
        while let Some(plane) = self.space.pop_pending() {
            if self.space.needs_gc(plane) || self.space.copy_ready(plane) {
                self.collect(plane, at, false)?;
            }
        }
        let limit = self.geometry().total_blocks();
        for _ in 0..limit {
            if !self.space.reserve_short() || self.collect_best(at, false, |_, _| true)?.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// Foreground GC: no plane had room for the host's page of `lpn`. Collects the best victim among
    /// the planes that need GC, or, when none of them has one, of the whole device (a block freed
    /// anywhere lets host writes open the free blocks the reserve held back). Returns when the host
    /// may go on.
    pub(crate) fn foreground_gc(&mut self, at: Nanos, lpn: u32) -> Result<Nanos> {
        if let Some(done) = self.collect_best(at, true, |space, p| space.needs_gc(p))? {
            return Ok(done);
        }
        match self.collect_best(at, true, |_, _| true)? {
            Some(done) => Ok(done),
            None => Err(FlashError::DeviceFull { op: "write", lpn: lpn as u64 }),
        }
    }

    /// Collects the victim with the fewest valid pages among the planes `eligible` accepts; `None`
    /// when none of them has a block worth collecting.
    fn collect_best(
        &mut self,
        at: Nanos,
        foreground: bool,
        eligible: impl Fn(&Space, usize) -> bool,
    ) -> Result<Option<Nanos>> {
        let mut best: Option<(u32, usize)> = None;
        for p in 0..self.space.plane_count() {
            if eligible(&self.space, p) {
                if let Some(v) = self.space.min_valid(p) {
                    if best.is_none_or(|b| (v, p) < b) {
                        best = Some((v, p));
                    }
                }
            }
        }
        match best {
            Some((valid, plane)) if valid < self.geometry().pages_per_block => self.collect(plane, at, foreground),
            _ => Ok(None),
        }
    }

    /// Collects one victim block of `plane` starting at `at`. Returns when its erase finished, or
    /// `None` when no closed block would yield a free page (the plane is full of valid data).
    fn collect(&mut self, plane: usize, at: Nanos, foreground: bool) -> Result<Option<Nanos>> {
        let Some(victim) = self.space.take_victim(plane, &self.media) else {
            return Ok(None);
        };
        let mut entries = self.map.log.take(victim);
        entries.sort_unstable_by_key(|e| e.page);
        let ppb = self.geometry().pages_per_block;
        let first = victim * ppb;
        let written = self.media.write_pointer(victim);

        // First pass: which valid pages their OOB owner still maps by OOB. The lookups of every
        // page are independent, so the memory system overlaps their cache misses; the relocations
        // and the erase find the same entries in cache.
        let mut oob_owned = std::mem::take(&mut self.gc_scratch);
        oob_owned.clear();
        for ppn in first..first + written {
            // The owners' entries are scattered over the map: ask for them a few pages ahead.
            if ppn + GC_PREFETCH_AHEAD < first + written {
                self.map.prefetch(self.media.oob(ppn + GC_PREFETCH_AHEAD).0);
            }
            let owner = self.media.oob(ppn).0;
            // Read for every page: the erase below updates the owner's entry of invalid pages too.
            let owned = owner != NO_OWNER && self.map.maps_by_oob(owner, ppn) && self.media.is_valid(ppn);
            oob_owned.push(owned);
        }

        let mut done = at;
        let mut owners: Vec<u32> = Vec::new();
        let mut next_entry = 0;
        for page in 0..written {
            let ppn = first + page;
            owners.clear();
            while next_entry < entries.len() && entries[next_entry].page < page {
                next_entry += 1;
            }
            while next_entry < entries.len() && entries[next_entry].page == page {
                owners.push(entries[next_entry].lpn);
                next_entry += 1;
            }
            // A page is valid exactly while an LPN maps to it (`check_consistency`).
            if !self.media.is_valid(ppn) {
                continue;
            }
            if oob_owned[page as usize] {
                owners.insert(0, self.media.oob(ppn).0);
            }
            debug_assert_eq!(owners.len() as u32, self.map.refs_of(ppn, true), "owners of PPN {ppn}");
            let Some(dst) = self.space.gc_page(plane) else {
                self.gc_scratch = oob_owned;
                return Err(FlashError::DeviceFull { op: "gc relocation", lpn: owners[0] as u64 });
            };
            let t = self.media.relocate(at, ppn, dst, owners[0], self.cfg.copyback, Cause::Gc)?;
            done = done.max(t);
            self.space.close_filled(&self.media);
            self.map.relocate(ppn, dst, &owners);
            for &lpn in &owners {
                self.note_moved(lpn);
            }
            self.counters.gc_copied_pages += 1;
        }
        self.gc_scratch = oob_owned;
        // Every copy the victim's pages name is about to disappear from flash.
        for ppn in first..first + written {
            let owner = self.media.oob(ppn).0;
            if owner != NO_OWNER {
                self.map.copy_erased(owner);
            }
        }
        // Erased only once the relocated copies are programmed, so that a power cut never finds a
        // page in neither place.
        let done = self.media.erase(done, victim, Cause::Gc)?;
        self.space.erased(victim, written);
        self.counters.gc_runs += 1;
        if foreground {
            self.counters.foreground_gc_runs += 1;
        }
        Ok(Some(done))
    }
}

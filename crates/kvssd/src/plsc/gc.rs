//! GC: PLSC's physical reclamation, SSDSim's greedy GC with PLSC's one change; the mechanism is
//! shared ([`crate::flash::gc`]), the policy is here.
//!
//! Runs when fewer pages than `gc_threshold_pages` are free, in the device or (`GcScope::Plane`)
//! a plane's share of them in a plane (after each flush and its compaction),
//! and when a plane has no page for a UST. The victim is the closed block with the most invalid
//! pages (of the whole device, or of the plane that needs a page). Its valid pages move by copyback
//! into their plane's open block (pages of dropped USTs are already invalid); for each moved page
//! the PPNtoUTID map names its UST, whose PPN list is corrected ([`Owners`] below); then the block
//! is erased, once the copies are programmed.

use flashsim::Nanos;

use super::config::GcScope;
use super::ust::Usts;
use super::Plsc;
use crate::error::Result;
use crate::flash::{GcWork, Owners};

impl Owners for Usts {
    fn owner_of(&self, ppn: u32) -> Option<u32> {
        self.utid_of(ppn)
    }

    fn moved(&mut self, from: u32, to: u32) {
        Usts::moved(self, from, to)
    }
}

impl Plsc {
    /// Collects victims from `at` while fewer pages than the threshold are free and some block has
    /// an invalid page; returns when the last erase is done.
    pub(super) fn collect_while_low(&mut self, at: Nanos) -> Result<Nanos> {
        let work = match self.cfg.gc_scope {
            GcScope::Device => self.flash.collect_while_low(self.cfg.gc_threshold_pages, &mut self.usts, at)?,
            GcScope::Plane => {
                let per_plane = self.cfg.gc_threshold_pages / self.stripe.len() as u64;
                self.flash.collect_planes_while_low(per_plane, &mut self.usts, at)?
            }
        };
        self.add_gc(work);
        Ok(work.done)
    }

    /// Counts what GC did in the device's stats.
    pub(super) fn add_gc(&mut self, work: GcWork) {
        self.stats.gc_runs += work.victims;
        self.stats.gc_moved_pages += work.moved_pages;
        self.stats.gc_ns += work.ns;
    }
}

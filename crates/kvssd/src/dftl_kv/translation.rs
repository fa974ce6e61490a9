//! DFTL-KV's translation I/O: CMT accesses turned into loads and stores of translation pages
//! (`Cause::Mapping`), and the rewrite of translation pages whose uncached entries GC changed.

use flashsim::{Cause, Nanos};

use super::{DftlKv, NONE};
use crate::error::Result;

impl DftlKv {
    /// Accesses `lpa`'s CMT entry from `t` (`dirty` when the access changes it): stores the
    /// translation pages the cache evicts, loads the entry's page on a miss. Returns when the
    /// entry is in RAM.
    pub(super) fn translate(&mut self, t: Nanos, lpa: u32, dirty: bool) -> Result<Nanos> {
        if !self.cmt.enabled() {
            return Ok(t);
        }
        let io = self.cmt.access(lpa as u64, dirty);
        let mut t = t;
        for tp in io.write_back {
            t = self.store_translation_page(t, tp)?;
        }
        if let Some(tp) = io.read {
            t = self.load_translation_page(t, tp)?;
        }
        Ok(t)
    }

    fn mapping_busy(&self) -> Nanos {
        self.flash.media.counters().cause(Cause::Mapping).busy_ns
    }

    fn translation_owner(&self, tp: u64) -> u32 {
        self.pages.lpas + tp as u32
    }

    /// Reads translation page `tp` if it was ever written (the GTD knows). Returns when it is in.
    pub(super) fn load_translation_page(&mut self, t: Nanos, tp: u64) -> Result<Nanos> {
        let ppn = self.pages.map[self.translation_owner(tp) as usize];
        if ppn == NONE {
            return Ok(t);
        }
        let before = self.mapping_busy();
        let done = self.flash.media.read(&[(ppn, t)], Cause::Mapping)?;
        self.cmt.stats.loads += 1;
        self.cmt.stats.load_ns += self.mapping_busy() - before;
        Ok(done)
    }

    /// Read-modify-write of translation page `tp`: reads its old copy (if any), programs the new
    /// one (which may first need GC), invalidates the old one. Returns when it is programmed.
    pub(super) fn store_translation_page(&mut self, t: Nanos, tp: u64) -> Result<Nanos> {
        let owner = self.translation_owner(tp);
        let old = self.pages.map[owner as usize];
        let before = self.mapping_busy();
        let mut t = t;
        if old != NONE {
            t = self.flash.media.read(&[(old, t)], Cause::Mapping)?;
            self.cmt.stats.store_reads += 1;
        }
        let zero = std::mem::take(&mut self.zero);
        let done = self.program_page(t, owner, &zero, Cause::Mapping);
        self.zero = zero;
        let done = done?;
        self.cmt.stats.stores += 1;
        // Die time of the store's own operations (not of the GC its program may set off).
        self.cmt.stats.store_ns += self.mapping_busy() - before;
        Ok(done)
    }

    /// Turns the pages GC moved into CMT updates: a cached entry turns dirty, an uncached one's
    /// translation page is rewritten; writes those pages from `t` (each write may move more).
    /// Returns when they are written.
    pub(super) fn finish_deferred(&mut self, t: Nanos) -> Result<Nanos> {
        let mut t = t;
        loop {
            let moved = std::mem::take(&mut self.pages.moved);
            if self.cmt.enabled() {
                for lpa in moved {
                    if !self.cmt.mark_dirty_if_cached(lpa as u64) {
                        let tp = self.tp_of(lpa);
                        if !self.deferred.contains(&tp) {
                            self.deferred.push(tp);
                        }
                    }
                }
            }
            let Some(tp) = self.deferred.pop() else { return Ok(t) };
            self.counts.deferred_stores += 1;
            t = self.store_translation_page(t, tp)?;
        }
    }
}

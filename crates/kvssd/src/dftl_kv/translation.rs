//! DFTL-KV's translation I/O: loads and stores of translation pages (`Cause::Mapping`); accesses
//! to the cached mapping table of whole pages (the pages reading) turned into them; and the
//! rewrite of translation pages whose entries GC changed while they were not cached.

use flashsim::{Cause, Nanos};

use super::{DftlKv, NONE};
use crate::error::Result;

impl DftlKv {
    /// Accesses `lpa`'s entry from `t` under the pages reading (`dirty` when the access changes
    /// it): on a miss, stores the dirty translation page the CMT evicts, then loads the entry's
    /// page. Returns when the page is in RAM (at once under any other reading).
    pub(super) fn translate(&mut self, t: Nanos, lpa: u32, dirty: bool) -> Result<Nanos> {
        let tp = self.tp_of(lpa);
        let Some(cmt) = self.cmt.as_mut() else {
            return Ok(t);
        };
        // One page per cache entry: a miss evicts at most one page, the one written back.
        let (hit, io) = cmt.access(tp, dirty);
        if hit {
            self.mapping.hits += 1;
            return Ok(t);
        }
        self.mapping.misses += 1;
        let mut t = t;
        for victim in io.write_back {
            t = self.store_translation_page(t, victim, false)?;
        }
        self.load_translation_page(t, tp)
    }

    fn mapping_busy(&self) -> Nanos {
        self.flash.media.counters().cause(Cause::Mapping).busy_ns
    }

    fn translation_owner(&self, tp: u64) -> u32 {
        self.pages.lpas + tp as u32
    }

    /// Reads translation page `tp` if it was ever written (the GTD knows; a page never written
    /// holds no mapped entry and is made in RAM). Returns when it is in.
    pub(super) fn load_translation_page(&mut self, t: Nanos, tp: u64) -> Result<Nanos> {
        let ppn = self.pages.map[self.translation_owner(tp) as usize];
        if ppn == NONE {
            return Ok(t);
        }
        let before = self.mapping_busy();
        let done = self.flash.media.read(&[(ppn, t)], Cause::Mapping)?;
        self.mapping.loads += 1;
        self.mapping.load_ns += self.mapping_busy() - before;
        Ok(done)
    }

    /// Writes translation page `tp` out of place: a program of the new copy (which may first
    /// need GC), the old one invalidated. `merge`: the page is not in RAM, so its old copy (if
    /// any) is read first (GC's rewrite of an uncached page's entries). Returns when it is
    /// programmed.
    pub(super) fn store_translation_page(&mut self, t: Nanos, tp: u64, merge: bool) -> Result<Nanos> {
        let owner = self.translation_owner(tp);
        let old = self.pages.map[owner as usize];
        let before = self.mapping_busy();
        let mut t = t;
        if merge && old != NONE {
            t = self.flash.media.read(&[(old, t)], Cause::Mapping)?;
            self.mapping.store_reads += 1;
        }
        let zero = std::mem::take(&mut self.zero);
        let done = self.program_page(t, owner, &zero, Cause::Mapping);
        self.zero = zero;
        let done = done?;
        self.tps_written += u64::from(old == NONE);
        self.mapping.stores += 1;
        // Die time of the store's own operations (not of the GC its program may set off).
        self.mapping.store_ns += self.mapping_busy() - before;
        Ok(done)
    }

    /// Turns the pages GC moved into map updates ([`DftlKv::absorb_moves`]), then writes the
    /// uncached translation pages they changed (read, program) from `t` (each write may move
    /// more). Returns when they are written.
    pub(super) fn finish_deferred(&mut self, t: Nanos) -> Result<Nanos> {
        let mut t = t;
        loop {
            self.absorb_moves();
            let Some(tp) = self.deferred.pop() else { return Ok(t) };
            self.counts.deferred_stores += 1;
            t = self.store_translation_page(t, tp, true)?;
        }
    }
}

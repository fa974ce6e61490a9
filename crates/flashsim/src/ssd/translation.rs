//! The device side of DFTL: turning mapping-cache decisions into NAND reads and programs of
//! translation pages, which live at hidden LPNs just past the user space, with cause `Mapping`.
//!
//! Translation I/O happens before the data operation that needed it (a miss must be resolved
//! before the data page can be found), so it delays that operation. Translation pages GC moved
//! while their entries were not cached are rewritten after the current operation.

use crate::cause::Cause;
use crate::error::Result;
use crate::ftl::Ftl;
use crate::ssd::map::NONE;
use crate::ssd::BlockSsd;
use crate::timing::Nanos;

impl BlockSsd {
    /// Resolves the mappings of `pages` LPNs from `lpn` (marking them dirty when the operation
    /// changes them). Returns when the data operation may start.
    pub(crate) fn translate_range(&mut self, at: Nanos, lpn: u64, pages: u64, dirty: bool) -> Result<Nanos> {
        let Some(cmt) = self.cmt.as_mut() else {
            return Ok(at);
        };
        let mut t = at;
        let mut ios = Vec::new();
        for l in lpn..lpn + pages {
            let (hit, io) = cmt.access(l as u32, dirty);
            if hit {
                self.counters.cmt_hits += 1;
            } else {
                self.counters.cmt_misses += 1;
            }
            ios.push(io);
        }
        for io in ios {
            for tp in io.write_back {
                t = self.write_translation_page(t, tp)?;
            }
            if let Some(tp) = io.read {
                t = self.read_translation_page(t, tp)?;
            }
        }
        Ok(t)
    }

    /// Called for every LPN whose page GC moved: its cached entry turns dirty, or, when it is not
    /// cached, its translation page must be rewritten.
    pub(crate) fn note_moved(&mut self, lpn: u32) {
        let user_pages = self.user_pages();
        let Some(cmt) = self.cmt.as_mut() else { return };
        if (lpn as u64) >= user_pages || cmt.mark_dirty_if_cached(lpn) {
            return;
        }
        let tp = cmt.translation_page_of(lpn);
        if !self.deferred_translation.contains(&tp) {
            self.deferred_translation.push(tp);
        }
    }

    /// Writes the translation pages GC left stale. Returns when they are done (or `at`).
    pub(crate) fn finish_internal_work(&mut self, at: Nanos) -> Result<Nanos> {
        let mut t = at;
        // Rewriting a translation page can trigger GC that stales more; each round frees space, so
        // this ends.
        while let Some(tp) = self.deferred_translation.pop() {
            t = self.write_translation_page(t, tp)?;
        }
        Ok(t)
    }

    fn translation_lpn(&self, tp: u64) -> u32 {
        (self.user_pages() + tp) as u32
    }

    fn read_translation_page(&mut self, at: Nanos, tp: u64) -> Result<Nanos> {
        let ppn = self.map.get(self.translation_lpn(tp));
        if ppn == NONE {
            // Never written: the global translation directory knows it holds no mapping.
            return Ok(at);
        }
        self.counters.translation_reads += 1;
        self.media.read(&[(ppn, at)], Cause::Mapping)
    }

    /// Read-modify-write of one translation page.
    fn write_translation_page(&mut self, at: Nanos, tp: u64) -> Result<Nanos> {
        let t = self.read_translation_page(at, tp)?;
        self.counters.translation_writes += 1;
        let lpn = self.translation_lpn(tp);
        self.write_pages(t, lpn, 1, None, Cause::Mapping)
    }
}

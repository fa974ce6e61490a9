//! The block SSD's logical-to-physical map, with what remaps need on top of a plain page map.
//!
//! - `lpns`: per LPN (user pages, then DFTL's translation pages), its physical page or [`NONE`],
//!   and its `copies`: programmed, not yet erased pages whose OOB names it. The two share an entry
//!   so that GC, which needs both for a page it moves, misses the cache once.
//! - `refs`: per PPN, how many LPNs map to it (remaps share pages); the page is invalid at 0. Kept
//!   from the first share on: until then every mapped page has exactly one LPN, its count is its
//!   validity on the media, and keeping it cost every host write a cache miss on a large device
//!   (a page-mapped FTL's overwrite at 16 GiB: a third of its time went to the two misses of
//!   `unmap`, this one and the LPN's entry).
//! - `via_log`: the LPN maps through a remap-log entry rather than by its page's OOB.
//! - `trim_logged`: the LPN was trimmed while older copies of it remain on flash (a logged trim).
//! - the remap log itself (NVRAM; see `remap_log`).
//!
//! Invariants (checked by `BlockSsd::check_consistency`): `refs` counts `l2p`; an LPN is `via_log`
//! exactly when the log of its page's block holds its entry; a mapped LPN not `via_log` is named by
//! its page's OOB; a trimmed LPN with stale copies on flash has a trim entry.

use crate::bits::BitSet;
use crate::ssd::remap_log::{RemapEntry, RemapLog};

/// "No page" / "no LPN" in the mapping tables.
pub(crate) const NONE: u32 = u32::MAX;

/// One LPN's mapping and the copies of it on flash.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LpnEntry {
    pub ppn: u32,
    pub copies: u32,
}

pub(crate) struct PageMap {
    pub lpns: Vec<LpnEntry>,
    /// `None` until a page is shared (see the module doc).
    pub refs: Option<Vec<u32>>,
    pages: usize,
    pub via_log: BitSet,
    pub trim_logged: BitSet,
    pub trim_entries: u64,
    pub log: RemapLog,
    ppb: u32,
}

impl PageMap {
    pub fn new(lpns: u64, pages: u64, blocks: u64, ppb: u32, segment_entries: u32) -> PageMap {
        // Seed 000 section 4.6: 16-bit page offset + 32-bit LPN; wider devices need 8 bytes.
        let entry_bytes = if lpns <= u32::MAX as u64 && ppb <= 1 << 16 { 6 } else { 8 };
        PageMap {
            lpns: vec![LpnEntry { ppn: NONE, copies: 0 }; lpns as usize],
            refs: None,
            pages: pages as usize,
            via_log: BitSet::new(lpns),
            trim_logged: BitSet::new(lpns),
            trim_entries: 0,
            log: RemapLog::new(blocks, segment_entries, entry_bytes),
            ppb,
        }
    }

    pub fn get(&self, lpn: u32) -> u32 {
        self.lpns[lpn as usize].ppn
    }

    fn set(&mut self, lpn: u32, ppn: u32) {
        self.lpns[lpn as usize].ppn = ppn;
    }

    /// Starts bringing `lpn`'s entry into the CPU's cache (`Ftl::prefetch`).
    pub fn prefetch(&self, lpn: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(e) = self.lpns.get(lpn as usize) {
            // SAFETY: a prefetch of a valid reference's address; it reads nothing and cannot fault.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>((e as *const LpnEntry).cast())
            };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = lpn;
    }

    /// Whether `lpn` maps to `ppn` through the page's OOB (not through a remap entry).
    pub fn maps_by_oob(&self, lpn: u32, ppn: u32) -> bool {
        self.get(lpn) == ppn && !self.via_log.get(lpn)
    }

    /// Physical pages the counts cover.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// The reference counts, counted from the map when they are not kept yet.
    pub fn counted(&mut self) -> &mut Vec<u32> {
        let (lpns, pages) = (&self.lpns, self.pages);
        self.refs.get_or_insert_with(|| {
            let mut refs = vec![0; pages];
            for e in lpns.iter().filter(|e| e.ppn != NONE) {
                refs[e.ppn as usize] += 1;
            }
            refs
        })
    }

    /// How many LPNs map to `ppn`, whose validity on the media is `valid` (its count while counts
    /// are not kept).
    pub fn refs_of(&self, ppn: u32, valid: bool) -> u32 {
        self.refs.as_ref().map_or(valid as u32, |r| r[ppn as usize])
    }

    /// Maps `lpn` (already unmapped) to a freshly programmed page whose OOB names it.
    pub fn bind(&mut self, lpn: u32, ppn: u32) {
        if let Some(refs) = self.refs.as_mut() {
            refs[ppn as usize] = 1;
        }
        let e = &mut self.lpns[lpn as usize];
        e.copies += 1;
        e.ppn = ppn;
    }

    /// Drops `lpn`'s mapping (and its remap or trim entry). Returns the page that lost its last
    /// reference, which the caller invalidates.
    pub fn unmap(&mut self, lpn: u32) -> Option<u32> {
        let old = self.get(lpn);
        let mut freed = None;
        if old != NONE {
            if self.via_log.get(lpn) {
                self.log.remove(old / self.ppb, lpn);
                self.via_log.set(lpn, false);
            }
            self.set(lpn, NONE);
            let last = match self.refs.as_mut() {
                Some(refs) => {
                    refs[old as usize] -= 1;
                    refs[old as usize] == 0
                }
                None => true,
            };
            if last {
                freed = Some(old);
            }
        }
        if self.trim_logged.get(lpn) {
            self.set_trim_logged(lpn, false);
        }
        freed
    }

    /// Makes (unmapped) `dst` share `ppn` through a remap-log entry.
    pub fn share(&mut self, dst: u32, ppn: u32) {
        self.counted()[ppn as usize] += 1;
        self.set(dst, ppn);
        self.via_log.set(dst, true);
        self.log.push(ppn / self.ppb, RemapEntry { page: ppn % self.ppb, lpn: dst });
    }

    /// A trimmed LPN with stale copies on flash needs a trim entry, or recovery would revive a copy.
    pub fn log_trim_if_needed(&mut self, lpn: u32) {
        if self.lpns[lpn as usize].copies > 0 && !self.trim_logged.get(lpn) {
            self.set_trim_logged(lpn, true);
        }
    }

    /// Moves `owners` of page `from` to the fresh page `to`, whose OOB names `owners[0]`; the others
    /// get remap entries in `to`'s block.
    pub fn relocate(&mut self, from: u32, to: u32, owners: &[u32]) {
        let named = owners[0];
        self.lpns[named as usize].copies += 1;
        match self.refs.as_mut() {
            Some(refs) => {
                refs[to as usize] = owners.len() as u32;
                refs[from as usize] = 0;
            }
            None => debug_assert_eq!(owners.len(), 1, "a page is shared only once counts are kept"),
        }
        // The OOB of the copy names `named`, so it no longer needs a log entry; the others do.
        self.via_log.set(named, false);
        for &lpn in owners {
            self.set(lpn, to);
            if lpn != named {
                self.via_log.set(lpn, true);
                self.log.push(to / self.ppb, RemapEntry { page: to % self.ppb, lpn });
            }
        }
    }

    /// A programmed page whose OOB names `lpn` was erased.
    pub fn copy_erased(&mut self, lpn: u32) {
        let copies = &mut self.lpns[lpn as usize].copies;
        *copies -= 1;
        // The last stale copy is gone: a logged trim of this LPN has nothing left to hide.
        if *copies == 0 && self.trim_logged.get(lpn) {
            self.set_trim_logged(lpn, false);
        }
    }

    fn set_trim_logged(&mut self, lpn: u32, on: bool) {
        self.trim_logged.set(lpn, on);
        if on {
            self.trim_entries += 1;
        } else {
            self.trim_entries -= 1;
        }
        self.log.set_trim_entries(self.trim_entries);
    }
}

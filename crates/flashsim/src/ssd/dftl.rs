//! DFTL's cached mapping table (Gupta, Kim, Urgaonkar, ASPLOS'09).
//!
//! The full page map lives in translation pages on flash (4-byte entries, page_size / 4 per page);
//! the controller caches `capacity` entries with LRU replacement. A miss reads the entry's
//! translation page; evicting a dirty entry writes its translation page back, and, as DFTL batches
//! them, cleans every other cached dirty entry of that same translation page at once.
//!
//! This module only decides which translation pages to read and write; the device performs them
//! as NAND operations on hidden LPNs past the user space, so they are timed, counted and garbage
//! collected like any page. The authoritative map stays complete in the simulator (DFTL changes
//! cost, not contents), which is why translation pages carry no data.

use std::collections::BTreeMap;

/// Translation I/O a mapping access needs, in order: write back evicted pages, then read the missed one.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct TranslationIo {
    pub write_back: Vec<u64>,
    pub read: Option<u64>,
}

pub(crate) struct Cmt {
    capacity: usize,
    entries_per_page: u64,
    /// Cached LPNs (ordered, so one translation page's entries are a range) -> (LRU stamp, dirty).
    cached: BTreeMap<u32, (u64, bool)>,
    lru: BTreeMap<u64, u32>,
    clock: u64,
}

impl Cmt {
    pub fn new(capacity: u32, entries_per_page: u64) -> Self {
        Cmt { capacity: capacity as usize, entries_per_page, cached: BTreeMap::new(), lru: BTreeMap::new(), clock: 0 }
    }

    pub fn translation_page_of(&self, lpn: u32) -> u64 {
        lpn as u64 / self.entries_per_page
    }

    /// Looks `lpn` up (marking it dirty when the access changes its mapping). Returns whether it hit
    /// and the translation I/O the access costs.
    pub fn access(&mut self, lpn: u32, dirty: bool) -> (bool, TranslationIo) {
        self.clock += 1;
        let stamp = self.clock;
        if let Some(e) = self.cached.get_mut(&lpn) {
            self.lru.remove(&e.0);
            e.0 = stamp;
            e.1 |= dirty;
            self.lru.insert(stamp, lpn);
            return (true, TranslationIo::default());
        }
        let mut io = TranslationIo::default();
        while self.cached.len() >= self.capacity {
            let Some((_, victim)) = self.lru.pop_first() else {
                break;
            };
            if let Some((_, was_dirty)) = self.cached.remove(&victim) {
                if was_dirty {
                    let tp = self.translation_page_of(victim);
                    self.clean_page(tp);
                    io.write_back.push(tp);
                }
            }
        }
        io.read = Some(self.translation_page_of(lpn));
        self.cached.insert(lpn, (stamp, dirty));
        self.lru.insert(stamp, lpn);
        (false, io)
    }

    /// Marks a cached entry dirty (GC moved its page); returns false when it is not cached.
    pub fn mark_dirty_if_cached(&mut self, lpn: u32) -> bool {
        match self.cached.get_mut(&lpn) {
            Some(e) => {
                e.1 = true;
                true
            }
            None => false,
        }
    }

    /// Volatile: a power cut empties the cache.
    pub fn clear(&mut self) {
        self.cached.clear();
        self.lru.clear();
    }

    fn clean_page(&mut self, tp: u64) {
        let lo = (tp * self.entries_per_page) as u32;
        let hi = ((tp + 1) * self.entries_per_page).min(u32::MAX as u64) as u32;
        for (_, e) in self.cached.range_mut(lo..hi) {
            e.1 = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_read_and_dirty_evictions_write_back_once_per_page() {
        let mut c = Cmt::new(2, 4);
        assert_eq!(c.access(0, true), (false, TranslationIo { write_back: vec![], read: Some(0) }));
        assert_eq!(c.access(1, true).1.read, Some(0));
        assert!(c.access(0, false).0);
        // Evicts LPN 1 (least recent, dirty): page 0 written back, which also cleans LPN 0.
        let (hit, io) = c.access(9, false);
        assert!(!hit);
        assert_eq!(io, TranslationIo { write_back: vec![0], read: Some(2) });
        // Evicts LPN 0, now clean: no write back.
        assert_eq!(c.access(5, false).1.write_back, Vec::<u64>::new());
    }
}

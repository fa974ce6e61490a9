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
//!
//! The cache is public (re-exported as `flashsim::MappingCache`) so that other FTLs built on the
//! media layer (the key-value FTLs of the `kvssd` crate) cache their own tables the same way. Its
//! entries are numbered by a key type ([`CmtKey`]): `u32` LPNs for the block SSD, `u64` entry
//! numbers for tables larger than 2^32 entries. Entry `e` lives in translation page
//! `e / entries_per_page`.

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};

/// Translation I/O a mapping access needs, in order: write back evicted pages, then read the missed one.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct TranslationIo {
    pub write_back: Vec<u64>,
    pub read: Option<u64>,
}

/// What numbers a cached entry: an LPN (`u32`) or a wider entry number (`u64`).
pub trait CmtKey: Copy + Ord + Into<u64> + TryFrom<u64> {}

impl CmtKey for u32 {}
impl CmtKey for u64 {}

/// The cached mapping table: which entries are in RAM, in LRU order, and which of them are dirty.
pub struct Cmt<K: CmtKey = u32> {
    capacity: usize,
    entries_per_page: u64,
    /// Cached entries (ordered, so one translation page's entries are a range) -> (LRU stamp, dirty).
    cached: BTreeMap<K, (u64, bool)>,
    lru: BTreeMap<u64, K>,
    clock: u64,
}

impl<K: CmtKey> Cmt<K> {
    pub fn new(capacity: u32, entries_per_page: u64) -> Self {
        Cmt { capacity: capacity as usize, entries_per_page, cached: BTreeMap::new(), lru: BTreeMap::new(), clock: 0 }
    }

    pub fn translation_page_of(&self, lpn: K) -> u64 {
        lpn.into() / self.entries_per_page
    }

    /// Entries the cache holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries cached now.
    pub fn len(&self) -> usize {
        self.cached.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cached.is_empty()
    }

    /// Whether `lpn`'s entry is cached (no LRU update).
    pub fn is_cached(&self, lpn: K) -> bool {
        self.cached.contains_key(&lpn)
    }

    /// Looks `lpn` up (marking it dirty when the access changes its mapping). Returns whether it hit
    /// and the translation I/O the access costs.
    pub fn access(&mut self, lpn: K, dirty: bool) -> (bool, TranslationIo) {
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
    pub fn mark_dirty_if_cached(&mut self, lpn: K) -> bool {
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

    /// Drops the cached entries in `range` without writing them back: the entries stopped
    /// existing (the table they belong to was reset, e.g. its block erased).
    pub fn forget(&mut self, range: impl RangeBounds<K>) {
        let gone: Vec<(K, u64)> = self.cached.range(range).map(|(&k, &(stamp, _))| (k, stamp)).collect();
        for (k, stamp) in gone {
            self.cached.remove(&k);
            self.lru.remove(&stamp);
        }
    }

    /// The translation pages that hold a dirty cached entry, in ascending order, all of them
    /// cleaned: what a flush of the cache writes back. The entries stay cached.
    pub fn take_dirty(&mut self) -> Vec<u64> {
        let mut pages = Vec::new();
        for (&k, e) in self.cached.iter_mut() {
            if e.1 {
                e.1 = false;
                let tp = k.into() / self.entries_per_page;
                if pages.last() != Some(&tp) {
                    pages.push(tp);
                }
            }
        }
        pages
    }

    fn clean_page(&mut self, tp: u64) {
        let Ok(lo) = K::try_from(tp * self.entries_per_page) else { return };
        let hi = match K::try_from((tp + 1) * self.entries_per_page) {
            Ok(hi) => Bound::Excluded(hi),
            Err(_) => Bound::Unbounded,
        };
        for (_, e) in self.cached.range_mut((Bound::Included(lo), hi)) {
            e.1 = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misses_read_and_dirty_evictions_write_back_once_per_page() {
        let mut c = Cmt::<u32>::new(2, 4);
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

    #[test]
    fn wide_keys_forget_a_range_and_a_flush_takes_every_dirty_page_once() {
        let mut c = Cmt::<u64>::new(8, 4);
        let far = 5u64 << 32;
        for k in [1, 2, far, far + 1, far + 9] {
            c.access(k, k != 2);
        }
        assert_eq!(c.len(), 5);
        assert_eq!(c.translation_page_of(far + 9), (far + 9) / 4);
        assert_eq!(c.take_dirty(), vec![0, far / 4, (far + 9) / 4]);
        assert_eq!(c.take_dirty(), Vec::<u64>::new(), "all clean now");
        c.forget(far..far + 4);
        assert!(!c.is_cached(far) && !c.is_cached(far + 1) && c.is_cached(far + 9) && c.is_cached(1));
        assert_eq!(c.len(), 3);
        // The forgotten entries left the LRU order too: filling the cache evicts only live ones.
        for k in 100..106u64 {
            c.access(k, true);
        }
        assert_eq!(c.len(), 8);
        let (_, io) = c.access(200, false);
        assert_eq!(io.write_back, Vec::<u64>::new(), "the least recent entry (1) was clean");
        assert!(!c.is_cached(1));
    }
}

//! DFTL-KV's cached mapping table (CMT) under a RAM budget: whole translation pages, LRU, dirty
//! write-back.
//!
//! A translation page is one flash page of mapping entries (`page / TRANSLATION_ENTRY_BYTES` of
//! them); the cache holds `budget / page` of them, each whole (its `page` bytes of RAM), so a
//! budget below one page holds none and is refused by the configuration. An access to an entry is
//! an access to its page: a hit touches the page (most recently used; dirty when the access
//! changes the entry); a miss first evicts the least recently used page when the cache is full
//! (a dirty one is written back: one flash program, nothing to merge, the whole page is in RAM),
//! then brings the page in (one flash page read, unless the page was never written: the GTD has
//! no address for it and its entries are all unmapped).
//!
//! This is the issue-28 reading of the paper's DFTL (Gupta et al., ASPLOS'09: a GTD in RAM, a
//! cached mapping table, translation pages on flash written back when dirty) with pages as the
//! unit of caching; DFTL itself caches single entries in its CMT (batching the write-back of
//! one page's dirty entries), which is what flashsim's [`flashsim::MappingCache`] models and what
//! DFTL-KV did before. Caching whole pages makes the RAM a map needs the number of translation
//! pages holding a live entry times the page size: with logical pages spread over the address
//! space (see `lpa.rs`), far more than the live entries alone.
//!
//! This module decides what to load and store; the device performs the I/O and counts it.

use std::collections::{BTreeMap, HashMap};

/// The translation pages in RAM, in LRU order, and which of them are dirty.
pub(crate) struct PageCmt {
    capacity: usize,
    /// Cached page -> (LRU stamp, dirty).
    pages: HashMap<u64, (u64, bool)>,
    /// LRU stamp -> page, oldest first.
    lru: BTreeMap<u64, u64>,
    clock: u64,
}

/// What one access to a translation page needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PageAccess {
    /// The page was in RAM.
    pub hit: bool,
    /// The dirty page evicted to make room: written back before the load.
    pub write_back: Option<u64>,
}

impl PageCmt {
    /// A cache of `capacity` translation pages (at least one).
    pub fn new(capacity: usize) -> PageCmt {
        PageCmt { capacity: capacity.max(1), pages: HashMap::new(), lru: BTreeMap::new(), clock: 0 }
    }

    /// Pages cached now.
    pub fn len(&self) -> usize {
        self.pages.len()
    }

    /// Accesses translation page `tp` (`dirty` when the access changes one of its entries). On a
    /// miss the page is cached from now on; the caller loads it.
    pub fn access(&mut self, tp: u64, dirty: bool) -> PageAccess {
        self.clock += 1;
        let stamp = self.clock;
        if let Some(e) = self.pages.get_mut(&tp) {
            self.lru.remove(&e.0);
            e.0 = stamp;
            e.1 |= dirty;
            self.lru.insert(stamp, tp);
            return PageAccess { hit: true, write_back: None };
        }
        let mut write_back = None;
        if self.pages.len() >= self.capacity {
            if let Some((_, victim)) = self.lru.pop_first() {
                if let Some((_, true)) = self.pages.remove(&victim) {
                    write_back = Some(victim);
                }
            }
        }
        self.pages.insert(tp, (stamp, dirty));
        self.lru.insert(stamp, tp);
        PageAccess { hit: false, write_back }
    }

    /// Marks `tp` dirty if it is cached (GC moved a page it maps; no LRU update); false when it
    /// is not.
    pub fn mark_dirty_if_cached(&mut self, tp: u64) -> bool {
        match self.pages.get_mut(&tp) {
            Some(e) => {
                e.1 = true;
                true
            }
            None => false,
        }
    }

    /// The dirty cached pages, ascending, all cleaned (they stay cached): what a flush stores.
    pub fn take_dirty(&mut self) -> Vec<u64> {
        let mut dirty: Vec<u64> = self
            .pages
            .iter_mut()
            .filter(|(_, e)| e.1)
            .map(|(&tp, e)| {
                e.1 = false;
                tp
            })
            .collect();
        dirty.sort_unstable();
        dirty
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The model: a list of (page, dirty), most recently used last.
    #[derive(Default)]
    struct Model {
        list: Vec<(u64, bool)>,
        loads: u64,
        stores: u64,
    }

    impl Model {
        fn access(&mut self, cap: usize, tp: u64, dirty: bool) {
            if let Some(i) = self.list.iter().position(|e| e.0 == tp) {
                let (_, d) = self.list.remove(i);
                self.list.push((tp, d || dirty));
                return;
            }
            if self.list.len() == cap {
                let (_, d) = self.list.remove(0);
                self.stores += d as u64;
            }
            self.loads += 1;
            self.list.push((tp, dirty));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

        /// Loads (misses) and stores (dirty evictions, then a flush) match an LRU list of pages.
        #[test]
        fn loads_and_stores_match_an_lru_list_of_pages(
            cap in 1usize..6,
            ops in prop::collection::vec((0u64..10, any::<bool>(), prop::bool::weighted(0.05)), 0..400),
        ) {
            let mut c = PageCmt::new(cap);
            let mut m = Model::default();
            let (mut loads, mut stores) = (0u64, 0u64);
            for (tp, dirty, gc) in ops {
                if gc {
                    // GC moved a page mapped by `tp`: dirty if cached, no LRU change.
                    let cached = c.mark_dirty_if_cached(tp);
                    let e = m.list.iter_mut().find(|e| e.0 == tp);
                    prop_assert_eq!(cached, e.is_some());
                    if let Some(e) = e {
                        e.1 = true;
                    }
                    continue;
                }
                let a = c.access(tp, dirty);
                loads += !a.hit as u64;
                stores += a.write_back.is_some() as u64;
                m.access(cap, tp, dirty);
                prop_assert_eq!((loads, stores), (m.loads, m.stores));
                prop_assert_eq!(c.len(), m.list.len());
            }
            let mut want: Vec<u64> = m.list.iter().filter(|e| e.1).map(|e| e.0).collect();
            want.sort_unstable();
            prop_assert_eq!(c.take_dirty(), want);
            prop_assert!(c.take_dirty().is_empty(), "a flush cleans every page");
        }
    }

    #[test]
    fn a_page_is_cached_whole() {
        let mut c = PageCmt::new(2);
        assert_eq!(c.access(7, false), PageAccess { hit: false, write_back: None });
        // Another entry of page 7: a hit, whatever entry of the page it is.
        assert_eq!(c.access(7, true), PageAccess { hit: true, write_back: None });
        assert!(!c.access(8, false).hit);
        // Page 7 is the least recently used and dirty: written back to bring page 9 in.
        assert_eq!(c.access(9, false), PageAccess { hit: false, write_back: Some(7) });
        // Page 8 is clean: evicted with no write.
        assert_eq!(c.access(10, false), PageAccess { hit: false, write_back: None });
        assert_eq!(c.len(), 2);
    }
}

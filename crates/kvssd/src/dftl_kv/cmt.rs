//! DFTL-KV's cached mapping table of single entries (the seed's reading of its revised DFTL: "each
//! entry of CMT is modified to include the fields of value size and key identifier"), and the
//! contents of the translation pages on flash that it caches from.
//!
//! - An entry maps an LPA to its page (PPN) and carries the value size and the key id; the
//!   translation pages on flash hold one per LPA, `per_page` LPAs a page, in LPA order.
//! - **Read** of an entry: a hit serves it from RAM; a miss makes room, then the entry's
//!   translation page is loaded and the entry cached clean.
//! - **Write** of a whole entry (a fresh LPA's, or an LPA unmapped): cached dirty, with no load (ours:
//!   nothing of the old entry is needed; DFTL loads on a write miss to learn the old PPN, which
//!   the key-value device already has, its LPAs being its own choice). Its page is merged when it is
//!   written back.
//! - **Eviction**: the least recently used entry (ours: DFTL's paper uses segmented LRU, whose
//!   segment sizes neither it nor the seed gives; LRU is what the reference reading and flashsim's
//!   block SSD use). A dirty victim's translation page is written back by a read-modify-write, and
//!   with it every other cached dirty entry of that page, which stay cached, clean (DFTL's batch
//!   update).
//! - GC moving a page changes its entry: the cached copy (then dirty), or the page on flash (a
//!   read-modify-write the device pays after the request).
//!
//! This module decides what is cached and which translation pages to load and store; the device
//! performs the I/O (`entries.rs`). The translation pages' contents live here, beside the media,
//! whose translation pages are programmed with no data. Invariants ([`EntryCmt::check`]): at most
//! `capacity` entries cached; a clean cached entry equals its copy on flash; the LRU order names
//! exactly the cached entries.

use std::collections::BTreeMap;

/// One map entry: the LPA's page, and the value size and key id the seed adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MapEntry {
    pub ppn: u32,
    pub value_size: u32,
    pub key_id: u32,
}

impl MapEntry {
    /// A free LPA's entry.
    pub const UNMAPPED: MapEntry = MapEntry { ppn: u32::MAX, value_size: 0, key_id: u32::MAX };
}

/// The translation I/O an access needs, in order: write back `stores` (each a read-modify-write
/// of a translation page), then read `load`.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct EntryIo {
    pub stores: Vec<u64>,
    pub load: Option<u64>,
}

#[derive(Clone, Copy, Debug)]
struct Cached {
    entry: MapEntry,
    stamp: u64,
    dirty: bool,
}

/// The cached entries, in LRU order, over the translation pages' contents.
pub(crate) struct EntryCmt {
    capacity: usize,
    per_page: u64,
    /// What the translation pages on flash hold, by LPA.
    flash: Vec<MapEntry>,
    /// Cached entries by LPA (ordered: one translation page's entries are a range).
    cached: BTreeMap<u32, Cached>,
    lru: BTreeMap<u64, u32>,
    clock: u64,
}

impl EntryCmt {
    /// A cache of `capacity` entries (at least one) over `lpas` LPAs, `per_page` to a translation
    /// page, all unmapped.
    pub fn new(capacity: u64, per_page: u64, lpas: u32) -> EntryCmt {
        EntryCmt {
            capacity: capacity.clamp(1, u32::MAX as u64) as usize,
            per_page: per_page.max(1),
            flash: vec![MapEntry::UNMAPPED; lpas as usize],
            cached: BTreeMap::new(),
            lru: BTreeMap::new(),
            clock: 0,
        }
    }

    pub fn translation_page_of(&self, lpa: u32) -> u64 {
        lpa as u64 / self.per_page
    }

    /// Entries cached now.
    pub fn len(&self) -> usize {
        self.cached.len()
    }

    /// `lpa`'s entry as the device knows it (cached, else on flash), with no effect on the cache.
    pub fn current(&self, lpa: u32) -> MapEntry {
        self.cached.get(&lpa).map_or(self.flash[lpa as usize], |c| c.entry)
    }

    /// Reads `lpa`'s entry: whether it hit, the entry, and the I/O a miss needs.
    pub fn read(&mut self, lpa: u32) -> (bool, MapEntry, EntryIo) {
        if let Some(entry) = self.touch(lpa, None) {
            return (true, entry, EntryIo::default());
        }
        let mut io = self.make_room();
        io.load = Some(self.translation_page_of(lpa));
        let entry = self.flash[lpa as usize];
        self.insert(lpa, entry, false);
        (false, entry, io)
    }

    /// Writes `lpa`'s whole entry (cached dirty): whether it hit, and the write-backs a miss needs
    /// to make room (no load).
    pub fn write(&mut self, lpa: u32, entry: MapEntry) -> (bool, EntryIo) {
        if self.touch(lpa, Some(entry)).is_some() {
            return (true, EntryIo::default());
        }
        let io = self.make_room();
        self.insert(lpa, entry, true);
        (false, io)
    }

    /// GC moved `lpa`'s page to `ppn`: the cached entry is updated (dirty) and true returned, or,
    /// when it is not cached, the entry on flash is, and false says that its page is to be
    /// rewritten.
    pub fn moved(&mut self, lpa: u32, ppn: u32) -> bool {
        match self.cached.get_mut(&lpa) {
            Some(c) => {
                c.entry.ppn = ppn;
                c.dirty = true;
                true
            }
            None => {
                self.flash[lpa as usize].ppn = ppn;
                false
            }
        }
    }

    /// Sets `lpa`'s entry to `entry` everywhere, with no I/O and no effect on the LRU order (a put
    /// that failed takes back the entries it wrote).
    pub fn reset(&mut self, lpa: u32, entry: MapEntry) {
        self.flash[lpa as usize] = entry;
        if let Some(c) = self.cached.get_mut(&lpa) {
            c.entry = entry;
            c.dirty = false;
        }
    }

    /// Writes every dirty entry back: the translation pages to store, ascending, each once. The
    /// entries stay cached, clean.
    pub fn take_dirty(&mut self) -> Vec<u64> {
        let dirty: Vec<u64> = {
            let mut pages: Vec<u64> =
                self.cached.iter().filter(|(_, c)| c.dirty).map(|(&l, _)| self.translation_page_of(l)).collect();
            pages.dedup();
            pages
        };
        for &tp in &dirty {
            self.write_back(tp);
        }
        dirty
    }

    /// Moves a cached entry to the most recent end (and sets it, dirty, when `set` is given);
    /// returns its entry, or `None` when it is not cached.
    fn touch(&mut self, lpa: u32, set: Option<MapEntry>) -> Option<MapEntry> {
        self.clock += 1;
        let stamp = self.clock;
        let c = self.cached.get_mut(&lpa)?;
        self.lru.remove(&c.stamp);
        c.stamp = stamp;
        if let Some(e) = set {
            c.entry = e;
            c.dirty = true;
        }
        self.lru.insert(stamp, lpa);
        Some(c.entry)
    }

    fn insert(&mut self, lpa: u32, entry: MapEntry, dirty: bool) {
        let stamp = self.clock;
        self.cached.insert(lpa, Cached { entry, stamp, dirty });
        self.lru.insert(stamp, lpa);
    }

    /// Evicts least recently used entries until one more fits; the translation pages of dirty
    /// victims are written back (batch update).
    fn make_room(&mut self) -> EntryIo {
        let mut io = EntryIo::default();
        while self.cached.len() >= self.capacity {
            let Some((_, victim)) = self.lru.pop_first() else { break };
            let Some(c) = self.cached.get(&victim).copied() else { continue };
            if c.dirty {
                let tp = self.translation_page_of(victim);
                self.write_back(tp);
                io.stores.push(tp);
            }
            self.cached.remove(&victim);
        }
        io
    }

    /// Writes every cached dirty entry of translation page `tp` to it; they stay cached, clean.
    fn write_back(&mut self, tp: u64) {
        let lo = (tp * self.per_page).min(u32::MAX as u64) as u32;
        let hi = ((tp + 1) * self.per_page).min(self.flash.len() as u64) as u32;
        for (&lpa, c) in self.cached.range_mut(lo..hi) {
            if c.dirty {
                self.flash[lpa as usize] = c.entry;
                c.dirty = false;
            }
        }
    }

    /// The invariants, for the device's consistency check.
    pub fn check(&self) -> Result<(), String> {
        if self.cached.len() > self.capacity {
            return Err(format!("{} entries cached, capacity {}", self.cached.len(), self.capacity));
        }
        if self.lru.len() != self.cached.len() {
            return Err(format!("{} entries in the LRU order, {} cached", self.lru.len(), self.cached.len()));
        }
        for (&stamp, &lpa) in &self.lru {
            match self.cached.get(&lpa) {
                Some(c) if c.stamp == stamp => {}
                _ => return Err(format!("LRU stamp {stamp} names LPA {lpa}, not cached with that stamp")),
            }
        }
        for (&lpa, c) in &self.cached {
            if !c.dirty && c.entry != self.flash[lpa as usize] {
                return Err(format!("clean cached entry of LPA {lpa} differs from its translation page"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use proptest::prelude::*;

    use super::*;

    const LPAS: u32 = 40;
    const PER_PAGE: u64 = 4;

    #[derive(Clone, Debug)]
    enum Op {
        Read(u32),
        Write(u32, u32),
        Moved(u32, u32),
        Flush,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..LPAS).prop_map(Op::Read),
            4 => (0..LPAS, 0u32..1000).prop_map(|(l, p)| Op::Write(l, p)),
            1 => (0..LPAS, 0u32..1000).prop_map(|(l, p)| Op::Moved(l, p)),
            1 => Just(Op::Flush),
        ]
    }

    /// The rules written plainly: the map as a `HashMap`, the cache as a list of (LPA, dirty),
    /// most recent last, and the translation-page traffic they imply.
    struct Model {
        cap: usize,
        map: HashMap<u32, MapEntry>,
        lru: Vec<(u32, bool)>,
    }

    impl Model {
        fn entry(&self, lpa: u32) -> MapEntry {
            self.map.get(&lpa).copied().unwrap_or(MapEntry::UNMAPPED)
        }

        /// Evicts until one more fits; returns the translation pages written back.
        fn make_room(&mut self) -> Vec<u64> {
            let mut stores = Vec::new();
            while self.lru.len() >= self.cap {
                let (victim, dirty) = self.lru.remove(0);
                if dirty {
                    let tp = victim as u64 / PER_PAGE;
                    for e in self.lru.iter_mut().filter(|e| e.0 as u64 / PER_PAGE == tp) {
                        e.1 = false;
                    }
                    stores.push(tp);
                }
            }
            stores
        }

        /// Whether `lpa` was cached (then moved to the most recent end, dirty if `dirty`).
        fn touch(&mut self, lpa: u32, dirty: bool) -> bool {
            let Some(i) = self.lru.iter().position(|e| e.0 == lpa) else { return false };
            let (_, d) = self.lru.remove(i);
            self.lru.push((lpa, d || dirty));
            true
        }
    }

    fn entry(ppn: u32) -> MapEntry {
        MapEntry { ppn, value_size: ppn * 3, key_id: ppn % 7 }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Every read returns the map's entry; hits, loads and the translation pages written back
        /// are the model's, access by access; after a flush the translation pages hold the map.
        #[test]
        fn the_cmt_matches_a_hashmap_and_its_translation_traffic(
            cap in 1usize..8,
            ops in prop::collection::vec(op(), 1..300),
        ) {
            let mut c = EntryCmt::new(cap as u64, PER_PAGE, LPAS);
            let mut m = Model { cap, map: HashMap::new(), lru: Vec::new() };
            for op in &ops {
                match *op {
                    Op::Read(lpa) => {
                        let (hit, got, io) = c.read(lpa);
                        let want_hit = m.touch(lpa, false);
                        let want_stores = if want_hit { Vec::new() } else { m.make_room() };
                        if !want_hit {
                            m.lru.push((lpa, false));
                        }
                        let want_load = (!want_hit).then_some(lpa as u64 / PER_PAGE);
                        prop_assert_eq!((hit, got), (want_hit, m.entry(lpa)), "{:?}", op);
                        prop_assert_eq!(io, EntryIo { stores: want_stores, load: want_load }, "{:?}", op);
                    }
                    Op::Write(lpa, ppn) => {
                        let (hit, io) = c.write(lpa, entry(ppn));
                        m.map.insert(lpa, entry(ppn));
                        let want_hit = m.touch(lpa, true);
                        let want_stores = if want_hit { Vec::new() } else { m.make_room() };
                        if !want_hit {
                            m.lru.push((lpa, true));
                        }
                        prop_assert_eq!((hit, io), (want_hit, EntryIo { stores: want_stores, load: None }), "{:?}", op);
                    }
                    Op::Moved(lpa, ppn) => {
                        let mut e = m.entry(lpa);
                        e.ppn = ppn;
                        m.map.insert(lpa, e);
                        let cached = m.lru.iter_mut().find(|x| x.0 == lpa).map(|x| x.1 = true).is_some();
                        prop_assert_eq!(c.moved(lpa, ppn), cached);
                    }
                    Op::Flush => {
                        let mut want: Vec<u64> =
                            m.lru.iter().filter(|e| e.1).map(|e| e.0 as u64 / PER_PAGE).collect();
                        want.sort_unstable();
                        want.dedup();
                        for e in &mut m.lru {
                            e.1 = false;
                        }
                        prop_assert_eq!(c.take_dirty(), want);
                    }
                }
                prop_assert!(c.check().is_ok(), "{:?}", c.check());
                for lpa in 0..LPAS {
                    prop_assert_eq!(c.current(lpa), m.entry(lpa), "LPA {} after {:?}", lpa, op);
                }
            }
            c.take_dirty();
            for lpa in 0..LPAS {
                prop_assert_eq!(c.flash[lpa as usize], m.entry(lpa), "LPA {} on flash after a flush", lpa);
            }
        }
    }

    #[test]
    fn a_dirty_eviction_writes_its_page_back_with_the_other_dirty_entries_of_that_page() {
        let mut c = EntryCmt::new(2, 4, 16);
        assert_eq!(c.write(0, entry(10)), (false, EntryIo::default()));
        assert_eq!(c.write(1, entry(11)), (false, EntryIo::default()));
        // Evicts LPA 0 (dirty): page 0 written back, LPA 1 with it (now clean, still cached).
        let (hit, got, io) = c.read(9);
        assert_eq!((hit, got, io), (false, MapEntry::UNMAPPED, EntryIo { stores: vec![0], load: Some(2) }));
        assert_eq!((c.flash[0], c.flash[1]), (entry(10), entry(11)));
        // Evicts LPA 1, clean: nothing written.
        assert_eq!(c.read(0), (false, entry(10), EntryIo { stores: vec![], load: Some(0) }));
        assert_eq!(c.take_dirty(), Vec::<u64>::new());
        // GC moves an uncached entry: its page on flash changes; a cached one turns dirty.
        assert!(!c.moved(5, 77));
        assert_eq!(c.current(5).ppn, 77);
        assert!(c.moved(0, 78));
        assert_eq!(c.take_dirty(), vec![0]);
        assert_eq!(c.flash[0].ppn, 78);
        c.check().unwrap();
    }
}

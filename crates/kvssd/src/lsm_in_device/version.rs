//! The device's MANIFEST, in DRAM: every SST with its level, key range, bytes and page list; each
//! level's SSTs (L0 by age, L1 and up by key: their ranges do not overlap); each level's
//! compaction pointer (the largest key its last compaction took, LevelDB's round-robin); and the
//! PPN-to-SST map with which GC finds the SST of a page it moves; and each SST's bloom filter
//! (LevelDB's filter block, here kept in DRAM). No block index: an SST is known by its range, its
//! filter and its pages.
//!
//! An SST being written is known (so that GC can move its first pages while its later ones are
//! programmed) before it is installed in its level.

use std::collections::BTreeMap;

use super::bloom::Bloom;
use crate::flash::Owners;

/// "No SST" in the PPN-to-SST map.
const NO_SST: u32 = u32::MAX;

/// Each key of an SST and the byte offset of its record, sorted by key (see [`Sst::records`]).
pub type Directory = Vec<(Box<[u8]>, u32)>;

/// One SST: sorted records, back to back, on `ppns` (page `i` holds bytes `i x page size ..`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sst {
    /// Its number: SSTs are numbered in the order they are written, so a higher number in L0 is
    /// newer.
    pub id: u32,
    pub level: u8,
    pub smallest: Box<[u8]>,
    pub largest: Box<[u8]>,
    /// Bytes of records.
    pub used: u32,
    pub ppns: Vec<u32>,
    /// The simulator's directory of the SST's records: each key and the byte offset of its
    /// record, sorted. Not the device's: the modelled device reads the whole SST to find a key
    /// and is charged for every page of it; the directory only spares the simulator copying and
    /// decoding 2 MiB for each SST a get consults.
    pub records: Directory,
    /// The bloom filter of its keys (in device DRAM; consulted by lookups when `filters` is set).
    pub filter: Bloom,
}

impl Sst {
    /// Whether `key` is inside this SST's range.
    pub fn covers(&self, key: &[u8]) -> bool {
        *self.smallest <= *key && *key <= *self.largest
    }

    /// Whether this SST's range and `[smallest, largest]` share a key.
    pub fn overlaps(&self, smallest: &[u8], largest: &[u8]) -> bool {
        *self.smallest <= *largest && smallest <= &*self.largest
    }
}

pub struct Version {
    ssts: BTreeMap<u32, Sst>,
    levels: Vec<Vec<u32>>,
    level_bytes: Vec<u64>,
    compact_pointer: Vec<Option<Box<[u8]>>>,
    ppn_to_sst: Vec<u32>,
    next_id: u32,
}

impl Version {
    pub fn new(levels: u8, total_pages: u64) -> Version {
        Version {
            ssts: BTreeMap::new(),
            levels: vec![Vec::new(); levels as usize],
            level_bytes: vec![0; levels as usize],
            compact_pointer: vec![None; levels as usize],
            ppn_to_sst: vec![NO_SST; total_pages as usize],
            next_id: 0,
        }
    }

    /// Starts an SST of `level` (not yet in its level); its pages follow with [`Version::add_pages`].
    pub fn create(
        &mut self,
        level: u8,
        smallest: &[u8],
        largest: &[u8],
        used: u32,
        records: Directory,
        filter: Bloom,
    ) -> u32 {
        let id = self.next_id;
        // 2^32 - 1 SSTs: far beyond any simulated run; NO_SST stays unused.
        self.next_id += 1;
        let (smallest, largest) = (smallest.into(), largest.into());
        let sst = Sst { id, level, smallest, largest, used, ppns: Vec::new(), records, filter };
        self.ssts.insert(id, sst);
        id
    }

    /// Pages just programmed for SST `id`.
    pub fn add_pages(&mut self, id: u32, ppns: &[u32]) {
        for &ppn in ppns {
            self.ppn_to_sst[ppn as usize] = id;
        }
        if let Some(s) = self.ssts.get_mut(&id) {
            s.ppns.extend_from_slice(ppns);
        }
    }

    /// Puts SST `id`, whole, into its level.
    pub fn install(&mut self, id: u32) {
        let Some(s) = self.ssts.get(&id) else { return };
        let (level, used) = (s.level as usize, s.used as u64);
        self.level_bytes[level] += used;
        let list = &mut self.levels[level];
        if level == 0 {
            list.push(id);
        } else {
            let smallest = &self.ssts[&id].smallest;
            let at = list.partition_point(|other| self.ssts[other].smallest < *smallest);
            list.insert(at, id);
        }
    }

    /// Takes SST `id` out of its level and forgets it; its pages belong to nothing any more.
    pub fn remove(&mut self, id: u32) -> Option<Sst> {
        let s = self.ssts.remove(&id)?;
        for &ppn in &s.ppns {
            self.ppn_to_sst[ppn as usize] = NO_SST;
        }
        let list = &mut self.levels[s.level as usize];
        if let Some(i) = list.iter().position(|&x| x == id) {
            list.remove(i);
            self.level_bytes[s.level as usize] -= s.used as u64;
        }
        Some(s)
    }

    /// Moves SST `id` to `level` without rewriting it (LevelDB's trivial move).
    pub fn relevel(&mut self, id: u32, level: u8) {
        let Some(mut s) = self.ssts.get(&id).cloned() else { return };
        let ppns = std::mem::take(&mut s.ppns);
        self.remove(id);
        s.level = level;
        self.ssts.insert(id, s);
        self.add_pages(id, &ppns);
        self.install(id);
    }

    pub fn get(&self, id: u32) -> Option<&Sst> {
        self.ssts.get(&id)
    }

    /// The SSTs of `level`: L0 oldest first, the others by key.
    pub fn level(&self, level: u8) -> impl DoubleEndedIterator<Item = &Sst> + '_ {
        self.levels[level as usize].iter().map(|id| &self.ssts[id])
    }

    pub fn count(&self, level: u8) -> usize {
        self.levels[level as usize].len()
    }

    /// Bytes of records in `level`.
    pub fn bytes(&self, level: u8) -> u64 {
        self.level_bytes[level as usize]
    }

    pub fn levels(&self) -> u8 {
        self.levels.len() as u8
    }

    /// The SST of `level` (1 or more) whose range covers `key`.
    pub fn covering(&self, level: u8, key: &[u8]) -> Option<&Sst> {
        let list = &self.levels[level as usize];
        let at = list.partition_point(|id| *self.ssts[id].largest < *key);
        list.get(at).map(|id| &self.ssts[id]).filter(|s| s.covers(key))
    }

    /// The SSTs of `level` whose ranges overlap `[smallest, largest]`, in the level's order.
    pub fn overlapping(&self, level: u8, smallest: &[u8], largest: &[u8]) -> Vec<u32> {
        self.level(level).filter(|s| s.overlaps(smallest, largest)).map(|s| s.id).collect()
    }

    pub fn compact_pointer(&self, level: u8) -> Option<&[u8]> {
        self.compact_pointer[level as usize].as_deref()
    }

    pub fn set_compact_pointer(&mut self, level: u8, key: &[u8]) {
        self.compact_pointer[level as usize] = Some(key.into());
    }

    /// Every SST, installed or being written, by number (for checks and reports).
    pub fn iter(&self) -> impl Iterator<Item = &Sst> {
        self.ssts.values()
    }

    /// The SST that page `ppn` belongs to.
    pub fn sst_of(&self, ppn: u32) -> Option<u32> {
        Some(self.ppn_to_sst[ppn as usize]).filter(|&s| s != NO_SST)
    }
}

impl Owners for Version {
    fn owner_of(&self, ppn: u32) -> Option<u32> {
        self.sst_of(ppn)
    }

    fn moved(&mut self, from: u32, to: u32) {
        let id = std::mem::replace(&mut self.ppn_to_sst[from as usize], NO_SST);
        self.ppn_to_sst[to as usize] = id;
        if let Some(s) = self.ssts.get_mut(&id) {
            if let Some(p) = s.ppns.iter_mut().find(|p| **p == from) {
                *p = to;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sst(v: &mut Version, level: u8, lo: &[u8], hi: &[u8], ppns: &[u32]) -> u32 {
        let id = v.create(level, lo, hi, 100, Vec::new(), Bloom::build(std::iter::empty(), 10));
        v.add_pages(id, ppns);
        v.install(id);
        id
    }

    #[test]
    fn levels_ranges_moves_and_trivial_moves() {
        let mut v = Version::new(3, 64);
        let a = sst(&mut v, 1, b"m", b"p", &[0, 1]);
        let b = sst(&mut v, 1, b"c", b"f", &[2]);
        let c = sst(&mut v, 0, b"a", b"z", &[3]);
        assert_eq!(v.level(1).map(|s| s.id).collect::<Vec<_>>(), vec![b, a], "L1 by key");
        assert_eq!((v.bytes(1), v.count(0)), (200, 1));
        assert_eq!(v.covering(1, b"n").map(|s| s.id), Some(a));
        assert_eq!(v.covering(1, b"g").map(|s| s.id), None);
        assert_eq!(v.covering(1, b"c").map(|s| s.id), Some(b));
        assert_eq!(v.overlapping(1, b"e", b"n"), vec![b, a]);
        v.moved(1, 9);
        assert_eq!((v.get(a).unwrap().ppns.clone(), v.sst_of(9), v.sst_of(1)), (vec![0, 9], Some(a), None));
        v.relevel(c, 2);
        assert_eq!((v.count(0), v.count(2), v.bytes(2), v.sst_of(3)), (0, 1, 100, Some(c)));
        v.remove(a);
        assert_eq!((v.bytes(1), v.sst_of(9)), (100, None));
    }
}

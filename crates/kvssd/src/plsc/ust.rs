//! UST (unsorted string table): PLSC's unit of allocation and reclamation. A UST has a unique
//! UTID, the PPNs of its pages (in byte order: page `i` holds bytes `i x page size ..`), its used
//! bytes (records, back to back, unsorted), its invalid bytes (records of keys updated or deleted
//! since), and its level: L0 for the write buffer's flushes (one page per plane), L1 for
//! compaction's outputs (1 to #planes pages).
//!
//! [`Usts`] holds every UST, one UST List per level (ordered by UTID: the order in which the
//! victim search walks them, so that ties go to the oldest), each level's allocated pages, and the
//! PPNtoUTID map with which GC finds the UST of a page it moves.

use std::collections::{BTreeMap, BTreeSet};

/// Levels of the PLSC-tree.
pub const LEVELS: usize = 2;

/// "No UST" in the PPNtoUTID map.
const NO_UST: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ust {
    pub utid: u32,
    pub level: u8,
    /// Its pages, in byte order. Each is on a plane of its own.
    pub ppns: Vec<u32>,
    /// Bytes of records written into it.
    pub used: u32,
    /// Bytes of its records that are no longer the live version of their key.
    pub invalid: u64,
}

pub struct Usts {
    usts: BTreeMap<u32, Ust>,
    /// UST List of each level.
    lists: [BTreeSet<u32>; LEVELS],
    level_pages: [u64; LEVELS],
    ppn_to_utid: Vec<u32>,
    next_utid: u32,
}

impl Usts {
    pub fn new(total_pages: u64) -> Usts {
        Usts {
            usts: BTreeMap::new(),
            lists: [BTreeSet::new(), BTreeSet::new()],
            level_pages: [0; LEVELS],
            ppn_to_utid: vec![NO_UST; total_pages as usize],
            next_utid: 0,
        }
    }

    /// The UTID the next UST will get (it goes into its pages' OOB as they are programmed).
    pub fn next_utid(&self) -> u32 {
        self.next_utid
    }

    /// Adds the UST just programmed into `ppns` under [`Usts::next_utid`]; returns its UTID.
    pub fn add(&mut self, level: u8, ppns: Vec<u32>, used: u32) -> u32 {
        let utid = self.next_utid;
        // 2^32 - 1 USTs: far beyond any simulated run; NO_UST stays unused.
        self.next_utid += 1;
        for &ppn in &ppns {
            self.ppn_to_utid[ppn as usize] = utid;
        }
        self.level_pages[level as usize] += ppns.len() as u64;
        self.lists[level as usize].insert(utid);
        self.usts.insert(utid, Ust { utid, level, ppns, used, invalid: 0 });
        utid
    }

    /// Drops UST `utid` (a compaction victim) and returns it; its pages belong to no UST any more.
    pub fn remove(&mut self, utid: u32) -> Option<Ust> {
        let ust = self.usts.remove(&utid)?;
        for &ppn in &ust.ppns {
            self.ppn_to_utid[ppn as usize] = NO_UST;
        }
        self.level_pages[ust.level as usize] -= ust.ppns.len() as u64;
        self.lists[ust.level as usize].remove(&utid);
        Some(ust)
    }

    pub fn get(&self, utid: u32) -> Option<&Ust> {
        self.usts.get(&utid)
    }

    /// Adds `bytes` to the invalid bytes of UST `utid` (an update or delete of one of its records).
    pub fn invalidate(&mut self, utid: u32, bytes: u32) {
        if let Some(u) = self.usts.get_mut(&utid) {
            u.invalid += bytes as u64;
        }
    }

    /// Pages allocated to the USTs of `level`.
    pub fn pages(&self, level: u8) -> u64 {
        self.level_pages[level as usize]
    }

    /// USTs of `level`.
    pub fn count(&self, level: u8) -> usize {
        self.lists[level as usize].len()
    }

    /// The UST of `level` with the most invalid bytes (the oldest among equals).
    pub fn victim(&self, level: u8) -> Option<&Ust> {
        let mut best: Option<&Ust> = None;
        for utid in &self.lists[level as usize] {
            let u = &self.usts[utid];
            if best.is_none_or(|b| u.invalid > b.invalid) {
                best = Some(u);
            }
        }
        best
    }

    /// The UST that page `ppn` belongs to.
    pub fn utid_of(&self, ppn: u32) -> Option<u32> {
        Some(self.ppn_to_utid[ppn as usize]).filter(|&u| u != NO_UST)
    }

    /// GC moved page `from` to `to`: the PPNtoUTID map and the UST's PPN list follow it.
    pub fn moved(&mut self, from: u32, to: u32) {
        let utid = std::mem::replace(&mut self.ppn_to_utid[from as usize], NO_UST);
        self.ppn_to_utid[to as usize] = utid;
        if let Some(u) = self.usts.get_mut(&utid) {
            if let Some(p) = u.ppns.iter_mut().find(|p| **p == from) {
                *p = to;
            }
        }
    }

    /// Every UST, by UTID (for checks and reports).
    pub fn iter(&self) -> impl Iterator<Item = &Ust> {
        self.usts.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_pages_victims_and_moves() {
        let mut u = Usts::new(64);
        let a = u.add(0, vec![0, 16, 32, 48], 4000);
        let b = u.add(0, vec![1, 17, 33, 49], 4000);
        let c = u.add(1, vec![2], 500);
        assert_eq!((u.pages(0), u.pages(1), u.count(0)), (8, 1, 2));
        assert_eq!(u.victim(0).unwrap().utid, a, "ties go to the oldest");
        u.invalidate(b, 10);
        assert_eq!(u.victim(0).unwrap().utid, b);
        u.moved(17, 20);
        assert_eq!(u.get(b).unwrap().ppns, vec![1, 20, 33, 49]);
        assert_eq!((u.utid_of(20), u.utid_of(17)), (Some(b), None));
        u.remove(b);
        assert_eq!((u.pages(0), u.utid_of(20)), (4, None));
        assert_eq!(u.victim(1).unwrap().utid, c);
    }
}

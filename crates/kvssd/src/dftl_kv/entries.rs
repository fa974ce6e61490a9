//! DFTL-KV's translation I/O under the entries reading (`cmt.rs`): a key's entries are found
//! through its KGTD bitmap (its translation pages, in order) and read from the CMT, or loaded with
//! their translation page (once per request); new and unmapped entries are written whole into the
//! CMT; dirty victims' translation pages are written back by read-modify-write; entries of pages
//! GC moves are fixed at once, their uncached translation pages rewritten after the request.

use flashsim::Nanos;

use super::cmt::{EntryIo, MapEntry};
use super::{DftlKv, KeyInfo, NONE};
use crate::error::{KvError, Result};

impl DftlKv {
    /// Runs `io` from `t`: the write-backs, then the load, unless this request loaded that
    /// translation page already (the controller has it) or it was never written. Returns when
    /// it is done.
    fn entry_io(&mut self, t: Nanos, io: EntryIo) -> Result<Nanos> {
        let mut t = t;
        for tp in io.stores {
            t = self.store_translation_page(t, tp, true)?;
            self.absorb_moves();
        }
        if let Some(tp) = io.load {
            if !self.loaded.contains(&tp) {
                self.loaded.push(tp);
                t = self.load_translation_page(t, tp)?;
            }
        }
        Ok(t)
    }

    /// Reads `lpa`'s entry from `t` (for its cost; the entry itself is taken once every access is
    /// done, see [`DftlKv::checked_entry`]). Returns when it is in RAM.
    fn entry_read(&mut self, t: Nanos, lpa: u32) -> Result<Nanos> {
        let Some(cmt) = self.entries.as_mut() else { return Ok(t) };
        let (hit, _, io) = cmt.read(lpa);
        self.count_access(hit);
        self.entry_io(t, io)
    }

    /// Writes `lpa`'s whole entry from `t`. Returns when the write-backs it needs are done.
    fn entry_write(&mut self, t: Nanos, lpa: u32, entry: MapEntry) -> Result<Nanos> {
        let Some(cmt) = self.entries.as_mut() else { return Ok(t) };
        let (hit, io) = cmt.write(lpa, entry);
        self.count_access(hit);
        self.entry_io(t, io)
    }

    fn count_access(&mut self, hit: bool) {
        if hit {
            self.mapping.hits += 1;
        } else {
            self.mapping.misses += 1;
        }
    }

    /// Key `id`'s LPAs in the order its KGTD bitmap finds them: translation page by page, in the
    /// value's order within one.
    fn kgtd_order(&self, k: &KeyInfo) -> Vec<u32> {
        let mut out = Vec::with_capacity(k.lpas.len());
        for (w, &word) in k.kgtd.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let tp = (w * 64 + bits.trailing_zeros() as usize) as u64;
                bits &= bits - 1;
                out.extend(k.lpas.iter().filter(|&&l| self.tp_of(l) == tp));
            }
        }
        out
    }

    /// `lpa`'s entry as the CMT or its translation page has it, checked against the device's map
    /// and key `id`'s value of `len` bytes.
    fn checked_entry(&self, lpa: u32, id: u32, len: u32) -> Result<MapEntry> {
        let e = self.entries.as_ref().map_or(MapEntry::UNMAPPED, |c| c.current(lpa));
        let want = MapEntry { ppn: self.pages.map[lpa as usize], value_size: len, key_id: id };
        if e != want {
            return Err(KvError::Inconsistent {
                reason: format!("LPA {lpa}: the CMT's entry {e:?} is not the map's {want:?}"),
            });
        }
        Ok(e)
    }

    /// Reads the entries of key `id` from `t` (its KGTD's translation pages, loading the missing
    /// ones). Returns when they are in RAM.
    pub(super) fn read_entries(&mut self, t: Nanos, id: u32) -> Result<Nanos> {
        let order = match &self.keys[id as usize] {
            Some(k) => self.kgtd_order(k),
            None => return Err(KvError::Inconsistent { reason: format!("key id {id} has no KGTD entry") }),
        };
        let mut t = t;
        for lpa in order {
            t = self.entry_read(t, lpa)?;
        }
        Ok(t)
    }

    /// The PPNs of key `id`'s LPAs, in the value's order, from their entries. Taken once every
    /// translation I/O of the request is done: GC run by a write-back may have moved a page whose
    /// entry was read before it.
    pub(super) fn entry_ppns(&self, id: u32) -> Result<Vec<u32>> {
        let k = self.keys[id as usize]
            .as_ref()
            .ok_or_else(|| KvError::Inconsistent { reason: format!("key id {id} has no KGTD entry") })?;
        k.lpas.iter().map(|&l| self.checked_entry(l, id, k.len).map(|e| e.ppn)).collect()
    }

    /// Unmaps key `id`'s value `old` from `t`: its entries are read (to find its pages), its pages
    /// invalidated and LPAs freed, and unmapped entries written. Returns when the translation I/O
    /// is done.
    pub(super) fn unmap_entries(&mut self, t: Nanos, id: u32, old: &KeyInfo) -> Result<Nanos> {
        let order = self.kgtd_order(old);
        let mut t = t;
        for &lpa in &order {
            t = self.entry_read(t, lpa)?;
        }
        for &lpa in &old.lpas {
            self.checked_entry(lpa, id, old.len)?;
        }
        self.release(&old.lpas);
        for &lpa in &order {
            t = self.entry_write(t, lpa, MapEntry::UNMAPPED)?;
        }
        Ok(t)
    }

    /// Writes the entries of key `id`'s new value of `len` bytes, its pages programmed, from `t`.
    /// Returns when the write-backs they need are done.
    pub(super) fn write_entries(&mut self, t: Nanos, id: u32, lpas: &[u32], len: u32) -> Result<Nanos> {
        self.absorb_moves();
        let mut t = t;
        for &lpa in lpas {
            let entry = MapEntry { ppn: self.pages.map[lpa as usize], value_size: len, key_id: id };
            t = self.entry_write(t, lpa, entry)?;
        }
        Ok(t)
    }

    /// Fixes the entries of the pages GC moved: a cached one is updated (dirty); an uncached one's
    /// translation page is updated and queued to be rewritten after the request. Under the pages
    /// reading, a cached translation page turns dirty and an uncached one is queued. Without a
    /// CMT the map is all in RAM and nothing is to be done.
    pub(super) fn absorb_moves(&mut self) {
        let moved = std::mem::take(&mut self.pages.moved);
        for lpa in moved {
            let tp = self.tp_of(lpa);
            let cached = match (self.entries.as_mut(), self.cmt.as_mut()) {
                (Some(c), _) => {
                    let ppn = self.pages.map[lpa as usize];
                    debug_assert_ne!(ppn, NONE, "GC moved the page of an unmapped LPA");
                    c.moved(lpa, ppn)
                }
                (None, Some(c)) => c.mark_dirty_if_cached(tp),
                (None, None) => true,
            };
            if !cached && !self.deferred.contains(&tp) {
                self.deferred.push(tp);
            }
        }
    }
}

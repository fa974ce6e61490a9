//! The consistency check of a DFTL-KV device (for tests).

use super::{DftlKv, NONE};
use crate::error::Inconsistency;

impl DftlKv {
    /// Checks that: every stored key has ceil(len / page) LPAs, each mapped to a valid page whose
    /// OOB names it, and no LPA belongs to two keys or is also free; the map and its reverse agree
    /// for every owner (LPAs and translation pages), and the media's valid pages are exactly the
    /// mapped ones; the GTD's live counts, each key's KGTD bitmap and the space statistics match
    /// the keys; under the entries reading, the CMT keeps its invariants and every LPA's entry
    /// (cached, else on its translation page) is the map's, with its key's id and value size.
    pub(crate) fn check_state(&self) -> std::result::Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: "dftl-kv", what };
        let ps = self.ps();
        let lpas = self.pages.lpas;
        let mut owner_of_lpa = vec![NONE; lpas as usize];
        let mut tp_live = vec![0u32; self.tp_live.len()];
        let (mut live_value, mut live_alloc) = (0u64, 0u64);
        for (key, &id) in &self.ids {
            let k = self.keys[id as usize].as_ref().ok_or_else(|| bad(format!("key {key:?}: id {id} has no entry")))?;
            if k.lpas.len() != (k.len as usize).div_ceil(ps) {
                return Err(bad(format!("key {key:?}: {} LPAs for {} bytes", k.lpas.len(), k.len)));
            }
            for &lpa in &k.lpas {
                if owner_of_lpa[lpa as usize] != NONE || self.free.is_free(lpa) {
                    return Err(bad(format!("LPA {lpa} of key {key:?} is also another key's or free")));
                }
                owner_of_lpa[lpa as usize] = id;
                let ppn = self.pages.map[lpa as usize];
                if ppn == NONE || !self.flash.media.is_valid(ppn) || self.flash.media.oob(ppn).0 != lpa {
                    return Err(bad(format!("LPA {lpa} of key {key:?}: PPN {ppn} not a valid page of it")));
                }
                tp_live[self.tp_of(lpa) as usize] += 1;
                if let Some(c) = &self.entries {
                    let e = c.current(lpa);
                    if (e.ppn, e.value_size, e.key_id) != (ppn, k.len, id) {
                        return Err(bad(format!("LPA {lpa} of key {key:?}: the CMT's entry is {e:?}")));
                    }
                }
            }
            if k.kgtd != self.kgtd_of(&k.lpas) {
                return Err(bad(format!("key {key:?}: the KGTD bitmap does not name its LPAs' translation pages")));
            }
            live_value += k.len as u64;
            live_alloc += (k.lpas.len() * ps) as u64;
        }
        let used = owner_of_lpa.iter().filter(|&&o| o != NONE).count() as u64;
        if used + self.free.free() != lpas as u64 {
            return Err(bad(format!("{used} LPAs used + {} free != {lpas}", self.free.free())));
        }
        if let Some(c) = &self.entries {
            c.check().map_err(bad)?;
            if let Some(lpa) = (0..lpas).find(|&l| owner_of_lpa[l as usize] == NONE && c.current(l).ppn != NONE) {
                return Err(bad(format!("free LPA {lpa} has a mapped entry {:?}", c.current(lpa))));
            }
        }
        if tp_live != self.tp_live {
            return Err(bad("live entries per translation page differ from the keys' LPAs".into()));
        }
        let s = &self.counts.space;
        if (s.live_value_bytes, s.live_alloc_bytes) != (live_value, live_alloc) {
            return Err(bad(format!(
                "space: {} value bytes in {} counted, {live_value} in {live_alloc} stored",
                s.live_value_bytes, s.live_alloc_bytes
            )));
        }
        let mut mapped = 0u64;
        for (owner, &ppn) in self.pages.map.iter().enumerate() {
            if ppn == NONE {
                continue;
            }
            mapped += 1;
            if (owner as u32) < lpas && owner_of_lpa[owner] == NONE {
                return Err(bad(format!("free LPA {owner} is mapped to PPN {ppn}")));
            }
            if self.pages.rev[ppn as usize] != owner as u32 || !self.flash.media.is_valid(ppn) {
                return Err(bad(format!(
                    "owner {owner} -> PPN {ppn}, which maps back to {}",
                    self.pages.rev[ppn as usize]
                )));
            }
        }
        let valid: u64 = (0..self.flash.media.geometry().total_blocks() as u32)
            .map(|b| self.flash.media.valid_pages(b) as u64)
            .sum();
        if valid != mapped {
            return Err(bad(format!("{valid} valid pages in the media, {mapped} mapped")));
        }
        Ok(())
    }
}

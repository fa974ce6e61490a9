//! Power loss and recovery, and a self-check of the FTL's invariants.
//!
//! What survives a power cut: NAND contents with their OOB areas (owner LPN, program sequence
//! number), block write pointers (found by scanning for the first erased page) and the NVRAM remap
//! log. What is lost: the DRAM map, reference counts, page validity, GC indexes, the DFTL cache and
//! the open write frontiers. Recovery takes, for every LPN, the newest programmed copy its OOB names,
//! then applies the remap log (remap entries map; trim entries unmap), which is exact because the
//! device keeps every log entry current (see `remap_log`). Validity follows from the rebuilt map;
//! it equals what it was before the cut, so no page whose contents the media dropped comes back.
//! Blocks that were open are closed as they stand; their unwritten pages come back at their next
//! erase. Recovery time is not modelled.

use crate::error::Inconsistency;
use crate::ftl::Ftl;
use crate::media::NO_OWNER;
use crate::ssd::map::{LpnEntry, NONE};
use crate::ssd::BlockSsd;

impl BlockSsd {
    /// Loses all volatile state and rebuilds the mapping from flash and NVRAM (`Ftl::power_cut`).
    pub(crate) fn recover(&mut self) {
        self.counters.power_cuts += 1;
        if let Some(cmt) = self.cmt.as_mut() {
            cmt.clear();
        }
        self.deferred_translation.clear();
        let map = &mut self.map;
        map.lpns.iter_mut().for_each(|e| *e = LpnEntry { ppn: NONE, copies: 0 });

        // Newest OOB copy per LPN.
        let geo = self.media.geometry().clone();
        let ppb = geo.pages_per_block;
        let mut newest = vec![0u64; map.lpns.len()];
        for b in 0..geo.total_blocks() as u32 {
            for ppn in b * ppb..b * ppb + self.media.write_pointer(b) {
                let (lpn, seq) = self.media.oob(ppn);
                if lpn == NO_OWNER {
                    continue;
                }
                let e = &mut map.lpns[lpn as usize];
                e.copies += 1;
                if seq > newest[lpn as usize] {
                    newest[lpn as usize] = seq;
                    e.ppn = ppn;
                }
            }
        }
        // The log overrides: every remap entry is a current mapping, every trim entry an unmapping.
        let mut remapped = Vec::new();
        for b in 0..geo.total_blocks() as u32 {
            for e in map.log.entries(b) {
                remapped.push((e.lpn, b * ppb + e.page));
            }
        }
        for lpn in 0..map.lpns.len() as u32 {
            map.via_log.set(lpn, false);
        }
        for (lpn, ppn) in remapped {
            map.lpns[lpn as usize].ppn = ppn;
            map.via_log.set(lpn, true);
        }
        let trimmed: Vec<u32> = map.trim_logged.ones().collect();
        for lpn in trimmed {
            map.lpns[lpn as usize].ppn = NONE;
        }

        // Reference counts (kept on if they were), validity and the GC indexes follow from the
        // map.
        let kept = map.refs.take().is_some();
        let refs = map.counted().clone();
        if !kept {
            map.refs = None;
        }
        for b in 0..geo.total_blocks() as u32 {
            for ppn in b * ppb..b * ppb + self.media.write_pointer(b) {
                self.media.set_valid(ppn, refs[ppn as usize] > 0);
            }
        }
        self.space.rebuild(&self.media);
    }

    /// Checks every invariant between the map, reference counts, the media's page validity, the GC
    /// index, the remap log and the OOB areas. Returns a description of the first violation. Meant
    /// for tests.
    pub fn check_consistency(&self) -> Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: "BlockSsd", what };
        let map = &self.map;
        let geo = self.media.geometry();
        let ppb = geo.pages_per_block;
        let mut refs = vec![0u32; map.pages()];
        for (lpn, ppn) in map.lpns.iter().map(|e| e.ppn).enumerate() {
            if ppn == NONE {
                if map.via_log.get(lpn as u32) {
                    return Err(bad(format!("unmapped LPN {lpn} marked as remapped")));
                }
                continue;
            }
            refs[ppn as usize] += 1;
            let block = geo.block_of(ppn);
            if ppn % ppb >= self.media.write_pointer(block) {
                return Err(bad(format!("LPN {lpn} maps to unwritten PPN {ppn}")));
            }
            let logged = map.log.entries(block).iter().any(|e| e.lpn == lpn as u32 && e.page == ppn % ppb);
            if map.via_log.get(lpn as u32) != logged {
                return Err(bad(format!(
                    "LPN {lpn}: remap flag {} but log entry {logged}",
                    map.via_log.get(lpn as u32)
                )));
            }
            let oob = self.media.oob(ppn).0;
            if !logged && oob != lpn as u32 {
                return Err(bad(format!("LPN {lpn} maps to PPN {ppn} whose OOB names {oob}")));
            }
            if map.trim_logged.get(lpn as u32) {
                return Err(bad(format!("mapped LPN {lpn} has a trim entry")));
            }
        }
        match &map.refs {
            Some(kept) if refs != *kept => {
                let ppn = refs.iter().zip(kept).position(|(a, b)| a != b).unwrap_or(0);
                return Err(bad(format!("PPN {ppn}: {} references counted, {} recorded", refs[ppn], kept[ppn])));
            }
            None => {
                if let Some(ppn) = refs.iter().position(|&r| r > 1) {
                    return Err(bad(format!("PPN {ppn}: shared by {} LPNs while counts are not kept", refs[ppn])));
                }
            }
            _ => {}
        }
        for b in 0..geo.total_blocks() as u32 {
            let first = b * ppb;
            for ppn in first..first + ppb {
                if self.media.is_valid(ppn) != (refs[ppn as usize] > 0) {
                    return Err(bad(format!(
                        "PPN {ppn}: valid on the media {}, {} references",
                        self.media.is_valid(ppn),
                        refs[ppn as usize]
                    )));
                }
            }
            for e in map.log.entries(b) {
                if map.get(e.lpn) != first + e.page {
                    return Err(bad(format!("stale remap entry in block {b}: LPN {} page {}", e.lpn, e.page)));
                }
            }
        }
        self.space.check(&self.media)?;
        let c = self.counters();
        if c.flash.busy_ns != self.media.total_die_busy() {
            return Err(bad(format!(
                "{} ns of busy time counted, the dies were busy {} ns",
                c.flash.busy_ns,
                self.media.total_die_busy()
            )));
        }
        Ok(())
    }
}

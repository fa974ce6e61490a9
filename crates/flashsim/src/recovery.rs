//! Power loss and recovery, and a self-check of the FTL's invariants.
//!
//! What survives a power cut: NAND contents with their OOB areas (LPN, program sequence number),
//! block write pointers (found by scanning for the first erased page) and the NVRAM remap log.
//! What is lost: the DRAM map, reference counts, GC indexes, the DFTL cache and the open write
//! frontiers. Recovery takes, for every LPN, the newest programmed copy its OOB names, then applies
//! the remap log (remap entries map; trim entries unmap), which is exact because the device keeps
//! every log entry current (see `remap_log`). Blocks that were open are closed as they stand; their
//! unwritten pages come back at their next erase. Recovery time is not modelled.

use crate::config::GcPolicy;
use crate::planes::BlockState;
use crate::ssd::{BlockSsd, NONE};

impl BlockSsd {
    /// Loses all volatile state and rebuilds the mapping from flash and NVRAM.
    pub fn power_cut(&mut self) {
        self.counters.power_cuts += 1;
        if let Some(cmt) = self.cmt.as_mut() {
            cmt.clear();
        }
        self.deferred_translation.clear();
        self.l2p.iter_mut().for_each(|m| *m = NONE);
        self.refs.iter_mut().for_each(|r| *r = 0);
        self.media_records.iter_mut().for_each(|r| *r = 0);

        // Newest OOB copy per LPN.
        let ppb = self.geo.pages_per_block;
        let mut newest = vec![0u64; self.l2p.len()];
        for b in 0..self.blocks.len() as u32 {
            for ppn in b * ppb..b * ppb + self.blocks[b as usize].written {
                let lpn = self.oob_lpn[ppn as usize];
                if lpn == NONE {
                    continue;
                }
                self.media_records[lpn as usize] += 1;
                let seq = self.oob_seq[ppn as usize];
                if seq > newest[lpn as usize] {
                    newest[lpn as usize] = seq;
                    self.l2p[lpn as usize] = ppn;
                }
                self.seq = self.seq.max(seq + 1);
            }
        }
        // The log overrides: every remap entry is a current mapping, every trim entry an unmapping.
        let mut remapped = Vec::new();
        for b in 0..self.blocks.len() as u32 {
            for e in self.log.entries(b) {
                remapped.push((e.lpn, b * ppb + e.page));
            }
        }
        for lpn in 0..self.l2p.len() as u32 {
            self.via_log.set(lpn, false);
        }
        for (lpn, ppn) in remapped {
            self.l2p[lpn as usize] = ppn;
            self.via_log.set(lpn, true);
        }
        let trimmed: Vec<u32> = self.trim_logged.ones().collect();
        for lpn in trimmed {
            self.l2p[lpn as usize] = NONE;
        }

        // Reference counts, valid counts and the GC indexes follow from the map.
        for &ppn in &self.l2p {
            if ppn != NONE {
                self.refs[ppn as usize] += 1;
            }
        }
        for plane in &mut self.planes {
            plane.open = None;
            plane.clear_closed();
        }
        let mut closed = Vec::new();
        for b in 0..self.blocks.len() as u32 {
            let first = (b * ppb) as usize;
            let info = &mut self.blocks[b as usize];
            info.valid = self.refs[first..first + ppb as usize].iter().filter(|&&r| r > 0).count() as u32;
            if info.written > 0 {
                info.state = BlockState::Closed;
                closed.push(b);
            }
        }
        if self.cfg.gc_policy == GcPolicy::Fifo {
            closed.sort_by_key(|&b| self.blocks[b as usize].closed_at);
        }
        for b in closed {
            let plane = self.geo.plane_of_block(b) as usize;
            self.planes[plane].insert_closed(&mut self.blocks, b);
            if self.cfg.gc_policy == GcPolicy::Fifo {
                self.planes[plane].closed_order.push_back(b);
            }
        }
    }

    /// Checks every invariant between the map, reference counts, block counts, the remap log and
    /// the OOB areas. Returns a description of the first violation. Meant for tests.
    pub fn check_consistency(&self) -> Result<(), String> {
        let ppb = self.geo.pages_per_block;
        let mut refs = vec![0u32; self.refs.len()];
        for (lpn, &ppn) in self.l2p.iter().enumerate() {
            if ppn == NONE {
                if self.via_log.get(lpn as u32) {
                    return Err(format!("unmapped LPN {lpn} marked as remapped"));
                }
                continue;
            }
            refs[ppn as usize] += 1;
            let block = self.geo.block_of(ppn);
            if ppn % ppb >= self.blocks[block as usize].written {
                return Err(format!("LPN {lpn} maps to unwritten PPN {ppn}"));
            }
            let logged = self.log.entries(block).iter().any(|e| e.lpn == lpn as u32 && e.page == ppn % ppb);
            if self.via_log.get(lpn as u32) != logged {
                return Err(format!("LPN {lpn}: remap flag {} but log entry {logged}", self.via_log.get(lpn as u32)));
            }
            if !logged && self.oob_lpn[ppn as usize] != lpn as u32 {
                return Err(format!("LPN {lpn} maps to PPN {ppn} whose OOB names {}", self.oob_lpn[ppn as usize]));
            }
            if self.trim_logged.get(lpn as u32) {
                return Err(format!("mapped LPN {lpn} has a trim entry"));
            }
        }
        if refs != self.refs {
            let ppn = refs.iter().zip(&self.refs).position(|(a, b)| a != b).unwrap_or(0);
            return Err(format!("PPN {ppn}: {} references counted, {} recorded", refs[ppn], self.refs[ppn]));
        }
        for (b, info) in self.blocks.iter().enumerate() {
            let first = b * ppb as usize;
            let valid = refs[first..first + ppb as usize].iter().filter(|&&r| r > 0).count() as u32;
            if valid != info.valid {
                return Err(format!("block {b}: {valid} valid pages, {} recorded", info.valid));
            }
            for e in self.log.entries(b as u32) {
                if self.l2p[e.lpn as usize] != first as u32 + e.page {
                    return Err(format!("stale remap entry in block {b}: LPN {} page {}", e.lpn, e.page));
                }
            }
        }
        Ok(())
    }
}

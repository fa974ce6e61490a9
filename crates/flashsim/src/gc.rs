//! Garbage collection inside one plane: pick a victim by policy, relocate its valid pages to the
//! plane's write frontier (by copyback when enabled: no channel transfer), erase it.
//!
//! A page can be shared by several LPNs after remaps. Its owners are the LPN its OOB names (when
//! that LPN still maps to it by OOB) plus the remap-log entries of the victim's segment, exactly
//! what a Remap-SSD controller can know without a full reverse map. The relocated copy's OOB names
//! one owner; the others get fresh remap entries in the destination block's segment.

use crate::config::GcPolicy;
use crate::error::{FlashError, Result};
use crate::planes::BlockState;
use crate::remap_log::RemapEntry;
use crate::ssd::{BlockSsd, NONE};
use crate::timing::Nanos;

impl BlockSsd {
    /// Collects one victim block of `plane` starting at `at`. Returns when it finished, or `None`
    /// when no closed block would yield a free page (the plane is full of valid data).
    pub(crate) fn collect(&mut self, plane: usize, at: Nanos, foreground: bool) -> Result<Option<Nanos>> {
        let Some(victim) = self.pick_victim(plane) else {
            return Ok(None);
        };
        self.planes[plane].remove_closed(&mut self.blocks, victim);
        if self.cfg.gc_policy == GcPolicy::Fifo {
            self.planes[plane].closed_order.pop_front();
        }
        // Out of the closed index while it is emptied: its valid count changes without bucket moves.
        self.blocks[victim as usize].state = BlockState::Open;
        let mut entries = self.log.take(victim);
        entries.sort_unstable_by_key(|e| e.page);

        let die = self.geo.die_of_plane(plane as u32);
        let channel = self.geo.channel_of_die(die);
        let ppb = self.geo.pages_per_block;
        let first = victim * ppb;
        let mut t = at;
        let mut owners: Vec<u32> = Vec::new();
        let mut next_entry = 0;
        for page in 0..self.blocks[victim as usize].written {
            let ppn = first + page;
            owners.clear();
            while next_entry < entries.len() && entries[next_entry].page < page {
                next_entry += 1;
            }
            while next_entry < entries.len() && entries[next_entry].page == page {
                owners.push(entries[next_entry].lpn);
                next_entry += 1;
            }
            if self.refs[ppn as usize] == 0 {
                continue;
            }
            let oob = self.oob_lpn[ppn as usize];
            let oob_owner = oob != NONE && self.l2p[oob as usize] == ppn && !self.via_log.get(oob);
            if oob_owner {
                owners.insert(0, oob);
            }
            debug_assert_eq!(owners.len() as u32, self.refs[ppn as usize], "owners of PPN {ppn}");
            let Some(dst) = self.take_page(plane, false) else {
                return Err(FlashError::DeviceFull { op: "gc relocation", lpn: owners[0] as u64 });
            };
            t = if self.cfg.copyback {
                self.counters.copybacks += 1;
                self.counters.nand_reads += 1;
                self.counters.nand_programs += 1;
                self.timeline.copyback(t, die)
            } else {
                self.counters.nand_reads += 1;
                self.counters.nand_programs += 1;
                let read = self.timeline.read(t, die, channel, 1);
                self.timeline.program(read, die, channel, 1)
            };
            self.counters.gc_copied_pages += 1;
            self.relocate(ppn, dst, &owners)?;
        }
        t = self.erase_block(plane, victim, t);
        self.counters.gc_runs += 1;
        if foreground {
            self.counters.foreground_gc_runs += 1;
        }
        Ok(Some(t))
    }

    fn pick_victim(&mut self, plane: usize) -> Option<u32> {
        let ppb = self.geo.pages_per_block;
        // A block is worth collecting only if it holds a page that is not valid.
        let min = self.planes[plane].min_valid_block()?;
        if self.blocks[min as usize].valid >= ppb {
            return None;
        }
        match self.cfg.gc_policy {
            GcPolicy::Greedy => Some(min),
            GcPolicy::Fifo => self.planes[plane].closed_order.front().copied(),
            GcPolicy::CostBenefit => {
                let now = self.seq;
                let mut best: Option<(f64, u32)> = None;
                for b in self.planes[plane].closed_blocks(&self.blocks) {
                    let info = &self.blocks[b as usize];
                    if info.valid >= ppb {
                        continue;
                    }
                    let u = info.valid as f64 / ppb as f64;
                    let age = (now - info.closed_at + 1) as f64;
                    let score = if info.valid == 0 { f64::INFINITY } else { age * (1.0 - u) / (2.0 * u) };
                    if best.is_none_or(|(s, bb)| score > s || (score == s && b < bb)) {
                        best = Some((score, b));
                    }
                }
                best.map(|(_, b)| b)
            }
        }
    }

    /// Moves the contents and every owner of `ppn` to the freshly allocated page `dst`.
    fn relocate(&mut self, ppn: u32, dst: u32, owners: &[u32]) -> Result<()> {
        let named = owners[0];
        self.oob_lpn[dst as usize] = named;
        self.oob_seq[dst as usize] = self.seq;
        self.seq += 1;
        self.media_records[named as usize] += 1;
        self.refs[dst as usize] = owners.len() as u32;
        self.refs[ppn as usize] = 0;
        let dst_block = self.geo.block_of(dst);
        self.blocks[dst_block as usize].valid += 1;
        self.blocks[self.geo.block_of(ppn) as usize].valid -= 1;
        // The OOB of the copy names `named`, so it no longer needs a log entry; the others do.
        self.via_log.set(named, false);
        for &lpn in owners {
            self.l2p[lpn as usize] = dst;
            if lpn != named {
                self.via_log.set(lpn, true);
                self.log.push(dst_block, RemapEntry { page: dst % self.geo.pages_per_block, lpn });
            }
            self.note_moved(lpn);
        }
        let mut scratch = std::mem::take(&mut self.scratch);
        let r = self.store.copy(ppn, dst, &mut scratch);
        self.scratch = scratch;
        r
    }

    /// Erases `block` (all its pages must be invalid) and returns it to the plane's free list.
    fn erase_block(&mut self, plane: usize, block: u32, at: Nanos) -> Nanos {
        let first = block * self.geo.pages_per_block;
        for ppn in first..first + self.blocks[block as usize].written {
            let lpn = self.oob_lpn[ppn as usize];
            if lpn != NONE {
                let records = &mut self.media_records[lpn as usize];
                *records -= 1;
                // The last stale copy is gone: a logged trim of this LPN has nothing left to hide.
                if *records == 0 && self.trim_logged.get(lpn) {
                    self.trim_logged.set(lpn, false);
                    self.trim_entries -= 1;
                    self.log.set_trim_entries(self.trim_entries);
                }
            }
            self.oob_lpn[ppn as usize] = NONE;
            self.store.discard(ppn);
        }
        let info = &mut self.blocks[block as usize];
        debug_assert_eq!(info.valid, 0, "erasing block {block} with valid pages");
        info.state = crate::planes::BlockState::Free;
        info.written = 0;
        info.valid = 0;
        info.erase_count += 1;
        self.planes[plane].free.push_back(block);
        self.counters.erases += 1;
        let die = self.geo.die_of_plane(plane as u32);
        self.timeline.erase(at, die)
    }
}

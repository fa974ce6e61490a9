//! Compaction: PLSC's logical reclamation.
//!
//! After each flush, while level 0 holds more pages than its threshold, and then while level 1
//! does, one victim UST of that level is compacted: the UST with the most invalid bytes (the oldest
//! among equals). All its pages are read; its records are decoded; a record is valid when the
//! global index still points at it (this UTID, this Offset); the valid records are re-put, back to
//! back, into one new L1 UST of ceil(valid bytes / page size) pages, 1 to #planes ("single
//! compaction": one victim gives one smaller UST; a victim with nothing valid gives none), and
//! their kNodes point there; the victim is dropped and its pages become invalid for GC.
//!
//! Ours, where the seed is silent: an L1 victim without invalid bytes ends level 1's compaction
//! (rewriting it would gain nothing, and the loop would not end); every level-1 compaction removes
//! invalid bytes, so the loop ends. Level 0 always drains into level 1: its victims move even when
//! all their records are valid. The victim's records are re-put directly into the new L1 UST, not
//! through the host's write buffer (that would make an L0 UST).

use flashsim::{Cause, Nanos};

use super::knode::signature;
use super::Plsc;
use crate::error::{KvError, Result};
use crate::flash::record;

impl Plsc {
    /// Runs compaction from `at` until both levels are within their thresholds (or level 1 has
    /// nothing to gain); returns when the last one is done.
    pub(super) fn compact(&mut self, at: Nanos) -> Result<Nanos> {
        let mut t = at;
        for level in [0u8, 1] {
            let threshold = if level == 0 { self.cfg.l0_threshold_pages } else { self.cfg.l1_threshold_pages };
            while self.usts.pages(level) > threshold {
                let Some(victim) = self.usts.victim(level) else { break };
                if level == 1 && victim.invalid == 0 {
                    break;
                }
                t = self.compact_ust(victim.utid, t)?;
            }
        }
        Ok(t)
    }

    /// Compacts UST `utid` from `at`; returns when its valid records are programmed.
    fn compact_ust(&mut self, utid: u32, at: Nanos) -> Result<Nanos> {
        let Some(ust) = self.usts.get(utid) else {
            return Ok(at);
        };
        let (level, used, ppns) = (ust.level, ust.used as usize, ust.ppns.clone());
        let cause = Cause::DeviceCompaction { level };
        let reads: Vec<(u32, Nanos)> = ppns.iter().map(|&ppn| (ppn, at)).collect();
        let read_done = self.flash.media.read(&reads, cause)?;
        let ps = self.page_size();
        let mut bytes = vec![0u8; ppns.len() * ps];
        for (&ppn, page) in ppns.iter().zip(bytes.chunks_mut(ps)) {
            if !self.flash.media.contents(ppn, page)? {
                return Err(KvError::Corrupt { utid, offset: 0, reason: format!("PPN {ppn} keeps no contents") });
            }
        }

        // The valid records, back to back, and where each lands in the new UST.
        let mut out = Vec::new();
        let mut moved: Vec<(Box<[u8]>, u128, u32)> = Vec::new();
        let mut at_byte = 0;
        while at_byte < used {
            let r = record::decode(&bytes[at_byte..used]).map_err(|e| KvError::Corrupt {
                utid,
                offset: at_byte as u32,
                reason: e.to_string(),
            })?;
            let sig = signature(r.key);
            let valid = self.index.get(r.key, sig).is_some_and(|k| k.utid == utid && k.offset as usize == at_byte);
            if valid {
                moved.push((r.key.into(), sig, out.len() as u32));
                record::encode(r.key, r.value, &mut out);
            }
            at_byte += r.len();
        }

        let mut done = read_done;
        if !out.is_empty() {
            let (new_utid, programmed) = self.write_ust(read_done, 1, &out, cause)?;
            for (key, sig, offset) in &moved {
                if let Some(k) = self.index.get_mut(key, *sig) {
                    k.utid = new_utid;
                    k.offset = *offset;
                }
            }
            self.stats.l1_usts_written += 1;
            self.stats.records_moved += moved.len() as u64;
            done = programmed;
        }
        // Dropped only now: GC may have moved its pages while the new UST was written, and the
        // UST's PPN list is where they are.
        if let Some(victim) = self.usts.remove(utid) {
            for ppn in victim.ppns {
                self.flash.media.invalidate(ppn);
            }
        }
        self.stats.compactions[level as usize] += 1;
        Ok(done)
    }
}

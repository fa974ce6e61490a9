//! LevelDB's leveled compaction, inside the device.
//!
//! After each flush, while some level's score is at least 1, the level with the highest score is
//! compacted (LevelDB's `VersionSet::Finalize` and `PickCompaction`): L0's score is its SSTs over
//! `l0_compaction_trigger`, level i's (1 to the one before last) its bytes over its limit; the
//! last level has none. The inputs are the first SST of the level past the level's compaction
//! pointer (round-robin over the key space, wrapping to the first), for L0 grown to every L0 SST
//! overlapping it (repeatedly, since L0's SSTs overlap each other), and every SST of the next level
//! that overlaps their range; the pointer moves to the largest key taken from the level.
//!
//! One input and nothing to merge with is a trivial move: the SST changes level, nothing is read
//! or written. Otherwise every input is read whole, the newest version of each key is kept (an L0
//! SST is newer than the L0 SSTs numbered below it, the level is newer than the next), and a
//! tombstone is dropped when no deeper level has an SST covering its key (LevelDB's
//! `IsBaseLevelForKey`: no older version can be below; at the last level this is always so). The
//! survivors are written, sorted, into SSTs of at most `sst_bytes` in the next level, and the inputs
//! are dropped (their pages become invalid for GC).
//!
//! Not modelled (ours): LevelDB's limits on an output's overlap with the level after next
//! (grandparents) and its growing of the inputs when that adds no next-level SST; seek-triggered
//! compactions (the device keeps no per-SST seek counts).

use std::collections::BTreeMap;

use flashsim::{Cause, Nanos};

use super::LsmInDevice;
use crate::error::{KvError, Result};
use crate::flash::record;

/// What a compaction of a level takes: SSTs of the level, SSTs of the next level that overlap
/// them, and the largest key taken from the level (its next compaction pointer).
struct Inputs {
    level: Vec<u32>,
    next: Vec<u32>,
    largest: Box<[u8]>,
}

/// Keys and their newest versions (`None`: a tombstone), as a compaction merges them.
type Merged = BTreeMap<Box<[u8]>, Option<Box<[u8]>>>;

impl LsmInDevice {
    /// The level to compact, LevelDB's way: the highest score, if it is at least 1.
    fn pick_level(&self) -> Option<u8> {
        let mut best: Option<(f64, u8)> = None;
        for level in 0..self.version.levels() - 1 {
            let score = if level == 0 {
                self.version.count(0) as f64 / self.cfg.l0_compaction_trigger as f64
            } else {
                self.version.bytes(level) as f64 / self.cfg.max_bytes(level) as f64
            };
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, level));
            }
        }
        best.filter(|&(score, _)| score >= 1.0).map(|(_, level)| level)
    }

    /// Compacts from `at` until no level's score reaches 1; returns when the last one is done.
    pub(super) fn compact(&mut self, at: Nanos) -> Result<Nanos> {
        let mut t = at;
        while let Some(level) = self.pick_level() {
            t = self.compact_level(level, t)?;
        }
        Ok(t)
    }

    /// The inputs of a compaction of `level`; `None` if the level is empty.
    fn pick_inputs(&self, level: u8) -> Option<Inputs> {
        let pointer = self.version.compact_pointer(level);
        let first = self
            .version
            .level(level)
            .find(|s| pointer.is_none_or(|p| *s.largest > *p))
            .or_else(|| self.version.level(level).next())?;
        let (mut lo, mut hi) = (first.smallest.clone(), first.largest.clone());
        let mut inputs = vec![first.id];
        if level == 0 {
            loop {
                let grown = self.version.overlapping(0, &lo, &hi);
                for &id in &grown {
                    let s = self.version.get(id)?;
                    lo = lo.min(s.smallest.clone());
                    hi = hi.max(s.largest.clone());
                }
                if grown.len() == inputs.len() {
                    break;
                }
                inputs = grown;
            }
        }
        let next = self.version.overlapping(level + 1, &lo, &hi);
        Some(Inputs { level: inputs, next, largest: hi })
    }

    /// One compaction of `level` into the next, from `at`; returns when its outputs are written.
    fn compact_level(&mut self, level: u8, at: Nanos) -> Result<Nanos> {
        let out_level = level + 1;
        let Some(Inputs { level: inputs, next: parents, largest }) = self.pick_inputs(level) else {
            return Err(KvError::Inconsistent { reason: format!("level {level} scored for compaction but is empty") });
        };
        self.version.set_compact_pointer(level, &largest);
        if inputs.len() == 1 && parents.is_empty() {
            self.version.relevel(inputs[0], out_level);
            self.stats.trivial_moves += 1;
            return Ok(at);
        }

        // Oldest first, so that newer versions replace older ones: the next level, then the
        // level's inputs by age (L0 numbers grow with age; a level 1+ compaction has one input).
        let cause = Cause::DeviceCompaction { level: out_level };
        let mut merged = Merged::new();
        let mut t = at;
        let mut oldest_first = parents.clone();
        let mut newer = inputs.clone();
        newer.sort_unstable();
        oldest_first.extend(newer);
        for &id in &oldest_first {
            let (bytes, done) = self.read_sst(t, id, cause)?;
            t = done;
            self.stats.compaction_read_bytes[out_level as usize] += bytes.len() as u64;
            merge_into(&mut merged, id, &bytes)?;
        }

        let mut outputs = Vec::new();
        let written = self.write_outputs(t, out_level, &merged, cause, &mut outputs);
        let done = match written {
            Ok(done) => done,
            Err(e) => {
                for id in outputs {
                    self.abort(id);
                }
                return Err(e);
            }
        };
        // The inputs go only now: GC may have moved their pages while the outputs were written,
        // and their page lists say where the pages are.
        for &id in &oldest_first {
            self.abort(id);
        }
        for &id in &outputs {
            self.version.install(id);
        }
        self.stats.compactions[out_level as usize] += 1;
        Ok(done)
    }

    /// Writes the merged records into SSTs of `out_level` of at most `sst_bytes`, one after
    /// another from `at`, dropping tombstones no older version can be under; `outputs` gets
    /// their numbers (not installed). Returns when the last one is programmed.
    fn write_outputs(
        &mut self,
        at: Nanos,
        out_level: u8,
        merged: &Merged,
        cause: Cause,
        outputs: &mut Vec<u32>,
    ) -> Result<Nanos> {
        let mut t = at;
        let mut out = Vec::new();
        let mut range: Option<(&[u8], &[u8])> = None;
        for (key, value) in merged {
            if value.is_none() && self.is_base_level_for(out_level, key) {
                continue;
            }
            let len = record::encoded_len(key.len(), value.as_ref().map_or(0, |v| v.len()));
            if let Some((lo, hi)) = range.filter(|_| (out.len() + len) as u64 > self.cfg.sst_bytes) {
                t = self.write_output(t, out_level, &out, lo, hi, cause, outputs)?;
                out.clear();
                range = None;
            }
            match value {
                Some(v) => record::encode(key, v, &mut out),
                None => record::encode_tombstone(key, &mut out),
            }
            range = Some((range.map_or(&**key, |(lo, _)| lo), key));
        }
        if let Some((lo, hi)) = range {
            t = self.write_output(t, out_level, &out, lo, hi, cause, outputs)?;
        }
        Ok(t)
    }

    #[allow(clippy::too_many_arguments)]
    fn write_output(
        &mut self,
        at: Nanos,
        out_level: u8,
        data: &[u8],
        smallest: &[u8],
        largest: &[u8],
        cause: Cause,
        outputs: &mut Vec<u32>,
    ) -> Result<Nanos> {
        let (id, done) = self.write_sst(at, out_level, data, smallest, largest, cause)?;
        outputs.push(id);
        self.stats.compaction_write_bytes[out_level as usize] += data.len() as u64;
        Ok(done)
    }

    /// Whether no level below `level` has an SST whose range covers `key`.
    fn is_base_level_for(&self, level: u8, key: &[u8]) -> bool {
        (level + 1..self.version.levels()).all(|l| self.version.covering(l, key).is_none())
    }
}

/// Decodes the sorted records of SST `sst`'s `bytes` into `merged`, replacing older versions of
/// their keys.
fn merge_into(merged: &mut Merged, sst: u32, bytes: &[u8]) -> Result<()> {
    let mut at = 0;
    while at < bytes.len() {
        let r = record::decode(&bytes[at..])
            .map_err(|e| KvError::CorruptSst { sst, reason: format!("record at byte {at}: {e}") })?;
        merged.insert(r.key.into(), (!r.tombstone).then(|| r.value.into()));
        at += r.len();
    }
    Ok(())
}

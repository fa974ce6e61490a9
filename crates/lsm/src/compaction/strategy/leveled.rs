//! LevelDB's leveled compaction: size-triggered (level 0 by file count, deeper levels by bytes
//! against targets growing ten-fold per level), round-robin through each level by compaction
//! pointer, else seek-triggered; inputs grown to whole key ranges; outputs closed at the file size
//! or when they overlap too many grandparent bytes; a file that overlaps nothing below moves down
//! by relinking.

use std::sync::Arc;

use super::inputs::{first_after_pointer, other_inputs, range, range_inputs, total};
use super::{CompactionStrategy, PickContext, TreeShape};
use crate::compaction::{Compaction, CompactionReason, GRANDPARENT_OVERLAP_FACTOR};
use crate::version::Version;

#[derive(Debug, Default, Clone, Copy)]
pub struct Leveled;

/// LevelDB's scores (its Finalize): level 0 by file count against the trigger, deeper levels by
/// bytes against their targets.
pub(super) fn leveled_scores(v: &Version, o: &TreeShape) -> Vec<f64> {
    (0..v.num_levels().saturating_sub(1))
        .map(|level| {
            if level == 0 {
                v.num_files(0) as f64 / o.l0_compaction_trigger as f64
            } else {
                v.level_bytes(level) as f64 / o.max_bytes_for_level(level) as f64
            }
        })
        .collect()
}

/// The level with the highest score, if it is due (>= 1; the first of equal scores).
pub(super) fn most_due(scores: &[f64]) -> Option<usize> {
    let (level, score) = scores.iter().enumerate().fold((0, f64::MIN), |b, (l, &s)| if s > b.1 { (l, s) } else { b });
    (score >= 1.0).then_some(level)
}

impl CompactionStrategy for Leveled {
    fn name(&self) -> &'static str {
        "leveled"
    }

    fn scores(&self, v: &Version, o: &TreeShape) -> Vec<f64> {
        leveled_scores(v, o)
    }

    fn choose(&self, ctx: &PickContext) -> Option<Compaction> {
        let v = ctx.version;
        let (level, mut first, reason) = if let Some(level) = most_due(&leveled_scores(v, &ctx.shape)) {
            let f = first_after_pointer(&v.files[level], &ctx.compact_pointers[level])?;
            (level, vec![Arc::clone(f)], CompactionReason::Size)
        } else if let Some((f, level)) = v.seek_compaction() {
            (level, vec![f], CompactionReason::Seek)
        } else {
            return None;
        };
        if level == 0 {
            let (lo, hi) = range(&first);
            first = v.overlapping_inputs(0, Some(&lo), Some(&hi));
        }
        let inputs = other_inputs(v, level, first, ctx.shape.max_file_size);
        Some(Compaction::new(level, level + 1, inputs, reason, &ctx.shape, v))
    }

    fn choose_range(
        &self,
        ctx: &PickContext,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Option<Compaction> {
        let v = ctx.version;
        if level + 1 >= v.num_levels() {
            return None;
        }
        let first = range_inputs(v, level, begin, end, ctx.shape.max_file_size);
        if first.is_empty() {
            return None;
        }
        let inputs = other_inputs(v, level, first, ctx.shape.max_file_size);
        Some(Compaction::new(level, level + 1, inputs, CompactionReason::Manual, &ctx.shape, v))
    }

    /// As deep as level 2 while the table overlaps nothing on the way and not too many grandparent
    /// bytes (LevelDB's PickLevelForMemTableOutput), so that fresh non-overlapping data skips
    /// pointless compactions.
    fn flush_level(&self, v: &Version, o: &TreeShape, lo: &[u8], hi: &[u8]) -> usize {
        const MAX_MEM_COMPACT_LEVEL: usize = 2;
        let mut level = 0;
        if v.overlap_in_level(0, lo, hi) {
            return 0;
        }
        while level < MAX_MEM_COMPACT_LEVEL && level + 2 < v.num_levels() {
            if v.overlap_in_level(level + 1, lo, hi) {
                break;
            }
            let gp = v.overlapping_inputs(level + 2, Some(lo), Some(hi));
            if total(&gp) > GRANDPARENT_OVERLAP_FACTOR * o.max_file_size {
                break;
            }
            level += 1;
        }
        level
    }
}

/// Target bytes per level, for reports.
pub fn level_targets(o: &TreeShape) -> Vec<u64> {
    o.level_targets()
}

#[cfg(test)]
mod tests {
    use super::super::inputs::add_boundary_inputs;
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::options::Options;
    use crate::version::FileMeta;

    fn file(n: u64, lo: (&str, u64), hi: (&str, u64)) -> Arc<FileMeta> {
        let k = |(key, seq): (&str, u64)| internal_key(key.as_bytes(), seq, ValueKind::Value);
        Arc::new(FileMeta::new(n, 1000, k(lo), k(hi)))
    }

    #[test]
    fn a_user_key_split_between_files_is_compacted_whole() {
        // Level 1: file 1 ends with "m"@9 (a newer version, say a deletion), file 2 starts with
        // "m"@5 (the older value it hides); file 3 is unrelated. Level 1 is over its target.
        let mut v = Version::empty(7);
        v.files[1] = vec![file(1, ("a", 3), ("m", 9)), file(2, ("m", 5), ("p", 4)), file(3, ("q", 1), ("z", 1))];
        v.files[2] = vec![file(4, ("b", 1), ("c", 1))];
        let v = Arc::new(v);
        let pointers = vec![Vec::new(); 7];
        let options = Options { max_bytes_for_level_base: 2000, ..Options::default() };
        let ctx = PickContext { version: &v, compact_pointers: &pointers, shape: options.tree_shape() };
        let c = Leveled.choose(&ctx).unwrap();
        let numbers: Vec<u64> = c.inputs[0].iter().map(|f| f.number).collect();
        assert_eq!(numbers, vec![1, 2], "the file holding the older versions of \"m\" comes along");
        assert!(!c.is_trivial_move());

        // The same for the output level's files.
        let mut files = vec![file(7, ("a", 1), ("m", 9))];
        add_boundary_inputs(&v.files[1], &mut files);
        let numbers: Vec<u64> = files.iter().map(|f| f.number).collect();
        assert_eq!(numbers, vec![7, 2]);
    }

    #[test]
    fn scores_follow_leveldb() {
        let mut v = Version::empty(4);
        v.files[0] = (0..6).map(|n| file(n, ("a", 1), ("b", 1))).collect();
        v.files[1] = vec![file(10, ("a", 1), ("b", 1))];
        let o = Options { max_bytes_for_level_base: 4000, l0_compaction_trigger: 4, ..Options::default() };
        let s = Leveled.scores(&v, &o.tree_shape());
        assert_eq!(s, vec![1.5, 0.25, 0.0]);
        assert_eq!(most_due(&s), Some(0));
        assert_eq!(most_due(&[0.5, 0.9]), None);
    }
}

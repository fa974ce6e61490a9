//! Min-overlapping-ratio file picking (RocksDB's `kMinOverlappingRatio`, its default since 5.x):
//! LevelDB's leveled compaction, but in a level that is due it compacts the file whose overlap
//! with the next level is smallest for its size, instead of the next file round-robin. Fewer
//! next-level bytes are rewritten per byte pushed down, so write amplification falls. Level 0,
//! seek compaction, manual ranges and the flush level are LevelDB's.

use std::sync::Arc;

use lsm::compaction::strategy::inputs::{other_inputs, total};
use lsm::compaction::strategy::{CompactionStrategy, Leveled, PickContext, TreeShape};
use lsm::compaction::{Compaction, CompactionReason};
use lsm::key::user_key;
use lsm::version::Version;

#[derive(Clone, Copy, Debug, Default)]
pub struct MinOverlap;

impl CompactionStrategy for MinOverlap {
    fn name(&self) -> &'static str {
        "min-overlap"
    }

    fn scores(&self, version: &Version, shape: &TreeShape) -> Vec<f64> {
        Leveled.scores(version, shape)
    }

    fn choose(&self, ctx: &PickContext) -> Option<Compaction> {
        let v = ctx.version;
        let scores = self.scores(v, &ctx.shape);
        let (level, score) =
            scores.iter().enumerate().fold((0, f64::MIN), |b, (l, &s)| if s > b.1 { (l, s) } else { b });
        if score < 1.0 || level == 0 {
            // Not due, level 0 (whose files overlap each other), or seek compaction: LevelDB's.
            return Leveled.choose(ctx);
        }
        let ratio = |f: &Arc<lsm::version::FileMeta>| {
            let below = v.overlapping_inputs(level + 1, Some(user_key(&f.smallest)), Some(user_key(&f.largest)));
            total(&below) as f64 / f.size.max(1) as f64
        };
        let first = v.files[level].iter().min_by(|a, b| ratio(a).total_cmp(&ratio(b)))?;
        let inputs = other_inputs(v, level, vec![Arc::clone(first)], ctx.shape.max_file_size);
        Some(Compaction::new(level, level + 1, inputs, CompactionReason::Size, &ctx.shape, v))
    }

    fn choose_range(
        &self,
        ctx: &PickContext,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Option<Compaction> {
        Leveled.choose_range(ctx, level, begin, end)
    }

    fn flush_level(&self, version: &Version, shape: &TreeShape, lo: &[u8], hi: &[u8]) -> usize {
        Leveled.flush_level(version, shape, lo, hi)
    }
}

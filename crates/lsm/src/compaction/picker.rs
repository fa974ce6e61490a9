//! Compaction pickers. A picker only looks and decides; it does no I/O and changes nothing, so
//! other policies (zones, gear) fit beside LevelDB's without touching the job that runs them.

use std::sync::Arc;

use super::{Compaction, CompactionReason};
use crate::key::{compare_internal, user_key};
use crate::options::Options;
use crate::version::{max_bytes_for_level, FileMeta, Version};

/// What a picker may look at.
pub struct PickContext<'a> {
    pub version: &'a Arc<Version>,
    /// Per level, where the previous compaction of that level ended (empty: start at the beginning).
    pub compact_pointers: &'a [Vec<u8>],
    pub options: &'a Options,
}

pub trait CompactionPicker: Send + Sync {
    /// The compaction to run next, if any is due.
    fn pick(&self, ctx: &PickContext) -> Option<Compaction>;

    /// A compaction of `level` limited to the user-key range [begin, end] (`compact_range`), if that
    /// level has files there.
    fn pick_range(
        &self,
        ctx: &PickContext,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Option<Compaction>;

    /// Whether `pick` would return something (the scheduler asks before waking a worker).
    fn needs_compaction(&self, version: &Version) -> bool;
}

/// LevelDB's leveled compaction: size-triggered (level 0 by file count, deeper levels by bytes),
/// round-robin through each level by compaction pointer, else seek-triggered; inputs grown to
/// whole key ranges, with grandparent-overlap limits on outputs.
#[derive(Debug, Default, Clone, Copy)]
pub struct LeveledPicker;

/// Level 0 inputs may grow this many times the file size when expanded (LevelDB's 25).
const EXPANDED_COMPACTION_FACTOR: u64 = 25;
/// An output may overlap this many file sizes of grandparents (LevelDB's 10).
const GRANDPARENT_OVERLAP_FACTOR: u64 = 10;

impl CompactionPicker for LeveledPicker {
    fn needs_compaction(&self, v: &Version) -> bool {
        v.compaction_score >= 1.0 || v.seek_compaction().is_some()
    }

    fn pick(&self, ctx: &PickContext) -> Option<Compaction> {
        let v = ctx.version;
        let (level, mut first, reason) = if v.compaction_score >= 1.0 {
            let level = v.compaction_level;
            let pointer = &ctx.compact_pointers[level];
            let files = &v.files[level];
            let f = files
                .iter()
                .find(|f| pointer.is_empty() || compare_internal(&f.largest, pointer) == std::cmp::Ordering::Greater)
                .or_else(|| files.first())?;
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
        Some(setup_other_inputs(ctx, level, first, reason))
    }

    fn pick_range(
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
        let mut inputs = v.overlapping_inputs(level, begin, end);
        if inputs.is_empty() {
            return None;
        }
        // Do not compact too much at once: the rest of the range is picked up by the next round.
        if level > 0 {
            let limit = ctx.options.max_file_size;
            let mut total = 0;
            let mut keep = inputs.len();
            for (i, f) in inputs.iter().enumerate() {
                total += f.size;
                if total >= limit {
                    keep = i + 1;
                    break;
                }
            }
            inputs.truncate(keep);
        }
        Some(setup_other_inputs(ctx, level, inputs, CompactionReason::Manual))
    }
}

/// Smallest and largest user keys of `files`.
fn range(files: &[Arc<FileMeta>]) -> (Vec<u8>, Vec<u8>) {
    let lo = files.iter().map(|f| user_key(&f.smallest)).min().unwrap_or_default().to_vec();
    let hi = files.iter().map(|f| user_key(&f.largest)).max().unwrap_or_default().to_vec();
    (lo, hi)
}

fn total(files: &[Arc<FileMeta>]) -> u64 {
    files.iter().map(|f| f.size).sum()
}

/// LevelDB's SetupOtherInputs: the overlapping files of the next level, then more files of the
/// input level if they fit in the same next-level range, then the grandparents.
fn setup_other_inputs(
    ctx: &PickContext,
    level: usize,
    mut first: Vec<Arc<FileMeta>>,
    reason: CompactionReason,
) -> Compaction {
    let v = ctx.version;
    let o = ctx.options;
    let out = level + 1;
    add_boundary_inputs(&v.files[level], &mut first);
    let (lo, hi) = range(&first);
    let mut second = v.overlapping_inputs(out, Some(&lo), Some(&hi));
    add_boundary_inputs(&v.files[out], &mut second);
    let all: Vec<Arc<FileMeta>> = first.iter().chain(second.iter()).cloned().collect();
    let (all_lo, all_hi) = range(&all);
    if !second.is_empty() {
        let mut expanded0 = v.overlapping_inputs(level, Some(&all_lo), Some(&all_hi));
        add_boundary_inputs(&v.files[level], &mut expanded0);
        let limit = EXPANDED_COMPACTION_FACTOR * o.max_file_size;
        if expanded0.len() > first.len() && total(&expanded0) + total(&second) < limit {
            let (elo, ehi) = range(&expanded0);
            let expanded1 = v.overlapping_inputs(out, Some(&elo), Some(&ehi));
            if expanded1.len() == second.len() {
                first = expanded0;
                second = expanded1;
            }
        }
    }
    let all: Vec<Arc<FileMeta>> = first.iter().chain(second.iter()).cloned().collect();
    let (all_lo, all_hi) = range(&all);
    let grandparents =
        if out + 1 < v.num_levels() { v.overlapping_inputs(out + 1, Some(&all_lo), Some(&all_hi)) } else { Vec::new() };
    Compaction {
        level,
        output_level: out,
        inputs: [first, second],
        grandparents,
        reason,
        max_output_file_size: o.max_file_size,
        max_grandparent_overlap_bytes: GRANDPARENT_OVERLAP_FACTOR * o.max_file_size,
        version: Arc::clone(v),
    }
}

/// LevelDB's AddBoundaryInputs: adds the files of `level_files` that continue the user key the
/// chosen `files` end with. Outputs split between files where they like, so one user key's
/// versions can sit in two neighbouring files of a level (the newer ones end the first file, the
/// older ones start the next); compacting the first without the second would drop a deletion
/// whose older value then comes back.
fn add_boundary_inputs(level_files: &[Arc<FileMeta>], files: &mut Vec<Arc<FileMeta>>) {
    let Some(mut largest) = files.iter().map(|f| f.largest.clone()).max_by(|a, b| compare_internal(a, b)) else {
        return;
    };
    loop {
        let next = level_files
            .iter()
            .filter(|f| {
                compare_internal(&f.smallest, &largest) == std::cmp::Ordering::Greater
                    && user_key(&f.smallest) == user_key(&largest)
            })
            .min_by(|a, b| compare_internal(&a.smallest, &b.smallest));
        match next {
            Some(f) if !files.iter().any(|g| g.number == f.number) => {
                largest = f.largest.clone();
                files.push(Arc::clone(f));
            }
            _ => return,
        }
    }
}

/// The level a flushed memtable with user keys [lo, hi] goes to: as deep as level 2 while it
/// overlaps nothing on the way and not too many grandparent bytes (LevelDB's
/// PickLevelForMemTableOutput), so that fresh non-overlapping data skips pointless compactions.
pub fn level_for_flush(v: &Version, o: &Options, lo: &[u8], hi: &[u8]) -> usize {
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

/// Target bytes per level, for reports.
pub fn level_targets(o: &Options) -> Vec<u64> {
    (0..o.num_levels).map(|l| if l == 0 { 0 } else { max_bytes_for_level(o, l) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    fn file(n: u64, lo: (&str, u64), hi: (&str, u64)) -> Arc<FileMeta> {
        let k = |(key, seq): (&str, u64)| internal_key(key.as_bytes(), seq, ValueKind::Value);
        Arc::new(FileMeta::new(n, 1000, k(lo), k(hi)))
    }

    #[test]
    fn a_user_key_split_between_files_is_compacted_whole() {
        // Level 1: file 1 ends with "m"@9 (a newer version, say a deletion), file 2 starts with
        // "m"@5 (the older value it hides); file 3 is unrelated.
        let mut v = Version::empty(7);
        v.files[1] = vec![file(1, ("a", 3), ("m", 9)), file(2, ("m", 5), ("p", 4)), file(3, ("q", 1), ("z", 1))];
        v.files[2] = vec![file(4, ("b", 1), ("c", 1))];
        v.compaction_score = 2.0;
        v.compaction_level = 1;
        let v = Arc::new(v);
        let pointers = vec![Vec::new(); 7];
        let options = Options::default();
        let ctx = PickContext { version: &v, compact_pointers: &pointers, options: &options };
        let c = LeveledPicker.pick(&ctx).unwrap();
        let numbers: Vec<u64> = c.inputs[0].iter().map(|f| f.number).collect();
        assert_eq!(numbers, vec![1, 2], "the file holding the older versions of \"m\" comes along");
        assert!(!c.is_trivial_move());

        // The same for the output level's files.
        let mut files = vec![file(7, ("a", 1), ("m", 9))];
        add_boundary_inputs(&v.files[1], &mut files);
        let numbers: Vec<u64> = files.iter().map(|f| f.number).collect();
        assert_eq!(numbers, vec![7, 2]);
    }
}

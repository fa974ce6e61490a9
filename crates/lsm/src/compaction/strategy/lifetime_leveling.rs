//! Lifetime-leveling compaction (seed 003, Jung & Shin, HotStorage'22), for zoned SSDs: make the
//! SSTs that share a zone die together, so that zones empty out whole and need no zone GC.
//!
//! The seed's four rules, and how they are kept here (the precise reading comes from the authors'
//! public GearDB-based fork, as `reference/seeds-002-004.md` records it):
//! 1. Each zone is dedicated to one level: outputs carry their level in the write hint; the zoned
//!    file system places by it.
//! 2. Each L -> L+1 compaction takes all L+1 SSTs between the current compaction pointer CP_L and
//!    the next one. The L input is the first L SST whose smallest key is at or past CP_L (wrapping
//!    to the first); the L+1 SSTs it overlaps are merged, and they pull in every further L SST that
//!    ends inside them; the L side grows by the next SST while the L / L+1 byte ratio improves and
//!    the L+1 inputs stay under 25 SST sizes. The L+1 SSTs between CP_L and the inputs that overlap
//!    no input are *moved*: rewritten unchanged into the level's current zone. The new CP_L is the
//!    smaller of the smallest keys of the next L SST and of the next L+1 SST after the inputs.
//! 3. Short-lived SSTs are small and apart: outputs are cut at the new CP_L, and those past it
//!    (keys the next compaction of L rewrites at once) are written short-lived, to the T-zone,
//!    when the input level is deeper than 1.
//! 4. No SST straddles a compaction pointer: outputs are also cut at CP_{L+1}.
//!
//! Level choice and level 0 are LevelDB's (size scores; level 0 by file count); there is no seek
//! compaction and no trivial move (a relinked file would sit in a zone of the wrong level).
//! Flushes go to level 0.

use std::sync::Arc;

use super::inputs::{
    add_boundary_inputs, first_after_pointer, other_inputs, range, range_inputs, total, EXPANDED_COMPACTION_FACTOR,
};
use super::leveled::{leveled_scores, most_due};
use super::{CompactionStrategy, PickContext, TreeShape};
use crate::compaction::{Compaction, CompactionReason};
use crate::key::user_key;
use crate::version::{FileMeta, Version};

#[derive(Debug, Default, Clone, Copy)]
pub struct LifetimeLeveling;

impl CompactionStrategy for LifetimeLeveling {
    fn name(&self) -> &'static str {
        "ll"
    }

    fn scores(&self, v: &Version, o: &TreeShape) -> Vec<f64> {
        leveled_scores(v, o)
    }

    fn needs_compaction(&self, v: &Version, o: &TreeShape) -> bool {
        most_due(&leveled_scores(v, o)).is_some()
    }

    fn choose(&self, ctx: &PickContext) -> Option<Compaction> {
        let level = most_due(&leveled_scores(ctx.version, &ctx.shape))?;
        let mut c = if level == 0 { level0(ctx)? } else { between_pointers(ctx, level)? };
        c.allow_trivial_move = false;
        Some(c)
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
        let mut c = Compaction::new(level, level + 1, inputs, CompactionReason::Manual, &ctx.shape, v);
        c.split_at = pointer_user_key(ctx, level + 1).into_iter().collect();
        c.allow_trivial_move = false;
        Some(c)
    }
}

/// The user key of `level`'s compaction pointer, if it has one.
fn pointer_user_key(ctx: &PickContext, level: usize) -> Option<Vec<u8>> {
    ctx.compact_pointers.get(level).filter(|p| !p.is_empty()).map(|p| user_key(p).to_vec())
}

/// Level 0 as LevelDB picks it; outputs cut at CP_1 (rule 4).
fn level0(ctx: &PickContext) -> Option<Compaction> {
    let v = ctx.version;
    let f = first_after_pointer(&v.files[0], &ctx.compact_pointers[0])?;
    let (lo, hi) = range(std::slice::from_ref(f));
    let first = v.overlapping_inputs(0, Some(&lo), Some(&hi));
    let inputs = other_inputs(v, 0, first, ctx.shape.max_file_size);
    let mut c = Compaction::new(0, 1, inputs, CompactionReason::Size, &ctx.shape, v);
    c.split_at = pointer_user_key(ctx, 1).into_iter().collect();
    Some(c)
}

/// The L+1 files overlapping `files` (with boundary files), and the further files of `files`'
/// level that end inside them, pulled in until nothing more comes: returns the new end.
fn pull_in(v: &Version, level: usize, start: usize, mut end: usize) -> (usize, Vec<Arc<FileMeta>>) {
    let files = &v.files[level];
    loop {
        // A user key split between neighbours is compacted whole.
        while end < files.len() && files[end].smallest_user() == files[end - 1].largest_user() {
            end += 1;
        }
        let (lo, hi) = range(&files[start..end]);
        let mut second = v.overlapping_inputs(level + 1, Some(&lo), Some(&hi));
        add_boundary_inputs(&v.files[level + 1], &mut second);
        let Some(hi1) = second.iter().map(|f| f.largest_user().to_vec()).max() else {
            return (end, second);
        };
        let before = end;
        while end < files.len() && files[end].largest_user() <= hi1.as_slice() {
            end += 1;
        }
        if end == before {
            return (end, second);
        }
    }
}

/// Rules 2-4 for a compaction of `level` >= 1.
fn between_pointers(ctx: &PickContext, level: usize) -> Option<Compaction> {
    let v = ctx.version;
    let o = ctx.shape;
    let files = &v.files[level];
    let next = &v.files[level + 1];
    let cp = pointer_user_key(ctx, level);
    // The first SST at or past CP_L; none: wrap to the first SST of the level.
    let (start, wrapped) = match cp.as_deref().and_then(|c| files.iter().position(|f| f.smallest_user() >= c)) {
        Some(i) => (i, false),
        None => (0, true),
    };
    if files.is_empty() {
        return None;
    }
    let (mut end, mut second) = pull_in(v, level, start, start + 1);
    // Grow the L side while the L / L+1 ratio improves and the L+1 inputs stay bounded.
    let limit = EXPANDED_COMPACTION_FACTOR * o.max_file_size;
    while end < files.len() {
        let (cand_end, cand_second) = pull_in(v, level, start, end + 1);
        let (b0, b1) = (total(&files[start..end]), total(&second));
        let (c0, c1) = (total(&files[start..cand_end]), total(&cand_second));
        // b0 / b1 < c0 / c1, without dividing by an empty L+1 side (then nothing improves).
        let improves = b1 > 0 && c1 > 0 && (b0 as u128) * (c1 as u128) < (c0 as u128) * (b1 as u128);
        if !improves || c1 >= limit {
            break;
        }
        end = cand_end;
        second = cand_second;
    }
    let first: Vec<Arc<FileMeta>> = files[start..end].to_vec();
    let lo0 = first[0].smallest_user().to_vec();
    let hi_all = first.iter().chain(second.iter()).map(|f| f.largest_user().to_vec()).max().unwrap_or_default();

    // The new CP_L: the smaller smallest key of the next L SST and the next L+1 SST after the inputs.
    let next_l = files.get(end).map(|f| f.smallest.clone());
    let next_l1 = next.iter().find(|f| f.smallest_user() > hi_all.as_slice()).map(|f| f.smallest.clone());
    let new_cp = match (next_l, next_l1) {
        (Some(a), Some(b)) => Some(if user_key(&a) <= user_key(&b) { a } else { b }),
        (a, b) => a.or(b),
    };

    // Moves: the L+1 SSTs of this stretch (from CP_L, across a wrap, up to the inputs) that are
    // not inputs.
    let is_input = |f: &Arc<FileMeta>| second.iter().any(|g| g.number == f.number);
    let moves: Vec<Arc<FileMeta>> = next
        .iter()
        .filter(|f| !is_input(f))
        .filter(|f| {
            let before_inputs = f.largest_user() < lo0.as_slice();
            let after_cp = cp.as_deref().is_none_or(|c| f.smallest_user() >= c);
            if wrapped {
                // From CP_L to the end of the level, then from its start to the inputs.
                before_inputs || (cp.is_some() && after_cp)
            } else {
                before_inputs && after_cp
            }
        })
        .cloned()
        .collect();

    let mut c = Compaction::new(level, level + 1, [first, second], CompactionReason::Size, &o, v);
    let new_cp_user = new_cp.as_deref().map(|k| user_key(k).to_vec());
    let mut splits: Vec<Vec<u8>> = pointer_user_key(ctx, level + 1).into_iter().chain(new_cp_user.clone()).collect();
    splits.sort();
    splits.dedup();
    c.split_at = splits;
    if level > 1 {
        c.short_lived_from = new_cp_user;
    }
    c.moves = moves;
    c.next_pointer = Some(new_cp.unwrap_or_default());
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::options::Options;

    fn file(n: u64, lo: &str, hi: &str, size: u64) -> Arc<FileMeta> {
        let k = |key: &str| internal_key(key.as_bytes(), 1, ValueKind::Value);
        Arc::new(FileMeta::new(n, size, k(lo), k(hi)))
    }

    fn numbers(files: &[Arc<FileMeta>]) -> Vec<u64> {
        files.iter().map(|f| f.number).collect()
    }

    /// Level 2 over its target; level 3 (the last) spread around it.
    fn version() -> Arc<Version> {
        let mut v = Version::empty(4);
        v.files[2] = vec![file(1, "c", "d", 100), file(2, "g", "h", 100), file(3, "m", "o", 100)];
        v.files[3] = vec![
            file(10, "a", "b", 100),
            file(11, "c", "cc", 100),
            file(12, "e", "f", 100),
            file(13, "g", "k", 100),
            file(14, "o", "p", 1000),
        ];
        Arc::new(v)
    }

    fn options() -> Options {
        Options { max_bytes_for_level_base: 10, level_size_multiplier: 2, ..Options::default() }
    }

    #[test]
    fn takes_everything_between_two_pointers() {
        let v = version();
        let o = options();
        // CP_2 = "e": the first L2 SST at or past it is 2 ("g".."h"); adding 3 would pull in the
        // large L3 SST 14, so the ratio does not improve and 3 stays.
        let mut pointers = vec![Vec::new(); 4];
        pointers[2] = internal_key(b"e", 1, ValueKind::Value);
        let ctx = PickContext { version: &v, compact_pointers: &pointers, shape: o.tree_shape() };
        let c = LifetimeLeveling.choose(&ctx).unwrap();
        assert_eq!(c.level, 2);
        assert_eq!(numbers(&c.inputs[0]), vec![2]);
        assert_eq!(numbers(&c.inputs[1]), vec![13], "the L3 SST it overlaps is merged");
        assert_eq!(numbers(&c.moves), vec![12], "the L3 SST between CP and the input is moved");
        // Next L2 SST starts at "m", next L3 SST after the inputs at "o": CP_2 becomes "m".
        assert_eq!(user_key(c.next_pointer.as_ref().unwrap()), b"m");
        assert_eq!(c.split_at, vec![b"m".to_vec()]);
        assert_eq!(c.short_lived_from.as_deref(), Some(&b"m"[..]), "outputs past the new CP go to the T-zone");
        assert!(!c.is_trivial_move());
    }

    #[test]
    fn wraps_and_moves_the_tail_and_the_head() {
        let v = version();
        let o = options();
        // CP_2 = "o": no L2 SST starts there; wrap to the first ("c".."d").
        let mut pointers = vec![Vec::new(); 4];
        pointers[2] = internal_key(b"o", 1, ValueKind::Value);
        pointers[3] = internal_key(b"cb", 1, ValueKind::Value);
        let ctx = PickContext { version: &v, compact_pointers: &pointers, shape: o.tree_shape() };
        let c = LifetimeLeveling.choose(&ctx).unwrap();
        assert_eq!(numbers(&c.inputs[0]), vec![1]);
        assert_eq!(numbers(&c.inputs[1]), vec![11]);
        let mut moved = numbers(&c.moves);
        moved.sort();
        assert_eq!(moved, vec![10, 14], "from CP to the end, then from the start to the input");
        // Next L2 SST "g", next L3 SST after "d" is "e": CP_2 = "e". CP_3 = "cb" cuts outputs too.
        assert_eq!(user_key(c.next_pointer.as_ref().unwrap()), b"e");
        assert_eq!(c.split_at, vec![b"cb".to_vec(), b"e".to_vec()]);
    }

    #[test]
    fn grows_while_the_ratio_improves() {
        let mut v = Version::empty(5);
        // Two L1 SSTs over one L2 SST: taking both halves the L2 bytes per L1 byte.
        v.files[1] = vec![file(1, "a", "b", 100), file(2, "c", "d", 100), file(3, "x", "y", 100)];
        v.files[2] = vec![file(10, "a", "e", 100), file(11, "w", "z", 1000)];
        let v = Arc::new(v);
        let o = Options { max_bytes_for_level_base: 10, ..Options::default() };
        let pointers = vec![Vec::new(); 5];
        let ctx = PickContext { version: &v, compact_pointers: &pointers, shape: o.tree_shape() };
        let c = LifetimeLeveling.choose(&ctx).unwrap();
        assert_eq!(numbers(&c.inputs[0]), vec![1, 2], "2 ends inside the L2 input and is pulled in");
        assert_eq!(numbers(&c.inputs[1]), vec![10]);
        assert_eq!(c.short_lived_from, None, "level 1 inputs write no T-zone SSTs");
        assert_eq!(user_key(c.next_pointer.as_ref().unwrap()), b"w", "the next L2 SST starts before the next L1");
    }
}

//! Gear compaction (GearDB, Yao et al., FAST'19; seed 003's "Gear" baseline, its Algorithm 1):
//! every level has a compaction window, and a compaction of a victim of L_i into L_{i+1} passes
//! the keys that fall in L_{i+2}'s window straight on into L_{i+2} (a "passive" compaction, merged
//! with L_{i+2}'s window files in the same pass), cascading down while the keys keep falling in the
//! next level's window; keys outside L_{i+2}'s whole key range are written to L_{i+2} directly;
//! the rest stays in L_{i+1}. Zones per level (the file system's placement) then empty out window
//! by window.
//!
//! Our reading where the slides and the paper leave it open (labelled as ours in reports):
//! - A level's compaction window is the run of its SSTs from its compaction pointer on, a quarter
//!   of the level's bytes ([`WINDOWS_PER_LEVEL`]; GearDB: "a quarter of a level's zones"); the
//!   pointer advances as the level's own compactions take victims round-robin (as LevelDB's), so
//!   the window slides through the key space.
//! - The victim of L_i is LevelDB's (the level with the highest score; round-robin in it; level 0
//!   by its overlapping files) and is merged with *every* L_{i+1} SST it overlaps, window or not:
//!   a level's SSTs may not overlap, so an overlapping SST left out could not stay.
//! - The passive part of L_{j} (j >= i+2) takes the window SSTs that lie wholly inside the key
//!   range passed down to it (so that nothing of L_j outside the inputs overlaps what is written
//!   there, and no key of those SSTs has to move up); a window SST that shares a user key with a
//!   neighbour left out is left out too.

use std::sync::Arc;

use super::inputs::{add_boundary_inputs, first_after_pointer, range};
use super::leveled::{leveled_scores, most_due};
use super::{CompactionStrategy, PickContext};
use crate::compaction::{Compaction, CompactionReason, RouteStep};
use crate::options::Options;
use crate::version::{FileMeta, Version};

/// A level's compaction window holds this fraction (1 / N) of the level's bytes.
pub const WINDOWS_PER_LEVEL: u64 = 4;

#[derive(Debug, Default, Clone, Copy)]
pub struct Gear;

impl CompactionStrategy for Gear {
    fn name(&self) -> &'static str {
        "gear"
    }

    fn scores(&self, v: &Version, o: &Options) -> Vec<f64> {
        leveled_scores(v, o)
    }

    fn needs_compaction(&self, v: &Version, o: &Options) -> bool {
        most_due(&leveled_scores(v, o)).is_some()
    }

    fn choose(&self, ctx: &PickContext) -> Option<Compaction> {
        let v = ctx.version;
        let level = most_due(&leveled_scores(v, ctx.options))?;
        let victim = first_after_pointer(&v.files[level], &ctx.compact_pointers[level])?;
        let mut first = vec![Arc::clone(victim)];
        if level == 0 {
            let (lo, hi) = range(&first);
            first = v.overlapping_inputs(0, Some(&lo), Some(&hi));
        }
        Some(gear(ctx, level, first, CompactionReason::Size))
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
        let first = super::inputs::range_inputs(v, level, begin, end, ctx.options.max_file_size);
        if first.is_empty() {
            return None;
        }
        Some(gear(ctx, level, first, CompactionReason::Manual))
    }
}

/// The victims `first` of `level`, merged with what they overlap in the next level, with the
/// passive compactions of the levels below routed in.
fn gear(ctx: &PickContext, level: usize, mut first: Vec<Arc<FileMeta>>, reason: CompactionReason) -> Compaction {
    let v = ctx.version;
    add_boundary_inputs(&v.files[level], &mut first);
    let (lo, hi) = range(&first);
    let mut second = v.overlapping_inputs(level + 1, Some(&lo), Some(&hi));
    add_boundary_inputs(&v.files[level + 1], &mut second);
    let mut c = Compaction::new(level, level + 1, [first, second], reason, ctx.options, v);
    c.allow_trivial_move = false;
    let Some(mut passed) = c.user_range() else { return c };
    for deeper in level + 2..v.num_levels() {
        let files = &v.files[deeper];
        let span =
            files.first().zip(files.last()).map(|(a, b)| (a.smallest_user().to_vec(), b.largest_user().to_vec()));
        let taken = window_inside(files, &ctx.compact_pointers[deeper], v.level_bytes(deeper), &passed);
        let window =
            taken.first().zip(taken.last()).map(|(a, b)| (a.smallest_user().to_vec(), b.largest_user().to_vec()));
        c.routing.push(RouteStep { level: deeper, window: window.clone(), span });
        match window {
            Some(w) => {
                c.deeper_inputs.push((deeper, taken));
                passed = w;
            }
            None => break,
        }
    }
    c
}

/// The files of a level's compaction window (from its pointer, a quarter of its bytes) that lie
/// wholly inside the user-key range `within`, without a user key shared with a file left out.
fn window_inside(
    files: &[Arc<FileMeta>],
    pointer: &[u8],
    level_bytes: u64,
    within: &(Vec<u8>, Vec<u8>),
) -> Vec<Arc<FileMeta>> {
    let Some(start) = first_after_pointer(files, pointer).and_then(|f| files.iter().position(|g| g.number == f.number))
    else {
        return Vec::new();
    };
    let budget = level_bytes.div_ceil(WINDOWS_PER_LEVEL);
    let mut end = start;
    let mut bytes = 0;
    while end < files.len() && (end == start || bytes < budget) {
        bytes += files[end].size;
        end += 1;
    }
    let (lo, hi) = (within.0.as_slice(), within.1.as_slice());
    let inside: Vec<usize> =
        (start..end).filter(|&i| files[i].smallest_user() >= lo && files[i].largest_user() <= hi).collect();
    let (Some(&a), Some(&b)) = (inside.first(), inside.last()) else { return Vec::new() };
    let (mut a, mut b) = (a, b + 1);
    // A user key split between a taken file and a neighbour left out would end up on two levels.
    while a < b && a > 0 && files[a - 1].largest_user() == files[a].smallest_user() {
        a += 1;
    }
    while b > a && b < files.len() && files[b].smallest_user() == files[b - 1].largest_user() {
        b -= 1;
    }
    files[a..b].to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    fn file(n: u64, lo: &str, hi: &str, size: u64) -> Arc<FileMeta> {
        let k = |key: &str| internal_key(key.as_bytes(), 1, ValueKind::Value);
        Arc::new(FileMeta::new(n, size, k(lo), k(hi)))
    }

    #[test]
    fn keys_in_the_next_window_pass_down_and_keys_past_its_range_skip_a_level() {
        let mut v = Version::empty(5);
        v.files[1] = vec![file(1, "b", "y", 1000)];
        v.files[2] = vec![file(10, "a", "c", 10), file(11, "x", "z", 10)];
        // L3: its window from the pointer ("f") holds 20 and 21, a quarter of its bytes.
        v.files[3] =
            vec![file(20, "g", "h", 50), file(21, "i", "j", 50), file(22, "p", "q", 150), file(23, "r", "s", 150)];
        let v = Arc::new(v);
        let o = Options { max_bytes_for_level_base: 10, ..Options::default() };
        let mut pointers = vec![Vec::new(); 5];
        pointers[3] = internal_key(b"f", 1, ValueKind::Value);
        let ctx = PickContext { version: &v, compact_pointers: &pointers, options: &o };
        let c = Gear.choose(&ctx).unwrap();
        assert_eq!((c.level, c.output_level), (1, 2));
        let numbers = |fs: &[Arc<FileMeta>]| fs.iter().map(|f| f.number).collect::<Vec<_>>();
        assert_eq!(numbers(&c.inputs[1]), vec![10, 11]);
        assert_eq!(c.deeper_inputs.len(), 1);
        assert_eq!(c.deeper_inputs[0].0, 3);
        assert_eq!(numbers(&c.deeper_inputs[0].1), vec![20, 21], "L3's window, inside the merged range");
        // "g".."j" is L3's window: passed on; L4 is empty, so it goes on to L4.
        assert_eq!(c.level_for_key(b"h"), 4);
        // In L3's range but outside its window: stays in L2.
        assert_eq!(c.level_for_key(b"q"), 2);
        assert_eq!(c.level_for_key(b"m"), 2);
        // Outside L3's whole range ("g".."s"): straight to L3.
        assert_eq!(c.level_for_key(b"b"), 3);
        assert_eq!(c.level_for_key(b"y"), 3);
        assert!(!c.is_trivial_move());
    }
}

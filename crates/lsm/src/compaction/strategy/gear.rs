//! Gear compaction (GearDB, Yao et al., FAST'19; seed 003's "Gear" baseline, its Algorithm 1):
//! every level has a compaction window, and a compaction of a victim of L_i into L_{i+1} passes
//! the keys that fall in L_{i+2}'s window straight on into L_{i+2} (a "passive" compaction, merged
//! with L_{i+2}'s window files in the same pass), cascading down while the keys keep falling in the
//! next level's window; keys outside L_{i+2}'s whole key range are written to L_{i+2} directly;
//! the rest stays in L_{i+1}.
//!
//! GearDB's layout: zones per level (the file system's `per-level` placement, each level appending
//! to a zone stream of its own), and a level's compaction window made of the level's *oldest*
//! zones: a quarter of them from level 3 down, the whole level above (the authors' `hm_manager`:
//! `set_com_window_seq`, `adjust_com_window_num`, `COM_WINDOW_SCALE` 4). A window's SSTs are the
//! ones in its zones, so as gear compactions rewrite them the window's zones empty whole and are
//! reset; the window then moves on to the next oldest zones, and no zone GC is needed for it. The
//! engine does not see zones, but a level's zone stream is written in file-number order: its
//! oldest SSTs by file number, a quarter of its bytes, are the SSTs of its oldest zones
//! ([`WINDOWS_PER_LEVEL`], [`FIRST_WINDOWED_LEVEL`]).
//!
//! Our reading where the slides, the paper and the authors' code leave it open (labelled as ours
//! in reports):
//! - The victim of L_i is LevelDB's (the level with the highest score; round-robin in it; level 0
//!   by its overlapping files) and is merged with *every* L_{i+1} SST it overlaps, window or not:
//!   a level's SSTs may not overlap, so an overlapping SST left out could not stay.
//! - The passive part of L_j (j >= i+2) takes, of the window SSTs that lie wholly inside the key
//!   range passed down to it, the run of neighbours in key order with the most bytes (the authors'
//!   code passes down every such run; our routing has one range per level), so that nothing of L_j
//!   outside the inputs overlaps what is written there; a window SST that shares a user key with a
//!   neighbour left out is left out too.
//! - The window is the oldest quarter of a level's bytes, not of its zones, and is recomputed for
//!   every compaction (the authors' code keeps a window until its zones are freed). Before issue
//!   28 our window was the run of SSTs from the level's compaction pointer, a quarter of its bytes:
//!   a key range, not the oldest zones, so gear compactions left holes in zones of every age and
//!   Gear needed host zone GC (docs/results/zns-ll.md has both).
//! - Placement windows, an alternative reading kept for comparison (ZoneFs's `per-window`
//!   placement; the zns-ll repro does not use it): from level [`FIRST_WINDOWED_LEVEL`] down a
//!   level's key space is cut into [`WINDOWS_PER_LEVEL`] ranges of equal bytes (computed from the
//!   version when a compaction is picked), every output is written with a hint that names the
//!   range its first key falls in ([`storage::WriteHint::Window`]), and `per-window` gives each
//!   range of each level zones of its own. With a ZNS device's 14 active zones those streams
//!   outnumber the tokens, zones are finished part-written and the device fills sooner
//!   (`crates/lsm/tests/gear_zones.rs`). Under the other placements the hint is the level's.

use std::sync::Arc;

use super::inputs::{add_boundary_inputs, first_after_pointer, range};
use super::leveled::{leveled_scores, most_due};
use super::{CompactionStrategy, PickContext, TreeShape};
use crate::compaction::{Compaction, CompactionReason, RouteStep};
use crate::version::{FileMeta, Version};

/// From [`FIRST_WINDOWED_LEVEL`] down, a level's compaction window holds this fraction (1 / N) of
/// the level's bytes (its oldest); placement windows cut such a level into this many key ranges.
pub const WINDOWS_PER_LEVEL: u64 = 4;

/// The first level whose compaction window is a part of it; above it the window is the whole
/// level (the authors' GearDB: levels 1 and 2).
pub const FIRST_WINDOWED_LEVEL: usize = 3;

#[derive(Debug, Default, Clone, Copy)]
pub struct Gear;

impl CompactionStrategy for Gear {
    fn name(&self) -> &'static str {
        "gear"
    }

    fn scores(&self, v: &Version, o: &TreeShape) -> Vec<f64> {
        leveled_scores(v, o)
    }

    fn needs_compaction(&self, v: &Version, o: &TreeShape) -> bool {
        most_due(&leveled_scores(v, o)).is_some()
    }

    fn choose(&self, ctx: &PickContext) -> Option<Compaction> {
        let v = ctx.version;
        let level = most_due(&leveled_scores(v, &ctx.shape))?;
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
        let first = super::inputs::range_inputs(v, level, begin, end, ctx.shape.max_file_size);
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
    let mut c = Compaction::new(level, level + 1, [first, second], reason, &ctx.shape, v);
    c.allow_trivial_move = false;
    route(ctx, &mut c);
    c.windows = c
        .output_levels()
        .into_iter()
        .filter(|&l| l >= FIRST_WINDOWED_LEVEL)
        .map(|l| (l, placement_windows(&v.files[l])))
        .collect();
    c
}

/// The passive compactions of the levels below `c`'s output, routed in.
fn route(ctx: &PickContext, c: &mut Compaction) {
    let v = ctx.version;
    let Some(mut passed) = c.user_range() else { return };
    for deeper in c.level + 2..v.num_levels() {
        let files = &v.files[deeper];
        let span =
            files.first().zip(files.last()).map(|(a, b)| (a.smallest_user().to_vec(), b.largest_user().to_vec()));
        let budget = if deeper < FIRST_WINDOWED_LEVEL {
            v.level_bytes(deeper)
        } else {
            v.level_bytes(deeper).div_ceil(WINDOWS_PER_LEVEL)
        };
        let taken = window_inside(files, budget, &passed);
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
}

/// Where a level's placement windows begin: the smallest user key of the files that start the
/// second and later of [`WINDOWS_PER_LEVEL`] runs of equal bytes (fewer for a level of few files;
/// none for an empty one: one window).
pub fn placement_windows(files: &[Arc<FileMeta>]) -> Vec<Vec<u8>> {
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut bounds: Vec<Vec<u8>> = Vec::new();
    let mut bytes = 0u64;
    let mut next = 1;
    for f in files {
        if next < WINDOWS_PER_LEVEL && bytes >= total * next / WINDOWS_PER_LEVEL && bytes > 0 {
            let key = f.smallest_user().to_vec();
            if bounds.last() != Some(&key) {
                bounds.push(key);
            }
            next += 1;
        }
        bytes += f.size;
    }
    bounds
}

/// The files of a level's compaction window (its oldest files by file number, `budget` bytes of
/// them) that passive compaction takes: the run of them in key order, with the most bytes, that
/// lies wholly inside the user-key range `within`, without a user key shared with a file left out
/// (keys passed down must not fall into a file of the level that stays).
fn window_inside(files: &[Arc<FileMeta>], budget: u64, within: &(Vec<u8>, Vec<u8>)) -> Vec<Arc<FileMeta>> {
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| files[i].number);
    let mut old = vec![false; files.len()];
    let mut bytes = 0;
    for i in order {
        if bytes >= budget {
            break;
        }
        old[i] = true;
        bytes += files[i].size;
    }
    let (lo, hi) = (within.0.as_slice(), within.1.as_slice());
    let ok = |i: usize| old[i] && files[i].smallest_user() >= lo && files[i].largest_user() <= hi;
    let mut best: Option<(u64, usize, usize)> = None;
    let mut i = 0;
    while i < files.len() {
        if !ok(i) {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut sum = 0;
        while j < files.len() && ok(j) {
            sum += files[j].size;
            j += 1;
        }
        // A user key split between a taken file and a neighbour left out would end up on two levels.
        let (mut a, mut b) = (i, j);
        while a < b && a > 0 && files[a - 1].largest_user() == files[a].smallest_user() {
            a += 1;
        }
        while b > a && b < files.len() && files[b].smallest_user() == files[b - 1].largest_user() {
            b -= 1;
        }
        if a < b && best.is_none_or(|(s, _, _)| sum > s) {
            best = Some((sum, a, b));
        }
        i = j;
    }
    best.map_or_else(Vec::new, |(_, a, b)| files[a..b].to_vec())
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

    /// Gear's choice on a version whose L1 has one SST over L2's two, with `l3` as level 3 and
    /// L3's compaction pointer at `pointer`.
    fn choose_over(l3: Vec<Arc<FileMeta>>, pointer: &[u8]) -> Compaction {
        let mut v = Version::empty(5);
        v.files[1] = vec![file(1, "b", "y", 1000)];
        v.files[2] = vec![file(10, "a", "c", 10), file(11, "x", "z", 10)];
        v.files[3] = l3;
        let v = Arc::new(v);
        let o = Options { max_bytes_for_level_base: 10, ..Options::default() };
        let mut pointers = vec![Vec::new(); 5];
        pointers[3] = internal_key(pointer, 1, ValueKind::Value);
        let ctx = PickContext { version: &v, compact_pointers: &pointers, shape: o.tree_shape() };
        Gear.choose(&ctx).unwrap()
    }

    fn numbers(fs: &[Arc<FileMeta>]) -> Vec<u64> {
        fs.iter().map(|f| f.number).collect()
    }

    #[test]
    fn keys_in_the_next_window_pass_down_and_keys_past_its_range_skip_a_level() {
        // L3: its window, its oldest quarter of bytes, holds 20 and 21.
        let l3 = vec![file(20, "g", "h", 50), file(21, "i", "j", 50), file(22, "p", "q", 150), file(23, "r", "s", 150)];
        let c = choose_over(l3, b"f");
        assert_eq!((c.level, c.output_level), (1, 2));
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

    #[test]
    fn the_window_is_the_oldest_quarter_of_a_level_not_the_run_from_its_pointer() {
        // L3 in key order; 30 and 31 were written first (their zones are the level's oldest).
        let l3 = vec![file(40, "d", "e", 150), file(41, "f", "g", 150), file(30, "h", "i", 50), file(31, "j", "k", 50)];
        // The pointer sits before 40 and 41: a window from it would take them.
        let c = choose_over(l3, b"c");
        assert_eq!(c.deeper_inputs.len(), 1);
        assert_eq!(numbers(&c.deeper_inputs[0].1), vec![30, 31], "the oldest 100 of 400 bytes");
        assert_eq!(c.level_for_key(b"h"), 4);
        assert_eq!(c.level_for_key(b"e"), 2, "the newer SSTs of L3 are outside its window");
    }
}

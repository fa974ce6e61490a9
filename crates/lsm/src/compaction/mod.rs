//! Compaction: choosing is separate from running. A [`strategy::CompactionStrategy`] looks at a
//! version and returns a [`Compaction`] description; [`job`] runs any description through one merge
//! whose per-entry decisions a [`observer::CompactionObserver`] sees and may act on (RemapCom is
//! one).

pub mod job;
pub mod observer;
pub mod output;
pub mod remapcom;
pub mod strategy;

use std::sync::Arc;

use self::strategy::TreeShape;
use crate::key::user_key;
use crate::version::{FileMeta, Version};

/// One step of an output routing (gear compaction): see [`Compaction::level_for_key`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RouteStep {
    pub level: usize,
    /// User-key range passed on to `level` and to the next step (the level's compaction-window
    /// stretch whose files are among the inputs).
    pub window: Option<(Vec<u8>, Vec<u8>)>,
    /// The level's whole user-key range (`None`: the level is empty); keys outside it go to
    /// `level` and stop there, since no file of that level holds them.
    pub span: Option<(Vec<u8>, Vec<u8>)>,
}

/// An output may overlap this many file sizes of grandparents (LevelDB's 10).
pub const GRANDPARENT_OVERLAP_FACTOR: u64 = 10;

/// Why a compaction was picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionReason {
    /// A level is over its size (or level 0 over its file-count trigger).
    Size,
    /// A file absorbed too many seeks.
    Seek,
    /// `compact_range`.
    Manual,
}

/// What to compact: `inputs[0]` from `level`, `inputs[1]` from `output_level`, and the files of the
/// level below the output that bound how much one output file may overlap (grandparents); plus
/// what the strategy decided about the outputs: where they are cut, which are short-lived, which
/// output-level files are rewritten unchanged, and where the level's compaction pointer goes.
#[derive(Clone, Debug)]
pub struct Compaction {
    pub level: usize,
    pub output_level: usize,
    pub inputs: [Vec<Arc<FileMeta>>; 2],
    pub grandparents: Vec<Arc<FileMeta>>,
    pub reason: CompactionReason,
    /// Target size of an output file.
    pub max_output_file_size: u64,
    /// Close an output file once it overlaps this many grandparent bytes (10 x file size in LevelDB),
    /// so that a later compaction of it into the next level stays small.
    pub max_grandparent_overlap_bytes: u64,
    /// User keys outputs are cut at (sorted): no output holds keys on both sides of one of them.
    pub split_at: Vec<Vec<u8>>,
    /// Outputs whose first user key is at or past this one are short-lived: the next compaction of
    /// `level` rewrites them soon, so they are written with [`storage::WriteHint::ShortLived`]
    /// (lifetime-leveling's T-zone).
    pub short_lived_from: Option<Vec<u8>>,
    /// Files of `output_level` rewritten unchanged into new files of the same level (a "move":
    /// lifetime-leveling rewrites every next-level SST between two compaction pointers so that
    /// a zone's SSTs die together).
    pub moves: Vec<Arc<FileMeta>>,
    /// Where `level`'s compaction pointer goes afterwards (an internal key; empty: back to the
    /// start of the level); `None` leaves it.
    pub next_pointer: Option<Vec<u8>>,
    /// Whether a single input with nothing to merge may move down by relinking the file
    /// (LevelDB's trivial move) instead of being rewritten.
    pub allow_trivial_move: bool,
    /// Inputs from levels below `output_level` (gear compaction's passive compactions).
    pub deeper_inputs: Vec<(usize, Vec<Arc<FileMeta>>)>,
    /// Where outputs go when not all to `output_level` (gear compaction); empty: all there. See
    /// [`Compaction::level_for_key`].
    pub routing: Vec<RouteStep>,
    /// Placement windows of output levels (gear compaction): for a level listed here, the user
    /// keys where its windows begin (sorted). Each output to it is written with
    /// [`storage::WriteHint::Window`] naming the window its first key falls in, so that a placement
    /// that honours windows gives each its own zones (outputs are not cut at them: the windows
    /// change no SST, only where a placement that honours them puts it). Levels not listed are
    /// written with the level's compaction hint.
    pub windows: Vec<(usize, Vec<Vec<u8>>)>,
    /// The version the inputs were picked from.
    pub version: Arc<Version>,
}

impl Compaction {
    /// A plain merge of `inputs` into `output_level` with LevelDB's output rules; the strategy
    /// adjusts the rest.
    pub fn new(
        level: usize,
        output_level: usize,
        inputs: [Vec<Arc<FileMeta>>; 2],
        reason: CompactionReason,
        shape: &TreeShape,
        version: &Arc<Version>,
    ) -> Compaction {
        let all: Vec<&Arc<FileMeta>> = inputs.iter().flatten().collect();
        let lo = all.iter().map(|f| user_key(&f.smallest)).min().map(|k| k.to_vec());
        let hi = all.iter().map(|f| user_key(&f.largest)).max().map(|k| k.to_vec());
        let grandparents = if output_level + 1 < version.num_levels() && lo.is_some() {
            version.overlapping_inputs(output_level + 1, lo.as_deref(), hi.as_deref())
        } else {
            Vec::new()
        };
        let next_pointer =
            inputs[0].iter().map(|f| f.largest.clone()).max_by(|a, b| crate::key::compare_internal(a, b));
        Compaction {
            level,
            output_level,
            inputs,
            grandparents,
            reason,
            max_output_file_size: shape.max_file_size,
            max_grandparent_overlap_bytes: GRANDPARENT_OVERLAP_FACTOR * shape.max_file_size,
            split_at: Vec::new(),
            short_lived_from: None,
            moves: Vec::new(),
            next_pointer,
            allow_trivial_move: true,
            deeper_inputs: Vec::new(),
            routing: Vec::new(),
            windows: Vec::new(),
            version: Arc::clone(version),
        }
    }

    pub fn num_input_files(&self) -> usize {
        self.inputs[0].len() + self.inputs[1].len()
    }

    pub fn input_bytes(&self, which: usize) -> u64 {
        self.inputs[which].iter().map(|f| f.size).sum()
    }

    /// A single file that can move down a level without rewriting: nothing to merge with, and not
    /// so much grandparent overlap that the move would make a later compaction too expensive.
    pub fn is_trivial_move(&self) -> bool {
        self.allow_trivial_move
            && self.inputs[0].len() == 1
            && self.inputs[1].is_empty()
            && self.moves.is_empty()
            && self.deeper_inputs.is_empty()
            && self.routing.is_empty()
            && self.level != self.output_level
            && self.grandparents.iter().map(|f| f.size).sum::<u64>() <= self.max_grandparent_overlap_bytes
    }

    /// Every input file with its level.
    pub fn all_inputs(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        let top = self.inputs[0].iter().map(|f| (self.level, f));
        let out = self.inputs[1].iter().map(|f| (self.output_level, f));
        top.chain(out).chain(self.deeper_inputs.iter().flat_map(|(l, fs)| fs.iter().map(move |f| (*l, f))))
    }

    /// The level an output entry with user key `ukey` goes to: `output_level`, or deeper where the
    /// routing says. Each step passes a key on to its level if the key is in the step's window
    /// (and then looks at the next step), or if the key lies outside the level's whole key range
    /// (and then stops there); otherwise the key stays where it is.
    pub fn level_for_key(&self, ukey: &[u8]) -> usize {
        let mut level = self.output_level;
        for step in &self.routing {
            let inside = |r: &Option<(Vec<u8>, Vec<u8>)>| {
                r.as_ref().is_some_and(|(lo, hi)| lo.as_slice() <= ukey && ukey <= hi.as_slice())
            };
            if inside(&step.window) {
                level = step.level;
                continue;
            }
            if !inside(&step.span) {
                level = step.level;
            }
            break;
        }
        level
    }

    /// The placement windows of `level`, if the strategy gives it windows.
    pub fn windows_of(&self, level: usize) -> Option<&[Vec<u8>]> {
        self.windows.iter().find(|(l, _)| *l == level).map(|(_, b)| b.as_slice())
    }

    /// The levels outputs may go to.
    pub fn output_levels(&self) -> Vec<usize> {
        std::iter::once(self.output_level).chain(self.routing.iter().map(|s| s.level)).collect()
    }

    /// Whether no level below the output holds `ukey`: a deletion of it can then be dropped.
    pub fn is_base_level_for_key(&self, ukey: &[u8]) -> bool {
        for level in self.output_level + 1..self.version.num_levels() {
            let files = &self.version.files[level];
            let i = files.partition_point(|f| f.largest_user() < ukey);
            if files.get(i).is_some_and(|f| f.smallest_user() <= ukey) {
                return false;
            }
        }
        true
    }

    /// The user-key range of all inputs.
    pub fn user_range(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let all = self.inputs.iter().flatten();
        let lo = all.clone().map(|f| user_key(&f.smallest).to_vec()).min()?;
        let hi = all.map(|f| user_key(&f.largest).to_vec()).max()?;
        Some((lo, hi))
    }
}

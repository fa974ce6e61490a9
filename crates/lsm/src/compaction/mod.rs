//! Compaction: picking is separate from running. A [`picker::CompactionPicker`] looks at a version
//! and returns a [`Compaction`] description; [`job`] runs any description through one merge whose
//! per-entry decisions a [`observer::CompactionObserver`] sees and may act on (RemapCom is one).

pub mod job;
pub mod observer;
pub mod output;
pub mod picker;
pub mod remapcom;

use std::sync::Arc;

use crate::key::user_key;
use crate::version::{FileMeta, Version};

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
/// level below the output that bound how much one output file may overlap (grandparents).
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
    /// The version the inputs were picked from.
    pub version: Arc<Version>,
}

impl Compaction {
    pub fn num_input_files(&self) -> usize {
        self.inputs[0].len() + self.inputs[1].len()
    }

    pub fn input_bytes(&self, which: usize) -> u64 {
        self.inputs[which].iter().map(|f| f.size).sum()
    }

    /// A single file that can move down a level without rewriting: nothing to merge with, and not
    /// so much grandparent overlap that the move would make a later compaction too expensive.
    pub fn is_trivial_move(&self) -> bool {
        self.inputs[0].len() == 1
            && self.inputs[1].is_empty()
            && self.level != self.output_level
            && self.grandparents.iter().map(|f| f.size).sum::<u64>() <= self.max_grandparent_overlap_bytes
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

    /// The largest internal key of the first-level inputs: where this level's next compaction starts.
    pub fn largest_input_key(&self) -> Option<Vec<u8>> {
        self.inputs[0].iter().map(|f| f.largest.clone()).max_by(|a, b| crate::key::compare_internal(a, b))
    }

    /// The user-key range of all inputs.
    pub fn user_range(&self) -> Option<(Vec<u8>, Vec<u8>)> {
        let all = self.inputs.iter().flatten();
        let lo = all.clone().map(|f| user_key(&f.smallest).to_vec()).min()?;
        let hi = all.map(|f| user_key(&f.largest).to_vec()).max()?;
        Some((lo, hi))
    }
}

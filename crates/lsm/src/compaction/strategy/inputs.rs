//! Input-set arithmetic every strategy uses: key ranges and sizes of file sets, and LevelDB's
//! rules for growing a set of inputs so that no user key is split between a compacted and an
//! uncompacted file.

use std::sync::Arc;

use crate::key::{compare_internal, user_key};
use crate::version::{FileMeta, Version};

/// Level 0 inputs may grow this many times the file size when expanded (LevelDB's 25).
pub const EXPANDED_COMPACTION_FACTOR: u64 = 25;

/// Smallest and largest user keys of `files`.
pub fn range(files: &[Arc<FileMeta>]) -> (Vec<u8>, Vec<u8>) {
    let lo = files.iter().map(|f| user_key(&f.smallest)).min().unwrap_or_default().to_vec();
    let hi = files.iter().map(|f| user_key(&f.largest)).max().unwrap_or_default().to_vec();
    (lo, hi)
}

pub fn total(files: &[Arc<FileMeta>]) -> u64 {
    files.iter().map(|f| f.size).sum()
}

/// LevelDB's AddBoundaryInputs: adds the files of `level_files` that continue the user key the
/// chosen `files` end with. Outputs split between files where they like, so one user key's
/// versions can sit in two neighbouring files of a level (the newer ones end the first file, the
/// older ones start the next); compacting the first without the second would drop a deletion
/// whose older value then comes back.
pub fn add_boundary_inputs(level_files: &[Arc<FileMeta>], files: &mut Vec<Arc<FileMeta>>) {
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

/// LevelDB's SetupOtherInputs: the overlapping files of the next level, then more files of the
/// input level if they fit in the same next-level range without pulling in more of it.
pub fn other_inputs(
    v: &Version,
    level: usize,
    mut first: Vec<Arc<FileMeta>>,
    max_file_size: u64,
) -> [Vec<Arc<FileMeta>>; 2] {
    let out = level + 1;
    add_boundary_inputs(&v.files[level], &mut first);
    let (lo, hi) = range(&first);
    let mut second = v.overlapping_inputs(out, Some(&lo), Some(&hi));
    add_boundary_inputs(&v.files[out], &mut second);
    if !second.is_empty() {
        let all: Vec<Arc<FileMeta>> = first.iter().chain(second.iter()).cloned().collect();
        let (all_lo, all_hi) = range(&all);
        let mut expanded0 = v.overlapping_inputs(level, Some(&all_lo), Some(&all_hi));
        add_boundary_inputs(&v.files[level], &mut expanded0);
        let limit = EXPANDED_COMPACTION_FACTOR * max_file_size;
        if expanded0.len() > first.len() && total(&expanded0) + total(&second) < limit {
            let (elo, ehi) = range(&expanded0);
            let expanded1 = v.overlapping_inputs(out, Some(&elo), Some(&ehi));
            if expanded1.len() == second.len() {
                first = expanded0;
                second = expanded1;
            }
        }
    }
    [first, second]
}

/// The inputs of `level` that overlap [begin, end], capped at about one file size above level 0
/// (`compact_range`: the rest of the range is picked up by the next round).
pub fn range_inputs(
    v: &Version,
    level: usize,
    begin: Option<&[u8]>,
    end: Option<&[u8]>,
    max_file_size: u64,
) -> Vec<Arc<FileMeta>> {
    let mut inputs = v.overlapping_inputs(level, begin, end);
    if level > 0 {
        let mut sum = 0;
        if let Some(keep) = inputs.iter().position(|f| {
            sum += f.size;
            sum >= max_file_size
        }) {
            inputs.truncate(keep + 1);
        }
    }
    inputs
}

/// The first file whose largest key is past `pointer` (round-robin), else the first.
pub fn first_after_pointer<'a>(files: &'a [Arc<FileMeta>], pointer: &[u8]) -> Option<&'a Arc<FileMeta>> {
    files
        .iter()
        .find(|f| pointer.is_empty() || compare_internal(&f.largest, pointer) == std::cmp::Ordering::Greater)
        .or_else(|| files.first())
}

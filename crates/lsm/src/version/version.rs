//! A version: the set of live SSTs per level at one point in time. Versions are immutable and
//! shared (`Arc`); readers keep the version they started with, so files they use are not deleted
//! under them.
//!
//! Level 0 files may overlap each other (each is one memtable flush); deeper levels hold files
//! with disjoint key ranges sorted by smallest key, as in LevelDB.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicI64, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::key::{compare_internal, user_key};

/// An SST in a version.
#[derive(Debug)]
pub struct FileMeta {
    pub number: u64,
    pub size: u64,
    /// Smallest and largest internal keys.
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
    /// Seeks this file may absorb before it is compacted (LevelDB's seek-triggered compaction:
    /// one seek costs about as much as compacting 16 KiB).
    pub allowed_seeks: AtomicI64,
}

impl FileMeta {
    pub fn new(number: u64, size: u64, smallest: Vec<u8>, largest: Vec<u8>) -> FileMeta {
        let allowed = (size / 16384).max(100) as i64;
        FileMeta { number, size, smallest, largest, allowed_seeks: AtomicI64::new(allowed) }
    }

    pub fn smallest_user(&self) -> &[u8] {
        user_key(&self.smallest)
    }

    pub fn largest_user(&self) -> &[u8] {
        user_key(&self.largest)
    }

    /// Whether the file's user-key range meets [begin, end] (`None` = unbounded).
    pub fn overlaps(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> bool {
        let before = end.is_some_and(|e| self.smallest_user() > e);
        let after = begin.is_some_and(|b| self.largest_user() < b);
        !before && !after
    }
}

/// The live files of every level.
#[derive(Debug)]
pub struct Version {
    pub files: Vec<Vec<Arc<FileMeta>>>,
    /// A file that used up its allowed seeks, and its level.
    pub file_to_compact: Mutex<Option<(Arc<FileMeta>, usize)>>,
    /// Bytes per level, summed once on first use (strategies compute their scores from it whenever
    /// the scheduler asks; `files` does not change once the version is shared).
    level_bytes: OnceLock<Vec<u64>>,
}

impl Version {
    pub fn empty(levels: usize) -> Version {
        Version { files: vec![Vec::new(); levels], file_to_compact: Mutex::new(None), level_bytes: OnceLock::new() }
    }

    pub fn num_levels(&self) -> usize {
        self.files.len()
    }

    pub fn num_files(&self, level: usize) -> usize {
        self.files[level].len()
    }

    pub fn level_bytes(&self, level: usize) -> u64 {
        self.level_bytes.get_or_init(|| self.files.iter().map(|fs| fs.iter().map(|f| f.size).sum()).collect())[level]
    }

    /// The files of `level` whose user-key ranges meet [begin, end]. For level 0 the range grows to
    /// cover every file it touches, since those files overlap each other (LevelDB's
    /// GetOverlappingInputs).
    pub fn overlapping_inputs(&self, level: usize, begin: Option<&[u8]>, end: Option<&[u8]>) -> Vec<Arc<FileMeta>> {
        let mut begin = begin.map(|b| b.to_vec());
        let mut end = end.map(|e| e.to_vec());
        let mut out: Vec<Arc<FileMeta>> = Vec::new();
        let mut i = 0;
        while i < self.files[level].len() {
            let f = &self.files[level][i];
            i += 1;
            if !f.overlaps(begin.as_deref(), end.as_deref()) {
                continue;
            }
            if level == 0 {
                let mut restart = false;
                if begin.as_deref().is_some_and(|b| f.smallest_user() < b) {
                    begin = Some(f.smallest_user().to_vec());
                    restart = true;
                }
                if end.as_deref().is_some_and(|e| f.largest_user() > e) {
                    end = Some(f.largest_user().to_vec());
                    restart = true;
                }
                if restart {
                    out.clear();
                    i = 0;
                    continue;
                }
            }
            out.push(Arc::clone(f));
        }
        out
    }

    /// Whether some file of `level` meets the user-key range [smallest, largest].
    pub fn overlap_in_level(&self, level: usize, smallest: &[u8], largest: &[u8]) -> bool {
        if level == 0 {
            return self.files[0].iter().any(|f| f.overlaps(Some(smallest), Some(largest)));
        }
        let files = &self.files[level];
        let i = files.partition_point(|f| f.largest_user() < smallest);
        i < files.len() && files[i].smallest_user() <= largest
    }

    /// The index of the first file of a sorted level whose largest key is >= `ikey`.
    pub fn find_file(&self, level: usize, ikey: &[u8]) -> usize {
        self.files[level].partition_point(|f| compare_internal(&f.largest, ikey) == Ordering::Less)
    }

    /// The files that may hold `ukey`, in the order a lookup must try them: level 0 newest first,
    /// then one file per deeper level.
    pub fn files_for_key(&self, ukey: &[u8], ikey: &[u8]) -> Vec<(usize, Arc<FileMeta>)> {
        let mut out: Vec<(usize, Arc<FileMeta>)> = Vec::new();
        let mut l0: Vec<&Arc<FileMeta>> =
            self.files[0].iter().filter(|f| f.smallest_user() <= ukey && ukey <= f.largest_user()).collect();
        l0.sort_by_key(|f| std::cmp::Reverse(f.number));
        out.extend(l0.into_iter().map(|f| (0, Arc::clone(f))));
        for level in 1..self.files.len() {
            let i = self.find_file(level, ikey);
            if let Some(f) = self.files[level].get(i) {
                if f.smallest_user() <= ukey {
                    out.push((level, Arc::clone(f)));
                }
            }
        }
        out
    }

    /// Charges a seek to `file` (a lookup had to read it and then look further); returns true
    /// when it has used up its allowance and should be compacted.
    pub fn record_seek(&self, file: &Arc<FileMeta>, level: usize) -> bool {
        let left = file.allowed_seeks.fetch_sub(1, AtomicOrdering::Relaxed) - 1;
        if left > 0 {
            return false;
        }
        let mut slot = self.file_to_compact.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some((Arc::clone(file), level));
            return true;
        }
        false
    }

    pub fn seek_compaction(&self) -> Option<(Arc<FileMeta>, usize)> {
        self.file_to_compact.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    fn file(n: u64, a: &str, b: &str) -> Arc<FileMeta> {
        Arc::new(FileMeta::new(
            n,
            1000,
            internal_key(a.as_bytes(), 10, ValueKind::Value),
            internal_key(b.as_bytes(), 10, ValueKind::Value),
        ))
    }

    #[test]
    fn level0_inputs_grow_to_cover_overlaps() {
        let mut v = Version::empty(3);
        v.files[0] = vec![file(1, "a", "c"), file(2, "b", "f"), file(3, "g", "h")];
        let got: Vec<u64> = v.overlapping_inputs(0, Some(b"c"), Some(b"c")).iter().map(|f| f.number).collect();
        assert_eq!(got, vec![1, 2]);
        v.files[1] = vec![file(4, "a", "b"), file(5, "d", "e"), file(6, "x", "z")];
        let got: Vec<u64> = v.overlapping_inputs(1, Some(b"c"), Some(b"y")).iter().map(|f| f.number).collect();
        assert_eq!(got, vec![5, 6]);
        assert!(v.overlap_in_level(1, b"c", b"d"));
        assert!(!v.overlap_in_level(1, b"f", b"w"));
    }

    #[test]
    fn lookups_try_level0_newest_first_then_one_file_per_level() {
        let mut v = Version::empty(3);
        v.files[0] = vec![file(7, "a", "z"), file(9, "m", "n")];
        v.files[1] = vec![file(4, "a", "k"), file(5, "l", "p")];
        let ik = internal_key(b"m", 100, ValueKind::Value);
        let got: Vec<(usize, u64)> = v.files_for_key(b"m", &ik).iter().map(|(l, f)| (*l, f.number)).collect();
        assert_eq!(got, vec![(0, 9), (0, 7), (1, 5)]);
    }
}

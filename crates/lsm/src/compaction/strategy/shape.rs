//! The settings a compaction strategy reads: how many levels the tree has, how large each may grow,
//! when level 0 is due, and how large an output file is. [`crate::Options::tree_shape`] gives them;
//! a strategy sees nothing else of the options, so the options (which hold the strategy) and the
//! strategies do not depend on each other.

/// The tree's shape, as the options set it (see [`crate::Options`] for each field's meaning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeShape {
    pub num_levels: usize,
    /// Level-0 files that make a compaction of level 0 due.
    pub l0_compaction_trigger: usize,
    /// Target bytes of level 1; each deeper level is `level_size_multiplier` times larger.
    pub max_bytes_for_level_base: u64,
    pub level_size_multiplier: u64,
    /// Target size of an SST (an output file of a compaction).
    pub max_file_size: u64,
}

impl TreeShape {
    /// Target bytes of `level` (>= 1): base x multiplier^(level-1).
    pub fn max_bytes_for_level(&self, level: usize) -> u64 {
        let mut bytes = self.max_bytes_for_level_base;
        for _ in 1..level {
            bytes = bytes.saturating_mul(self.level_size_multiplier);
        }
        bytes
    }

    /// Target bytes per level (0 for level 0, which is bounded by its file count), for reports.
    pub fn level_targets(&self) -> Vec<u64> {
        (0..self.num_levels).map(|l| if l == 0 { 0 } else { self.max_bytes_for_level(l) }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_grow_by_the_multiplier() {
        let s = TreeShape {
            num_levels: 4,
            l0_compaction_trigger: 4,
            max_bytes_for_level_base: 10,
            level_size_multiplier: 10,
            max_file_size: 2,
        };
        assert_eq!(s.level_targets(), [0, 10, 100, 1000]);
        let huge = TreeShape { level_size_multiplier: u64::MAX, ..s };
        assert_eq!(huge.max_bytes_for_level(3), u64::MAX, "saturates");
    }
}

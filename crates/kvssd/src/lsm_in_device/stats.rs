//! What the LSM in the device did, beyond the media's counters: flushes, compactions by output
//! level and their bytes, trivial moves, GC runs, the simulated time they held up the put that
//! triggered them, and how many SSTs the host's gets read.

/// Counts of an LSM-in-device baseline's own work.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LsmStats {
    /// Memtable flushes, each an L0 SST.
    pub flushes: u64,
    /// Merging compactions, by output level.
    pub compactions: Vec<u64>,
    /// Bytes of records compactions read (their inputs), by output level.
    pub compaction_read_bytes: Vec<u64>,
    /// Bytes of records compactions wrote (their outputs), by output level.
    pub compaction_write_bytes: Vec<u64>,
    /// SSTs moved to the next level without a rewrite (LevelDB's trivial move).
    pub trivial_moves: u64,
    /// Simulated time from the end of a flush to the end of the compactions it triggered, summed.
    pub compaction_ns: u64,
    /// Victim blocks GC erased.
    pub gc_runs: u64,
    /// Valid pages GC moved out of its victims.
    pub gc_moved_pages: u64,
    /// Simulated time of GC's runs, summed (runs on different dies overlap, and a run that makes
    /// room for a compaction's write is inside `compaction_ns`: not a waiting time).
    pub gc_ns: u64,
    /// Simulated time from the end of each flush to the end of the compactions and GC it set off,
    /// summed: what the put that filled the memtable waited beyond its flush.
    pub held_ns: u64,
    /// Lookups (get, exist, delete) answered by the memtable (no flash read).
    pub memtable_hits: u64,
    /// Whole SSTs read by lookups.
    pub lookup_ssts_read: u64,
    /// SSTs whose range covered a lookup's key but whose bloom filter ruled it out (not read).
    pub lookup_filter_skips: u64,
    /// Gets (`retrieve`), and the whole SSTs they read (a part of `lookup_ssts_read`).
    pub gets: u64,
    pub get_ssts_read: u64,
}

impl LsmStats {
    pub fn new(levels: u8) -> LsmStats {
        let per_level = vec![0; levels as usize];
        LsmStats {
            compactions: per_level.clone(),
            compaction_read_bytes: per_level.clone(),
            compaction_write_bytes: per_level,
            ..LsmStats::default()
        }
    }
}

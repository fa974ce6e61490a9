//! What PLSC did, beyond the media's counters: flushes, compactions and GC runs, and the simulated
//! time they held up the put that triggered them (the paper's Fig. 6 puts "with and without the
//! compaction latency").

/// Counts of a PLSC device's own work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlscStats {
    /// Write-buffer flushes, each an L0 UST.
    pub flushes: u64,
    /// Compactions of one victim UST, by the victim's level.
    pub compactions: [u64; 2],
    /// L1 USTs written by compaction (a victim with no valid record gives none).
    pub l1_usts_written: u64,
    /// Valid records compaction re-put.
    pub records_moved: u64,
    /// Simulated time from the end of a flush to the end of the compaction it triggered, summed.
    pub compaction_ns: u64,
    /// Victim blocks GC erased.
    pub gc_runs: u64,
    /// Valid pages GC moved out of its victims.
    pub gc_moved_pages: u64,
    /// Simulated time of GC's runs, summed (runs on different dies overlap, and a run that makes
    /// room for a compaction's write is inside `compaction_ns`: not a waiting time).
    pub gc_ns: u64,
    /// Simulated time from the end of each flush to the end of the compaction and GC it set off,
    /// summed: what the put that filled the buffer waited beyond its flush.
    pub held_ns: u64,
    /// Gets answered from the write buffer (no flash read).
    pub buffered_gets: u64,
}

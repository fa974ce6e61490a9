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
    /// Simulated time the puts waited for GC, summed.
    pub gc_ns: u64,
    /// Gets answered from the write buffer (no flash read).
    pub buffered_gets: u64,
}

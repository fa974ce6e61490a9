//! What a KVFTL device did, beyond the media's counters (seed 004's "Measure" list): partitions
//! per value, space utilisation, buffer reads, GC's victims and copies, mapping-table loads and
//! stores under a RAM budget, and the RAM its tables take.

use serde::{Deserialize, Serialize};

use crate::mapping::MappingStats;
use crate::space_use::{SpaceUse, UnitsPerValue};

/// Counts of a KVFTL device's work and state. [`super::Kvftl::stats`] fills the fields marked
/// "snapshot" from the media and the tables when asked.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvftlStats {
    /// Successful puts, gets (of a stored key) and deletes (of a stored key).
    pub puts: u64,
    pub gets: u64,
    pub deletes: u64,
    /// Histogram of partitions per put value (`counts[k]` values got k partitions).
    pub partitions_per_value: UnitsPerValue,
    /// Partitions written by puts.
    pub partitions_put: u64,
    /// Value bytes over the bytes of the partitions holding them, now and over every put.
    pub space: SpaceUse,
    /// Partitions a get read from a page buffer instead of flash (the paper's buffer reads).
    pub buffer_reads: u64,
    /// With buffer reads off (an experiment): partitions a get found in a page buffer and was
    /// charged a page read for.
    #[serde(default)]
    pub charged_buffer_reads: u64,
    /// Buffers a flush programmed half full, and the partitions of their pages it skipped.
    pub buffer_flushes: u64,
    pub skipped_partitions: u64,
    /// Victim blocks GC erased (partitioned and mapping blocks), and of them mapping blocks.
    pub gc_runs: u64,
    pub gc_mapping_victims: u64,
    /// Live pages GC read out of its victims (each once), valid partitions it re-put, and
    /// table pages it moved.
    pub gc_live_page_copies: u64,
    pub gc_moved_partitions: u64,
    pub gc_moved_table_pages: u64,
    /// Simulated time of GC's runs, summed (from the start of a collection to its erase).
    pub gc_ns: u64,
    /// Simulated time puts waited for the GC they set off.
    pub held_ns: u64,
    /// Mapping-table cache hits, misses, loads and stores, and their die time.
    pub mapping: MappingStats,
    /// Snapshot: flash page reads, programs and erases of every cause, and of the host.
    pub page_reads: u64,
    pub page_programs: u64,
    pub erases: u64,
    pub host_page_reads: u64,
    pub host_page_programs: u64,
    /// Snapshot: keys stored; static RAM = KVHeadTable entries x 6 B (the paper's Table II).
    pub live_keys: u64,
    pub static_ram_bytes: u64,
    /// Snapshot: PartitionPtrTable entries of every partitioned block x 8 B (the dynamic part, if
    /// all of it were in RAM), and entries cached now under the RAM budget.
    pub table_bytes: u64,
    pub cached_entries: u64,
    /// Snapshot: RAM of the page buffers in use.
    pub buffer_ram_bytes: u64,
}

impl KvftlStats {
    /// Mean partitions per put value.
    pub fn mean_partitions_per_value(&self) -> f64 {
        self.partitions_per_value.mean()
    }

    /// Live value bytes / bytes of the partitions holding them.
    pub fn utilisation(&self) -> f64 {
        self.space.utilisation()
    }

    /// The same over every put.
    pub fn cumulative_utilisation(&self) -> f64 {
        self.space.cumulative_utilisation()
    }
}

impl super::Kvftl {
    /// What the device did so far, with a snapshot of the media's counts and the tables' RAM.
    pub fn stats(&self) -> KvftlStats {
        let mut s = self.counts.clone();
        let c = self.media.counters();
        let host = c.cause(flashsim::Cause::HOST);
        s.mapping = self.tables.stats;
        s.page_reads = c.reads;
        s.page_programs = c.programs;
        s.erases = c.erases;
        s.host_page_reads = host.reads;
        s.host_page_programs = host.programs;
        s.live_keys = self.heads.live();
        s.static_ram_bytes = self.heads.ram_bytes();
        s.table_bytes = self.table_bytes();
        s.cached_entries = self.tables.cached() as u64;
        s.buffer_ram_bytes = self.buffers.ram_bytes();
        s
    }
}

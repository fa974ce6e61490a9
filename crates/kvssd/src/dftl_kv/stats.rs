//! What a DFTL-KV device did, in the terms of KVFTL's statistics: pages (LPAs) per value, space
//! utilisation, GC, translation loads and stores under a RAM budget, and static RAM (KGTD + GTD,
//! the paper's Table II).

use serde::{Deserialize, Serialize};

use super::config::{CMT_ENTRY_BYTES, GTD_ENTRY_BYTES, KGTD_ENTRY_BYTES};
use crate::mapping::MappingStats;
use crate::space_use::{SpaceUse, UnitsPerValue};

/// Counts of a DFTL-KV device's work and state; fields marked "snapshot" are filled by
/// [`super::DftlKv::stats`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DftlKvStats {
    /// Successful puts, gets (of a stored key) and deletes (of a stored key).
    pub puts: u64,
    pub gets: u64,
    pub deletes: u64,
    /// Histogram of LPAs (flash pages) per put value.
    pub pages_per_value: UnitsPerValue,
    /// LPAs written by puts.
    pub lpas_put: u64,
    /// Value bytes over the bytes of the pages holding them, now and over every put.
    pub space: SpaceUse,
    /// Victim blocks GC erased, the valid pages it moved, and its runs' simulated time.
    pub gc_runs: u64,
    pub gc_moved_pages: u64,
    pub gc_ns: u64,
    /// Simulated time puts waited for the GC (and its translation rewrites) before their writes.
    pub held_ns: u64,
    /// Translation pages rewritten because GC moved pages whose entries were not cached.
    pub deferred_stores: u64,
    /// CMT hits and misses (one per entry access; under the pages reading each an access to the
    /// entry's translation page), translation-page loads and stores (with the reads of their old
    /// copies, when entries are merged), and their die time.
    pub mapping: MappingStats,
    /// Snapshot: flash page reads, programs and erases of every cause, and of the host.
    pub page_reads: u64,
    pub page_programs: u64,
    pub erases: u64,
    pub host_page_reads: u64,
    pub host_page_programs: u64,
    /// Snapshot: keys stored; static RAM = KGTD (live keys x 26 B) + GTD (every translation page
    /// x 4 B; with full translation pages, issue 28's reading, only those holding a mapped LPA).
    pub live_keys: u64,
    pub kgtd_bytes: u64,
    pub gtd_bytes: u64,
    pub static_ram_bytes: u64,
    /// Snapshot: the RAM the CMT needs to hold the whole live map (mapped LPAs x 14 B when it
    /// caches entries; translation pages holding a mapped LPA x page size when it caches pages),
    /// and the translation pages and entries cached now.
    pub cmt_bytes: u64,
    pub cached_pages: u64,
    #[serde(default)]
    pub cached_entries: u64,
}

impl DftlKvStats {
    /// Mean pages per put value.
    pub fn mean_pages_per_value(&self) -> f64 {
        self.pages_per_value.mean()
    }

    /// Live value bytes / bytes of the pages holding them.
    pub fn utilisation(&self) -> f64 {
        self.space.utilisation()
    }

    /// The same over every put.
    pub fn cumulative_utilisation(&self) -> f64 {
        self.space.cumulative_utilisation()
    }
}

impl super::DftlKv {
    /// What the device did so far, with a snapshot of the media's counts and its RAM.
    pub fn stats(&self) -> DftlKvStats {
        let mut s = self.counts.clone();
        let c = self.flash.media.counters();
        let host = c.cause(flashsim::Cause::HOST);
        s.mapping = self.mapping;
        s.page_reads = c.reads;
        s.page_programs = c.programs;
        s.erases = c.erases;
        s.host_page_reads = host.reads;
        s.host_page_programs = host.programs;
        s.live_keys = self.ids.len() as u64;
        s.kgtd_bytes = s.live_keys * KGTD_ENTRY_BYTES;
        let live_pages = self.tp_live.iter().filter(|&&n| n > 0).count() as u64;
        let gtd_pages = if self.cfg.gtd_entries.is_some() { self.tp_live.len() as u64 } else { live_pages };
        s.gtd_bytes = gtd_pages * GTD_ENTRY_BYTES;
        s.static_ram_bytes = s.kgtd_bytes + s.gtd_bytes;
        s.cmt_bytes = match self.cfg.cache {
            super::DftlCache::Entries => self.tp_live.iter().map(|&n| n as u64).sum::<u64>() * CMT_ENTRY_BYTES,
            super::DftlCache::Pages => live_pages * self.ps() as u64,
        };
        s.cached_pages = self.cmt.as_ref().map_or(0, |c| c.len() as u64);
        s.cached_entries = self.entries.as_ref().map_or(0, |c| c.len() as u64);
        s
    }
}

//! Mapping tables under a RAM budget: KVFTL's cache of PartitionPtrTable entries, an LRU cache of
//! table entries with dirty write-back, flashsim's DFTL cache ([`MappingCache`]); and the
//! statistics every key-value FTL with tables on flash reports ([`MappingStats`]; DFTL-KV has a
//! cache of its own entries, or this cache keyed by whole translation pages: `dftl_kv/mod.rs`).
//!
//! A miss loads the entry's table page from flash (a page read, `Cause::Mapping`); evicting a
//! dirty entry stores its table page (a read of the old copy, if there is one, then a program,
//! both `Cause::Mapping`: entries are cached one by one, so the page on flash is merged, as DFTL
//! does). Within one request, a table page is loaded at most once: once read, the controller has
//! the whole page for the rest of the request (ours; every entry the request touches on that
//! page is served by the one read).
//!
//! This module decides which table pages to load and store and counts what they cost; each
//! device performs the I/O on its own flash area. With no budget the cache is absent and tables
//! cost nothing (the paper's "unlimited RAM").

use flashsim::{MappingCache, Nanos, TranslationIo};
use serde::{Deserialize, Serialize};

/// What the mapping tables cost under the RAM budget: cache hits and misses, table-page loads
/// and stores, and the simulated die time they took (for the paper's Table III: "load / store
/// share of the total execution time").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MappingStats {
    /// Table-entry accesses found in the cache.
    pub hits: u64,
    /// Table-entry accesses that missed (each loads its table page, unless the page was never
    /// stored or was already loaded by the same request).
    pub misses: u64,
    /// Table pages read on a miss.
    pub loads: u64,
    /// Die time of those reads, summed.
    pub load_ns: Nanos,
    /// Table pages written back (evicted dirty entries, or a flush).
    pub stores: u64,
    /// Of the stores, those that first read the page's old copy to merge it.
    pub store_reads: u64,
    /// Die time of the stores (their reads and programs), summed.
    pub store_ns: Nanos,
}

/// The cache of one device's table entries, and what its I/O cost.
pub(crate) struct TableCache {
    cmt: Option<MappingCache<u64>>,
    /// Table pages loaded by the current request.
    loaded: Vec<u64>,
    pub stats: MappingStats,
}

impl TableCache {
    /// A cache of `budget / entry_bytes` entries (`None`: every table in RAM), with
    /// `entries_per_page` entries per table page.
    pub fn new(budget: Option<u64>, entry_bytes: u64, entries_per_page: u64) -> TableCache {
        let cmt = budget.map(|b| {
            let entries = (b / entry_bytes).clamp(1, u32::MAX as u64) as u32;
            MappingCache::new(entries, entries_per_page)
        });
        TableCache { cmt, loaded: Vec::new(), stats: MappingStats::default() }
    }

    /// Whether tables live on flash (a RAM budget is set).
    pub fn enabled(&self) -> bool {
        self.cmt.is_some()
    }

    /// Entries cached now (0 without a budget).
    pub fn cached(&self) -> usize {
        self.cmt.as_ref().map_or(0, |c| c.len())
    }

    /// A new request starts: it has loaded no table page yet.
    pub fn begin_request(&mut self) {
        self.loaded.clear();
    }

    /// Accesses `entry` (dirty when the access changes it); returns the table pages to store, in
    /// order, then the one to load (`None` on a hit or when this request already loaded it).
    pub fn access(&mut self, entry: u64, dirty: bool) -> TranslationIo {
        let Some(cmt) = self.cmt.as_mut() else {
            return TranslationIo::default();
        };
        let (hit, mut io) = cmt.access(entry, dirty);
        if hit {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        if let Some(tp) = io.read {
            if self.loaded.contains(&tp) {
                io.read = None;
            } else {
                self.loaded.push(tp);
            }
        }
        io
    }

    /// Drops cached entries `range` without writing them back (their table was reset).
    pub fn forget(&mut self, range: std::ops::Range<u64>) {
        if let Some(c) = self.cmt.as_mut() {
            c.forget(range);
        }
    }

    /// The table pages holding dirty cached entries (all cleaned): what a flush stores.
    pub fn take_dirty(&mut self) -> Vec<u64> {
        self.cmt.as_mut().map_or_else(Vec::new, |c| c.take_dirty())
    }
}

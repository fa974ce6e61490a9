//! What a page cache is configured with (Linux's defaults as named constants), the causes of its
//! write-back, and the counts it keeps.

use flashsim::Nanos;

/// Linux's `dirty_background_ratio`: background write-back starts above this share of the cache
/// (percent).
pub const DIRTY_BACKGROUND_RATIO: u32 = 10;
/// Linux's `dirty_expire_centisecs`: dirty data older than this is written back (30 s).
pub const DIRTY_EXPIRE_CENTISECS: u64 = 3000;
/// Linux's default `read_ahead_kb`: the largest readahead window.
pub const READ_AHEAD_KB: u64 = 128;

/// The size and policy of a page cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageCacheConfig {
    /// Bytes of file pages the cache holds; 0 turns it off.
    pub capacity_bytes: u64,
    /// Dirty pages above this percentage of the cache start background write-back.
    pub dirty_background_ratio: u32,
    /// A file whose oldest dirty byte is this old is written back.
    pub dirty_expire: Nanos,
    /// The largest readahead window, in bytes (0: no readahead).
    pub readahead_max_bytes: u64,
    /// A clone gives the destination the source's cached pages (on: seed 000's remap, where the
    /// engine writes the block through the page cache and the device skips its program); off, the
    /// cloned range of the destination is not cached (Linux's FICLONERANGE, which invalidates it).
    pub clone_keeps_pages: bool,
    /// Clean whole pages keep no bytes: a hit reads them from the device's store, without time
    /// or counts (the lab's choice when the device keeps its pages in memory, compact: the cache
    /// then costs no memory or copies for them).
    pub clean_on_device: bool,
}

impl PageCacheConfig {
    /// No cache: reads and writes go to the placement.
    pub const OFF: PageCacheConfig = PageCacheConfig::with_capacity(0);

    /// A cache of `capacity_bytes` with Linux's default dirty and readahead settings.
    pub const fn with_capacity(capacity_bytes: u64) -> PageCacheConfig {
        PageCacheConfig {
            capacity_bytes,
            dirty_background_ratio: DIRTY_BACKGROUND_RATIO,
            dirty_expire: DIRTY_EXPIRE_CENTISECS * 10_000_000,
            readahead_max_bytes: READ_AHEAD_KB << 10,
            clone_keeps_pages: true,
            clean_on_device: false,
        }
    }

    pub fn enabled(&self) -> bool {
        self.capacity_bytes > 0
    }
}

impl Default for PageCacheConfig {
    fn default() -> Self {
        PageCacheConfig::OFF
    }
}

/// Why dirty bytes were handed to the placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteBack {
    Fsync,
    /// Dirty pages passed `dirty_background_ratio`.
    Background,
    /// Dirty data older than `dirty_expire`.
    Expired,
    /// The cache was full of dirty pages.
    Pressure,
    /// A clone reads or replaces the file's bytes on the placement.
    Clone,
    /// A direct-I/O read or write of the file (Linux writes a file's dirty range back before
    /// `O_DIRECT` touches it).
    Direct,
    /// Everything, at the end of a run (as an unmount writes back), or before the cache is
    /// replaced.
    Unmount,
}

/// What a page cache did: the `page_cache` of a run's results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageCacheStats {
    pub capacity_bytes: u64,
    /// Pages a read found in the cache.
    pub hits: u64,
    /// Pages a read (or a write into a page the cache did not hold) fetched from the placement.
    pub misses: u64,
    /// Pages readahead fetched beyond what was asked.
    pub readahead_pages: u64,
    /// Clean pages evicted to make room.
    pub evictions: u64,
    /// Bytes written back, by cause.
    pub written_back_fsync: u64,
    pub written_back_background: u64,
    pub written_back_expired: u64,
    pub written_back_pressure: u64,
    pub written_back_clone: u64,
    pub written_back_direct: u64,
    pub written_back_unmount: u64,
    /// Dirty bytes of deleted files, never written.
    pub dropped_dirty_bytes: u64,
    /// The most dirty bytes held at once.
    pub dirty_peak_bytes: u64,
}

impl PageCacheStats {
    /// Hits / (hits + misses); `None` before any read.
    pub fn hit_ratio(&self) -> Option<f64> {
        let all = self.hits + self.misses;
        (all > 0).then(|| self.hits as f64 / all as f64)
    }

    pub fn written_back(&self) -> u64 {
        self.written_back_fsync
            + self.written_back_background
            + self.written_back_expired
            + self.written_back_pressure
            + self.written_back_clone
            + self.written_back_direct
            + self.written_back_unmount
    }

    pub(crate) fn add_written_back(&mut self, cause: WriteBack, bytes: u64) {
        let slot = match cause {
            WriteBack::Fsync => &mut self.written_back_fsync,
            WriteBack::Background => &mut self.written_back_background,
            WriteBack::Expired => &mut self.written_back_expired,
            WriteBack::Pressure => &mut self.written_back_pressure,
            WriteBack::Clone => &mut self.written_back_clone,
            WriteBack::Direct => &mut self.written_back_direct,
            WriteBack::Unmount => &mut self.written_back_unmount,
        };
        *slot += bytes;
    }
}

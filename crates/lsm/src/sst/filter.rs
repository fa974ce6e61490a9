//! Bloom filters over user keys, so that a point lookup skips a table or a data block that cannot
//! hold its user key. Two layouts ([`FilterLayout`]); a table's metaindex names the one it has, so
//! a reader reads either whatever its options say:
//!
//! - [`FilterLayout::PerBlock`], LevelDB's (`table/filter_block.cc`, `util/bloom.cc`), byte for
//!   byte: one filter per 2 KiB of data-block offsets, under `filter.leveldb.BuiltinBloomFilter2`.
//!   The leveldb profile's, which the seeds' reproductions pin.
//! - [`FilterLayout::PerTable`]: one cache-line-blocked filter over the whole table (the layout of
//!   RocksDB's full filters), with a hash of its own, under `filter.flashkv.BlockedBloom`
//!   ([`bloom::blocked`]). A lookup asks it before searching the index. The flashkv profile's:
//!   LevelDB's hash collides on neighbouring keys, so its small per-block filters let most absent
//!   db_bench keys through to a block read when a block holds one large value.
//!
//! Per-block filter block: one filter per 2 KiB (`1 << base_lg`) range of data-block offsets. The keys of the data
//! block that starts at offset `o` go into filter number `o >> base_lg`; ranges without a block get an empty
//! filter (which matches nothing). With aligned 4 KiB blocks every data block thus has its own filter.
//!
//! ```text
//! filter* | fixed32 filter_offset * n | fixed32 offset_of_that_array | u8 base_lg (11)
//! ```
//!
//! Keys given to these types are *user* keys: the table builder strips the 8-byte tag, so every version of
//! a user key hashes the same.

use std::fmt;
use std::str::FromStr;

pub use bloom::{bloom_hash, bloom_may_match, leveldb_hash, BloomPolicy};

use crate::coding::{get_fixed32, put_fixed32};
use crate::cpu::{self, Term};
use crate::error::Error;

/// log2 of the data-offset range one filter covers (2 KiB, as LevelDB).
pub const FILTER_BASE_LG: u8 = 11;

/// The metaindex key of the filter block: LevelDB's name for this exact format, so the files stay readable
/// by LevelDB.
pub const FILTER_META_KEY: &[u8] = b"filter.leveldb.BuiltinBloomFilter2";

/// The metaindex key of a [`FilterLayout::PerTable`] filter (LevelDB skips a name it does not know,
/// so it reads such a table without its filter).
pub const TABLE_FILTER_META_KEY: &[u8] = b"filter.flashkv.BlockedBloom";

/// How a table's Bloom filter is laid out; see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum FilterLayout {
    /// LevelDB's: a filter per 2 KiB of data-block offsets.
    #[default]
    PerBlock,
    /// One blocked filter over the whole table.
    PerTable,
}

impl FilterLayout {
    pub const NAMES: [&'static str; 2] = ["per_block", "per_table"];

    pub fn name(self) -> &'static str {
        match self {
            FilterLayout::PerBlock => "per_block",
            FilterLayout::PerTable => "per_table",
        }
    }

    /// The hash this layout's filters take of a user key (gathered once per key by a builder, or
    /// by the merge for a block it clones).
    pub fn key_hash(self, user_key: &[u8]) -> u32 {
        match self {
            FilterLayout::PerBlock => bloom_hash(user_key),
            FilterLayout::PerTable => bloom::key_hash(user_key),
        }
    }

    /// The metaindex key naming this layout's filter block.
    pub fn meta_key(self) -> &'static [u8] {
        match self {
            FilterLayout::PerBlock => FILTER_META_KEY,
            FilterLayout::PerTable => TABLE_FILTER_META_KEY,
        }
    }

    /// The layout a metaindex key names, if it names a filter of ours.
    pub fn of_meta_key(key: &[u8]) -> Option<FilterLayout> {
        [FilterLayout::PerBlock, FilterLayout::PerTable].into_iter().find(|l| l.meta_key() == key)
    }
}

impl fmt::Display for FilterLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for FilterLayout {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "per_block" => Ok(FilterLayout::PerBlock),
            "per_table" => Ok(FilterLayout::PerTable),
            other => {
                Err(Error::UnknownName { option: "filter_layout", name: other.to_string(), accepted: &Self::NAMES })
            }
        }
    }
}

/// Builds a filter block of either layout. Call [`start_block`](Self::start_block) with each data
/// block's offset before adding that block's keys.
#[derive(Debug)]
pub struct FilterBlockBuilder {
    policy: BloomPolicy,
    layout: FilterLayout,
    /// The [`FilterLayout::key_hash`]es of the keys of the current filter range (per block) or of
    /// the table (per table): a key is hashed as it is added, never copied.
    hashes: Vec<u32>,
    result: Vec<u8>,
    filter_offsets: Vec<u32>,
}

impl FilterBlockBuilder {
    /// A builder of LevelDB's per-block layout.
    pub fn new(policy: BloomPolicy) -> FilterBlockBuilder {
        FilterBlockBuilder::with_layout(policy, FilterLayout::PerBlock)
    }

    pub fn with_layout(policy: BloomPolicy, layout: FilterLayout) -> FilterBlockBuilder {
        FilterBlockBuilder { policy, layout, hashes: Vec::new(), result: Vec::new(), filter_offsets: Vec::new() }
    }

    pub fn layout(&self) -> FilterLayout {
        self.layout
    }

    /// The next keys belong to the data block at `block_offset`: emits the filters of the ranges
    /// before it (per block; a per-table filter takes every key into one).
    pub fn start_block(&mut self, block_offset: u64) {
        if self.layout == FilterLayout::PerTable {
            return;
        }
        let index = block_offset >> FILTER_BASE_LG;
        while (self.filter_offsets.len() as u64) < index {
            self.generate_filter();
        }
    }

    pub fn add_key(&mut self, user_key: &[u8]) {
        cpu::count(Term::FilterKey, 1);
        self.hashes.push(self.layout.key_hash(user_key));
    }

    /// Adds keys already hashed with this layout's [`FilterLayout::key_hash`] (a cloned block's,
    /// hashed as the merge passed them).
    pub fn add_hashes(&mut self, hashes: &[u32]) {
        self.hashes.extend_from_slice(hashes);
    }

    /// The finished filter block (builder consumed).
    pub fn finish(mut self) -> Vec<u8> {
        if self.layout == FilterLayout::PerTable {
            let mut filter = Vec::new();
            bloom::create_blocked_filter(&self.policy, &self.hashes, &mut filter);
            return filter;
        }
        if !self.hashes.is_empty() {
            self.generate_filter();
        }
        let array_offset = self.result.len() as u32;
        for &o in &self.filter_offsets {
            put_fixed32(&mut self.result, o);
        }
        put_fixed32(&mut self.result, array_offset);
        self.result.push(FILTER_BASE_LG);
        self.result
    }

    fn generate_filter(&mut self) {
        self.filter_offsets.push(self.result.len() as u32);
        if !self.hashes.is_empty() {
            self.policy.create_filter_from_hashes(&self.hashes, &mut self.result);
            self.hashes.clear();
        }
    }
}

/// A table's filter, of the layout its metaindex names.
#[derive(Clone, Debug)]
pub enum TableFilter {
    PerBlock(FilterBlockReader),
    /// A [`bloom::blocked`] filter's bytes (a damaged one matches everything).
    PerTable(Vec<u8>),
}

impl TableFilter {
    /// The filter block `data` of `layout`; `None` if it is malformed.
    pub fn read(layout: FilterLayout, data: Vec<u8>) -> Option<TableFilter> {
        match layout {
            FilterLayout::PerBlock => FilterBlockReader::new(data).map(TableFilter::PerBlock),
            FilterLayout::PerTable => Some(TableFilter::PerTable(data)),
        }
    }

    pub fn layout(&self) -> FilterLayout {
        match self {
            TableFilter::PerBlock(_) => FilterLayout::PerBlock,
            TableFilter::PerTable(_) => FilterLayout::PerTable,
        }
    }

    /// Whether the table may hold `user_key`, where the filter can tell before the index is
    /// searched (per table; a per-block filter answers true here).
    pub fn table_may_match(&self, user_key: &[u8]) -> bool {
        match self {
            TableFilter::PerBlock(_) => true,
            TableFilter::PerTable(f) => bloom::blocked_may_match(bloom::key_hash(user_key), f),
        }
    }

    /// Whether the data block at `block_offset` may hold `user_key` (per block; a per-table filter
    /// answered [`TableFilter::table_may_match`] already and answers true here).
    pub fn block_may_match(&self, block_offset: u64, user_key: &[u8]) -> bool {
        match self {
            TableFilter::PerBlock(r) => r.key_may_match(block_offset, user_key),
            TableFilter::PerTable(_) => true,
        }
    }
}

/// Reads a filter block. Parsing checks the layout; lookups never panic.
#[derive(Clone, Debug)]
pub struct FilterBlockReader {
    data: Vec<u8>,
    /// Start of the offset array (= end of the filters).
    array_offset: usize,
    num: usize,
    base_lg: u8,
}

impl FilterBlockReader {
    /// `None` if `data` is not a well-formed filter block.
    pub fn new(data: Vec<u8>) -> Option<FilterBlockReader> {
        let n = data.len();
        let base_lg = *data.last()?;
        let array_offset = get_fixed32(data.get(n.checked_sub(5)?..)?)? as usize;
        let array_bytes = (n - 5).checked_sub(array_offset)?;
        if array_bytes % 4 != 0 || base_lg >= 64 {
            return None;
        }
        Some(FilterBlockReader { num: array_bytes / 4, data, array_offset, base_lg })
    }

    /// Number of filters (ranges of data-block offsets).
    pub fn num_filters(&self) -> usize {
        self.num
    }

    /// Whether the data block at `block_offset` may hold `user_key`. Out-of-range or malformed entries
    /// answer true: a filter may only ever save work, never hide a key.
    pub fn key_may_match(&self, block_offset: u64, user_key: &[u8]) -> bool {
        let index = block_offset >> self.base_lg;
        let Ok(index) = usize::try_from(index) else {
            return true;
        };
        if index >= self.num {
            return true;
        }
        let at = self.array_offset + index * 4;
        let (Some(start), Some(limit)) =
            (self.data.get(at..).and_then(get_fixed32), self.data.get(at + 4..).and_then(get_fixed32))
        else {
            return true;
        };
        // The last filter's limit is the array offset itself, which the array stores right after it.
        let (start, limit) = (start as usize, limit as usize);
        if start == limit {
            return false;
        }
        match self.data.get(start..limit) {
            Some(filter) if limit <= self.array_offset => bloom_may_match(user_key, filter),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filter_block_layout_matches_leveldb() {
        // LevelDB's filter_block_test: an empty builder gives 5 bytes (array offset 0, base_lg 11).
        let b = FilterBlockBuilder::new(BloomPolicy::new(10));
        assert_eq!(b.finish(), vec![0, 0, 0, 0, 11]);
        let mut b = FilterBlockBuilder::new(BloomPolicy::new(10));
        b.start_block(100);
        b.add_key(b"foo");
        b.add_key(b"bar");
        b.start_block(200);
        b.add_key(b"box");
        b.start_block(3100);
        b.add_key(b"hello");
        b.start_block(9000);
        b.add_key(b"z");
        let r = FilterBlockReader::new(b.finish()).unwrap();
        assert_eq!(r.num_filters(), 5);
        for k in [&b"foo"[..], b"bar", b"box"] {
            assert!(r.key_may_match(100, k));
        }
        assert!(r.key_may_match(3100, b"hello"));
        assert!(!r.key_may_match(3100, b"foo"));
        assert!(!r.key_may_match(4100, b"hello")); // empty range
        assert!(r.key_may_match(9000, b"z"));
        assert!(r.key_may_match(1 << 40, b"anything")); // past the filters
        assert!(FilterBlockReader::new(vec![1, 2, 3]).is_none());
        assert!(FilterBlockReader::new(vec![9, 0, 0, 0, 11]).is_none());
    }
}

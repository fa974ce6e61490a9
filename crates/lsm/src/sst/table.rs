//! Reads an SST written by [`super::TableBuilder`] (or by LevelDB without compression).
//!
//! Opening reads the footer, the index block and the filter block once and keeps them in memory (the index
//! decoded into its separator keys, in one buffer, and their handles, so a lookup is a binary search and a data
//! block is known by its ordinal); data blocks are read on demand, through the block cache when there is one.
//!
//! Checksums: the footer's blocks (metaindex, index, filter) are always verified at open. A data block is
//! verified when `Options::paranoid_checks` or `ReadOptions::verify_checksums` is set, and always when it
//! is read to fill the block cache, so a cached block is a verified block. Unverified (no cache fill and
//! neither option), a block is still parsed with every bound checked, so a block that no longer parses
//! is corruption; damage that leaves it well-formed goes unseen, which is what `verify_checksums = false`
//! trades, as in RocksDB.
//!
//! A damaged filter block (failing its checksum, or malformed; not an I/O error) does not fail the open: the filter only
//! lets a get skip a data block, so the table is used without it (every get reads the data block, which
//! is verified as above) and [`Table::filter_damage`] keeps the error, for the database to report. LevelDB
//! and RocksDB do the same. The index and metaindex are needed to find anything: damaged, the open fails.
//!
//! Mapped files: when the file system maps the file ([`storage::Fs::open_immutable`]), data blocks are
//! read from the mapping without a copy and are not cached (as LevelDB's mapped tables); each block is
//! verified the first time it is read (a bit per block remembers), so every block is still checked once
//! before its contents are used.
//!
//! Contract: opening a truncated or corrupt file, or reading a corrupt block, gives [`Error::Corruption`]
//! naming the file and an offset (of the footer, the block, or the bad entry); nothing panics. A table is
//! immutable and shared (`Arc<Table>`) between readers and iterators.

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use storage::RandomAccessFile;

use super::block::Block;
use super::filter::{FilterLayout, TableFilter};
use super::format::{read_block, BlockHandle, Footer, FOOTER_SIZE};
use crate::cache::BlockCache;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{compare_internal, user_key};
use crate::options::{Options, ReadOptions};

/// The index block, decoded: data block `i` is at `handles[i]`, and every key in it is <= its index
/// key < every key of block `i + 1`. The keys share one buffer: a table opened for a get (the table
/// cache holds far fewer tables than a large database has) would otherwise allocate, and later free,
/// one key per data block, and a thousand scattered allocations cost more than reading the block.
#[derive(Debug, Default)]
struct Index {
    keys: Vec<u8>,
    /// Where each index key ends in `keys`; it starts where the previous one ends.
    ends: Vec<u32>,
    handles: Vec<BlockHandle>,
}

impl Index {
    fn key(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.keys[start..self.ends[i] as usize]
    }

    fn len(&self) -> usize {
        self.handles.len()
    }

    /// The first entry whose key is >= `ikey` (`len()` if none), by binary search.
    fn first_not_below(&self, ikey: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if compare_internal(self.key(mid), ikey) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// Counters of one open table, for tests and statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Point lookups that consulted the filter, and those the filter answered "absent" (no block read).
    pub filter_checks: u64,
    pub filter_skips: u64,
    /// Data blocks read from the file (cache misses and uncached reads).
    pub block_reads: u64,
}

#[derive(Default)]
struct Counters {
    filter_checks: AtomicU64,
    filter_skips: AtomicU64,
    block_reads: AtomicU64,
}

/// An open, immutable SST.
pub struct Table {
    file: Arc<dyn RandomAccessFile>,
    path: Arc<str>,
    file_size: u64,
    file_number: u64,
    footer: Footer,
    index: Index,
    filter: Option<TableFilter>,
    /// Why the table has no filter although its metaindex lists one.
    filter_damage: Option<Error>,
    cache: Option<Arc<BlockCache>>,
    /// For a file the file system maps into memory: which data blocks have had their CRC checked
    /// (one bit per block, in key order).
    mapped_verified: Option<Box<[AtomicU64]>>,
    paranoid: bool,
    counters: Counters,
}

impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("path", &self.path)
            .field("file_number", &self.file_number)
            .field("file_size", &self.file_size)
            .field("data_blocks", &self.index.len())
            .finish()
    }
}

impl Table {
    /// Opens the table in `file` of `file_size` bytes, known to the cache as `file_number`.
    pub fn open(
        file: Arc<dyn RandomAccessFile>,
        file_size: u64,
        file_number: u64,
        options: &Options,
        cache: Option<Arc<BlockCache>>,
    ) -> Result<Arc<Table>> {
        let path: Arc<str> = Arc::from(file.path());
        if file_size < FOOTER_SIZE as u64 {
            return Err(Error::corruption(
                &*path,
                0,
                format!("file of {file_size} bytes is too short to be an sstable"),
            ));
        }
        let footer_offset = file_size - FOOTER_SIZE as u64;
        let mut buf = [0u8; FOOTER_SIZE];
        let got = file.read_at(footer_offset, &mut buf)?;
        if got < FOOTER_SIZE {
            return Err(Error::corruption(
                &*path,
                footer_offset,
                format!("truncated footer: {got} of {FOOTER_SIZE} bytes"),
            ));
        }
        let footer = Footer::decode(&buf, &path, footer_offset)?;
        let read_meta = |handle: &BlockHandle| -> Result<Block> {
            let contents = read_block(&*file, handle, footer_offset, true)?;
            Block::with_origin(contents.data, path.clone(), handle.offset)
        };
        let index = decode_index(&read_meta(&footer.index)?, footer.metaindex.offset)?;
        let (filter, filter_damage) = match find_filter(&read_meta(&footer.metaindex)?)? {
            Some((layout, handle)) => {
                let reader = read_block(&*file, &handle, footer_offset, true).and_then(|contents| {
                    TableFilter::read(layout, contents.data.to_vec())
                        .ok_or_else(|| Error::corruption(&*path, handle.offset, "malformed filter block"))
                });
                match reader {
                    Ok(reader) => (Some(reader), None),
                    // Damage is kept; an I/O error fails the open, to be retried at the next.
                    Err(e) if e.is_corruption() => (None, Some(e)),
                    Err(e) => return Err(e),
                }
            }
            None => (None, None),
        };
        let mapped_verified =
            file.read_shared(0, 0).map(|_| (0..index.len().div_ceil(64)).map(|_| AtomicU64::new(0)).collect());
        Ok(Arc::new(Table {
            file,
            path,
            file_size,
            file_number,
            footer,
            index,
            filter,
            filter_damage,
            cache,
            mapped_verified,
            paranoid: options.paranoid_checks,
            counters: Counters::default(),
        }))
    }

    /// The first entry >= `ikey` in the data block the index points to (after asking the filter whether
    /// the table, before the index search, or that block can hold `ikey`'s user key): `None` when
    /// there is none. The caller compares user keys.
    pub fn get(&self, ikey: &[u8], read_opts: &ReadOptions) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let uk = user_key(ikey);
        if let Some(filter) = &self.filter {
            self.counters.filter_checks.fetch_add(1, AtomicOrdering::Relaxed);
            if !filter.table_may_match(uk) {
                self.counters.filter_skips.fetch_add(1, AtomicOrdering::Relaxed);
                return Ok(None);
            }
        }
        let i = self.find_block(ikey);
        let Some(handle) = self.index.handles.get(i) else {
            return Ok(None);
        };
        if self.filter.as_ref().is_some_and(|f| !f.block_may_match(handle.offset, uk)) {
            self.counters.filter_skips.fetch_add(1, AtomicOrdering::Relaxed);
            return Ok(None);
        }
        let block = self.data_block(i, read_opts)?;
        let mut it = block.iter();
        it.seek(ikey);
        it.status()?;
        Ok(it.valid().then(|| (it.key().to_vec(), it.value().to_vec())))
    }

    /// Data block `i` (in key order): from the mapping of a mapped file, else from the cache or the file.
    pub fn data_block(&self, i: usize, read_opts: &ReadOptions) -> Result<Block> {
        self.data_block_via(i, read_opts, &*self.file)
    }

    /// The table's file, for a reader that wraps it (a readahead buffer).
    pub fn file(&self) -> &Arc<dyn RandomAccessFile> {
        &self.file
    }

    /// [`Table::data_block`], reading through `file` (the table's file or a wrapper of it) where
    /// a block is not mapped or cached.
    pub fn data_block_via(&self, i: usize, read_opts: &ReadOptions, file: &dyn RandomAccessFile) -> Result<Block> {
        let handle = self.index.handles.get(i).copied().ok_or_else(|| Error::NoSuchBlock {
            file: self.path.to_string(),
            block: i,
            blocks: self.index.len(),
        })?;
        if let Some(verified) = &self.mapped_verified {
            // Reading a mapped block copies nothing, so caching it would only evict others (LevelDB
            // does not cache them either); each block's CRC is checked the first time it is read.
            let (word, bit) = (verified.get(i / 64), 1u64 << (i % 64));
            let seen = word.is_some_and(|w| w.load(AtomicOrdering::Relaxed) & bit != 0);
            let verify = !seen || self.paranoid || read_opts.verify_checksums;
            self.counters.block_reads.fetch_add(1, AtomicOrdering::Relaxed);
            let contents = read_block(file, &handle, self.file_size, verify)?;
            if contents.mapped {
                let block = Block::with_origin(contents.data, self.path.clone(), handle.offset)?;
                if let Some(w) = word {
                    w.fetch_or(bit, AtomicOrdering::Relaxed);
                }
                return Ok(block);
            }
        }
        if let Some(cache) = &self.cache {
            if let Some(block) = cache.get(self.file_number, handle.offset) {
                return Ok(block);
            }
        }
        let fill = self.cache.is_some() && !read_opts.fill_cache_disabled;
        let verify = fill || self.paranoid || read_opts.verify_checksums;
        self.counters.block_reads.fetch_add(1, AtomicOrdering::Relaxed);
        let contents = read_block(file, &handle, self.file_size, verify)?;
        let block = Block::with_origin(contents.data, self.path.clone(), handle.offset)?;
        if let (true, Some(cache)) = (fill, &self.cache) {
            cache.insert(self.file_number, handle.offset, block.clone());
        }
        Ok(block)
    }

    /// Ordinal of the first data block whose index key is >= `ikey` (`num_data_blocks()` if none): the
    /// only block that can hold the first entry >= `ikey`, or, if it holds none, the next one does.
    pub fn find_block(&self, ikey: &[u8]) -> usize {
        self.index.first_not_below(ikey)
    }

    /// Roughly where in the file the entries >= `ikey` start (the end of the data for keys past the last).
    pub fn approximate_offset_of(&self, ikey: &[u8]) -> u64 {
        match self.index.handles.get(self.find_block(ikey)) {
            Some(h) => h.offset,
            None => self.footer.metaindex.offset,
        }
    }

    /// The data blocks' handles, in key order.
    pub fn data_block_handles(&self) -> &[BlockHandle] {
        &self.index.handles
    }

    pub fn num_data_blocks(&self) -> usize {
        self.index.len()
    }

    pub fn has_filter(&self) -> bool {
        self.filter.is_some()
    }

    /// The error that made the open leave out the filter block the table lists (a corruption naming
    /// the file and the block's offset); the table answers without a filter then.
    pub fn filter_damage(&self) -> Option<&Error> {
        self.filter_damage.as_ref()
    }

    /// The layout of the table's filter, if it has one.
    pub fn filter_layout(&self) -> Option<FilterLayout> {
        self.filter.as_ref().map(TableFilter::layout)
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn file_number(&self) -> u64 {
        self.file_number
    }

    pub fn file_size(&self) -> u64 {
        self.file_size
    }

    pub fn stats(&self) -> TableStats {
        TableStats {
            filter_checks: self.counters.filter_checks.load(AtomicOrdering::Relaxed),
            filter_skips: self.counters.filter_skips.load(AtomicOrdering::Relaxed),
            block_reads: self.counters.block_reads.load(AtomicOrdering::Relaxed),
        }
    }
}

/// Decodes the index block into entries, checking that keys ascend and handles lie before `data_end`.
fn decode_index(block: &Block, data_end: u64) -> Result<Index> {
    let corrupt = |what: &str| Error::corruption(block.file(), block.offset(), format!("index block: {what}"));
    // A first guess: the keys restored from their shared prefixes take about the block's bytes.
    let mut index = Index { keys: Vec::with_capacity(block.data().len()), ..Index::default() };
    let mut it = block.iter();
    it.seek_to_first();
    while it.valid() {
        let (handle, _) = BlockHandle::decode(it.value()).ok_or_else(|| corrupt("bad block handle"))?;
        if handle.end_with_trailer().is_none_or(|end| end > data_end) {
            return Err(corrupt(&format!(
                "data block (offset {}, size {}) runs past the data ({data_end} bytes)",
                handle.offset, handle.size
            )));
        }
        let n = index.len();
        if n > 0 && compare_internal(index.key(n - 1), it.key()) != Ordering::Less {
            return Err(corrupt("keys out of order"));
        }
        index.keys.extend_from_slice(it.key());
        let end = u32::try_from(index.keys.len()).map_err(|_| corrupt("keys over 4 GiB"))?;
        index.ends.push(end);
        index.handles.push(handle);
        it.next();
    }
    it.status()?;
    Ok(index)
}

/// The filter block's layout and handle from the metaindex, if it lists one of ours.
fn find_filter(metaindex: &Block) -> Result<Option<(FilterLayout, BlockHandle)>> {
    let mut it = metaindex.iter();
    it.seek_to_first();
    while it.valid() {
        if let Some(layout) = FilterLayout::of_meta_key(it.key()) {
            let (handle, _) = BlockHandle::decode(it.value()).ok_or_else(|| {
                Error::corruption(metaindex.file(), metaindex.offset(), "bad filter handle in metaindex")
            })?;
            return Ok(Some((layout, handle)));
        }
        it.next();
    }
    it.status()?;
    Ok(None)
}

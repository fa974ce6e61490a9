//! Writes an SST in LevelDB's table format (`table/table_builder.cc`):
//!
//! ```text
//! data block* | filter block | metaindex block | index block | footer (48 bytes)
//! ```
//!
//! Each block is followed by its 5-byte trailer. The index maps, per data block, a separator key (>= every
//! key of the block, < every key of the next; shortened on user keys as LevelDB does) to the block's handle.
//! The metaindex maps the filter layout's name (`filter.leveldb.BuiltinBloomFilter2`, LevelDB's per-block
//! filters, or `filter.flashkv.BlockedBloom`, one filter per table) to the filter block (see [`super::filter`]).
//!
//! Block closing:
//! - Plain layout (LevelDB's rule): a data block is closed once its estimated size reaches `block_size`.
//! - `align_blocks`: every data block starts at a multiple of the file system's block size `P` and is
//!   followed by zero padding up to the next multiple (padding also after the last data block, so that any
//!   data block can be cloned whole, page by page, from this file). A block is closed *before* an entry that
//!   would make contents + trailer exceed `max(round_up(block_size, P), round_up(current contents + trailer,
//!   P))`; an empty block takes any entry, so one large entry may span several pages and the block may then
//!   fill the rest of its last page. With `block_size <= P`, a block of small entries fills exactly one page.
//!
//! Cloned blocks (RemapCom): [`TableBuilder::add_cloned_block`] places a whole data block of another aligned
//! SST into this one with [`WritableFile::append_cloned`] (extent sharing / device remap where possible), its
//! trailer and padding included, so nothing is rewritten. The caller hands over the parsed source block
//! ([`Block`], which it already holds from the input table's iterator) and its keys' summary ([`BlockKeys`],
//! gathered as the caller walked the block): the first and last key for the order and the index, the filter
//! hashes for this table's filter, so the filter can never miss a cloned key, no read of the source is needed
//! and the block is not parsed again.
//!
//! Contract: keys ascend strictly in [`compare_internal`] order across `add` and cloned blocks
//! ([`Error::KeysOutOfOrder`] otherwise, and nothing is written); a block that cannot be cloned is an
//! [`Error::BadClonedBlock`] saying why ([`CloneProblem`]). After a write error every later call returns that
//! error. `finish` does not sync: the caller syncs the file ([`TableBuilder::file_mut`] or
//! [`TableBuilder::into_file`]).

use std::cmp::Ordering;

use storage::{CloneOutcome, WritableFile};

use super::block::Block;
use super::block_builder::BlockBuilder;
use super::block_keys::BlockKeys;
use super::filter::{BloomPolicy, FilterBlockBuilder, FilterLayout};
use super::format::{append_trailer, round_up, BlockHandle, Footer, BLOCK_TRAILER_SIZE};
use crate::coding::put_fixed64;
use crate::cpu::{self, Term};
use crate::error::{CloneProblem, Error, Result};
use crate::key::{
    compare_internal, pack_tag, short_successor, shortest_separator, user_key, KIND_FOR_SEEK, MAX_SEQUENCE,
};
use crate::options::Options;

/// Largest key + value one entry may hold: lengths are varint32 and offsets fixed32 in a block.
const MAX_ENTRY_BYTES: usize = (u32::MAX / 2) as usize;

/// The options a table builder uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableOptions {
    pub block_size: usize,
    pub block_restart_interval: usize,
    pub bloom_bits_per_key: Option<u32>,
    pub filter_layout: FilterLayout,
    pub align_blocks: bool,
}

impl From<&Options> for TableOptions {
    fn from(o: &Options) -> Self {
        TableOptions {
            block_size: o.block_size,
            block_restart_interval: o.block_restart_interval,
            bloom_bits_per_key: o.bloom_bits_per_key,
            filter_layout: o.filter_layout,
            align_blocks: o.align_blocks,
        }
    }
}

/// What a finished table holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableProperties {
    pub file_size: u64,
    pub num_entries: u64,
    /// Data blocks, cloned ones included.
    pub num_data_blocks: u64,
    /// Smallest and largest internal key (empty for an empty table).
    pub smallest_key: Vec<u8>,
    pub largest_key: Vec<u8>,
    /// Data block contents + trailers, cloned blocks included.
    pub data_bytes: u64,
    /// Alignment padding written after data blocks (zeros). A cloned block's padding is not
    /// counted again: it was counted once, by the table that wrote it.
    pub padding_bytes: u64,
    /// Data blocks placed by `add_cloned_block`.
    pub cloned_blocks: u64,
    /// Bytes those placed by sharing extents, and by the copy fallback.
    pub cloned_bytes: u64,
    pub copied_bytes: u64,
    /// Bytes (with trailers) of the filter, metaindex and index blocks and the footer.
    pub meta_bytes: u64,
}

/// Builds one SST; see the module documentation.
pub struct TableBuilder {
    opts: TableOptions,
    file: Box<dyn WritableFile>,
    fs_block: u64,
    offset: u64,
    data_block: BlockBuilder,
    index_block: BlockBuilder,
    filter: Option<FilterBlockBuilder>,
    last_key: Vec<u8>,
    /// Handle of the last closed data block, whose index entry waits for the next key (to shorten it).
    pending_index: Option<BlockHandle>,
    props: TableProperties,
    error: Option<Error>,
    closed: bool,
}

impl TableBuilder {
    /// A builder writing to `file` (normally empty) on a file system whose clone unit is `block_size_of_fs`
    /// (used when `options.align_blocks` is set; 0 is taken as 1).
    pub fn new(options: &Options, file: Box<dyn WritableFile>, block_size_of_fs: u64) -> TableBuilder {
        TableBuilder::with_table_options(options.into(), file, block_size_of_fs)
    }

    pub fn with_table_options(opts: TableOptions, file: Box<dyn WritableFile>, block_size_of_fs: u64) -> TableBuilder {
        let offset = file.len();
        let mut filter = opts
            .bloom_bits_per_key
            .map(|bits| FilterBlockBuilder::with_layout(BloomPolicy::new(bits), opts.filter_layout));
        if let Some(f) = filter.as_mut() {
            f.start_block(offset);
        }
        TableBuilder {
            data_block: BlockBuilder::new(opts.block_restart_interval),
            // Index keys are looked up by binary search over every entry: a restart point per key.
            index_block: BlockBuilder::new(1),
            opts,
            file,
            fs_block: block_size_of_fs.max(1),
            offset,
            filter,
            last_key: Vec::new(),
            pending_index: None,
            props: TableProperties::default(),
            error: None,
            closed: false,
        }
    }

    /// Appends an entry. `key` is an internal key after every key added so far.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.check_open()?;
        if key.len() < 8 {
            return Err(Error::NotInternalKey { len: key.len() });
        }
        if key.len().saturating_add(value.len()) > MAX_ENTRY_BYTES {
            return Err(Error::EntryTooLarge { key_len: key.len(), value_len: value.len(), limit: MAX_ENTRY_BYTES });
        }
        self.check_order(key)?;
        if self.opts.align_blocks && !self.data_block.is_empty() && !self.fits_aligned(key, value.len()) {
            self.flush_data_block()?;
        }
        self.emit_pending_index(key);
        if let Some(f) = self.filter.as_mut() {
            f.add_key(user_key(key));
        }
        self.note_key(key);
        self.props.num_entries += 1;
        cpu::count(Term::BlockByte, (key.len() + value.len()) as u64);
        self.data_block.add(key, value);
        if !self.opts.align_blocks && self.data_block.estimated_size() >= self.opts.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Places data block `handle` of the aligned SST at `src_path` into this table by cloning its bytes,
    /// trailer and padding included (see the module documentation). `block` is that block's parsed contents
    /// and `keys` the summary of its keys. Closes the current block first. Requires `align_blocks` and an
    /// aligned `handle.offset`; the block's keys must come after every key added so far.
    pub fn add_cloned_block(
        &mut self,
        src_path: &str,
        handle: BlockHandle,
        block: &Block,
        keys: &BlockKeys,
    ) -> Result<CloneOutcome> {
        self.check_open()?;
        let refuse = |problem: CloneProblem| Error::BadClonedBlock {
            file: src_path.to_string(),
            offset: handle.offset,
            problem,
        };
        if !self.opts.align_blocks {
            return Err(refuse(CloneProblem::TableNotAligned));
        }
        if handle.offset % self.fs_block != 0 {
            return Err(refuse(CloneProblem::Misaligned { unit: self.fs_block }));
        }
        if block.size() as u64 != handle.size {
            return Err(refuse(CloneProblem::SizeMismatch {
                handle_size: handle.size,
                block_size: block.size() as u64,
            }));
        }
        if keys.is_empty() {
            return Err(refuse(CloneProblem::Empty));
        }
        if let Some(f) = self.filter.as_ref().filter(|f| f.layout() != keys.layout()) {
            return Err(refuse(CloneProblem::FilterLayout { keys: keys.layout().name(), table: f.layout().name() }));
        }
        let (first, last) = (keys.first(), keys.last());
        self.check_order(first)?;
        let len = handle
            .end_with_trailer()
            .and_then(|end| round_up(end - handle.offset, self.fs_block))
            .ok_or_else(|| refuse(CloneProblem::TooLarge { size: handle.size }))?;
        self.flush_data_block()?;
        // Flushed blocks are padded to the unit, so only a file that did not start on one gets here.
        if self.offset % self.fs_block != 0 {
            let (table, at, unit) = (self.file.path().to_string(), self.offset, self.fs_block);
            return Err(refuse(CloneProblem::UnalignedTable { table, at, unit }));
        }
        self.emit_pending_index(first);
        let outcome = match self.file.append_cloned(src_path, handle.offset, len) {
            Ok(o) => o,
            Err(e) => return Err(self.fail(e.into())),
        };
        let new_handle = BlockHandle::new(self.offset, handle.size);
        self.offset += len;
        if let Some(f) = self.filter.as_mut() {
            f.add_hashes(keys.hashes());
            f.start_block(self.offset);
        }
        self.note_key(first);
        self.last_key.clear();
        self.last_key.extend_from_slice(last);
        let data = handle.size + BLOCK_TRAILER_SIZE as u64;
        let p = &mut self.props;
        p.num_entries += keys.entries();
        p.num_data_blocks += 1;
        p.data_bytes += data;
        p.cloned_blocks += 1;
        p.cloned_bytes += outcome.cloned_bytes;
        p.copied_bytes += outcome.copied_bytes;
        self.pending_index = Some(new_handle);
        Ok(outcome)
    }

    /// Closes the current data block now (no-op when it is empty): writes it, its trailer and, when
    /// aligned, its padding. The next entry starts a new block.
    pub fn flush_data_block(&mut self) -> Result<()> {
        self.check_open()?;
        if self.data_block.is_empty() {
            return Ok(());
        }
        cpu::count(Term::BlockBuilt, 1);
        let contents = self.data_block.finish().to_vec();
        let handle = self.write_block(&contents)?;
        self.props.num_data_blocks += 1;
        self.props.data_bytes += handle.size + BLOCK_TRAILER_SIZE as u64;
        if self.opts.align_blocks {
            self.pad()?;
        }
        self.data_block.reset();
        self.pending_index = Some(handle);
        if let Some(f) = self.filter.as_mut() {
            f.start_block(self.offset);
        }
        Ok(())
    }

    /// Writes the filter, metaindex and index blocks and the footer; returns what the table holds. Does not
    /// sync. The builder accepts nothing afterwards.
    pub fn finish(&mut self) -> Result<TableProperties> {
        self.flush_data_block()?;
        self.closed = true;
        let meta_start = self.offset;
        let mut metaindex = BlockBuilder::new(1);
        if let Some(filter) = self.filter.take() {
            let name = filter.layout().meta_key();
            let handle = self.write_block(&filter.finish())?;
            metaindex.add(name, &handle.encode());
        }
        let metaindex_handle = self.write_block(metaindex.finish())?;
        if let Some(handle) = self.pending_index.take() {
            let key = index_successor(&self.last_key);
            self.index_block.add(&key, &handle.encode());
        }
        let contents = self.index_block.finish().to_vec();
        let index_handle = self.write_block(&contents)?;
        let footer = Footer { metaindex: metaindex_handle, index: index_handle };
        self.append(&footer.encode())?;
        self.props.meta_bytes = self.offset - meta_start;
        self.props.largest_key = self.last_key.clone();
        self.props.file_size = self.offset;
        Ok(self.props.clone())
    }

    /// Gives up on the table: nothing more is written (the caller removes the file).
    pub fn abandon(&mut self) {
        self.closed = true;
    }

    /// Bytes written so far plus the open data block (with its trailer), not counting the filter, index
    /// and footer still to come: what a compaction compares with its target file size.
    pub fn file_size(&self) -> u64 {
        let open =
            if self.data_block.is_empty() { 0 } else { (self.data_block.estimated_size() + BLOCK_TRAILER_SIZE) as u64 };
        self.offset + open
    }

    /// Entries added so far, cloned blocks' included.
    pub fn num_entries(&self) -> u64 {
        self.props.num_entries
    }

    pub fn current_block_is_empty(&self) -> bool {
        self.data_block.is_empty()
    }

    /// Entries in the open data block.
    pub fn pending_block_entries(&self) -> usize {
        self.data_block.entries()
    }

    /// Whether an entry (`key`, a value of `value_len` bytes) added now would go into the open data block,
    /// rather than start a new one. In the plain layout a full block is closed as soon as it fills, so this
    /// is "the open block has entries"; aligned, it is the page-fit rule of the module documentation.
    pub fn fits_in_current_block(&self, key: &[u8], value_len: usize) -> bool {
        !self.data_block.is_empty() && (!self.opts.align_blocks || self.fits_aligned(key, value_len))
    }

    /// The last key added (empty before the first).
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// The clone/alignment unit this builder uses.
    pub fn fs_block_size(&self) -> u64 {
        self.fs_block
    }

    pub fn file_mut(&mut self) -> &mut dyn WritableFile {
        self.file.as_mut()
    }

    pub fn into_file(self) -> Box<dyn WritableFile> {
        self.file
    }

    fn check_open(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if self.closed {
            return Err(Error::TableBuilderClosed);
        }
        Ok(())
    }

    fn check_order(&self, key: &[u8]) -> Result<()> {
        if self.props.num_entries > 0 && compare_internal(key, &self.last_key) != Ordering::Greater {
            return Err(Error::KeysOutOfOrder { key: key.to_vec(), previous: self.last_key.clone() });
        }
        Ok(())
    }

    fn fits_aligned(&self, key: &[u8], value_len: usize) -> bool {
        let p = self.fs_block;
        let now = (self.data_block.estimated_size() + BLOCK_TRAILER_SIZE) as u64;
        let after = (self.data_block.size_after_add(key, value_len) + BLOCK_TRAILER_SIZE) as u64;
        let limit =
            round_up(self.opts.block_size as u64, p).unwrap_or(u64::MAX).max(round_up(now, p).unwrap_or(u64::MAX));
        after <= limit
    }

    fn emit_pending_index(&mut self, next_key: &[u8]) {
        if let Some(handle) = self.pending_index.take() {
            let sep = index_separator(&self.last_key, next_key);
            self.index_block.add(&sep, &handle.encode());
        }
    }

    fn note_key(&mut self, key: &[u8]) {
        if self.props.num_entries == 0 {
            self.props.smallest_key = key.to_vec();
        }
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
    }

    fn fail(&mut self, e: Error) -> Error {
        self.error = Some(e.clone());
        e
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        match self.file.append(data) {
            Ok(()) => {
                self.offset += data.len() as u64;
                Ok(())
            }
            Err(e) => Err(self.fail(e.into())),
        }
    }

    fn write_block(&mut self, contents: &[u8]) -> Result<BlockHandle> {
        let handle = BlockHandle::new(self.offset, contents.len() as u64);
        let mut trailer = Vec::with_capacity(BLOCK_TRAILER_SIZE);
        append_trailer(&mut trailer, contents);
        self.append(contents)?;
        self.append(&trailer)?;
        Ok(handle)
    }

    fn pad(&mut self) -> Result<()> {
        let target = round_up(self.offset, self.fs_block).unwrap_or(self.offset);
        let pad = target - self.offset;
        if pad > 0 {
            self.append(&vec![0u8; pad as usize])?;
            self.props.padding_bytes += pad;
        }
        Ok(())
    }
}

/// The smallest-possible internal key for `user` (all versions of `user` sort after it).
fn with_seek_tag(mut user: Vec<u8>) -> Vec<u8> {
    put_fixed64(&mut user, pack_tag(MAX_SEQUENCE, KIND_FOR_SEEK));
    user
}

/// An index key `k` with `last <= k < next` (LevelDB's internal-key FindShortestSeparator): the user keys
/// are shortened and the shortest key that sorts first for that user key is used.
fn index_separator(last: &[u8], next: &[u8]) -> Vec<u8> {
    let (ulast, unext) = (user_key(last), user_key(next));
    let sep = shortest_separator(ulast, unext);
    if sep.len() < ulast.len() && ulast < sep.as_slice() {
        with_seek_tag(sep)
    } else {
        last.to_vec()
    }
}

/// An index key `k >= last`, short (LevelDB's internal-key FindShortSuccessor).
fn index_successor(last: &[u8]) -> Vec<u8> {
    let ulast = user_key(last);
    let succ = short_successor(ulast);
    if succ.len() < ulast.len() && ulast < succ.as_slice() {
        with_seek_tag(succ)
    } else {
        last.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    #[test]
    fn index_keys_separate_blocks() {
        let a = internal_key(b"abcdef", 5, ValueKind::Value);
        let b = internal_key(b"abzz", 9, ValueKind::Value);
        let s = index_separator(&a, &b);
        assert_eq!(user_key(&s), b"abd");
        assert_eq!(compare_internal(&a, &s), Ordering::Less);
        assert_eq!(compare_internal(&s, &b), Ordering::Less);
        // Same user key across blocks: the last key itself.
        let a2 = internal_key(b"abcdef", 3, ValueKind::Value);
        assert_eq!(index_separator(&a, &a2), a);
        let t = index_successor(&a);
        assert_eq!(user_key(&t), b"b");
        let ff = internal_key(&[0xff, 0xff], 1, ValueKind::Value);
        assert_eq!(index_successor(&ff), ff);
    }
}

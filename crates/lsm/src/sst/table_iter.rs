//! The two-level iterator over a [`Table`]: the index (decoded in memory) picks a data block, a
//! [`BlockIter`] walks it, and empty blocks are skipped in either direction.
//!
//! Besides the [`InternalIterator`] contract it tells which data block the current entry comes from
//! ([`TableIterator::current_block`]) and hands out that block ([`TableIterator::current_data_block`]), which
//! is what a compaction observer (RemapCom) needs to know when an input block starts and ends and to clone it.
//!
//! Errors: the first error (a corrupt or unreadable block) makes the iterator invalid and stays in
//! `status()`; it does not skip ahead to later blocks.

use std::sync::Arc;

use super::block::{Block, BlockIter};
use super::format::BlockHandle;
use super::readahead::Readahead;
use super::table::Table;
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::options::ReadOptions;

/// Kept with the iterator, so that the table does not import it back.
impl Table {
    /// A two-level iterator over the whole table.
    pub fn iter(self: &Arc<Self>, read_opts: &ReadOptions) -> TableIterator {
        TableIterator::new(self.clone(), read_opts)
    }
}

pub struct TableIterator {
    table: Arc<Table>,
    read_opts: ReadOptions,
    /// The table's file behind a readahead buffer, when `read_opts.readahead` asks for one.
    readahead: Option<Readahead>,
    /// Ordinal of the block `data` iterates.
    block_index: usize,
    data: Option<BlockIter>,
    err: Option<Error>,
}

impl TableIterator {
    pub(crate) fn new(table: Arc<Table>, read_opts: &ReadOptions) -> TableIterator {
        let readahead =
            (read_opts.readahead > 0).then(|| Readahead::new(Arc::clone(table.file()), read_opts.readahead));
        TableIterator { table, read_opts: read_opts.clone(), readahead, block_index: 0, data: None, err: None }
    }

    pub fn table(&self) -> &Arc<Table> {
        &self.table
    }

    /// The ordinal and handle of the data block holding the current entry (`None` when not valid).
    pub fn current_block(&self) -> Option<(usize, BlockHandle)> {
        if !self.valid() {
            return None;
        }
        let handle = self.table.data_block_handles().get(self.block_index)?;
        Some((self.block_index, *handle))
    }

    /// Whether the current entry is the first, and whether it is the last, of its data block
    /// (`(false, false)` when not valid). Nothing is parsed to tell.
    pub fn position_in_block(&self) -> (bool, bool) {
        match self.data.as_ref().filter(|_| self.valid()) {
            Some(d) => (d.at_first_entry(), d.at_last_entry()),
            None => (false, false),
        }
    }

    /// The parsed data block holding the current entry (shares its bytes; `None` when not valid).
    pub fn current_data_block(&self) -> Option<Block> {
        if !self.valid() {
            return None;
        }
        self.data.as_ref().map(|d| d.block().clone())
    }

    /// Loads block `i` into `data`; false (and `data` empty) past the end or on error.
    fn load(&mut self, i: usize) -> bool {
        self.data = None;
        self.block_index = i;
        if self.err.is_some() || i >= self.table.num_data_blocks() {
            return false;
        }
        let block = match &self.readahead {
            Some(file) => self.table.data_block_via(i, &self.read_opts, file),
            None => self.table.data_block(i, &self.read_opts),
        };
        match block {
            Ok(block) => {
                self.data = Some(block.iter());
                true
            }
            Err(e) => {
                self.err = Some(e);
                false
            }
        }
    }

    /// Whether `data` stopped because of an error; moves that error into `err`.
    fn data_failed(&mut self) -> bool {
        if let Some(d) = &self.data {
            if let Err(e) = d.status() {
                self.err.get_or_insert(e);
                self.data = None;
                return true;
            }
        }
        self.err.is_some()
    }

    fn skip_empty_forward(&mut self) {
        while !self.data.as_ref().is_some_and(|d| d.valid()) {
            if self.data_failed() || self.data.is_none() {
                return;
            }
            if !self.load(self.block_index + 1) {
                return;
            }
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
    }

    fn skip_empty_backward(&mut self) {
        while !self.data.as_ref().is_some_and(|d| d.valid()) {
            if self.data_failed() || self.data.is_none() {
                return;
            }
            let Some(prev) = self.block_index.checked_sub(1) else {
                self.data = None;
                return;
            };
            if !self.load(prev) {
                return;
            }
            if let Some(d) = self.data.as_mut() {
                d.seek_to_last();
            }
        }
    }
}

impl InternalIterator for TableIterator {
    fn valid(&self) -> bool {
        self.err.is_none() && self.data.as_ref().is_some_and(|d| d.valid())
    }

    fn seek_to_first(&mut self) {
        if self.load(0) {
            if let Some(d) = self.data.as_mut() {
                d.seek_to_first();
            }
        }
        self.skip_empty_forward();
    }

    fn seek_to_last(&mut self) {
        let Some(last) = self.table.num_data_blocks().checked_sub(1) else {
            self.data = None;
            return;
        };
        if self.load(last) {
            if let Some(d) = self.data.as_mut() {
                d.seek_to_last();
            }
        }
        self.skip_empty_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        let i = self.table.find_block(target);
        if self.load(i) {
            if let Some(d) = self.data.as_mut() {
                d.seek(target);
            }
        }
        self.skip_empty_forward();
    }

    fn next(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = self.data.as_mut() {
            d.next();
        }
        self.skip_empty_forward();
    }

    fn prev(&mut self) {
        if !self.valid() {
            return;
        }
        if let Some(d) = self.data.as_mut() {
            d.prev();
        }
        self.skip_empty_backward();
    }

    fn key(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.key())
    }

    fn value(&self) -> &[u8] {
        self.data.as_ref().map_or(&[], |d| d.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.err {
            return Err(e.clone());
        }
        match &self.data {
            Some(d) => d.status(),
            None => Ok(()),
        }
    }
}

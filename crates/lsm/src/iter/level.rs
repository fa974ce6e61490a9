//! Iterates one sorted level (>= 1): its files in key order, each opened through the table cache
//! only when the iteration reaches it.
//!
//! Errors: a file that fails to open, or a table iterator that stops at an error, stops the level
//! there: it does not go on to the next file (whose keys come after the ones the failed file
//! still held), and it stays invalid, with the first error in `status()`, whatever positioning
//! call follows.

use std::cmp::Ordering;
use std::sync::Arc;

use super::InternalIterator;
use crate::error::{Error, Result};
use crate::key::compare_internal;
use crate::options::ReadOptions;
use crate::sst::TableIterator;
use crate::table_cache::TableCache;
use crate::version::FileMeta;

pub struct LevelIterator {
    cache: Arc<TableCache>,
    files: Vec<Arc<FileMeta>>,
    read_opts: ReadOptions,
    index: usize,
    current: Option<TableIterator>,
    error: Option<Error>,
}

impl LevelIterator {
    pub fn new(cache: Arc<TableCache>, files: Vec<Arc<FileMeta>>, read_opts: ReadOptions) -> LevelIterator {
        LevelIterator { cache, files, read_opts, index: 0, current: None, error: None }
    }

    /// Which file (index into the level's files) the current entry comes from.
    pub fn current_file(&self) -> Option<usize> {
        self.valid().then_some(self.index)
    }

    pub fn current_table_iter(&self) -> Option<&TableIterator> {
        self.current.as_ref()
    }

    fn open(&mut self, i: usize) -> bool {
        self.index = i;
        self.current = None;
        if self.error.is_some() {
            return false;
        }
        let Some(f) = self.files.get(i) else {
            return false;
        };
        match self.cache.iter(f.number, f.size, &self.read_opts) {
            Ok(it) => {
                self.current = Some(it);
                true
            }
            Err(e) => {
                self.error.get_or_insert(e);
                false
            }
        }
    }

    fn skip_forward(&mut self) {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if let Some(Err(e)) = self.current.as_ref().map(|c| c.status()) {
                self.error.get_or_insert(e);
                self.current = None;
                return;
            }
            if !self.open(self.index + 1) {
                return;
            }
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
    }

    fn skip_backward(&mut self) {
        while self.current.as_ref().is_some_and(|c| !c.valid()) {
            if let Some(Err(e)) = self.current.as_ref().map(|c| c.status()) {
                self.error.get_or_insert(e);
                self.current = None;
                return;
            }
            if self.index == 0 || !self.open(self.index - 1) {
                self.current = None;
                return;
            }
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }

    fn seek_to_first(&mut self) {
        if self.open(0) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_first();
            }
        }
        self.skip_forward();
    }

    fn seek_to_last(&mut self) {
        if !self.files.is_empty() && self.open(self.files.len() - 1) {
            if let Some(c) = self.current.as_mut() {
                c.seek_to_last();
            }
        }
        self.skip_backward();
    }

    fn seek(&mut self, target: &[u8]) {
        let i = self.files.partition_point(|f| compare_internal(&f.largest, target) == Ordering::Less);
        if self.open(i) {
            if let Some(c) = self.current.as_mut() {
                c.seek(target);
            }
        }
        self.skip_forward();
    }

    fn next(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.next();
        }
        self.skip_forward();
    }

    fn prev(&mut self) {
        if let Some(c) = self.current.as_mut() {
            c.prev();
        }
        self.skip_backward();
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[][..], |c| c.key())
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[][..], |c| c.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.current.as_ref().map_or(Ok(()), |c| c.status())
    }
}

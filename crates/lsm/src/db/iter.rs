//! User-facing iteration: the merged view of memtables and SSTs at one sequence number, with
//! older versions and deleted keys hidden (LevelDB's DBIter), and range scans on top.
//!
//! Forward, the inner iterator sits on the entry being shown. Backward, it sits before every entry
//! of the key being shown, whose key and value are saved; changing direction re-positions it.
//!
//! Host CPU (see [`crate::cpu`]): a seek is charged when it ends, steps as they add up to a quantum,
//! and what is left when the iterator is dropped.
//!
//! Errors (RocksDB's contract): the iterator stops at the first error any source meets (a block
//! that fails to read or verify, an SST that fails to open) and stays invalid, with that error in
//! [`DbIterator::status`] naming the file and the offset; a later seek does not revive it (a new
//! iterator reads again). Nothing past the failed block is yielded, and every entry yielded before
//! it is one the database holds at the iterator's sequence number: the merge below stops at a
//! failed source instead of going on without it, which would show the older versions and the
//! deleted keys that source hides. [`ScanIter`] yields that error as its last item.
//!
//! What is checked: with the block cache (the default) a data block is verified when it enters
//! the cache, and an SST's index, filter and metaindex blocks always when it is opened; with
//! `ReadOptions::verify_checksums = false` and no cache fill (`fill_cache_disabled`, or no cache)
//! a data block's checksum is not checked, as in RocksDB: a block that no longer parses still
//! stops the iterator like any error, but damage that leaves a block well-formed can be returned.
//! A damaged filter block is no error for reads: the table is read without its filter (a scan never
//! uses it; a get reads the data block, which is verified), as LevelDB and RocksDB do, and the
//! statistics name it (see [`crate::sst::table`]).

use std::ops::Bound;
use std::sync::Arc;

use storage::env::Lane;

use super::DbInner;
use crate::cpu::{self, Term};
use crate::error::{Error, Result};
use crate::iter::level::LevelIterator;
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{internal_key, parse_internal_key, user_key, SequenceNumber, ValueKind, KIND_FOR_SEEK};
use crate::memtable::MemTable;
use crate::options::ReadOptions;
use crate::version::Version;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Reverse,
}

/// Iterates user keys and values in order over a consistent snapshot.
///
/// Stops at the first error (a block that fails to read or verify, an SST that fails to open) and
/// stays invalid, the error in [`DbIterator::status`] naming the file and the offset; every entry
/// yielded before it is one the database holds. Blocks are verified when they enter the block
/// cache, so `ReadOptions::verify_checksums = false` leaves unverified only the data blocks read
/// around the cache, as in RocksDB: such a block that no longer parses still stops the iterator,
/// damage that leaves it well-formed can be returned. A damaged filter block is not an error: the
/// SST is read without it, and [`crate::DbStats::damaged_filters`] names it.
pub struct DbIterator {
    inner: MergingIterator,
    seq: SequenceNumber,
    direction: Direction,
    valid: bool,
    saved_key: Vec<u8>,
    saved_value: Vec<u8>,
    /// Kept alive so the files and memtables under the iterator stay.
    _version: Arc<Version>,
    _mems: Vec<Arc<MemTable>>,
    /// The database, for its CPU accounting.
    db: Arc<DbInner>,
}

impl Drop for DbIterator {
    fn drop(&mut self) {
        self.db.cpu.charge(&self.db.env, Lane::Foreground);
    }
}

pub(super) fn new_iterator(inner: &Arc<DbInner>, opts: &ReadOptions) -> Result<DbIterator> {
    let (seq, mem, imm, version) = {
        let st = inner.lock();
        if st.closed {
            return Err(Error::Closed);
        }
        (opts.snapshot.unwrap_or(st.versions.last_sequence), Arc::clone(&st.mem), st.imm.clone(), st.versions.current())
    };
    let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(mem.iter())];
    let mut mems = vec![mem];
    if let Some(m) = imm {
        children.push(Box::new(m.iter()));
        mems.push(m);
    }
    for f in version.files[0].iter().rev() {
        children.push(Box::new(inner.table_cache.iter(f.number, f.size, opts)?));
    }
    for level in 1..version.num_levels() {
        if !version.files[level].is_empty() {
            children.push(Box::new(LevelIterator::new(
                Arc::clone(&inner.table_cache),
                version.files[level].clone(),
                opts.clone(),
            )));
        }
    }
    Ok(DbIterator {
        inner: MergingIterator::new(children),
        seq,
        direction: Direction::Forward,
        valid: false,
        saved_key: Vec::new(),
        saved_value: Vec::new(),
        _version: version,
        _mems: mems,
        db: Arc::clone(inner),
    })
}

impl DbIterator {
    pub fn valid(&self) -> bool {
        self.valid
    }

    pub fn key(&self) -> &[u8] {
        match self.direction {
            Direction::Forward => user_key(self.inner.key()),
            Direction::Reverse => &self.saved_key,
        }
    }

    pub fn value(&self) -> &[u8] {
        match self.direction {
            Direction::Forward => self.inner.value(),
            Direction::Reverse => &self.saved_value,
        }
    }

    /// The first error met (a corrupt block, an I/O error); iteration stops at it.
    pub fn status(&self) -> Result<()> {
        self.inner.status()
    }

    pub fn seek_to_first(&mut self) {
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.inner.seek_to_first();
        self.find_next_user_entry(false);
        self.charge_seek();
    }

    pub fn seek_to_last(&mut self) {
        self.direction = Direction::Reverse;
        self.saved_value.clear();
        self.inner.seek_to_last();
        self.find_prev_user_entry();
        self.charge_seek();
    }

    /// Positions at the first key >= `target`.
    pub fn seek(&mut self, target: &[u8]) {
        self.direction = Direction::Forward;
        self.saved_value.clear();
        self.inner.seek(&internal_key(target, self.seq, KIND_FOR_SEEK));
        self.find_next_user_entry(false);
        self.charge_seek();
    }

    fn charge_seek(&self) {
        cpu::count(Term::Seek, 1);
        self.db.cpu.charge(&self.db.env, Lane::Foreground);
    }

    fn charge_step(&self) {
        cpu::count(Term::Next, 1);
        self.db.cpu.charge_due(&self.db.env, Lane::Foreground);
    }

    pub fn next(&mut self) {
        if !self.valid {
            return;
        }
        self.charge_step();
        if self.direction == Direction::Reverse {
            self.direction = Direction::Forward;
            // The inner iterator is before all entries of saved_key: step into them; the search
            // below skips past them (saved_key is the key to skip).
            if self.inner.valid() {
                self.inner.next();
            } else {
                self.inner.seek_to_first();
            }
            if !self.inner.valid() {
                self.valid = false;
                self.saved_key.clear();
                return;
            }
        } else {
            // saved_key is the key to skip; the buffer is reused, no allocation per step.
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            self.inner.next();
        }
        self.find_next_user_entry(true);
    }

    pub fn prev(&mut self) {
        if !self.valid {
            return;
        }
        self.charge_step();
        if self.direction == Direction::Forward {
            self.saved_key.clear();
            self.saved_key.extend_from_slice(user_key(self.inner.key()));
            loop {
                self.inner.prev();
                if !self.inner.valid() {
                    self.valid = false;
                    self.saved_key.clear();
                    self.saved_value.clear();
                    return;
                }
                if user_key(self.inner.key()) < self.saved_key.as_slice() {
                    break;
                }
            }
            self.direction = Direction::Reverse;
        }
        self.find_prev_user_entry();
    }

    /// Moves forward to the newest visible value of the next user key; while `skipping`, entries
    /// of keys up to `saved_key` are hidden (older versions, or shadowed by a deletion).
    fn find_next_user_entry(&mut self, mut skipping: bool) {
        while self.inner.valid() {
            if let Some(p) = parse_internal_key(self.inner.key()) {
                if p.seq <= self.seq {
                    match p.kind {
                        ValueKind::Deletion => {
                            self.saved_key.clear();
                            self.saved_key.extend_from_slice(p.user_key);
                            skipping = true;
                        }
                        ValueKind::Value => {
                            if !(skipping && p.user_key <= self.saved_key.as_slice()) {
                                self.valid = true;
                                self.saved_key.clear();
                                return;
                            }
                        }
                    }
                }
            }
            self.inner.next();
        }
        self.saved_key.clear();
        self.valid = false;
    }

    fn find_prev_user_entry(&mut self) {
        let mut kind = ValueKind::Deletion;
        while self.inner.valid() {
            if let Some(p) = parse_internal_key(self.inner.key()) {
                if p.seq <= self.seq {
                    if kind != ValueKind::Deletion && p.user_key < self.saved_key.as_slice() {
                        // Past every entry of the saved key: it is the answer.
                        break;
                    }
                    kind = p.kind;
                    if kind == ValueKind::Deletion {
                        self.saved_key.clear();
                        self.saved_value.clear();
                    } else {
                        self.saved_key.clear();
                        self.saved_key.extend_from_slice(p.user_key);
                        self.saved_value.clear();
                        self.saved_value.extend_from_slice(self.inner.value());
                    }
                }
            }
            self.inner.prev();
        }
        // A merge that failed may have stopped before a newer version, or the deletion, of the
        // saved key: nothing can be shown.
        if kind == ValueKind::Deletion || self.inner.failed() {
            self.valid = false;
            self.saved_key.clear();
            self.saved_value.clear();
            self.direction = Direction::Forward;
        } else {
            self.valid = true;
        }
    }
}

/// The pairs of a key range, in order, as a Rust iterator. Stops at the first error and yields it.
pub struct ScanIter {
    it: DbIterator,
    end: Bound<Vec<u8>>,
    started: bool,
    done: bool,
}

impl ScanIter {
    pub(super) fn new(mut it: DbIterator, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Result<ScanIter> {
        match start {
            Bound::Unbounded => it.seek_to_first(),
            Bound::Included(k) => it.seek(k),
            Bound::Excluded(k) => {
                it.seek(k);
                if it.valid() && it.key() == k {
                    it.next();
                }
            }
        }
        let end = match end {
            Bound::Unbounded => Bound::Unbounded,
            Bound::Included(k) => Bound::Included(k.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
        };
        Ok(ScanIter { it, end, started: false, done: false })
    }
}

impl Iterator for ScanIter {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.started {
            self.it.next();
        }
        self.started = true;
        if !self.it.valid() {
            self.done = true;
            return self.it.status().err().map(Err);
        }
        let k = self.it.key();
        let in_range = match &self.end {
            Bound::Unbounded => true,
            Bound::Included(e) => k <= e.as_slice(),
            Bound::Excluded(e) => k < e.as_slice(),
        };
        if !in_range {
            self.done = true;
            return None;
        }
        Some(Ok((k.to_vec(), self.it.value().to_vec())))
    }
}

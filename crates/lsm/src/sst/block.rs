//! An immutable, parsed block (format in [`super::block_builder`]) and its iterator.
//!
//! A [`Block`] shares its bytes (`Bytes`: a heap buffer or a mapped file), so the block cache, table iterators and the compaction's
//! clone path can hold the same block at no cost. It remembers the file and offset it came from, so every
//! corruption found while iterating names them (offset = block offset + offset of the bad entry).
//!
//! Contract: the restart array is validated when the block is parsed; entries are validated as they are
//! read. A malformed entry makes the iterator invalid with an [`Error::Corruption`] in `status()`; nothing
//! panics or reads out of bounds. Seeks compare keys with [`compare_internal`], which is the order of
//! data and index blocks; the metaindex (plain names) is only scanned.

use std::cmp::Ordering;
use std::sync::Arc;

use bytes::Bytes;

use crate::coding::{get_fixed32, get_varint32};
use crate::cpu::{self, Term};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::compare_internal;

/// A block's bytes (contents only, no trailer), parsed.
#[derive(Clone)]
pub struct Block {
    data: Bytes,
    /// Where the restart array starts (= end of the entries).
    restarts_offset: usize,
    num_restarts: usize,
    file: Arc<str>,
    offset: u64,
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Block")
            .field("file", &self.file)
            .field("offset", &self.offset)
            .field("size", &self.data.len())
            .field("num_restarts", &self.num_restarts)
            .finish()
    }
}

impl Block {
    /// Parses `data`, read at `offset` of `file` (for error messages).
    pub fn new(data: Vec<u8>, file: &str, offset: u64) -> Result<Block> {
        Block::with_origin(Bytes::from(data), Arc::from(file), offset)
    }

    pub(crate) fn with_origin(data: Bytes, file: Arc<str>, offset: u64) -> Result<Block> {
        let corrupt = |what: String| Error::corruption(&*file, offset, what);
        let len = data.len();
        let num = len
            .checked_sub(4)
            .and_then(|at| data.get(at..))
            .and_then(get_fixed32)
            .ok_or_else(|| corrupt(format!("block of {len} bytes is too short")))?;
        let restarts_offset = (num as usize)
            .checked_mul(4)
            .and_then(|n| len.checked_sub(4 + n))
            .ok_or_else(|| corrupt(format!("{num} restart points do not fit a block of {len} bytes")))?;
        if num == 0 && restarts_offset > 0 {
            return Err(corrupt("block has entries but no restart point".into()));
        }
        // Restart points must ascend within the entries, the first at 0; checking them once here keeps
        // the iterator's binary search and backward steps well defined.
        let mut prev = None;
        for i in 0..num as usize {
            let at = restarts_offset + 4 * i;
            let p = data.get(at..).and_then(get_fixed32).unwrap_or(u32::MAX) as usize;
            if p >= restarts_offset.max(1) || prev.is_some_and(|q| p <= q) || (i == 0 && p != 0) {
                return Err(Error::corruption(
                    &*file,
                    offset + at as u64,
                    format!("restart point {i} (offset {p}) out of order or past the entries"),
                ));
            }
            prev = Some(p);
        }
        Ok(Block { data, restarts_offset, num_restarts: num as usize, file, offset })
    }

    /// Size of the contents in bytes (what the cache charges).
    pub fn size(&self) -> usize {
        self.data.len()
    }

    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Offset of the block in its file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn file(&self) -> &str {
        &self.file
    }

    pub fn iter(&self) -> BlockIter {
        BlockIter::new(self.clone())
    }
}

/// Iterator over a [`Block`]; see the module contract.
pub struct BlockIter {
    block: Block,
    /// Offset of the current entry; `restarts_offset` when not positioned on one.
    current: usize,
    /// Offset just past the current entry.
    next_offset: usize,
    /// Index of the restart interval holding the current entry.
    restart_index: usize,
    key: Vec<u8>,
    value: (usize, usize),
    valid: bool,
    err: Option<Error>,
}

impl BlockIter {
    fn new(block: Block) -> BlockIter {
        let end = block.restarts_offset;
        BlockIter {
            current: end,
            next_offset: end,
            restart_index: block.num_restarts,
            block,
            key: Vec::new(),
            value: (0, 0),
            valid: false,
            err: None,
        }
    }

    pub fn block(&self) -> &Block {
        &self.block
    }

    /// Whether the current entry is the block's first (known from its offset: nothing is parsed).
    pub fn at_first_entry(&self) -> bool {
        self.valid && self.current == 0
    }

    /// Whether the current entry is the block's last (it ends where the restart array begins).
    pub fn at_last_entry(&self) -> bool {
        self.valid && self.next_offset == self.block.restarts_offset
    }

    fn restart_point(&self, i: usize) -> Option<usize> {
        let at = self.block.restarts_offset.checked_add(i.checked_mul(4)?)?;
        let p = get_fixed32(self.block.data.get(at..)?)? as usize;
        (p <= self.block.restarts_offset).then_some(p)
    }

    fn corrupt(&mut self, at: usize, what: &str) {
        self.valid = false;
        self.key.clear();
        if self.err.is_none() {
            self.err = Some(Error::corruption(
                &*self.block.file,
                self.block.offset + at as u64,
                format!("bad block entry: {what}"),
            ));
        }
    }

    fn invalidate(&mut self) {
        self.valid = false;
        self.current = self.block.restarts_offset;
        self.next_offset = self.current;
        self.restart_index = self.block.num_restarts;
        self.key.clear();
    }

    /// Positions before the entry at restart `i` (the next `parse_next` reads it).
    fn seek_to_restart(&mut self, i: usize) -> bool {
        match self.restart_point(i) {
            Some(p) => {
                self.key.clear();
                self.restart_index = i;
                self.next_offset = p;
                true
            }
            None => {
                self.corrupt(self.block.restarts_offset, "restart point out of range");
                false
            }
        }
    }

    /// Decodes the entry at `next_offset`. Returns false at the end of the block or on corruption.
    fn parse_next(&mut self) -> bool {
        if self.err.is_some() {
            self.valid = false;
            return false;
        }
        self.current = self.next_offset;
        let end = self.block.restarts_offset;
        if self.current >= end {
            self.invalidate();
            return false;
        }
        let data = &self.block.data[..];
        let Some((shared, non_shared, value_len, header)) = decode_entry_header(data, self.current, end) else {
            self.corrupt(self.current, "malformed entry header or lengths past the entries");
            return false;
        };
        if shared > self.key.len() {
            self.corrupt(self.current, "shared key prefix longer than the previous key");
            return false;
        }
        let key_start = self.current + header;
        let value_start = key_start + non_shared;
        self.key.truncate(shared);
        self.key.extend_from_slice(data.get(key_start..value_start).unwrap_or_default());
        self.value = (value_start, value_start + value_len);
        self.next_offset = value_start + value_len;
        while self.restart_index + 1 < self.block.num_restarts
            && self.restart_point(self.restart_index + 1).is_some_and(|p| p <= self.current)
        {
            self.restart_index += 1;
        }
        self.valid = true;
        true
    }

    /// The key at restart point `i`, which must be stored whole.
    fn restart_key(&mut self, i: usize) -> Option<(usize, usize)> {
        let p = self.restart_point(i)?;
        let (shared, non_shared, _, header) = decode_entry_header(&self.block.data, p, self.block.restarts_offset)?;
        (shared == 0).then_some((p + header, p + header + non_shared))
    }
}

/// (shared, non_shared, value_len, header bytes) of the entry at `at`, checked to end by `end`.
fn decode_entry_header(data: &[u8], at: usize, end: usize) -> Option<(usize, usize, usize, usize)> {
    let src = data.get(at..end)?;
    let (shared, n1) = get_varint32(src)?;
    let (non_shared, n2) = get_varint32(src.get(n1..)?)?;
    let (value_len, n3) = get_varint32(src.get(n1 + n2..)?)?;
    let header = n1 + n2 + n3;
    let total = header.checked_add(non_shared as usize)?.checked_add(value_len as usize)?;
    (total <= src.len()).then_some((shared as usize, non_shared as usize, value_len as usize, header))
}

impl InternalIterator for BlockIter {
    fn valid(&self) -> bool {
        self.valid
    }

    fn seek_to_first(&mut self) {
        if self.block.num_restarts == 0 {
            self.invalidate();
            return;
        }
        if self.seek_to_restart(0) {
            self.parse_next();
        }
    }

    fn seek_to_last(&mut self) {
        let Some(last) = self.block.num_restarts.checked_sub(1) else {
            self.invalidate();
            return;
        };
        if !self.seek_to_restart(last) {
            return;
        }
        while self.parse_next() && self.next_offset < self.block.restarts_offset {}
    }

    fn seek(&mut self, target: &[u8]) {
        cpu::count(Term::BlockSearch, 1);
        if self.err.is_some() {
            self.valid = false;
            return;
        }
        let Some(mut right) = self.block.num_restarts.checked_sub(1) else {
            self.invalidate();
            return;
        };
        // Last restart point whose key is < target (or the first one).
        let mut left = 0usize;
        while left < right {
            let mid = left + (right - left).div_ceil(2);
            let Some((ks, ke)) = self.restart_key(mid) else {
                let at = self.restart_point(mid).unwrap_or(self.block.restarts_offset);
                self.corrupt(at, "restart entry is not a whole key");
                return;
            };
            let mid_key = self.block.data.get(ks..ke).unwrap_or_default();
            if compare_internal(mid_key, target) == Ordering::Less {
                left = mid;
            } else {
                right = mid - 1;
            }
        }
        if !self.seek_to_restart(left) {
            return;
        }
        while self.parse_next() {
            if compare_internal(&self.key, target) != Ordering::Less {
                return;
            }
        }
    }

    fn next(&mut self) {
        if self.valid {
            self.parse_next();
        }
    }

    fn prev(&mut self) {
        if !self.valid {
            return;
        }
        let original = self.current;
        // Back up to a restart point before the current entry, then scan to the entry just before it.
        loop {
            match self.restart_point(self.restart_index) {
                Some(p) if p < original => break,
                Some(_) if self.restart_index > 0 => self.restart_index -= 1,
                Some(_) => {
                    self.invalidate();
                    return;
                }
                None => {
                    self.corrupt(self.block.restarts_offset, "restart point out of range");
                    return;
                }
            }
        }
        if !self.seek_to_restart(self.restart_index) {
            return;
        }
        while self.parse_next() && self.next_offset < original {}
    }

    fn key(&self) -> &[u8] {
        &self.key
    }

    fn value(&self) -> &[u8] {
        self.block.data.get(self.value.0..self.value.1).unwrap_or_default()
    }

    fn status(&self) -> Result<()> {
        match &self.err {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::sst::block_builder::BlockBuilder;

    fn build(n: u32, interval: usize) -> (Vec<Vec<u8>>, Block) {
        let mut b = BlockBuilder::new(interval);
        let keys: Vec<Vec<u8>> =
            (0..n).map(|i| internal_key(format!("k{:04}", i * 2).as_bytes(), 5, ValueKind::Value)).collect();
        for k in &keys {
            b.add(k, &k[..3]);
        }
        (keys, Block::new(b.finish().to_vec(), "b.sst", 4096).unwrap())
    }

    #[test]
    fn iterates_both_ways_and_seeks() {
        for interval in [1, 2, 16] {
            let (keys, block) = build(37, interval);
            let mut it = block.iter();
            let ends = |i: usize| (i == 0, i + 1 == keys.len());
            it.seek_to_first();
            for (i, k) in keys.iter().enumerate() {
                assert_eq!(it.key(), &k[..]);
                assert_eq!(it.value(), &k[..3]);
                assert_eq!((it.at_first_entry(), it.at_last_entry()), ends(i));
                it.next();
            }
            assert!(!it.valid());
            assert!(!it.at_first_entry() && !it.at_last_entry());
            it.seek_to_last();
            for (i, k) in keys.iter().enumerate().rev() {
                assert_eq!(it.key(), &k[..]);
                assert_eq!((it.at_first_entry(), it.at_last_entry()), ends(i));
                it.prev();
            }
            assert!(!it.valid());
            for i in 0..80u32 {
                let t = internal_key(format!("k{i:04}").as_bytes(), 9, ValueKind::Value);
                it.seek(&t);
                let want = keys.iter().position(|k| compare_internal(k, &t) != Ordering::Less);
                assert_eq!(it.valid().then(|| it.key().to_vec()), want.map(|w| keys[w].clone()));
                if let Some(w) = want {
                    assert_eq!((it.at_first_entry(), it.at_last_entry()), ends(w));
                }
            }
            it.status().unwrap();
        }
    }

    #[test]
    fn empty_and_malformed_blocks() {
        let (_, empty) = build(0, 16);
        let mut it = empty.iter();
        it.seek_to_first();
        assert!(!it.valid());
        it.seek(b"x");
        assert!(!it.valid());
        it.status().unwrap();
        assert!(Block::new(vec![1, 2], "f", 0).is_err());
        assert!(Block::new(vec![0, 0, 0, 0, 9, 0, 0, 0], "f", 0).is_err());
        // Restart points out of order or past the entries are refused when the block is parsed.
        let (_, block) = build(4, 1);
        let data = block.data().to_vec();
        let restarts = data.len() - 4 - 16;
        let mut swapped = data.clone();
        swapped.copy_within(restarts + 4..restarts + 8, restarts + 8);
        let err = Block::new(swapped, "f", 100).unwrap_err();
        assert!(matches!(err, Error::Corruption { offset, .. } if offset == 100 + restarts as u64 + 8), "{err}");
        let mut past = data.clone();
        past[restarts + 12] = 0xff;
        assert!(Block::new(past, "f", 0).is_err());
        // Garbage entries: the iterator reports corruption, never panics.
        let (_, block) = build(10, 4);
        let mut data = block.data().to_vec();
        data[0] = 0x7f; // shared > 0 at the first entry
        let bad = Block::new(data, "f.sst", 8192).unwrap();
        let mut it = bad.iter();
        it.seek_to_first();
        assert!(!it.valid());
        let err = it.status().unwrap_err();
        assert!(matches!(err, Error::Corruption { offset: 8192, .. }), "{err}");
    }
}

//! `WriteBatch`: a group of puts and deletes applied atomically, in LevelDB's byte format, which
//! is also what a WAL record holds:
//!
//! ```text
//! sequence: fixed64 | count: fixed32 | record*
//! record := kind: u8 (Value = 1 | Deletion = 0) | key: varint32 length + bytes | value (Value only)
//! ```
//!
//! The records of a batch get consecutive sequence numbers starting at `sequence()`. Contract:
//! bytes that come from outside (a WAL record) are parsed with [`WriteBatch::from_data`] or
//! [`WriteBatch::iter_data`], which report malformed contents as `Error::Corruption` naming the
//! caller's file and offset, never panicking. Key and value size limits belong to the engine.

use crate::coding::{get_fixed32, get_fixed64, get_length_prefixed, put_length_prefixed};
use crate::error::{Error, Result};
use crate::key::{SequenceNumber, ValueKind};
use crate::memtable::MemTable;

/// Bytes of the header: sequence (8) and count (4).
pub const HEADER_SIZE: usize = 12;

/// One operation of a batch; `value` is empty for a deletion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchOp<'a> {
    pub kind: ValueKind,
    pub key: &'a [u8],
    pub value: &'a [u8],
}

/// Receives the operations of a batch in order.
pub trait BatchHandler {
    fn put(&mut self, key: &[u8], value: &[u8]);
    fn delete(&mut self, key: &[u8]);
}

/// An ordered group of updates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteBatch {
    rep: Vec<u8>,
    /// What the engine checks and counts before writing, kept up to date so that it need not
    /// parse the batch a second time.
    summary: Summary,
}

/// Sizes of a batch's records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub largest_key: usize,
    pub largest_value: usize,
    /// Keys plus values.
    pub user_bytes: u64,
}

impl Summary {
    fn add(&mut self, key: usize, value: usize) {
        self.largest_key = self.largest_key.max(key);
        self.largest_value = self.largest_value.max(value);
        self.user_bytes += (key + value) as u64;
    }
}

impl Default for WriteBatch {
    fn default() -> Self {
        WriteBatch::new()
    }
}

impl WriteBatch {
    pub fn new() -> WriteBatch {
        WriteBatch { rep: vec![0; HEADER_SIZE], summary: Summary::default() }
    }

    /// An empty batch with room for `bytes` of records without growing (a single put of key
    /// `k` and value `v` needs `k.len() + v.len() + 11`).
    pub fn with_capacity(bytes: usize) -> WriteBatch {
        let mut rep = Vec::with_capacity(HEADER_SIZE + bytes);
        rep.resize(HEADER_SIZE, 0);
        WriteBatch { rep, summary: Summary::default() }
    }

    /// A batch from its encoded bytes (a WAL record), checked whole: the header, every record,
    /// and that the count matches. Errors name `file` and `offset` (where the bytes came from).
    pub fn from_data(data: Vec<u8>, file: &str, offset: u64) -> Result<WriteBatch> {
        let mut summary = Summary::default();
        for op in WriteBatch::iter_data(&data, file, offset) {
            let op = op?;
            summary.add(op.key.len(), op.value.len());
        }
        Ok(WriteBatch { rep: data, summary })
    }

    /// Iterates the operations encoded in `data` without copying it; malformed contents end the
    /// iteration with an `Error::Corruption` naming `file` and `offset`.
    pub fn iter_data<'a>(data: &'a [u8], file: &'a str, offset: u64) -> BatchIter<'a> {
        BatchIter { data, pos: HEADER_SIZE, seen: 0, file, offset, done: false }
    }

    pub fn put(&mut self, key: &[u8], value: &[u8]) {
        self.set_count(self.count().wrapping_add(1));
        self.rep.push(ValueKind::Value as u8);
        put_length_prefixed(&mut self.rep, key);
        put_length_prefixed(&mut self.rep, value);
        self.summary.add(key.len(), value.len());
    }

    pub fn delete(&mut self, key: &[u8]) {
        self.set_count(self.count().wrapping_add(1));
        self.rep.push(ValueKind::Deletion as u8);
        put_length_prefixed(&mut self.rep, key);
        self.summary.add(key.len(), 0);
    }

    /// Removes every operation (the sequence number too).
    pub fn clear(&mut self) {
        self.rep.clear();
        self.rep.resize(HEADER_SIZE, 0);
        self.summary = Summary::default();
    }

    /// The largest key and value and the user bytes of the records.
    pub fn summary(&self) -> Summary {
        self.summary
    }

    /// Number of operations.
    pub fn count(&self) -> u32 {
        self.rep.get(8..).and_then(get_fixed32).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.count() == 0
    }

    fn set_count(&mut self, n: u32) {
        self.rep[8..HEADER_SIZE].copy_from_slice(&n.to_le_bytes());
    }

    /// The sequence number of the first operation.
    pub fn sequence(&self) -> SequenceNumber {
        get_fixed64(&self.rep).unwrap_or(0)
    }

    pub fn set_sequence(&mut self, seq: SequenceNumber) {
        self.rep[..8].copy_from_slice(&seq.to_le_bytes());
    }

    /// Size of the encoding (what the WAL record will hold).
    pub fn approximate_size(&self) -> usize {
        self.rep.len()
    }

    /// The encoding.
    pub fn data(&self) -> &[u8] {
        &self.rep
    }

    pub fn into_data(self) -> Vec<u8> {
        self.rep
    }

    /// Appends the operations of `other` after this batch's (this batch's sequence stays).
    pub fn append(&mut self, other: &WriteBatch) {
        self.set_count(self.count().wrapping_add(other.count()));
        self.rep.extend_from_slice(&other.rep[HEADER_SIZE..]);
        let o = other.summary;
        self.summary.largest_key = self.summary.largest_key.max(o.largest_key);
        self.summary.largest_value = self.summary.largest_value.max(o.largest_value);
        self.summary.user_bytes += o.user_bytes;
    }

    /// The operations in order. A batch built with `put`/`delete` or checked by `from_data` never
    /// yields an error.
    pub fn iter(&self) -> BatchIter<'_> {
        WriteBatch::iter_data(&self.rep, "write batch", 0)
    }

    /// Feeds the operations in order to `handler`; stops at the first malformed record.
    pub fn iterate(&self, handler: &mut dyn BatchHandler) -> Result<()> {
        for op in self.iter() {
            let op = op?;
            match op.kind {
                ValueKind::Value => handler.put(op.key, op.value),
                ValueKind::Deletion => handler.delete(op.key),
            }
        }
        Ok(())
    }

    /// Adds the operations to `mem` with sequence numbers `sequence()`, `sequence() + 1`, ...
    pub fn insert_into(&self, mem: &MemTable) -> Result<()> {
        for (seq, op) in (self.sequence()..).zip(self.iter()) {
            let op = op?;
            mem.add(seq, op.kind, op.key, op.value);
        }
        Ok(())
    }
}

/// Iterator over the operations of an encoded batch; see [`WriteBatch::iter_data`].
#[derive(Debug)]
pub struct BatchIter<'a> {
    data: &'a [u8],
    pos: usize,
    seen: u64,
    file: &'a str,
    offset: u64,
    done: bool,
}

impl<'a> BatchIter<'a> {
    fn fail(&mut self, what: String) -> Option<Result<BatchOp<'a>>> {
        self.done = true;
        Some(Err(Error::corruption(self.file, self.offset, format!("write batch: {what}"))))
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchOp<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let Some(count) = self.data.get(8..HEADER_SIZE).and_then(get_fixed32) else {
            return self.fail(format!("{} bytes is shorter than the {HEADER_SIZE}-byte header", self.data.len()));
        };
        let Some(&kind_byte) = self.data.get(self.pos) else {
            self.done = true;
            if self.seen != count as u64 {
                return self.fail(format!("header counts {count} records, found {}", self.seen));
            }
            return None;
        };
        let at = self.pos;
        let Some(kind) = ValueKind::from_u8(kind_byte) else {
            return self.fail(format!("unknown record kind {kind_byte} at byte {at}"));
        };
        let rest = &self.data[at + 1..];
        let Some((key, rest)) = get_length_prefixed(rest) else {
            return self.fail(format!("malformed key of the record at byte {at}"));
        };
        let (value, rest) = match kind {
            ValueKind::Value => match get_length_prefixed(rest) {
                Some(v) => v,
                None => return self.fail(format!("malformed value of the record at byte {at}")),
            },
            ValueKind::Deletion => (&[][..], rest),
        };
        self.pos = self.data.len() - rest.len();
        self.seen += 1;
        if self.seen > count as u64 {
            return self.fail(format!("more records than the header's count {count}"));
        }
        Some(Ok(BatchOp { kind, key, value }))
    }
}

//! Builds a block in LevelDB's format (`table/block_builder.cc`): keys are prefix-compressed against the
//! previous key, and every `restart_interval` entries a *restart point* stores a key whole, so that a reader
//! can binary-search the restart points and then scan a few entries.
//!
//! ```text
//! entry:   varint32 shared | varint32 non_shared | varint32 value_len | key[shared..] | value
//! block:   entry* | fixed32 restart_offset * num_restarts | fixed32 num_restarts
//! ```
//!
//! Contract: keys are added in ascending order (the table builder checks it); a block always has at least
//! one restart point (offset 0), even when empty.

use crate::coding::{put_fixed32, put_varint32, varint_len};

#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    /// Entries since the last restart point.
    counter: usize,
    restart_interval: usize,
    last_key: Vec<u8>,
    entries: usize,
    finished: bool,
}

impl BlockBuilder {
    /// A builder placing a restart point every `restart_interval` keys (1 turns prefix compression off; 0 is
    /// taken as 1).
    pub fn new(restart_interval: usize) -> BlockBuilder {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            counter: 0,
            restart_interval: restart_interval.max(1),
            last_key: Vec::new(),
            entries: 0,
            finished: false,
        }
    }

    /// Forgets everything, ready for the next block (keeps the allocations).
    pub fn reset(&mut self) {
        self.buf.clear();
        self.restarts.clear();
        self.restarts.push(0);
        self.counter = 0;
        self.last_key.clear();
        self.entries = 0;
        self.finished = false;
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Entries added since the last reset.
    pub fn entries(&self) -> usize {
        self.entries
    }

    /// The last key added (empty when the block is empty).
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Size of the block if it were finished now: entries, restart array and its count.
    pub fn estimated_size(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// [`estimated_size`](Self::estimated_size) after adding (`key`, a value of `value_len` bytes), exactly.
    pub fn size_after_add(&self, key: &[u8], value_len: usize) -> usize {
        let (restart, shared) = self.next_entry_shape(key);
        let non_shared = key.len() - shared;
        self.estimated_size()
            + if restart { 4 } else { 0 }
            + varint_len(shared as u64)
            + varint_len(non_shared as u64)
            + varint_len(value_len as u64)
            + non_shared
            + value_len
    }

    /// Whether the next entry starts a restart point, and how many key bytes it shares with the last key.
    fn next_entry_shape(&self, key: &[u8]) -> (bool, usize) {
        if self.counter >= self.restart_interval {
            return (true, 0);
        }
        let shared = self.last_key.iter().zip(key).take_while(|(a, b)| a == b).count();
        (false, shared)
    }

    /// Appends an entry. REQUIRES: not finished since the last reset; `key` after every key added (the
    /// caller checks the order); key and value shorter than 4 GiB and the block under 4 GiB in total.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        debug_assert!(!self.finished, "add after finish");
        let (restart, shared) = self.next_entry_shape(key);
        if restart {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        }
        let non_shared = &key[shared..];
        put_varint32(&mut self.buf, shared as u32);
        put_varint32(&mut self.buf, non_shared.len() as u32);
        put_varint32(&mut self.buf, value.len() as u32);
        self.buf.extend_from_slice(non_shared);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(non_shared);
        self.counter += 1;
        self.entries += 1;
    }

    /// Appends the restart array and returns the block's contents, valid until the next reset.
    pub fn finish(&mut self) -> &[u8] {
        if !self.finished {
            for &r in &self.restarts {
                put_fixed32(&mut self.buf, r);
            }
            put_fixed32(&mut self.buf, self.restarts.len() as u32);
            self.finished = true;
        }
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_are_exact() {
        let mut b = BlockBuilder::new(3);
        assert_eq!(b.estimated_size(), 8);
        let keys: Vec<Vec<u8>> = (0..20u32).map(|i| format!("key{:05}", i * 7).into_bytes()).collect();
        for (i, k) in keys.iter().enumerate() {
            let value = vec![b'v'; i * 13];
            let predicted = b.size_after_add(k, value.len());
            b.add(k, &value);
            assert_eq!(b.estimated_size(), predicted);
        }
        assert_eq!(b.entries(), 20);
        let est = b.estimated_size();
        assert_eq!(b.finish().len(), est);
        b.reset();
        assert!(b.is_empty());
        assert_eq!(b.finish().len(), 8);
    }
}

//! [`BlockKeys`]: what placing a data block whole into another table (a clone, RemapCom) needs to
//! know of the block's keys: the first and the last, how many, and their filter hashes (the hash of
//! the filter layout the summary was made for: a table of another layout refuses it).
//!
//! They are gathered during the one walk over the block that happens anyway (the compaction's
//! merge passes every entry of a block it clones), so a cloned block is never parsed a second
//! time and no key is copied beyond the last one. [`BlockKeys::of`] walks a block itself, for a
//! caller that has not.
//!
//! Contract: keys are pushed in the block's order and must ascend strictly in internal-key order
//! ([`BlockKeys::push`] refuses a key that does not: such a block is corrupt).

use std::cmp::Ordering;

use super::block::Block;
use super::filter::FilterLayout;
use crate::cpu::{self, Term};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{compare_internal, user_key};

/// A summary of a data block's keys; see the module documentation. Reusable: [`BlockKeys::clear`]
/// keeps its buffers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockKeys {
    first: Vec<u8>,
    last: Vec<u8>,
    entries: u64,
    layout: FilterLayout,
    /// [`FilterLayout::key_hash`] of each key's user key, in order.
    hashes: Vec<u32>,
}

impl BlockKeys {
    /// An empty summary whose hashes are for filters of `layout`.
    pub fn new(layout: FilterLayout) -> BlockKeys {
        BlockKeys { layout, ..BlockKeys::default() }
    }

    /// The keys of `block`, walked once, hashed for `layout`; a block whose keys do not ascend is a
    /// corruption error.
    pub fn of(block: &Block, layout: FilterLayout) -> Result<BlockKeys> {
        let mut keys = BlockKeys::new(layout);
        let mut it = block.iter();
        it.seek_to_first();
        while it.valid() {
            if !keys.push(it.key()) {
                return Err(Error::corruption(block.file(), block.offset(), "keys of a block are out of order"));
            }
            it.next();
        }
        it.status()?;
        Ok(keys)
    }

    /// Forgets every key (the buffers are kept for the next block).
    pub fn clear(&mut self) {
        self.first.clear();
        self.last.clear();
        self.entries = 0;
        self.hashes.clear();
    }

    /// Adds the block's next internal key; false (and nothing added) if it does not come after the
    /// last one.
    pub fn push(&mut self, key: &[u8]) -> bool {
        if self.entries > 0 && compare_internal(&self.last, key) != Ordering::Less {
            return false;
        }
        if self.entries == 0 {
            self.first.extend_from_slice(key);
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.entries += 1;
        cpu::count(Term::FilterKey, 1);
        self.hashes.push(self.layout.key_hash(user_key(key)));
        true
    }

    /// The first key (empty when there is none).
    pub fn first(&self) -> &[u8] {
        &self.first
    }

    /// The last key (empty when there is none).
    pub fn last(&self) -> &[u8] {
        &self.last
    }

    pub fn entries(&self) -> u64 {
        self.entries
    }

    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The filter layout the hashes are for.
    pub fn layout(&self) -> FilterLayout {
        self.layout
    }

    /// The filter hashes of the user keys, one per entry.
    pub fn hashes(&self) -> &[u32] {
        &self.hashes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};
    use crate::sst::block_builder::BlockBuilder;

    fn block_of(keys: &[Vec<u8>]) -> Block {
        let mut b = BlockBuilder::new(4);
        for k in keys {
            b.add(k, b"v");
        }
        Block::new(b.finish().to_vec(), "t.ldb", 0).unwrap()
    }

    #[test]
    fn a_walk_and_pushes_agree() {
        let keys: Vec<Vec<u8>> =
            (0..50u32).map(|i| internal_key(format!("k{i:04}").as_bytes(), 9, ValueKind::Value)).collect();
        for layout in [FilterLayout::PerBlock, FilterLayout::PerTable] {
            let walked = BlockKeys::of(&block_of(&keys), layout).unwrap();
            let mut pushed = BlockKeys::new(layout);
            pushed.push(b"leftover-key-of-another-block");
            pushed.clear();
            for k in &keys {
                assert!(pushed.push(k));
            }
            assert_eq!(walked, pushed);
            assert_eq!((walked.first(), walked.last(), walked.entries()), (&keys[0][..], &keys[49][..], 50));
            let hashes: Vec<u32> = keys.iter().map(|k| layout.key_hash(user_key(k))).collect();
            assert_eq!(walked.hashes(), hashes);
        }
    }

    #[test]
    fn keys_out_of_order_are_refused() {
        let (a, b) = (internal_key(b"a", 1, ValueKind::Value), internal_key(b"b", 1, ValueKind::Value));
        let mut keys = BlockKeys::new(FilterLayout::PerBlock);
        assert!(keys.push(&b));
        assert!(!keys.push(&a), "a key before the last one");
        assert!(!keys.push(&b), "the same key twice");
        assert_eq!(keys.entries(), 1);
        // A block whose entries descend (the builder does not check order) is corrupt.
        let r = BlockKeys::of(&block_of(&[b.clone(), a]), FilterLayout::PerBlock);
        assert!(matches!(r, Err(Error::Corruption { .. })), "{r:?}");
    }
}

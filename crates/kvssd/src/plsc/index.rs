//! The global index: the kNode of every live key whose record is on flash.
//!
//! As in the seed: one group per key length in bytes (so `max_key_size` groups), each group a hash
//! table of 256 buckets, the bucket chosen by one byte of the key's signature (its most significant),
//! keys of one bucket chained. The chain of a bucket is kept ordered by signature (a `BTreeMap`), so
//! that a lookup in a bucket of thousands of kNodes (a million keys of one length share 256 buckets)
//! costs a logarithmic number of signature compares instead of a walk down a linked list; the flash
//! accesses are the same either way. kNodes whose 128-bit signatures collide share a slot and are
//! told apart by their keys.
//!
//! The index lives in device DRAM; see the module docs of `plsc` for what a power cut does to it.

use std::collections::BTreeMap;

use super::knode::KNode;

/// Buckets per group.
pub const BUCKETS: usize = 256;

/// One bucket's chain: kNodes by signature.
type Chain = BTreeMap<u128, Vec<KNode>>;

/// The hash table of one key length.
struct Group {
    buckets: Vec<Chain>,
}

/// The global index.
pub struct GlobalIndex {
    /// `groups[len - 1]` holds the keys of `len` bytes; built when its first key arrives.
    groups: Vec<Option<Group>>,
    knodes: u64,
}

fn bucket(signature: u128) -> usize {
    (signature >> 120) as usize
}

impl GlobalIndex {
    /// An empty index for keys of 1 to `max_key_size` bytes.
    pub fn new(max_key_size: usize) -> GlobalIndex {
        GlobalIndex { groups: (0..max_key_size).map(|_| None).collect(), knodes: 0 }
    }

    /// kNodes in the index.
    pub fn len(&self) -> u64 {
        self.knodes
    }

    fn chain(&self, key: &[u8], signature: u128) -> Option<&Vec<KNode>> {
        let group = self.groups.get(key.len().checked_sub(1)?)?.as_ref()?;
        group.buckets[bucket(signature)].get(&signature)
    }

    pub fn get(&self, key: &[u8], signature: u128) -> Option<&KNode> {
        self.chain(key, signature)?.iter().find(|k| k.is(key, signature))
    }

    pub fn get_mut(&mut self, key: &[u8], signature: u128) -> Option<&mut KNode> {
        let group = self.groups.get_mut(key.len().checked_sub(1)?)?.as_mut()?;
        group.buckets[bucket(signature)].get_mut(&signature)?.iter_mut().find(|k| k.is(key, signature))
    }

    /// Inserts `knode`, returning the kNode it replaces (the same key's), if any. Keys longer than
    /// the index was built for are refused at the interface; here they are ignored.
    pub fn insert(&mut self, knode: KNode) -> Option<KNode> {
        let Some(slot) = knode.key.len().checked_sub(1).and_then(|g| self.groups.get_mut(g)) else {
            debug_assert!(false, "key of {} bytes outside the index", knode.key.len());
            return None;
        };
        let group = slot.get_or_insert_with(|| Group { buckets: (0..BUCKETS).map(|_| Chain::new()).collect() });
        let chain = group.buckets[bucket(knode.signature)].entry(knode.signature).or_default();
        match chain.iter_mut().find(|k| k.key == knode.key) {
            Some(old) => Some(std::mem::replace(old, knode)),
            None => {
                chain.push(knode);
                self.knodes += 1;
                None
            }
        }
    }

    /// Removes and returns the kNode of `key`.
    pub fn remove(&mut self, key: &[u8], signature: u128) -> Option<KNode> {
        let group = self.groups.get_mut(key.len().checked_sub(1)?)?.as_mut()?;
        let chains = &mut group.buckets[bucket(signature)];
        let chain = chains.get_mut(&signature)?;
        let i = chain.iter().position(|k| k.is(key, signature))?;
        let old = chain.swap_remove(i);
        if chain.is_empty() {
            chains.remove(&signature);
        }
        self.knodes -= 1;
        Some(old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plsc::knode::signature;

    fn knode(key: &[u8], utid: u32) -> KNode {
        KNode { key: key.into(), signature: signature(key), utid, offset: 0, len: 10 }
    }

    #[test]
    fn one_knode_per_key_and_colliding_signatures_are_told_apart_by_key() {
        let mut ix = GlobalIndex::new(8);
        assert!(ix.insert(knode(b"ab", 1)).is_none());
        assert_eq!(ix.insert(knode(b"ab", 2)).unwrap().utid, 1);
        assert_eq!(ix.len(), 1);
        // A forged collision: same signature, another key of the same length.
        let mut twin = knode(b"cd", 3);
        twin.signature = signature(b"ab");
        ix.insert(twin);
        assert_eq!(ix.len(), 2);
        assert_eq!(ix.get(b"ab", signature(b"ab")).unwrap().utid, 2);
        assert_eq!(ix.get(b"cd", signature(b"ab")).unwrap().utid, 3);
        assert!(ix.get(b"abc", signature(b"abc")).is_none());
        assert_eq!(ix.remove(b"ab", signature(b"ab")).unwrap().utid, 2);
        assert!(ix.get(b"ab", signature(b"ab")).is_none());
        assert_eq!(ix.len(), 1);
        ix.get_mut(b"cd", signature(b"ab")).unwrap().utid = 9;
        assert_eq!(ix.get(b"cd", signature(b"ab")).unwrap().utid, 9);
    }
}

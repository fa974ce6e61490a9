//! The block cache: parsed SST data blocks, keyed by (file number, block offset), evicted least recently
//! used first once their total size passes a byte capacity.
//!
//! Contract:
//! - Thread-safe (one mutex; the critical sections are a map lookup and a few bookkeeping steps). A hit hands
//!   out a [`Block`], which shares its bytes, so no data is copied under the lock.
//! - Charge = the block's content size; a block larger than the whole capacity is not cached; capacity 0
//!   caches nothing.
//! - Every block in the cache had its checksum verified when it was read (the table verifies on every cache
//!   fill), so a hit is as trustworthy as a verified read whatever the read options say.
//! - File numbers are never reused by the engine, so entries of a deleted file are merely dead weight until
//!   evicted; [`BlockCache::erase_file`] drops them early.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

use crate::sst::Block;

type CacheKey = (u64, u64);

/// Counters of a [`BlockCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: u64,
    pub misses: u64,
    pub inserts: u64,
    pub evictions: u64,
    /// Bytes charged now.
    pub usage: usize,
    pub entries: usize,
    pub capacity: usize,
}

#[derive(Default)]
struct Lru {
    map: HashMap<CacheKey, (Block, u64)>,
    /// Recency order: tick of last use -> key. Oldest first.
    order: BTreeMap<u64, CacheKey>,
    tick: u64,
    usage: usize,
    hits: u64,
    misses: u64,
    inserts: u64,
    evictions: u64,
}

impl Lru {
    fn touch(&mut self, key: CacheKey) -> Option<Block> {
        self.tick += 1;
        let tick = self.tick;
        let (block, last) = self.map.get_mut(&key)?;
        self.order.remove(last);
        *last = tick;
        self.order.insert(tick, key);
        Some(block.clone())
    }

    fn remove(&mut self, key: &CacheKey) {
        if let Some((block, tick)) = self.map.remove(key) {
            self.order.remove(&tick);
            self.usage -= block.size();
        }
    }
}

/// An LRU cache of data blocks with a byte capacity; see the module contract.
pub struct BlockCache {
    capacity: usize,
    lru: Mutex<Lru>,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache").field("stats", &self.stats()).finish()
    }
}

impl BlockCache {
    pub fn new(capacity_bytes: usize) -> BlockCache {
        BlockCache { capacity: capacity_bytes, lru: Mutex::new(Lru::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lru> {
        // The LRU's invariants hold between statements that cannot panic, so a poisoned lock is still sound.
        self.lru.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cached block at (`file_number`, `offset`), counting a hit or a miss.
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Block> {
        let mut lru = self.lock();
        let found = lru.touch((file_number, offset));
        if found.is_some() {
            lru.hits += 1;
        } else {
            lru.misses += 1;
        }
        found
    }

    /// Caches `block` (replacing any block under the same key), then evicts the least recently used
    /// blocks until the usage fits the capacity.
    pub fn insert(&self, file_number: u64, offset: u64, block: Block) {
        let charge = block.size();
        if charge > self.capacity {
            return;
        }
        let key = (file_number, offset);
        let mut lru = self.lock();
        lru.remove(&key);
        lru.tick += 1;
        let tick = lru.tick;
        lru.map.insert(key, (block, tick));
        lru.order.insert(tick, key);
        lru.usage += charge;
        lru.inserts += 1;
        while lru.usage > self.capacity {
            let Some((_, victim)) = lru.order.pop_first() else {
                break;
            };
            if let Some((b, _)) = lru.map.remove(&victim) {
                lru.usage -= b.size();
                lru.evictions += 1;
            }
        }
    }

    /// Drops every block of `file_number`.
    pub fn erase_file(&self, file_number: u64) {
        let mut lru = self.lock();
        let keys: Vec<CacheKey> = lru.map.keys().filter(|(f, _)| *f == file_number).copied().collect();
        for k in keys {
            lru.remove(&k);
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn usage(&self) -> usize {
        self.lock().usage
    }

    pub fn stats(&self) -> CacheStats {
        let lru = self.lock();
        CacheStats {
            hits: lru.hits,
            misses: lru.misses,
            inserts: lru.inserts,
            evictions: lru.evictions,
            usage: lru.usage,
            entries: lru.map.len(),
            capacity: self.capacity,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sst::block_builder::BlockBuilder;

    fn block(n: usize) -> Block {
        let mut b = BlockBuilder::new(16);
        b.add(b"k0000000", &vec![0u8; n]);
        Block::new(b.finish().to_vec(), "f", 0).unwrap()
    }

    #[test]
    fn evicts_least_recently_used_within_capacity() {
        let one = block(100).size();
        let cache = BlockCache::new(3 * one);
        for off in 0..3 {
            cache.insert(1, off, block(100));
        }
        assert!(cache.get(1, 0).is_some()); // 0 is now the most recent
        cache.insert(1, 3, block(100)); // evicts 1
        assert!(cache.get(1, 1).is_none());
        assert!(cache.get(1, 0).is_some());
        assert!(cache.get(1, 2).is_some());
        assert!(cache.get(1, 3).is_some());
        let s = cache.stats();
        assert_eq!((s.hits, s.misses, s.evictions, s.entries), (4, 1, 1, 3));
        assert_eq!(s.usage, 3 * one);
        cache.insert(1, 3, block(100)); // replacing does not double-charge
        assert_eq!(cache.usage(), 3 * one);
        cache.insert(2, 0, block(10 * one)); // larger than the cache: ignored
        assert!(cache.get(2, 0).is_none());
        cache.erase_file(1);
        assert_eq!(cache.usage(), 0);
        let none = BlockCache::new(0);
        none.insert(1, 0, block(1));
        assert!(none.get(1, 0).is_none());
    }
}

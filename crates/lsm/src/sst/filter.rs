//! Bloom filters over user keys, stored in LevelDB's filter-block format (`table/filter_block.cc`,
//! `util/bloom.cc`), so that a point lookup skips a data block that cannot hold its user key.
//!
//! Bloom filter: `bits_per_key * n` bits (at least 64), rounded up to whole bytes, followed by one byte
//! holding `k`, the number of probes: `bits_per_key * 0.69` (~ln 2) truncated, clamped to 1..=30, exactly as
//! LevelDB, so our filters are byte-identical to LevelDB's. (Rounding would give k = 7 instead of 6 at 10
//! bits per key: the same ~0.8 % rate on large sets, but measurably worse on the 64-bit minimum filters of
//! tiny sets, where LevelDB's own varying-length test then exceeds its 2 % bound.) Probes use double
//! hashing from one 32-bit hash (LevelDB's `Hash` with seed `0xbc9f1d34`): `h += rotr(h, 17)` per probe.
//! A filter whose `k` byte is above 30 matches everything (reserved by LevelDB for other encodings).
//!
//! Filter block: one filter per 2 KiB (`1 << base_lg`) range of data-block offsets. The keys of the data
//! block that starts at offset `o` go into filter number `o >> base_lg`; ranges without a block get an empty
//! filter (which matches nothing). With aligned 4 KiB blocks every data block thus has its own filter.
//!
//! ```text
//! filter* | fixed32 filter_offset * n | fixed32 offset_of_that_array | u8 base_lg (11)
//! ```
//!
//! Keys given to these types are *user* keys: the table builder strips the 8-byte tag, so every version of
//! a user key hashes the same.

use crate::coding::{get_fixed32, put_fixed32};

/// log2 of the data-offset range one filter covers (2 KiB, as LevelDB).
pub const FILTER_BASE_LG: u8 = 11;

/// The metaindex key of the filter block: LevelDB's name for this exact format, so the files stay readable
/// by LevelDB.
pub const FILTER_META_KEY: &[u8] = b"filter.leveldb.BuiltinBloomFilter2";

/// LevelDB's 32-bit hash (a Murmur-like mix), needed bit for bit for filter compatibility.
pub fn leveldb_hash(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4_a793;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut words = data.chunks_exact(4);
    for w in &mut words {
        h = h.wrapping_add(u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        h = h.wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        for (i, &b) in rest.iter().enumerate() {
            h = h.wrapping_add(u32::from(b) << (8 * i));
        }
        h = h.wrapping_mul(M);
        h ^= h >> 24;
    }
    h
}

fn bloom_hash(key: &[u8]) -> u32 {
    leveldb_hash(key, 0xbc9f_1d34)
}

/// A Bloom filter policy with a fixed number of bits per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomPolicy {
    bits_per_key: usize,
    k: u8,
}

impl BloomPolicy {
    pub fn new(bits_per_key: u32) -> BloomPolicy {
        // Integer form of LevelDB's `bits_per_key * 0.69` truncation (exact, no float rounding doubts).
        let k = u64::from(bits_per_key) * 69 / 100;
        BloomPolicy { bits_per_key: bits_per_key as usize, k: k.clamp(1, 30) as u8 }
    }

    /// Probes per key.
    pub fn k(&self) -> u8 {
        self.k
    }

    /// Appends a filter for `keys` to `dst`.
    pub fn create_filter<K: AsRef<[u8]>>(&self, keys: &[K], dst: &mut Vec<u8>) {
        let bits = (keys.len() * self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = bytes * 8;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k);
        let array = &mut dst[start..start + bytes];
        for key in keys {
            let mut h = bloom_hash(key.as_ref());
            let delta = h.rotate_right(17);
            for _ in 0..self.k {
                let bit = h as usize % bits;
                array[bit / 8] |= 1 << (bit % 8);
                h = h.wrapping_add(delta);
            }
        }
    }
}

/// Whether `key` may be in the set `filter` (made by any Bloom policy) was built from. Never false for a
/// key that was added.
pub fn bloom_may_match(key: &[u8], filter: &[u8]) -> bool {
    let Some((&k, array)) = filter.split_last() else {
        return false;
    };
    if array.is_empty() {
        return false;
    }
    if k > 30 {
        return true;
    }
    let bits = array.len() * 8;
    let mut h = bloom_hash(key);
    let delta = h.rotate_right(17);
    for _ in 0..k {
        let bit = h as usize % bits;
        if array.get(bit / 8).is_none_or(|byte| byte & (1 << (bit % 8)) == 0) {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}

/// Builds a filter block. Call [`start_block`](Self::start_block) with each data block's offset before
/// adding that block's keys.
#[derive(Debug)]
pub struct FilterBlockBuilder {
    policy: BloomPolicy,
    keys: Vec<Vec<u8>>,
    result: Vec<u8>,
    filter_offsets: Vec<u32>,
}

impl FilterBlockBuilder {
    pub fn new(policy: BloomPolicy) -> FilterBlockBuilder {
        FilterBlockBuilder { policy, keys: Vec::new(), result: Vec::new(), filter_offsets: Vec::new() }
    }

    /// The next keys belong to the data block at `block_offset`: emits the filters of the ranges before it.
    pub fn start_block(&mut self, block_offset: u64) {
        let index = block_offset >> FILTER_BASE_LG;
        while (self.filter_offsets.len() as u64) < index {
            self.generate_filter();
        }
    }

    pub fn add_key(&mut self, user_key: &[u8]) {
        self.keys.push(user_key.to_vec());
    }

    /// The finished filter block (builder consumed).
    pub fn finish(mut self) -> Vec<u8> {
        if !self.keys.is_empty() {
            self.generate_filter();
        }
        let array_offset = self.result.len() as u32;
        for &o in &self.filter_offsets {
            put_fixed32(&mut self.result, o);
        }
        put_fixed32(&mut self.result, array_offset);
        self.result.push(FILTER_BASE_LG);
        self.result
    }

    fn generate_filter(&mut self) {
        self.filter_offsets.push(self.result.len() as u32);
        if !self.keys.is_empty() {
            self.policy.create_filter(&self.keys, &mut self.result);
            self.keys.clear();
        }
    }
}

/// Reads a filter block. Parsing checks the layout; lookups never panic.
#[derive(Clone, Debug)]
pub struct FilterBlockReader {
    data: Vec<u8>,
    /// Start of the offset array (= end of the filters).
    array_offset: usize,
    num: usize,
    base_lg: u8,
}

impl FilterBlockReader {
    /// `None` if `data` is not a well-formed filter block.
    pub fn new(data: Vec<u8>) -> Option<FilterBlockReader> {
        let n = data.len();
        let base_lg = *data.last()?;
        let array_offset = get_fixed32(data.get(n.checked_sub(5)?..)?)? as usize;
        let array_bytes = (n - 5).checked_sub(array_offset)?;
        if array_bytes % 4 != 0 || base_lg >= 64 {
            return None;
        }
        Some(FilterBlockReader { num: array_bytes / 4, data, array_offset, base_lg })
    }

    /// Number of filters (ranges of data-block offsets).
    pub fn num_filters(&self) -> usize {
        self.num
    }

    /// Whether the data block at `block_offset` may hold `user_key`. Out-of-range or malformed entries
    /// answer true: a filter may only ever save work, never hide a key.
    pub fn key_may_match(&self, block_offset: u64, user_key: &[u8]) -> bool {
        let index = block_offset >> self.base_lg;
        let Ok(index) = usize::try_from(index) else {
            return true;
        };
        if index >= self.num {
            return true;
        }
        let at = self.array_offset + index * 4;
        let (Some(start), Some(limit)) =
            (self.data.get(at..).and_then(get_fixed32), self.data.get(at + 4..).and_then(get_fixed32))
        else {
            return true;
        };
        // The last filter's limit is the array offset itself, which the array stores right after it.
        let (start, limit) = (start as usize, limit as usize);
        if start == limit {
            return false;
        }
        match self.data.get(start..limit) {
            Some(filter) if limit <= self.array_offset => bloom_may_match(user_key, filter),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_leveldb() {
        assert_eq!(leveldb_hash(&[], 0xbc9f1d34), 0xbc9f1d34);
        assert_eq!(leveldb_hash(&[0x62], 0xbc9f1d34), 0xef1345c4);
        assert_eq!(leveldb_hash(&[0xc3, 0x97], 0xbc9f1d34), 0x5b663814);
        assert_eq!(leveldb_hash(&[0xe2, 0x99, 0xa5], 0xbc9f1d34), 0x323c078f);
        assert_eq!(leveldb_hash(&[0xe1, 0x80, 0xb9, 0x32], 0xbc9f1d34), 0xed21633a);
    }

    #[test]
    fn k_follows_bits_per_key() {
        assert_eq!(BloomPolicy::new(10).k(), 6);
        assert_eq!(BloomPolicy::new(2).k(), 1);
        assert_eq!(BloomPolicy::new(20).k(), 13);
        assert_eq!(BloomPolicy::new(0).k(), 1);
        assert_eq!(BloomPolicy::new(100).k(), 30);
    }

    #[test]
    fn empty_filter_matches_nothing_and_large_k_everything() {
        let mut f = Vec::new();
        BloomPolicy::new(10).create_filter::<&[u8]>(&[], &mut f);
        assert!(!bloom_may_match(b"hello", &f));
        assert!(!bloom_may_match(b"hello", &[]));
        assert!(bloom_may_match(b"hello", &[0, 0, 31]));
    }

    #[test]
    fn filter_block_layout_matches_leveldb() {
        // LevelDB's filter_block_test: an empty builder gives 5 bytes (array offset 0, base_lg 11).
        let b = FilterBlockBuilder::new(BloomPolicy::new(10));
        assert_eq!(b.finish(), vec![0, 0, 0, 0, 11]);
        let mut b = FilterBlockBuilder::new(BloomPolicy::new(10));
        b.start_block(100);
        b.add_key(b"foo");
        b.add_key(b"bar");
        b.start_block(200);
        b.add_key(b"box");
        b.start_block(3100);
        b.add_key(b"hello");
        b.start_block(9000);
        b.add_key(b"z");
        let r = FilterBlockReader::new(b.finish()).unwrap();
        assert_eq!(r.num_filters(), 5);
        for k in [&b"foo"[..], b"bar", b"box"] {
            assert!(r.key_may_match(100, k));
        }
        assert!(r.key_may_match(3100, b"hello"));
        assert!(!r.key_may_match(3100, b"foo"));
        assert!(!r.key_may_match(4100, b"hello")); // empty range
        assert!(r.key_may_match(9000, b"z"));
        assert!(r.key_may_match(1 << 40, b"anything")); // past the filters
        assert!(FilterBlockReader::new(vec![1, 2, 3]).is_none());
        assert!(FilterBlockReader::new(vec![9, 0, 0, 0, 11]).is_none());
    }
}

//! Bloom filters as LevelDB builds them (`util/bloom.cc`), written once for every part of flashkv
//! that keeps one: the engine's SST filter blocks (`lsm`) and the in-device LevelDB's filters in a
//! key-value SSD's DRAM (`kvssd`).
//!
//! A filter of `n` keys is `bits_per_key * n` bits (at least 64), rounded up to whole bytes,
//! followed by one byte holding `k`, the number of probes: `bits_per_key * 0.69` (~ln 2)
//! truncated, clamped to 1..=30, exactly as LevelDB, so the filters are byte-identical to
//! LevelDB's. (Rounding would give k = 7 instead of 6 at 10 bits per key: the same ~0.8 % rate on
//! large sets, but measurably worse on the 64-bit minimum filters of tiny sets.) Probes use double
//! hashing from one 32-bit hash (LevelDB's `Hash` with seed `0xbc9f1d34`): `h += rotr(h, 17)` per
//! probe. A filter whose `k` byte is above 30 matches everything (reserved by LevelDB for other
//! encodings). Deterministic: the same keys give the same bytes on every run.
//!
//! [`blocked`] is the second kind: one cache-line-blocked filter over a whole SST with a hash of its
//! own, for keys that LevelDB's hash tells apart badly (its module says why).

pub mod blocked;

pub use blocked::{blocked_may_match, create_blocked_filter, key_hash};

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

/// The hash a filter probes `key` with. A filter built from keys' hashes
/// ([`BloomPolicy::create_filter_from_hashes`]) is the filter of those keys: a builder can hash
/// each key once, as it sees it, rather than keep a copy of it until the filter is made.
pub fn bloom_hash(key: &[u8]) -> u32 {
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

    /// Bits per key.
    pub fn bits_per_key(&self) -> usize {
        self.bits_per_key
    }

    /// Appends a filter for `keys` to `dst`.
    pub fn create_filter<K: AsRef<[u8]>>(&self, keys: &[K], dst: &mut Vec<u8>) {
        let hashes: Vec<u32> = keys.iter().map(|k| bloom_hash(k.as_ref())).collect();
        self.create_filter_from_hashes(&hashes, dst);
    }

    /// Appends a filter for the keys whose [`bloom_hash`]es are `hashes` to `dst`.
    pub fn create_filter_from_hashes(&self, hashes: &[u32], dst: &mut Vec<u8>) {
        let bits = (hashes.len() * self.bits_per_key).max(64);
        let bytes = bits.div_ceil(8);
        let bits = bytes * 8;
        let start = dst.len();
        dst.resize(start + bytes, 0);
        dst.push(self.k);
        let array = &mut dst[start..start + bytes];
        for &hash in hashes {
            let mut h = hash;
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

    /// No false negatives, and about 1 % false positives at 10 bits per key.
    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives() {
        let key = |i: u64| format!("user{i:019}").into_bytes();
        for n in [1u64, 10, 100, 1000, 10_000] {
            let keys: Vec<Vec<u8>> = (0..n).map(|i| key(i * 7 + 1)).collect();
            let mut f = Vec::new();
            BloomPolicy::new(10).create_filter(&keys, &mut f);
            for k in &keys {
                assert!(bloom_may_match(k, &f), "{n} keys: a false negative on {k:?}");
            }
            if n >= 1000 {
                let trials = 100_000u64;
                let fp = (0..trials).filter(|&i| bloom_may_match(&key(i * 7 + 3), &f)).count() as f64 / trials as f64;
                assert!((0.004..0.02).contains(&fp), "{n} keys: false-positive rate {fp}");
            }
        }
    }
}

//! A bloom filter per SST, kept in device DRAM beside the MANIFEST: LevelDB's filter policy
//! (`NewBloomFilterPolicy(10)`, its recommended setting), written here. `bits_per_key` bits per key
//! (10), at least 64 bits; k = bits_per_key x ln 2 probes, rounded down and kept within 1..=30 (6
//! at 10 bits, a false-positive rate near 1 %); each probe position from LevelDB's 32-bit hash of
//! the key (seed 0xbc9f1d34) by double hashing (delta = the hash rotated by 17 bits), as
//! LevelDB's `bloom.cc` does. Deterministic: the same keys give the same bits on every run.

/// A built filter: its bits and its number of probes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bloom {
    bits: Box<[u8]>,
    k: u8,
}

/// LevelDB's `Hash` (util/hash.cc): a Murmur-like 32-bit hash.
pub fn hash(data: &[u8], seed: u32) -> u32 {
    const M: u32 = 0xc6a4_a793;
    const R: u32 = 24;
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let w = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        h = h.wrapping_add(w);
        h = h.wrapping_mul(M);
        h ^= h >> 16;
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        if rest.len() >= 3 {
            h = h.wrapping_add((rest[2] as u32) << 16);
        }
        if rest.len() >= 2 {
            h = h.wrapping_add((rest[1] as u32) << 8);
        }
        h = h.wrapping_add(rest[0] as u32);
        h = h.wrapping_mul(M);
        h ^= h >> R;
    }
    h
}

fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, 0xbc9f_1d34)
}

impl Bloom {
    /// The filter of `keys` at `bits_per_key` bits per key.
    pub fn build<'a>(keys: impl ExactSizeIterator<Item = &'a [u8]>, bits_per_key: u32) -> Bloom {
        let k = ((bits_per_key as f64 * 0.69) as u32).clamp(1, 30) as u8;
        let bits = (keys.len() as u64 * bits_per_key as u64).max(64);
        let bytes = bits.div_ceil(8) as usize;
        let bits = bytes as u64 * 8;
        let mut array = vec![0u8; bytes].into_boxed_slice();
        for key in keys {
            let mut h = bloom_hash(key);
            let delta = h.rotate_right(17);
            for _ in 0..k {
                let pos = h as u64 % bits;
                array[(pos / 8) as usize] |= 1 << (pos % 8);
                h = h.wrapping_add(delta);
            }
        }
        Bloom { bits: array, k }
    }

    /// Whether `key` may be among the filter's keys (`false`: it certainly is not).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        let bits = self.bits.len() as u64 * 8;
        if bits == 0 {
            return false;
        }
        let mut h = bloom_hash(key);
        let delta = h.rotate_right(17);
        for _ in 0..self.k {
            let pos = h as u64 % bits;
            if self.bits[(pos / 8) as usize] & (1 << (pos % 8)) == 0 {
                return false;
            }
            h = h.wrapping_add(delta);
        }
        true
    }

    /// Bytes of DRAM the filter takes.
    pub fn bytes(&self) -> usize {
        self.bits.len()
    }

    /// Probes per key.
    pub fn probes(&self) -> u8 {
        self.k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u64) -> Vec<u8> {
        format!("user{i:019}").into_bytes()
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives_at_10_bits_per_key() {
        for n in [1u64, 10, 100, 1000, 10_000] {
            let keys: Vec<Vec<u8>> = (0..n).map(|i| key(i * 7 + 1)).collect();
            let f = Bloom::build(keys.iter().map(|k| k.as_slice()), 10);
            assert_eq!(f.probes(), 6);
            assert!(f.bytes() as u64 >= (n * 10).div_ceil(8).max(8));
            for k in &keys {
                assert!(f.may_contain(k), "{n} keys: a false negative on {k:?}");
            }
            if n >= 1000 {
                // Keys not in the filter (none is a multiple of 7 plus 1).
                let trials = 100_000u64;
                let fp = (0..trials).filter(|&i| f.may_contain(&key(i * 7 + 3))).count() as f64 / trials as f64;
                assert!((0.004..0.02).contains(&fp), "{n} keys: false-positive rate {fp}");
            }
        }
        // Deterministic: the same keys, the same bits.
        let a = Bloom::build([b"a".as_slice(), b"bc"].into_iter(), 10);
        assert_eq!(a, Bloom::build([b"a".as_slice(), b"bc"].into_iter(), 10));
        // LevelDB's hash (util/hash_test.cc).
        assert_eq!(hash(&[], 0xbc9f1d34), 0xbc9f1d34);
        assert_eq!(hash(&[0x62], 0xbc9f1d34), 0xef1345c4);
        assert_eq!(hash(&[0xc3, 0x97], 0xbc9f1d34), 0x5b663814);
        assert_eq!(hash(&[0xe2, 0x99, 0xa5], 0xbc9f1d34), 0x323c078f);
        assert_eq!(hash(&[0xe1, 0x80, 0xb9, 0x32], 0xbc9f1d34), 0xed21633a);
    }
}

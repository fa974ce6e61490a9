//! A bloom filter per SST, kept in device DRAM beside the MANIFEST: LevelDB's filter policy
//! (`NewBloomFilterPolicy(10)`, its recommended setting), the `bloom` crate's (the engine's SST
//! filters use the same one). Consulted before an SST is read: `false` means the SST certainly does
//! not hold the key.

/// A built filter: its bytes (the bit array, then the number of probes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bloom {
    data: Box<[u8]>,
}

impl Bloom {
    /// The filter of `keys` at `bits_per_key` bits per key.
    pub fn build<'a>(keys: impl ExactSizeIterator<Item = &'a [u8]>, bits_per_key: u32) -> Bloom {
        let keys: Vec<&[u8]> = keys.collect();
        let mut data = Vec::new();
        bloom::BloomPolicy::new(bits_per_key).create_filter(&keys, &mut data);
        Bloom { data: data.into_boxed_slice() }
    }

    /// Whether `key` may be among the filter's keys (`false`: it certainly is not).
    pub fn may_contain(&self, key: &[u8]) -> bool {
        bloom::bloom_may_match(key, &self.data)
    }

    /// Bytes of DRAM the filter takes.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The device's filter is the engine's: no false negatives, about 1 % false positives at 10
    /// bits per key (the policy's own tests are in the `bloom` crate), deterministic.
    #[test]
    fn a_filter_holds_its_keys_and_rejects_most_others() {
        let key = |i: u64| format!("user{i:019}").into_bytes();
        let keys: Vec<Vec<u8>> = (0..5000).map(|i| key(i * 7 + 1)).collect();
        let f = Bloom::build(keys.iter().map(|k| k.as_slice()), 10);
        assert!(f.bytes() >= 5000 * 10 / 8);
        assert!(keys.iter().all(|k| f.may_contain(k)));
        let fp = (0..50_000u64).filter(|&i| f.may_contain(&key(i * 7 + 3))).count() as f64 / 50_000.0;
        assert!((0.004..0.02).contains(&fp), "false-positive rate {fp}");
        assert_eq!(f, Bloom::build(keys.iter().map(|k| k.as_slice()), 10));
    }
}

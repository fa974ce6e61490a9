//! A cache-line-blocked Bloom filter over a whole set (one SST's keys): the layout of RocksDB's full
//! filters (Putze, Sanders and Singler's blocked Bloom filter), not its bytes.
//!
//! Why a second filter: LevelDB's hash ([`crate::bloom_hash`]) barely mixes a key's last bytes.
//! Keys that differ only there (db_bench's decimal keys, `%016d`, and any counter-like key) then
//! collide or set the same bits:
//! - of 200,000 db_bench keys, 10,500 share their LevelDB hash with another (a random 32-bit hash
//!   would give about 5 such pairs);
//! - LevelDB's 64-bit filter of a block holding one 4 KiB value answered "may match" for most of
//!   the absent neighbours probed; a test below keeps that figure.
//!
//! So this filter takes its own hash ([`key_hash`], each 8-byte word put through a 64-bit
//! finalizer), and every probe of a key falls in one 64-byte line: one cache miss per lookup,
//! where a plain Bloom filter over a whole table costs up to `k`.
//!
//! Layout: `line* | u8 k`, each line 64 bytes (512 bits). Lines: `bits_per_key * n` bits rounded
//! up to whole lines, at least one. A key's [`key_hash`] is widened to 64 bits by the finalizer;
//! its line is picked by the upper half (`(upper * lines) >> 32`), its `k` bits within the line by
//! double hashing on the lower half with an odd step, so the `k` bits are distinct. `k` follows
//! [`crate::BloomPolicy::k`]. A `k` above 30 or a length that is not whole lines plus one byte
//! matches everything: a damaged filter may cost reads, never hide a key. Deterministic: the same
//! hashes give the same bytes.

use crate::BloomPolicy;

/// Bytes in a line: a cache line.
pub const LINE_BYTES: usize = 64;
const LINE_BITS: u32 = (LINE_BYTES * 8) as u32;

/// An odd constant (2^64 over the golden ratio) to multiply by.
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// Murmur3's 64-bit finalizer: every input bit moves every output bit, and it is a bijection.
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// The hash this filter takes of a key: each 8-byte little-endian word (the last one zero-padded)
/// finalized and folded in with a rotation and an odd multiply, then the length, then the
/// finalizer, folded to 32 bits. 32 bits are enough: a probe meets a stored key's hash by chance
/// with odds of one in 2^32 per key.
pub fn key_hash(key: &[u8]) -> u32 {
    let mut h = GOLDEN;
    let mut words = key.chunks_exact(8);
    for w in &mut words {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        h = (h.rotate_left(27) ^ fmix64(w)).wrapping_mul(GOLDEN);
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(27) ^ fmix64(u64::from_le_bytes(w))).wrapping_mul(GOLDEN);
    }
    let x = fmix64(h ^ key.len() as u64);
    (x ^ (x >> 32)) as u32
}

/// A [`key_hash`] widened to 64 bits for placing its probes.
fn mix(hash: u32) -> u64 {
    fmix64(u64::from(hash) ^ GOLDEN)
}

/// The line of `mixed` among `lines`, and the first bit and the odd step of its probes in it.
fn place(mixed: u64, lines: usize) -> (usize, u32, u32) {
    let line = ((mixed >> 32) * lines as u64) >> 32;
    let low = mixed as u32;
    (line as usize, low, low.rotate_right(16) | 1)
}

/// Appends the blocked filter of the keys whose [`key_hash`]es are `hashes` to `dst`,
/// sized by `policy`'s bits per key.
pub fn create_blocked_filter(policy: &BloomPolicy, hashes: &[u32], dst: &mut Vec<u8>) {
    let bits = hashes.len() * policy.bits_per_key();
    let lines = bits.div_ceil(LINE_BITS as usize).max(1);
    let start = dst.len();
    dst.resize(start + lines * LINE_BYTES, 0);
    dst.push(policy.k());
    let array = &mut dst[start..start + lines * LINE_BYTES];
    for &hash in hashes {
        let (line, mut bit, step) = place(mix(hash), lines);
        let line = &mut array[line * LINE_BYTES..(line + 1) * LINE_BYTES];
        for _ in 0..policy.k() {
            let b = (bit % LINE_BITS) as usize;
            line[b / 8] |= 1 << (b % 8);
            bit = bit.wrapping_add(step);
        }
    }
}

/// Whether the key whose [`key_hash`] is `hash` may be in the set `filter` (made by
/// [`create_blocked_filter`]) was built from. Never false for a key that was added.
pub fn blocked_may_match(hash: u32, filter: &[u8]) -> bool {
    let Some((&k, array)) = filter.split_last() else {
        return true;
    };
    if k > 30 || array.is_empty() || array.len() % LINE_BYTES != 0 {
        return true;
    }
    let (line, mut bit, step) = place(mix(hash), array.len() / LINE_BYTES);
    let line = &array[line * LINE_BYTES..(line + 1) * LINE_BYTES];
    for _ in 0..k {
        let b = (bit % LINE_BITS) as usize;
        if line[b / 8] & (1 << (b % 8)) == 0 {
            return false;
        }
        bit = bit.wrapping_add(step);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{bloom_hash, bloom_may_match};
    use std::collections::HashSet;

    /// db_bench's keys: a number printed in 16 decimal digits.
    fn key(i: u64) -> Vec<u8> {
        format!("{i:016}").into_bytes()
    }

    fn blocked(keys: &[Vec<u8>]) -> Vec<u8> {
        let hashes: Vec<u32> = keys.iter().map(|k| key_hash(k)).collect();
        let mut f = Vec::new();
        create_blocked_filter(&BloomPolicy::new(10), &hashes, &mut f);
        f
    }

    /// Absent keys probed: the odd numbers between the even ones a filter holds.
    fn false_positive_rate(n: u64, may_match: impl Fn(&[u8]) -> bool) -> f64 {
        (0..n).filter(|&i| may_match(&key(2 * i + 1))).count() as f64 / n as f64
    }

    #[test]
    fn no_false_negatives_and_about_one_percent_false_positives_on_neighbouring_keys() {
        for n in [1u64, 10, 100, 1000, 10_000, 100_000] {
            let keys: Vec<Vec<u8>> = (0..n).map(|i| key(2 * i)).collect();
            let f = blocked(&keys);
            assert_eq!(f.len() % LINE_BYTES, 1);
            for k in &keys {
                assert!(blocked_may_match(key_hash(k), &f), "{n} keys: a false negative on {k:?}");
            }
            if n >= 1000 {
                let fp = false_positive_rate(n, |k| blocked_may_match(key_hash(k), &f));
                assert!(fp < 0.015, "{n} keys: false-positive rate {fp}");
            }
        }
    }

    /// The reason for this filter: one key per filter (a block holding one large value), probed
    /// with its neighbours. LevelDB's 64-bit filter lets most of them through; a one-line blocked
    /// filter almost none.
    #[test]
    fn one_key_filters_rule_out_neighbouring_keys_where_leveldbs_do_not() {
        let n = 10_000u64;
        let filters = |make: &dyn Fn(&[Vec<u8>]) -> Vec<u8>| -> Vec<Vec<u8>> {
            (0..n).map(|i| make(&[key(2 * i + 2)])).collect()
        };
        let leveldb = filters(&|keys| {
            let mut f = Vec::new();
            BloomPolicy::new(10).create_filter(keys, &mut f);
            f
        });
        let ours = filters(&|keys| blocked(keys));
        let rate = |may: &dyn Fn(&[u8], &[u8]) -> bool, fs: &[Vec<u8>]| {
            (0..n).filter(|&i| may(&key(2 * i + 1), &fs[i as usize])).count() as f64 / n as f64
        };
        let leveldb_rate = rate(&|k, f| bloom_may_match(k, f), &leveldb);
        let ours_rate = rate(&|k, f| blocked_may_match(key_hash(k), f), &ours);
        assert!(leveldb_rate > 0.5, "LevelDB's one-key filters passed {leveldb_rate} of the neighbours");
        assert!(ours_rate < 0.001, "blocked one-key filters passed {ours_rate} of the neighbours");
    }

    /// The other reason: LevelDB's hash collides on neighbouring db_bench keys; this one does not.
    #[test]
    fn neighbouring_keys_get_distinct_hashes() {
        let distinct = |hash: fn(&[u8]) -> u32| (0..200_000u64).map(|i| hash(&key(i))).collect::<HashSet<u32>>().len();
        assert!(distinct(bloom_hash) < 195_000, "LevelDB's hash: {}", distinct(bloom_hash));
        assert!(distinct(key_hash) >= 199_990, "key_hash: {}", distinct(key_hash));
        // Keys of every length up to two words, and ones that differ in their length alone.
        let short: HashSet<u32> = (0..=16).map(|n| key_hash(&vec![0u8; n])).collect();
        assert_eq!(short.len(), 17);
    }

    #[test]
    fn a_damaged_filter_matches_everything() {
        let f = blocked(&[key(1), key(2)]);
        for bad in [&f[..f.len() - 2], &[][..], &[0u8; 1][..]] {
            assert!(blocked_may_match(key_hash(&key(3)), bad));
        }
        let mut big_k = f.clone();
        *big_k.last_mut().unwrap() = 31;
        assert!(blocked_may_match(key_hash(&key(3)), &big_k));
    }

    #[test]
    fn the_same_hashes_give_the_same_bytes() {
        let keys: Vec<Vec<u8>> = (0..500).map(key).collect();
        assert_eq!(blocked(&keys), blocked(&keys));
        assert_eq!(blocked(&keys).len(), (500 * 10usize).div_ceil(512) * LINE_BYTES + 1);
    }
}

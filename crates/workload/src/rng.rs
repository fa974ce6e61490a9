//! Seeded random sources and the few conversions every generator shares.
//!
//! Contract: the crate never touches a global or thread-local generator. Each generator takes a caller-given `u64`
//! seed and expands it into a [`Pcg64Mcg`] with `SeedableRng::seed_from_u64`, which rand_core documents as
//! value-stable and platform-independent. Floating-point draws are built here from raw `next_u64` output (not through
//! `rand`'s distributions) so that the mapping from bits to doubles is ours and fixed: 53 random bits scaled by 2^-53,
//! the same construction as Java's `nextDouble`.

use rand::Rng;
use rand::SeedableRng;
pub use rand_pcg::Pcg64Mcg;

/// A `Pcg64Mcg` seeded from a `u64`.
pub fn seeded(seed: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(seed)
}

/// A derived seed for an independent sub-stream (so that, e.g., value sizes do not shift the key sequence).
///
/// SplitMix64's finaliser over `seed + stream * golden`, a bijection per stream, so distinct streams of one seed and
/// the same stream of distinct seeds give distinct sub-seeds.
pub fn sub_seed(seed: u64, stream: u64) -> u64 {
    let mut z = seed.wrapping_add(stream.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform double in `[0, 1)` with 53 random bits.
#[inline]
pub fn unit_f64(rng: &mut (impl Rng + ?Sized)) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform integer in `0..n` for `n >= 1`, by Lemire's multiply-shift with rejection (unbiased).
#[inline]
pub fn below(rng: &mut (impl Rng + ?Sized), n: u64) -> u64 {
    debug_assert!(n > 0);
    if n <= 1 {
        return 0;
    }
    let threshold = n.wrapping_neg() % n;
    loop {
        let x = rng.next_u64();
        let m = (x as u128) * (n as u128);
        if (m as u64) >= threshold {
            return (m >> 64) as u64;
        }
    }
}

/// A uniform integer in `lo..=hi` (`lo <= hi`).
#[inline]
pub fn in_range(rng: &mut (impl Rng + ?Sized), lo: u64, hi: u64) -> u64 {
    debug_assert!(lo <= hi);
    let span = hi - lo;
    if span == u64::MAX {
        return rng.next_u64();
    }
    lo + below(rng, span + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_is_in_range_and_seed_stable() {
        let mut a = seeded(7);
        let mut b = seeded(7);
        for _ in 0..1000 {
            let x = unit_f64(&mut a);
            assert!((0.0..1.0).contains(&x));
            assert_eq!(x.to_bits(), unit_f64(&mut b).to_bits());
        }
    }

    #[test]
    fn below_covers_range() {
        let mut r = seeded(1);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            seen[below(&mut r, 7) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(below(&mut r, 1), 0);
        assert_eq!(in_range(&mut r, 5, 5), 5);
    }

    #[test]
    fn sub_seeds_differ() {
        assert_ne!(sub_seed(1, 0), sub_seed(1, 1));
        assert_ne!(sub_seed(1, 0), sub_seed(2, 0));
    }
}

//! Mixgraph's key-range (prefix) hotness: RocksDB's `GenerateTwoTermExpKeys`, in its pre-#6795 form.
//!
//! The key space is cut into `keyrange_num` equal ranges. Range `pfx` (counted from `keyrange_num` down to 1) gets
//! hotness `a*e^(b*pfx) + c*e^(d*pfx)`, scaled to integer shares; the ranges are shuffled by a Mersenne Twister seeded
//! with the total share (so the shuffle depends only on the parameters), and a uniform draw picks a range in
//! proportion to its share. Inside the range the offset is uniform (`ini_rand % keyrange_size`, prefix_random) or
//! power-law (prefix_dist).

use super::power_cdf_inversion;
use crate::error::WorkloadError;
use crate::mt19937::{first_output, Mt19937_64};

#[derive(Debug, Clone, Copy)]
struct KeyRange {
    start: u64,
    access: u64,
}

/// The shuffled key ranges and their access shares.
#[derive(Debug, Clone)]
pub struct KeyRanges {
    ranges: Vec<KeyRange>,
    rand_max: u64,
    range_size: u64,
}

impl KeyRanges {
    /// RocksDB's `InitiateExpDistribution(total_keys, a, b, c, d)` with `keyrange_num` ranges.
    ///
    /// Errors: `keyrange_num` must be in `1..=total_keys`; the parameters must give at least one range a share.
    pub fn new(total_keys: u64, keyrange_num: u64, a: f64, b: f64, c: f64, d: f64) -> Result<KeyRanges, WorkloadError> {
        if keyrange_num == 0 || keyrange_num > total_keys || keyrange_num > 1 << 20 {
            return Err(WorkloadError::invalid("keyrange_num", keyrange_num, "1..=min(num, 2^20) key ranges"));
        }
        let range_size = total_keys / keyrange_num;
        let mut amplify: u64 = 0;
        let mut start = 0u64;
        let mut ranges = Vec::with_capacity(keyrange_num as usize);
        for pfx in (1..=keyrange_num).rev() {
            let x = pfx as f64;
            let mut p = a * libm::exp(b * x) + c * libm::exp(d * x);
            if p.is_nan() || p < 1e-16 {
                // RocksDB zeroes probabilities below 10^-16 (and NaN, which fails the comparison, is treated the same).
                p = 0.0;
            }
            // The first non-zero probability fixes the scale: 1/p + 1 so that every range gets an integer share.
            if amplify == 0 && p > 0.0 {
                amplify = (libm::floor(1.0 / p) as u64).saturating_add(1);
            }
            let access = if p > 0.0 { libm::floor(amplify as f64 * p) as u64 } else { 0 };
            ranges.push(KeyRange { start, access });
            start = start.saturating_add(access);
        }
        let rand_max = start;
        if rand_max == 0 {
            return Err(WorkloadError::invalid(
                "keyrange_dist",
                format!("a={a} b={b} c={c} d={d}"),
                "two-term exponential parameters giving some key range a positive share",
            ));
        }
        // RocksDB: Random64 rand_loca(keyrange_rand_max_); swap(i, Next() % keyrange_num) for each i.
        let mut shuffle = Mt19937_64::new(rand_max);
        let n = ranges.len();
        for i in 0..n {
            let pos = (shuffle.next_u64() % keyrange_num) as usize;
            ranges.swap(i, pos);
        }
        let mut offset = 0u64;
        for r in &mut ranges {
            r.start = offset;
            offset += r.access;
        }
        Ok(KeyRanges { ranges, rand_max, range_size })
    }

    /// Keys per range (`total_keys / keyrange_num`; the remainder at the top of the key space is never chosen).
    pub fn range_size(&self) -> u64 {
        self.range_size
    }

    /// The share of draws range `id` (in key order) receives.
    pub fn share(&self, id: usize) -> f64 {
        self.ranges.get(id).map_or(0.0, |r| r.access as f64 / self.rand_max as f64)
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// Whether there are no ranges (never, after a successful `new`).
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The range a draw falls in: the last range whose start is `<= ini_rand % rand_max` (RocksDB's binary search).
    pub fn range_of(&self, ini_rand: u64) -> usize {
        let r = ini_rand % self.rand_max;
        let (mut lo, mut hi) = (0usize, self.ranges.len());
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if r < self.ranges[mid].start {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        lo
    }

    /// RocksDB's `DistGetKeyID(ini_rand, key_dist_a, key_dist_b)`, pre-#6795 where that is well defined:
    /// - both `key_dist` parameters zero (prefix_random): offset `ini_rand % range_size`, uniform inside the range;
    /// - otherwise (prefix_dist): power-law offset, `Random64(ceil((u/a)^(1/b))).Next() % range_size` with
    ///   `u = (ini_rand % range_size) / range_size`. Before #6795 RocksDB fed the raw integer `ini_rand` instead of
    ///   `u` into the power law, which overflows the 64-bit seed (undefined behaviour in C++) for all but the smallest
    ///   draws, and took a signed modulo that could make the offset negative; we use #6795's `u` and an unsigned
    ///   modulo for this branch.
    pub fn key_id(&self, ini_rand: u64, key_dist_a: f64, key_dist_b: f64) -> u64 {
        let id = self.range_of(ini_rand) as u64;
        let offset = if key_dist_a == 0.0 && key_dist_b == 0.0 {
            ini_rand % self.range_size
        } else {
            let u = (ini_rand % self.range_size) as f64 / self.range_size as f64;
            let seed = power_cdf_inversion(u, key_dist_a, key_dist_b);
            first_output(seed as u64) % self.range_size
        };
        self.range_size * id + offset
    }
}

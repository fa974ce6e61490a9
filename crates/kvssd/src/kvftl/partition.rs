//! The value partitioner (seed 004, Alg. 1) and its three revised variants (§IV).
//!
//! A value of `len` bytes is cut into partitions of 2^p bytes, largest first: `PartitionSize`
//! starts at 2^max_p and halves every step; a partition of that size is cut whenever the remaining
//! bytes are at least `PartitionSize` (the reference file's reading: the pseudocode's strict `>`
//! would never cut an exact power of two, and the worked example v24 = 22,016 B -> 16384 + 4096 +
//! 1024 + 512 needs `>=`). Under pure KVFTL with min_p = 0 the partitions add up to the value
//! exactly (no waste).
//!
//! The variants trade space for fewer partitions (fewer page reads per get):
//! - **SP** (smallest partition 2^s): cutting stops once the remainder is below 2^s; the tail goes
//!   into one 2^s partition (waste < 2^s). v24 under SP 2^12 -> 16384 + 4096 + 4096.
//! - **NP** (at most n partitions): the n-th partition takes the whole remainder, rounded up to a
//!   power of two. 61,441 B under NP 3 -> 32768 + 16384 + 16384.
//! - **WS** (at most w wasted bytes): after each cut (never before the first), if the remainder
//!   fits one more partition of the size just cut with waste < w, it goes there and cutting stops.
//!   61,441 B under WS 2^12 -> 32768 + 32768; a 1000-B value under WS 2^11 -> 512 + 512 (the
//!   literal consequence the reference file notes).
//!
//! Every variant also keeps the device's partition range `[min_p, max_p]`: a remainder smaller
//! than the smallest partition the device offers goes into one smallest partition (the SP rule;
//! impossible under pure KVFTL with min_p = 0). A value of 0 bytes has no partition (ours: the
//! paper never stores one; its KVHeadTable entry says "empty").
//!
//! The result is a small array of exponents, largest first, with no heap allocation.

use std::fmt;

/// How the value partitioner limits the partitions of one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Variant {
    /// KVFTL: every power of two the value holds, down to the device's smallest partition.
    Pure,
    /// KVFTL-SP: no partition smaller than 2^`min_p` bytes (the evaluation's default: 2^12).
    SmallestPartition { min_p: u8 },
    /// KVFTL-NP: at most `n` partitions per value (the evaluation's default: 3).
    MaxPartitions { n: u8 },
    /// KVFTL-WS: stop cutting once the remainder fits the size just cut with fewer than `bytes`
    /// wasted (the evaluation's default: 2^11).
    MaxWaste { bytes: u64 },
}

impl Variant {
    /// The paper's evaluated KVFTL-SP (2^12).
    pub const SP: Variant = Variant::SmallestPartition { min_p: 12 };
    /// The paper's evaluated KVFTL-NP (3).
    pub const NP: Variant = Variant::MaxPartitions { n: 3 };
    /// The paper's evaluated KVFTL-WS (2^11).
    pub const WS: Variant = Variant::MaxWaste { bytes: 1 << 11 };

    /// Every design name [`Variant::from_name`] accepts, each with the paper's parameter.
    pub const NAMES: [&'static str; 4] = ["kvftl", "kvftl-sp", "kvftl-np", "kvftl-ws"];

    /// The device name of this variant: `kvftl`, `kvftl-sp`, `kvftl-np`, `kvftl-ws`.
    pub fn name(&self) -> &'static str {
        match self {
            Variant::Pure => "kvftl",
            Variant::SmallestPartition { .. } => "kvftl-sp",
            Variant::MaxPartitions { .. } => "kvftl-np",
            Variant::MaxWaste { .. } => "kvftl-ws",
        }
    }

    /// The variant named `name` (one of [`Variant::NAMES`]) with the paper's evaluated parameter.
    pub fn from_name(name: &str) -> Option<Variant> {
        match name {
            "kvftl" => Some(Variant::Pure),
            "kvftl-sp" => Some(Variant::SP),
            "kvftl-np" => Some(Variant::NP),
            "kvftl-ws" => Some(Variant::WS),
            _ => None,
        }
    }
}

/// `kvftl`, `kvftl-sp (2^12)`, `kvftl-np (3)`, `kvftl-ws (2048 B)`.
impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Variant::Pure => f.write_str("kvftl"),
            Variant::SmallestPartition { min_p } => write!(f, "kvftl-sp (2^{min_p})"),
            Variant::MaxPartitions { n } => write!(f, "kvftl-np ({n})"),
            Variant::MaxWaste { bytes } => write!(f, "kvftl-ws ({bytes} B)"),
        }
    }
}

/// Most partitions one value can get: one per size and one tail.
pub const MAX_PARTITIONS: usize = 33;

/// The partitions of one value: exponents p (each partition is 2^p bytes), largest first.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Partitions {
    powers: [u8; MAX_PARTITIONS],
    len: u8,
}

impl Partitions {
    fn push(&mut self, p: u8) {
        self.powers[self.len as usize] = p;
        self.len += 1;
    }

    /// The exponents, largest first.
    pub fn powers(&self) -> &[u8] {
        &self.powers[..self.len as usize]
    }

    /// The partition sizes in bytes, largest first.
    pub fn sizes(&self) -> impl Iterator<Item = u64> + '_ {
        self.powers().iter().map(|&p| 1u64 << p)
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes of all the partitions together.
    pub fn total(&self) -> u64 {
        self.sizes().sum()
    }
}

impl fmt::Debug for Partitions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.sizes()).finish()
    }
}

/// The value partitioner of one device: its partition range and variant (checked by the
/// configuration: min_p <= max_p <= 30, the variant's parameter in range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partitioner {
    min_p: u8,
    max_p: u8,
    variant: Variant,
}

impl Partitioner {
    pub fn new(min_p: u8, max_p: u8, variant: Variant) -> Partitioner {
        debug_assert!(min_p <= max_p && max_p <= 30);
        Partitioner { min_p, max_p, variant }
    }

    /// The smallest partition this partitioner cuts: the device's, or SP's when larger.
    pub fn smallest_p(&self) -> u8 {
        match self.variant {
            Variant::SmallestPartition { min_p } => min_p.max(self.min_p),
            _ => self.min_p,
        }
    }

    /// The largest value: one partition of 2^max_p bytes.
    pub fn max_len(&self) -> u64 {
        1 << self.max_p
    }

    /// The partitions of a value of `len` bytes (at most [`Partitioner::max_len`]).
    pub fn split(&self, len: u64) -> Partitions {
        debug_assert!(len <= self.max_len());
        let mut out = Partitions { powers: [0; MAX_PARTITIONS], len: 0 };
        let lo = self.smallest_p();
        let mut rem = len;
        let mut p = self.max_p as i32;
        // Invariant: rem < 2^(p + 1) (true at the start, as len <= 2^max_p; a cut of 2^p leaves
        // less than 2^p).
        while rem > 0 {
            if p < lo as i32 {
                // A tail below the smallest partition: one smallest partition (SP's rule).
                out.push(lo);
                break;
            }
            if let Variant::MaxPartitions { n } = self.variant {
                if out.len() + 1 >= n as usize {
                    // The n-th partition: the whole remainder, rounded up to a power of two.
                    let up = 64 - (rem - 1).leading_zeros() as u8;
                    out.push(up.max(lo));
                    break;
                }
            }
            let size = 1u64 << p;
            if rem >= size {
                out.push(p as u8);
                rem -= size;
                if let Variant::MaxWaste { bytes } = self.variant {
                    // After a cut: the remainder fits the size just cut with little waste.
                    if rem > 0 && size - rem < bytes {
                        out.push(p as u8);
                        break;
                    }
                }
            }
            p -= 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(variant: Variant, len: u64) -> Vec<u64> {
        Partitioner::new(0, 20, variant).split(len).sizes().collect()
    }

    #[test]
    fn the_papers_worked_examples() {
        // v24 = 22,016 B (Fig. 4 / Fig. 6a): four partitions, no waste.
        assert_eq!(split(Variant::Pure, 22_016), vec![16384, 4096, 1024, 512]);
        // Fig. 6b: smallest partition 2^12; 2560 B wasted (the paper's "around 3021 B" is a slip).
        assert_eq!(split(Variant::SP, 22_016), vec![16384, 4096, 4096]);
        // v25 = 61,441 B (Fig. 7a-c): 4095 B wasted under each variant.
        assert_eq!(split(Variant::SP, 61_441), vec![32768, 16384, 8192, 4096, 4096]);
        assert_eq!(split(Variant::NP, 61_441), vec![32768, 16384, 16384]);
        assert_eq!(split(Variant::MaxWaste { bytes: 1 << 12 }, 61_441), vec![32768, 32768]);
        // The WS check happens after a cut, never before the first one.
        assert_ne!(split(Variant::MaxWaste { bytes: 1 << 12 }, 61_441), vec![65536]);
        // WS 2^11 on a 1000-B value: 512 cut, 488 left fits 512 with 24 B wasted.
        assert_eq!(split(Variant::WS, 1000), vec![512, 512]);
        for v in [Variant::Pure, Variant::SP, Variant::NP, Variant::WS] {
            assert_eq!(split(v, 22_016).iter().sum::<u64>() - 22_016, [0, 2560, 512, 512][idx(v)]);
        }
    }

    fn idx(v: Variant) -> usize {
        Variant::NAMES.iter().position(|n| *n == v.name()).unwrap()
    }

    #[test]
    fn exact_powers_of_two_and_the_edges() {
        for v in [Variant::Pure, Variant::SP, Variant::NP, Variant::WS] {
            assert_eq!(split(v, 1 << 20), vec![1 << 20], "{v}");
            assert_eq!(split(v, 16384), vec![16384], "{v}");
            assert!(split(v, 0).is_empty(), "{v}");
        }
        assert_eq!(split(Variant::Pure, 1), vec![1]);
        assert_eq!(split(Variant::SP, 1), vec![4096]);
        assert_eq!(split(Variant::NP, 7), vec![4, 2, 1]);
        assert_eq!(split(Variant::MaxPartitions { n: 1 }, 5000), vec![8192]);
        assert_eq!(split(Variant::Pure, (1 << 20) - 1).len(), 20);
        // The device's own smallest partition applies to every variant.
        let p = Partitioner::new(9, 20, Variant::Pure);
        assert_eq!(p.split(1000).sizes().collect::<Vec<_>>(), vec![512, 512]);
        assert_eq!(Partitioner::new(9, 20, Variant::SmallestPartition { min_p: 4 }).smallest_p(), 9);
    }

    #[test]
    fn names_round_trip() {
        for name in Variant::NAMES {
            assert_eq!(Variant::from_name(name).unwrap().name(), name);
        }
        assert_eq!(Variant::from_name("dftl"), None);
        assert_eq!(Variant::WS.to_string(), "kvftl-ws (2048 B)");
    }
}

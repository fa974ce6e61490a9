//! The value partitioner (seed 004, Alg. 1 and §IV) for every value size up to the paper's 1 MiB
//! maximum and every variant: the partitions cover the value, are powers of two in the device's
//! range, largest first, and waste no more than the variant allows.

use kvssd::kvftl::Partitioner;
use kvssd::Variant;
use proptest::prelude::*;

const MAX_P: u8 = 20;

fn variant() -> impl Strategy<Value = Variant> {
    prop_oneof![
        Just(Variant::Pure),
        (0u8..=MAX_P).prop_map(|min_p| Variant::SmallestPartition { min_p }),
        (1u8..=MAX_P + 1).prop_map(|n| Variant::MaxPartitions { n }),
        (1u64..=1 << MAX_P).prop_map(|bytes| Variant::MaxWaste { bytes }),
    ]
}

/// What the variant promises about one value's partitions (`lo`: the smallest partition).
fn check(variant: Variant, lo: u8, len: u64, powers: &[u8]) -> Result<(), TestCaseError> {
    let total: u64 = powers.iter().map(|&p| 1u64 << p).sum();
    prop_assert!(total >= len, "partitions of {} B cover {} B", total, len);
    prop_assert_eq!(len == 0, powers.is_empty());
    for w in powers.windows(2) {
        prop_assert!(w[0] >= w[1], "largest first: {:?}", powers);
    }
    for &p in powers {
        prop_assert!((lo..=MAX_P).contains(&p), "2^{} outside 2^{}..2^{}", p, lo, MAX_P);
    }
    let waste = total - len;
    let tail = |waste: u64| waste < (1 << lo);
    let mut distinct = powers.to_vec();
    distinct.dedup();
    let repeats = powers.len() - distinct.len();
    match variant {
        Variant::Pure if lo == 0 => {
            prop_assert_eq!(waste, 0);
            prop_assert_eq!(repeats, 0, "one partition per size: {:?}", powers);
        }
        Variant::Pure | Variant::SmallestPartition { .. } => {
            prop_assert!(tail(waste), "waste {} >= 2^{}", waste, lo);
            // No size twice, except the smallest for the tail.
            prop_assert!(repeats == 0 || (repeats == 1 && powers[powers.len() - 2] == lo), "{:?}", powers);
        }
        Variant::MaxPartitions { n } => {
            prop_assert!(powers.len() <= n as usize, "{} partitions > {}", powers.len(), n);
            // The last partition is the remainder rounded up: less than half of it is waste.
            let last = powers.last().map_or(0, |&p| 1u64 << p);
            prop_assert!(
                waste == 0 || tail(waste) || 2 * waste < last,
                "waste {} in a last partition of {}",
                waste,
                last
            );
        }
        Variant::MaxWaste { bytes } => {
            prop_assert!(tail(waste) || waste < bytes, "waste {} >= WS {}", waste, bytes);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]

    #[test]
    fn partitions_cover_the_value_within_the_variants_waste(
        len in prop_oneof![0u64..=1 << MAX_P, (0u8..=MAX_P).prop_map(|p| 1u64 << p), 0u64..70_000],
        variant in variant(),
        min_p in prop_oneof![3 => Just(0u8), 1 => 0u8..=MAX_P],
    ) {
        let variant = match variant {
            Variant::SmallestPartition { min_p: s } => Variant::SmallestPartition { min_p: s.max(min_p) },
            v => v,
        };
        let part = Partitioner::new(min_p, MAX_P, variant);
        let parts = part.split(len);
        check(variant, part.smallest_p(), len, parts.powers())?;
        prop_assert_eq!(parts.total(), parts.sizes().sum::<u64>());
    }
}

/// Pure KVFTL cuts exactly the binary digits of the length: one partition per set bit.
#[test]
fn pure_kvftl_cuts_the_binary_digits_of_every_length() {
    let part = Partitioner::new(0, MAX_P, Variant::Pure);
    for len in (0..=1u64 << MAX_P).step_by(97).chain([1 << MAX_P, (1 << MAX_P) - 1]) {
        let powers: Vec<u8> = (0..=MAX_P).rev().filter(|&p| len & (1 << p) != 0).collect();
        assert_eq!(part.split(len).powers(), &powers[..], "{len}");
    }
}

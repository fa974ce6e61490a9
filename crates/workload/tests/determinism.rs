//! Determinism: the same seed gives the identical stream, a different seed a different one; generators stay in range.

use proptest::prelude::*;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;
use workload::ycsb::{Ycsb, YcsbConfig, YcsbWorkload};
use workload::zipfian::{ScrambledZipfian, Zipfian};
use workload::{Op, ValueSize, Workload, WorkloadSpec};

fn stream(w: Workload, seed: u64) -> Vec<Op> {
    let spec = WorkloadSpec {
        records: 5000,
        operations: 3000,
        value_size: ValueSize::uniform(200, 300).unwrap(),
        key_size: None,
        values: Default::default(),
    };
    w.build(&spec, seed).unwrap().collect()
}

#[test]
fn same_seed_same_stream_different_seed_different_stream() {
    for w in Workload::all() {
        let a = stream(w, 42);
        let b = stream(w, 42);
        assert_eq!(a, b, "{w}");
        // fillseq's keys do not depend on the seed, but its value sizes (a range here) do; readseq is one scan whose
        // shape is fixed by the parameters alone.
        if w.name() != "readseq" {
            assert_ne!(a, stream(w, 43), "{w}");
        }
    }
}

/// FNV-1a over every op's kind, key and value.
fn digest(ops: impl Iterator<Item = Op>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h ^= b as u64;
            h = h.wrapping_mul(0x100_0000_01b3);
        }
    };
    for op in ops {
        eat(op.kind().name().as_bytes());
        eat(op.key());
        eat(op.value().unwrap_or_default());
        if let Op::Scan { len, .. } = op {
            eat(&len.to_le_bytes());
        }
    }
    h
}

#[test]
fn pinned_streams_do_not_drift() {
    // Digests of short streams, pinned so that a change in any generator's arithmetic, in libm, or in the seeding of
    // Pcg64Mcg shows up here instead of as silently different experiments. If a change is intended, update the
    // constants and say so in the change's description: results produced before it are not comparable.
    let spec = WorkloadSpec {
        records: 2000,
        operations: 2000,
        value_size: ValueSize::Fixed(100),
        key_size: None,
        values: Default::default(),
    };
    let got: Vec<(&str, u64)> = ["a", "fillrandom", "prefix_dist"]
        .into_iter()
        .map(|name| {
            let w: Workload = name.parse().unwrap();
            (name, digest(w.build(&spec, 7).unwrap()))
        })
        .collect();
    let want =
        [("a", 0xb3c9_1420_6e26_00cb), ("fillrandom", 0xa067_cd8d_1905_e84f), ("prefix_dist", 0xf648_0392_f426_a499)];
    for ((name, g), (_, w)) in got.iter().zip(want) {
        assert_eq!(*g, w, "{name}: digest {g:#x}");
    }
}

proptest! {
    #[test]
    fn zipfian_stays_in_range(items in 1u64..5000, theta in 0.0f64..0.999, seed: u64) {
        let mut z = Zipfian::new(items, theta).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        for _ in 0..200 {
            prop_assert!(z.next(&mut rng) < items);
        }
    }

    #[test]
    fn zipfian_with_range_stays_in_range(min in 0u64..1_000_000, span in 0u64..2000, seed: u64) {
        let mut z = Zipfian::with_range(min, min + span, 0.99).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        for _ in 0..100 {
            let v = z.next(&mut rng);
            prop_assert!(v >= min && v <= min + span);
        }
    }

    #[test]
    fn scrambled_stays_in_range(items in 1u64..1_000_000, seed: u64) {
        let mut z = ScrambledZipfian::new(items).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        for _ in 0..100 {
            prop_assert!(z.next(&mut rng) < items);
        }
    }

    #[test]
    fn ycsb_reads_only_existing_records(
        w in prop::sample::select(vec![YcsbWorkload::A, YcsbWorkload::D, YcsbWorkload::E, YcsbWorkload::F]),
        records in 2u64..300,
        ops in 1u64..400,
        seed: u64,
    ) {
        let mut g = Ycsb::new(YcsbConfig::core(w, records, ops), seed).unwrap();
        let mut count = 0;
        loop {
            let last = g.last_acknowledged();
            let Some((op, k)) = g.next_with_keynum() else { break };
            count += 1;
            if op.kind() != workload::OpKind::Insert {
                prop_assert!(k <= last);
            }
        }
        prop_assert_eq!(count, ops);
    }
}

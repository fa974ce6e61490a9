//! Unit and statistical tests of the Mixgraph generator.

use super::*;

fn run(kind: MixgraphKind, num: u64, ops: u64, seed: u64) -> Vec<(Op, u64)> {
    let mut g = Mixgraph::new(MixgraphConfig::fast20(kind, num, ops), seed).unwrap();
    std::iter::from_fn(|| g.next_with_keynum()).collect()
}

#[test]
fn key_format() {
    let k = key_from_int(0x0102_0304_0506_0708, 48);
    assert_eq!(k.len(), 48);
    assert_eq!(&k[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert!(k[8..].iter().all(|&c| c == b'0'));
    assert_eq!(key_from_int(0x0102_0304_0506_0708, 4), vec![5, 6, 7, 8]);
}

#[test]
fn names_parse() {
    for k in MixgraphKind::ALL {
        assert_eq!(k.name().parse::<MixgraphKind>().unwrap(), k);
    }
    assert_eq!("prefix-dist".parse::<MixgraphKind>().unwrap(), MixgraphKind::PrefixDist);
    let e = "prefix".parse::<MixgraphKind>().unwrap_err().to_string();
    assert!(e.contains("all_random") && e.contains("prefix_dist"), "{e}");
}

#[test]
fn bad_parameters() {
    let mut c = MixgraphConfig::fast20(MixgraphKind::AllRandom, 0, 10);
    assert!(Mixgraph::new(c.clone(), 1).is_err());
    c.num = 100;
    c.key_size = 0;
    assert!(Mixgraph::new(c.clone(), 1).is_err());
    c.key_size = 48;
    c.mix_get_ratio = -1.0;
    assert!(Mixgraph::new(c, 1).is_err());
    let c = MixgraphConfig::fast20(MixgraphKind::PrefixRandom, 10, 10);
    let e = Mixgraph::new(c, 1).unwrap_err().to_string();
    assert!(e.contains("keyrange_num"), "{e}");
}

#[test]
fn op_mix_keys_and_scan_lengths() {
    // 10^6 operations: the get / put / seek shares are within 1 % (absolute) of 0.83 / 0.14 / 0.03. QueryDecider
    // rounds each share up to a thousandth, and the standard error of a share over 10^6 draws is below 0.0004, so
    // the bound has more than 20 standard errors of room and still catches a wrong mapping of draws to kinds.
    let ops = run(MixgraphKind::PrefixDist, 100_000_000, 1_000_000, ROCKSDB_SEED);
    let mut counts = [0u64; 3];
    for (op, _) in &ops {
        assert_eq!(op.key().len(), 48);
        match op {
            Op::Read { .. } => counts[0] += 1,
            Op::Update { .. } => counts[1] += 1,
            Op::Scan { len, .. } => {
                assert!(*len < 10_000);
                counts[2] += 1;
            }
            other => panic!("unexpected op {other:?}"),
        }
    }
    let n = ops.len() as f64;
    for (c, p) in counts.iter().zip([0.83, 0.14, 0.03]) {
        let f = *c as f64 / n;
        assert!((f - p).abs() < 0.01, "share {f} vs {p}");
    }
}

#[test]
fn value_sizes_follow_generalized_pareto() {
    let (theta, k, sigma) = (0.0f64, 0.2615f64, 25.45f64);
    // The law itself: the mean of ceil(GP) over a fine grid of u is theta + sigma/(1-k) (34.46) plus about 0.5 for
    // the rounding up. Midpoint integration over 10^6 cells; the integrand's singularity at 0 (u^-k, k < 1)
    // contributes less than 10^-3 below the first cell.
    let cells = 1_000_000;
    let raw_mean: f64 =
        (0..cells).map(|i| pareto_cdf_inversion((i as f64 + 0.5) / cells as f64, theta, k, sigma) as f64).sum::<f64>()
            / cells as f64;
    let gp_mean = theta + sigma / (1.0 - k);
    assert!((raw_mean - (gp_mean + 0.5)).abs() < 0.05, "{raw_mean} vs {gp_mean}");

    // The clamp (below 10 -> 10) and wrap (above 1024 -> size % 1024), written independently of `value_size`.
    let clamp = |u: f64| {
        let v = (sigma * (u.powf(-k) - 1.0) / k).ceil();
        if v < 10.0 {
            10.0
        } else if v > 1024.0 {
            v % 1024.0
        } else {
            v
        }
    };
    let clamped_mean: f64 = (0..cells).map(|i| clamp((i as f64 + 0.5) / cells as f64)).sum::<f64>() / cells as f64;

    // The generator: with num = 10^8 the op kind's correlation with u (both come from one draw) shifts the put sizes'
    // law by at most one block of 1000 draws, 10^-5 of the u range: negligible against the bounds below.
    let sizes: Vec<f64> = run(MixgraphKind::AllRandom, 100_000_000, 1_000_000, 7)
        .into_iter()
        .filter_map(|(op, _)| match op {
            Op::Update { value, .. } => Some(value.len() as f64),
            _ => None,
        })
        .collect();
    let n = sizes.len() as f64;
    let mean = sizes.iter().sum::<f64>() / n;
    let sd = (sizes.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / n).sqrt();
    // Four standard errors (sd about 45, n about 140,000: 0.12 each).
    let tol = 4.0 * sd / n.sqrt();
    assert!((mean - clamped_mean).abs() < tol, "mean {mean} vs {clamped_mean} (tol {tol})");
    assert!(sizes.iter().all(|&s| (0.0..=1024.0).contains(&s)));
    assert!(sizes.iter().filter(|&&s| s < 10.0).count() < 100); // only wrapped sizes can fall below 10

    // Tail: P(size > x) = (1 + k x / sigma)^(-1/k) for x well inside (10, 1024). Binomial standard errors: at x = 100
    // (p = 0.067, about 9,400 hits) 1 %, at x = 300 (p = 0.0046, about 650 hits) 4 %; bounds are four of them.
    for (x, rel_tol) in [(100.0, 0.04), (300.0, 0.16)] {
        let expect = (1.0 + k * x / sigma).powf(-1.0 / k);
        let got = sizes.iter().filter(|&&s| s > x).count() as f64 / n;
        assert!((got / expect - 1.0).abs() < rel_tol, "P(size > {x}) = {got} vs {expect}");
    }
}

#[test]
fn all_dist_is_power_law() {
    // The power-law seed is ceil((u/a)^(1/b)): seed 1 for u in (0, a], seed 2 for u in (a, a 2^b]. So the key of seed
    // 1 gets a share a = 0.002312 and that of seed 2 a share a (2^b - 1) = 0.000628. Over 10^6 draws the standard
    // errors are 2 % and 4 % of those; the bounds are 10 % and 20 %.
    let num = 100_000_000;
    let ops = run(MixgraphKind::AllDist, num, 1_000_000, 3);
    let (a, b) = (0.002312f64, 0.3467f64);
    let k1 = first_output(1) % num;
    let k2 = first_output(2) % num;
    let share = |k: u64| ops.iter().filter(|(_, id)| *id == k).count() as f64 / ops.len() as f64;
    assert!((share(k1) / a - 1.0).abs() < 0.10, "{}", share(k1));
    let p2 = a * (2f64.powf(b) - 1.0);
    assert!((share(k2) / p2 - 1.0).abs() < 0.20, "{}", share(k2));
}

#[test]
fn prefix_random_concentrates_on_hot_ranges() {
    // FAST'20 key-range parameters: the hottest range's share is p(1) / sum p = 0.79 before flooring the shares to
    // integers (RocksDB's amplify = 689); after flooring it is 538/667 = 0.807. Pre-#6795 behaviour sends about 80 %
    // of operations there; post-#6795 would spread them uniformly (1/30 each).
    let num = 3_000_000;
    let mut g = Mixgraph::new(MixgraphConfig::fast20(MixgraphKind::PrefixRandom, num, 200_000), 5).unwrap();
    let (hot, share, size) = {
        let r = g.key_ranges().unwrap();
        assert_eq!(r.len(), 30);
        let (hot, share) =
            (0..r.len()).map(|i| (i, r.share(i))).fold((0, 0.0), |best, x| if x.1 > best.1 { x } else { best });
        let total: f64 = (0..r.len()).map(|i| r.share(i)).sum();
        assert!((total - 1.0).abs() < 1e-12);
        (hot as u64, share, r.range_size())
    };
    assert!((share - 538.0 / 667.0).abs() < 1e-9, "{share}");
    let ids: Vec<u64> = std::iter::from_fn(|| g.next_with_keynum()).map(|(_, id)| id).collect();
    let got = ids.iter().filter(|&&id| id / size == hot).count() as f64 / ids.len() as f64;
    // Standard error over 2 * 10^5 draws: 0.0009; bound 0.01.
    assert!((got - share).abs() < 0.01, "{got} vs {share}");
    // Inside the hot range, offsets are uniform: both halves get about half.
    let low_half = ids.iter().filter(|&&id| id / size == hot && id % size < size / 2).count() as f64;
    let in_hot = ids.iter().filter(|&&id| id / size == hot).count() as f64;
    assert!((low_half / in_hot - 0.5).abs() < 0.01);
}

#[test]
fn fill_phase() {
    let c = MixgraphConfig::fast20(MixgraphKind::AllRandom, 1000, 1);
    let ops: Vec<Op> = MixgraphFill::new(&c, ROCKSDB_SEED).unwrap().collect();
    assert_eq!(ops.len(), 1000);
    assert!(ops
        .iter()
        .all(|o| o.kind() == OpKind::Insert && o.key().len() == 48 && o.value().map(<[u8]>::len) == Some(43)));
    let mut r = Mt19937_64::new(ROCKSDB_SEED);
    assert_eq!(ops[0].key(), key_from_int(r.next_u64() % 1000, 48).as_slice());
}

#[test]
fn deterministic() {
    let a: Vec<Op> = run(MixgraphKind::PrefixDist, 1_000_000, 2000, 9).into_iter().map(|x| x.0).collect();
    let b: Vec<Op> = run(MixgraphKind::PrefixDist, 1_000_000, 2000, 9).into_iter().map(|x| x.0).collect();
    let c: Vec<Op> = run(MixgraphKind::PrefixDist, 1_000_000, 2000, 10).into_iter().map(|x| x.0).collect();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

//! YCSB core workloads: operation mix, key choice, values, scans.

use std::collections::HashSet;
use workload::fnv::fnvhash64;
use workload::ycsb::{build_key_name, Phase, RequestDistribution, Ycsb, YcsbConfig, YcsbWorkload};
use workload::{Op, OpKind, WorkloadError};

const RECORDS: u64 = 100_000;
const OPS: u64 = 1_000_000;

fn mix(w: YcsbWorkload) -> [f64; 5] {
    let mut counts = [0u64; 5];
    for op in Ycsb::new(YcsbConfig::core(w, RECORDS, OPS), 11).unwrap() {
        let i = OpKind::ALL.iter().position(|&k| k == op.kind()).unwrap();
        counts[i] += 1;
    }
    assert_eq!(counts.iter().sum::<u64>(), OPS);
    counts.map(|c| c as f64 / OPS as f64)
}

/// The proportions of `w` over 10^6 operations are within 1 % (absolute) of YCSB's, and within five binomial standard
/// errors (at most 0.0025 for p = 0.5): the second bound is the sharp one; the first is the brief's.
fn check_mix(w: YcsbWorkload, expect: [f64; 5]) {
    let got = mix(w);
    for ((g, e), kind) in got.iter().zip(expect).zip(OpKind::ALL) {
        let se = (e * (1.0 - e) / OPS as f64).sqrt();
        assert!((g - e).abs() < 0.01, "{w} {}: {g} vs {e}", kind.name());
        assert!((g - e).abs() <= 5.0 * se + 1e-12, "{w} {}: {g} vs {e}", kind.name());
    }
}

// Order: read, update, insert, scan, read-modify-write.
#[test]
fn mix_a() {
    check_mix(YcsbWorkload::A, [0.5, 0.5, 0.0, 0.0, 0.0]);
}
#[test]
fn mix_b() {
    check_mix(YcsbWorkload::B, [0.95, 0.05, 0.0, 0.0, 0.0]);
}
#[test]
fn mix_c() {
    check_mix(YcsbWorkload::C, [1.0, 0.0, 0.0, 0.0, 0.0]);
}
#[test]
fn mix_d() {
    check_mix(YcsbWorkload::D, [0.95, 0.0, 0.05, 0.0, 0.0]);
}
#[test]
fn mix_e() {
    check_mix(YcsbWorkload::E, [0.0, 0.0, 0.05, 0.95, 0.0]);
}
#[test]
fn mix_f() {
    check_mix(YcsbWorkload::F, [0.5, 0.0, 0.0, 0.0, 0.5]);
}

#[test]
fn d_reads_concentrate_on_latest_inserts() {
    // Workload D draws a read's record as last_acknowledged - zipf(last_acknowledged): the age of the record read
    // (how many inserts ago it was written) is Zipfian over the records present. The 5 % inserts grow them from 10^5
    // to 1.5 x 10^5 during the run, so the law drifts: Gray's formula (with YCSB's eta) gives P(age = 0) = 1/zeta(n)
    // from 0.0783 down to 0.0756, and P(age < 1000) from 0.613 down to 0.578. The observed shares must lie within
    // those ranges, widened by four standard errors (0.001 and 0.002 over about 950,000 reads). A uniform choice would
    // give 10^-5 and 0.01.
    let mut g = Ycsb::new(YcsbConfig::core(YcsbWorkload::D, RECORDS, OPS), 5).unwrap();
    let (mut reads, mut newest, mut newest_1000) = (0u64, 0u64, 0u64);
    loop {
        let last = g.last_acknowledged();
        let Some((op, k)) = g.next_with_keynum() else {
            break;
        };
        if op.kind() == OpKind::Read {
            assert!(k <= last);
            reads += 1;
            let age = last - k;
            newest += (age == 0) as u64;
            newest_1000 += (age < 1000) as u64;
        }
    }
    let p0 = newest as f64 / reads as f64;
    let p1 = newest_1000 as f64 / reads as f64;
    assert!((0.0756 - 0.001..=0.0783 + 0.001).contains(&p0), "P(age = 0) = {p0}");
    assert!((0.578 - 0.002..=0.613 + 0.002).contains(&p1), "P(age < 1000) = {p1}");

    // Contrast: workload B's scrambled Zipfian has no preference for recent key numbers.
    let mut b = Ycsb::new(YcsbConfig::core(YcsbWorkload::B, RECORDS, 200_000), 5).unwrap();
    let recent = std::iter::from_fn(|| b.next_with_keynum()).filter(|(_, k)| *k >= RECORDS - RECORDS / 100).count()
        as f64
        / 200_000.0;
    assert!(recent < 0.05, "{recent}");
}

#[test]
fn load_phase_keys_and_values() {
    let ops: Vec<Op> = Ycsb::new(YcsbConfig::core(YcsbWorkload::Load, 1000, 0), 1).unwrap().collect();
    assert_eq!(ops.len(), 1000);
    let mut keys = HashSet::new();
    for (i, op) in ops.iter().enumerate() {
        let Op::Insert { key, value } = op else {
            panic!("load must only insert, got {op:?}");
        };
        let expect = format!("user{}", fnvhash64(i as u64));
        assert_eq!(key.as_slice(), expect.as_bytes());
        assert_eq!(value.len(), 1000); // 10 fields x 100 bytes
        assert!(keys.insert(key.clone()));
    }
}

#[test]
fn updates_write_one_field_unless_all_fields() {
    let mut c = YcsbConfig::core(YcsbWorkload::A, 1000, 2000);
    for op in Ycsb::new(c.clone(), 3).unwrap() {
        if let Op::Update { value, .. } = op {
            assert_eq!(value.len(), 100);
        }
    }
    c.write_all_fields = true;
    for op in Ycsb::new(c, 3).unwrap() {
        if let Op::Update { value, .. } = op {
            assert_eq!(value.len(), 1000);
        }
    }
    let c = YcsbConfig::core(YcsbWorkload::F, 1000, 2000).with_record_size(4096);
    let mut rmw = 0;
    for op in Ycsb::new(c, 3).unwrap() {
        if let Op::ReadModifyWrite { value, .. } = op {
            assert_eq!(value.len(), 4096);
            rmw += 1;
        }
    }
    assert!(rmw > 800);
    let load: Vec<Op> =
        Ycsb::new(YcsbConfig::core(YcsbWorkload::Load, 10, 0).with_record_size(256), 3).unwrap().collect();
    assert!(load.iter().all(|o| o.value().map(<[u8]>::len) == Some(256)));
}

#[test]
fn e_scans_and_inserts() {
    // Scan lengths uniform in 1..=100: every length appears, mean 50.5 (sd 28.9, about 95,000 scans: standard error
    // 0.09; bound 0.5). Inserts continue the key numbers from record_count, and no scan starts past the last insert.
    let mut g = Ycsb::new(YcsbConfig::core(YcsbWorkload::E, 10_000, 100_000), 8).unwrap();
    let mut seen = [false; 101];
    let (mut sum, mut scans) = (0u64, 0u64);
    let mut next_insert = 10_000;
    loop {
        let last = g.last_acknowledged();
        let Some((op, k)) = g.next_with_keynum() else {
            break;
        };
        match op {
            Op::Scan { start_key, len } => {
                assert!((1..=100).contains(&len));
                assert!(k <= last);
                assert_eq!(start_key, build_key_name(k, 1, true));
                seen[len as usize] = true;
                sum += len;
                scans += 1;
            }
            Op::Insert { .. } => {
                assert_eq!(k, next_insert);
                next_insert += 1;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(seen[1..].iter().all(|&s| s));
    let mean = sum as f64 / scans as f64;
    assert!((mean - 50.5).abs() < 0.5, "{mean}");
}

#[test]
fn zipfian_requests_redraw_past_last_insert() {
    // With few records and many expected inserts, the scrambled Zipfian's range (records + 2 x expected inserts)
    // exceeds the records present; YCSB redraws those. Every chosen key number must exist.
    let mut c = YcsbConfig::core(YcsbWorkload::A, 100, 10_000);
    c.proportions.insert = 0.5;
    let mut g = Ycsb::new(c, 2).unwrap();
    loop {
        let last = g.last_acknowledged();
        let Some((op, k)) = g.next_with_keynum() else {
            break;
        };
        if op.kind() != OpKind::Insert {
            assert!(k <= last, "{k} > {last}");
        }
    }
}

#[test]
fn hotspot_and_uniform() {
    let mut c = YcsbConfig::core(YcsbWorkload::C, 10_000, 100_000);
    c.request_distribution = RequestDistribution::Hotspot { hot_data_fraction: 0.2, hot_op_fraction: 0.8 };
    let mut g = Ycsb::new(c.clone(), 4).unwrap();
    let hot = std::iter::from_fn(|| g.next_with_keynum()).filter(|(_, k)| *k < 2000).count() as f64 / 100_000.0;
    assert!((hot - 0.8).abs() < 0.01, "{hot}");
    c.request_distribution = RequestDistribution::Uniform;
    let mut g = Ycsb::new(c, 4).unwrap();
    let low = std::iter::from_fn(|| g.next_with_keynum()).filter(|(_, k)| *k < 2000).count() as f64 / 100_000.0;
    assert!((low - 0.2).abs() < 0.01, "{low}");
}

#[test]
fn bad_configs_name_the_field() {
    let field_of = |c: YcsbConfig| match Ycsb::new(c, 1) {
        Err(WorkloadError::InvalidParameter { field, .. }) => field,
        other => panic!("expected an error, got {other:?}"),
    };
    assert_eq!(field_of(YcsbConfig::core(YcsbWorkload::A, 0, 10)), "record_count");
    let mut c = YcsbConfig::core(YcsbWorkload::A, 10, 10);
    c.field_count = 0;
    assert_eq!(field_of(c), "field_count");
    let mut c = YcsbConfig::core(YcsbWorkload::E, 10, 10);
    c.max_scan_length = 0;
    assert_eq!(field_of(c), "max_scan_length");
    let mut c = YcsbConfig::core(YcsbWorkload::A, 10, 10);
    c.proportions.read = f64::NAN;
    assert_eq!(field_of(c), "proportions");
    let mut c = YcsbConfig::core(YcsbWorkload::A, 10, 10);
    c.insert_count = Some(11);
    assert_eq!(field_of(c), "insert_count");
    assert_eq!(field_of(YcsbConfig::core(YcsbWorkload::D, 1, 10)), "record_count");
    let c = YcsbConfig::core(YcsbWorkload::A, 10, 10).load_phase();
    assert_eq!(c.phase, Phase::Load);
    let e = "g".parse::<YcsbWorkload>().unwrap_err().to_string();
    assert!(e.contains("load, a, b, c, d, e, f"), "{e}");
}

//! db_bench generators: key format, value compressibility, zipfian fill.

use workload::db_bench::{format_key, DbBench, DbBenchConfig, DbBenchKind, ZipfianKeyOrder, LEVELDB_FIRST_SEED};
use workload::zipfian::zeta;
use workload::{Op, ValueSize};

fn ops(kind: DbBenchKind, num: u64, f: impl FnOnce(&mut DbBenchConfig)) -> Vec<Op> {
    let mut c = DbBenchConfig::new(kind, num);
    f(&mut c);
    DbBench::new(c, LEVELDB_FIRST_SEED).unwrap().collect()
}

#[test]
fn keys_are_16_ascii_digits_below_num() {
    for kind in [
        DbBenchKind::FillSeq,
        DbBenchKind::FillRandom,
        DbBenchKind::Overwrite,
        DbBenchKind::ReadRandom,
        DbBenchKind::SeekRandom,
        DbBenchKind::FillZipfian,
    ] {
        let all = ops(kind, 50_000, |_| {});
        assert_eq!(all.len(), 50_000, "{kind}");
        for op in &all {
            let k = op.key();
            assert_eq!(k.len(), 16, "{kind}");
            assert!(k.iter().all(u8::is_ascii_digit), "{kind}");
            let n: u64 = std::str::from_utf8(k).unwrap().parse().unwrap();
            assert!(n < 50_000, "{kind}");
        }
    }
}

/// Compressed size / raw size of `data` cut into 4 KiB blocks (an SST data block) and compressed one by one.
fn lz4_ratio(data: &[u8]) -> f64 {
    let compressed: usize = data.chunks(4096).map(|b| lz4_flex::block::compress(b).len()).sum();
    compressed as f64 / data.len() as f64
}

#[test]
fn values_compress_to_about_half() {
    // LevelDB builds values so that a compressor halves them: each 100-byte piece is 50 random printable bytes said
    // twice. LZ4 (like Snappy, LevelDB's compressor) finds the repeat but cannot shrink the random half (95 symbols,
    // no entropy coding), so 4 KiB blocks of values come out at 50 % plus LZ4's token overhead and the loss at piece
    // and value boundaries: we accept 0.45..0.65. With compression_ratio 1.0 the same measure must be above 0.95, which
    // shows the measure can tell.
    let concat = |ratio: f64| -> Vec<u8> {
        ops(DbBenchKind::FillRandom, 20_000, |c| {
            c.value_size = ValueSize::Fixed(100);
            c.compression_ratio = ratio;
        })
        .into_iter()
        .flat_map(|op| op.value().unwrap_or_default().to_vec())
        .collect()
    };
    let half = lz4_ratio(&concat(0.5));
    assert!((0.45..0.65).contains(&half), "ratio {half}");
    let none = lz4_ratio(&concat(1.0));
    assert!(none > 0.95, "ratio {none}");
    // Larger values are consecutive slices of the same buffer and compress the same way.
    let big: Vec<u8> = ops(DbBenchKind::FillSeq, 1000, |c| c.value_size = ValueSize::Fixed(4096))
        .into_iter()
        .flat_map(|op| op.value().unwrap_or_default().to_vec())
        .collect();
    let r = lz4_ratio(&big);
    assert!((0.45..0.65).contains(&r), "ratio {r}");
}

#[test]
fn variable_value_sizes_keep_the_key_stream() {
    let fixed = ops(DbBenchKind::FillRandom, 1000, |_| {});
    let ranged = ops(DbBenchKind::FillRandom, 1000, |c| {
        c.value_size = ValueSize::uniform(100, 1024).unwrap();
    });
    for (a, b) in fixed.iter().zip(&ranged) {
        assert_eq!(a.key(), b.key());
        let n = b.value().map_or(0, <[u8]>::len);
        assert!((100..=1024).contains(&n));
    }
}

#[test]
fn fillzipfian_follows_zipf() {
    // Key 0 is rank 0 with share 1/zeta(num, 0.99) (0.0782 for 10^5 keys); rank 1 has 0.5^0.99 of that. Standard
    // errors over 10^5 draws: 1 % and 1.5 % relative; bounds 6 % and 8 %.
    let num = 100_000;
    let all = ops(DbBenchKind::FillZipfian, num, |_| {});
    let share = |k: u64| all.iter().filter(|o| o.key() == format_key(k).as_slice()).count() as f64 / num as f64;
    let p0 = 1.0 / zeta(num, 0.99);
    assert!((share(0) / p0 - 1.0).abs() < 0.06, "{} vs {p0}", share(0));
    let p1 = p0 * 0.5f64.powf(0.99);
    assert!((share(1) / p1 - 1.0).abs() < 0.08, "{} vs {p1}", share(1));
    // Hashed order moves the hot key away from 0 but keeps its share.
    let hashed = ops(DbBenchKind::FillZipfian, num, |c| c.zipf_order = ZipfianKeyOrder::Hashed);
    let hot = workload::fnv::fnvhash64(0) % num;
    let s = hashed.iter().filter(|o| o.key() == format_key(hot).as_slice()).count() as f64 / num as f64;
    assert!((s / p0 - 1.0).abs() < 0.06, "{s} vs {p0}");
}

//! A rough speed measurement of the memtable, not a test: it asserts nothing about time.
//! Run: `cargo test -p lsm --release --test memtable_bench -- --ignored --nocapture`.

use std::time::Instant;

use lsm::iter::InternalIterator;
use lsm::key::ValueKind;
use lsm::memtable::{LookupResult, MemTable};

fn keys(n: usize, seed: u64) -> Vec<[u8; 16]> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            let mut k = [0u8; 16];
            for half in k.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                half.copy_from_slice(&x.to_be_bytes());
            }
            k
        })
        .collect()
}

#[test]
#[ignore = "measurement; run with --ignored --nocapture in release"]
fn memtable_insert_get_scan_speed() {
    const N: usize = 1_000_000;
    let keys = keys(N, 0x1234_5678);
    let value = [7u8; 100];
    let mem = MemTable::new();

    let t = Instant::now();
    for (i, k) in keys.iter().enumerate() {
        mem.add(i as u64 + 1, ValueKind::Value, k, &value);
    }
    let insert = t.elapsed();

    let t = Instant::now();
    let mut found = 0;
    for k in keys.iter().rev() {
        if let LookupResult::Found(v) = mem.get(k, u64::MAX) {
            found += v.len();
        }
    }
    let get = t.elapsed();
    assert_eq!(found, N * 100);

    let t = Instant::now();
    let mut it = mem.iter();
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += it.key().len();
        it.next();
    }
    let scan = t.elapsed();
    assert_eq!(n, N * 24);

    let per = |d: std::time::Duration| d.as_nanos() as f64 / N as f64;
    println!(
        "memtable, {N} random 16-byte keys / 100-byte values: insert {:.0} ns/op, get {:.0} ns/op, \
         scan {:.0} ns/entry; accounted {} MiB, heap {} MiB",
        per(insert),
        per(get),
        per(scan),
        mem.approximate_memory_usage() >> 20,
        mem.heap_bytes() >> 20
    );
}

/// db_bench's shape: `%016d` keys (their first 8 bytes are all '0' below 10^8, so an 8-byte
/// prefix never decides) and 100-byte values, in memtables of LevelDB's 4 MiB default.
#[test]
#[ignore = "measurement; run with --ignored --nocapture in release"]
fn memtable_db_bench_keys_speed() {
    const N: usize = 1_000_000;
    let value = [7u8; 100];
    let mut x: u64 = 301;
    let keys: Vec<Vec<u8>> = (0..N)
        .map(|_| {
            // Park-Miller, as db_bench draws its random keys.
            x = x * 16807 % 2_147_483_647;
            format!("{:016}", x % N as u64).into_bytes()
        })
        .collect();
    let mut tables = vec![MemTable::new()];
    let t = Instant::now();
    for (i, k) in keys.iter().enumerate() {
        if tables.last().is_some_and(|m| m.approximate_memory_usage() > 4 << 20) {
            tables.push(MemTable::new());
        }
        if let Some(m) = tables.last() {
            m.add(i as u64 + 1, ValueKind::Value, k, &value);
        }
    }
    let insert = t.elapsed();
    let t = Instant::now();
    let mut found = 0usize;
    for k in keys.iter().rev() {
        if let Some(m) = tables.last() {
            if let LookupResult::Found(v) = m.get(k, u64::MAX) {
                found += v.len();
            }
        }
    }
    let get = t.elapsed();
    assert!(found > 0);
    let per = |d: std::time::Duration| d.as_nanos() as f64 / N as f64;
    println!(
        "memtable, {N} db_bench keys in {} tables of 4 MiB: insert {:.0} ns/op, get (last table) {:.0} ns/op",
        tables.len(),
        per(insert),
        per(get)
    );
}

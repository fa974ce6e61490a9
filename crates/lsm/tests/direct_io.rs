//! Direct I/O: an engine whose files are all opened for direct I/O (`direct_reads` and
//! `direct_writes`, as on ZenFS) never touches the host's page cache, so on a file system with a
//! page cache it costs the device exactly what it costs with none: the same pages read and
//! written, at the same simulated times. Buffered, the same run does not.

use std::sync::Arc;

use flashsim::{BlockSsd, Preset, SimClock, SsdConfig};
use lsm::{Db, Options, ReadOptions, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{Env, HostWriteStats, PageCacheConfig, PageCacheStats, SimFs, SimFsOptions};

/// What a run cost: host I/O by cause, the simulated end time, the cache's statistics.
type Cost = (HostWriteStats, u64, PageCacheStats);

/// 4000 random 1 KiB puts then 2000 gets on a femu SSD with a page cache of `cache` bytes; the
/// database is closed before the statistics are read.
fn run(cache: u64, direct: bool) -> Cost {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(256 << 20)).unwrap();
    let fs = SimFs::format(BlockSsd::new(cfg).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap();
    fs.set_page_cache(PageCacheConfig::with_capacity(cache)).unwrap();
    let o = Options {
        create_if_missing: true,
        write_buffer_size: 128 << 10,
        max_file_size: 128 << 10,
        max_bytes_for_level_base: 512 << 10,
        block_cache_bytes: 32 << 10,
        direct_reads: direct,
        direct_writes: direct,
        ..Options::default()
    };
    let db = Db::open(Env::new(Arc::new(fs.clone())), "db", o).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(3);
    for _ in 0..4000 {
        let mut v = vec![0u8; 1000];
        rng.fill_bytes(&mut v);
        db.put(&WriteOptions::default(), format!("k{:06}", rng.next_u64() % 3000).as_bytes(), &v).unwrap();
    }
    for _ in 0..2000 {
        db.get(&ReadOptions::default(), format!("k{:06}", rng.next_u64() % 3000).as_bytes()).unwrap();
    }
    drop(db);
    fs.write_back_all().unwrap();
    (fs.stats(), fs.sim_clock().now(), fs.page_cache_stats())
}

#[test]
fn an_engine_on_direct_io_costs_what_it_costs_without_a_page_cache() {
    let (none, direct, buffered) = (run(0, false), run(4 << 20, true), run(4 << 20, false));
    assert!(none.0.read_bytes > 0 && none.0.flush_bytes > 0, "the run reads and writes: {:?}", none.0);
    assert_eq!(direct.0, none.0, "the same device I/O by cause");
    assert_eq!(direct.1, none.1, "the same simulated time");
    let d = &direct.2;
    // CURRENT (16 bytes, written twice and read once) is buffered; nothing else went through the
    // cache: a data file would read ahead and write back pages.
    assert!(d.hits + d.misses <= 2 && d.readahead_pages == 0 && d.written_back() <= 32, "{d:?}");
    // The control: buffered, the cache serves reads and the device reads less.
    assert!(buffered.2.hits > 0, "{:?}", buffered.2);
    assert!(buffered.0.read_bytes < none.0.read_bytes, "{} vs {}", buffered.0.read_bytes, none.0.read_bytes);
}

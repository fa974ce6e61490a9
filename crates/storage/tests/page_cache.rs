//! The page cache of the flash file system against a model: random appends, reads, syncs and
//! deletes on files of whole pages return the model's bytes, and the identities hold — pages the
//! device read = misses + readahead, bytes the device took = bytes written back, hits + misses =
//! pages asked for, the cache never over its size; and each write-back cause, readahead, the
//! write-back order and a hit's cost, one scenario each. Handles opened for direct I/O bypass the
//! cache: a history mixing them still reads the model's bytes, and one that uses only them costs
//! the device exactly what it costs with no cache.

use std::collections::BTreeMap;

use flashsim::{BlockSsd, Geometry, Preset, SimClock, SsdConfig, Wait, ZonedConfig, ZonedSsd};
use proptest::prelude::*;
use storage::{
    Fs, FsError, HostWriteStats, PageCacheConfig, PageCacheStats, SimFs, SimFsOptions, WritableFile, WriteHint, ZoneFs,
    ZoneFsOptions,
};

const PS: u64 = 4096;

fn simfs(cache_pages: u64) -> SimFs {
    simfs_with(PageCacheConfig::with_capacity(cache_pages * PS))
}

fn simfs_with(cache: PageCacheConfig) -> SimFs {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap();
    let opts = SimFsOptions { journal_region_pages: 20, alloc_window_pages: 16 };
    let fs = SimFs::format(BlockSsd::new(cfg).unwrap(), SimClock::new(), opts).unwrap();
    fs.set_page_cache(cache).unwrap();
    fs
}

fn zonefs(cache_pages: u64) -> ZoneFs {
    zonefs_with(PageCacheConfig::with_capacity(cache_pages * PS))
}

fn zonefs_with(cache: PageCacheConfig) -> ZoneFs {
    let g = Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 32,
        pages_per_block: 64,
        page_size: PS as u32,
        oob_size: 64,
    };
    let zone = 4 * g.block_bytes();
    let dev = ZonedSsd::new(ZonedConfig::new(g, Preset::Femu.timing(), zone)).unwrap();
    let fs = ZoneFs::format(dev, SimClock::new(), ZoneFsOptions::default()).unwrap();
    fs.set_page_cache(cache).unwrap();
    fs
}

/// A cache of `pages` pages that leaves its clean whole pages on the device.
fn on_device(pages: u64) -> PageCacheConfig {
    PageCacheConfig { clean_on_device: true, ..PageCacheConfig::with_capacity(pages * PS) }
}

#[derive(Debug, Clone)]
enum Op {
    /// `direct`: the file is created for direct I/O (when this append creates it).
    Append {
        file: u8,
        pages: u8,
        seed: u8,
        direct: bool,
    },
    Read {
        file: u8,
        offset: u16,
        len: u16,
        direct: bool,
    },
    Sync {
        file: u8,
    },
    Remove {
        file: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..3u8, 1..6u8, any::<u8>(), any::<bool>())
            .prop_map(|(file, pages, seed, direct)| Op::Append { file, pages, seed, direct }),
        5 => (0..3u8, any::<u16>(), 1..20_000u16, any::<bool>())
            .prop_map(|(file, offset, len, direct)| Op::Read { file, offset, len, direct }),
        2 => (0..3u8).prop_map(|file| Op::Sync { file }),
        1 => (0..3u8).prop_map(|file| Op::Remove { file }),
    ]
}

/// What a history did: pages its buffered reads asked for, device pages its direct reads read
/// (a zoned file's unwritten tail is read from its buffer), bytes it appended directly.
#[derive(Default)]
struct Ran {
    pages_asked: u64,
    direct_pages_read: u64,
    direct_bytes_written: u64,
}

/// Which handles a history opens for direct I/O.
#[derive(Clone, Copy, PartialEq)]
enum Direct {
    /// Those its ops say.
    AsOps,
    /// Readers its ops say; no writer. A zoned file's direct writes wait in the placement's write
    /// buffer, where a buffered read's miss finds them without a device read.
    ReadsAsOps,
    All,
}

/// Runs `ops` on `fs`, checking every read against the model; syncs every file at the end.
/// `read_bytes` gives the device's reads.
fn run(fs: &dyn Fs, read_bytes: &dyn Fn() -> u64, ops: &[Op], mode: Direct) -> Result<Ran, TestCaseError> {
    let mut model: BTreeMap<u8, Vec<u8>> = BTreeMap::new();
    let mut writers: BTreeMap<u8, (Box<dyn WritableFile>, bool)> = BTreeMap::new();
    let mut ran = Ran::default();
    let path = |f: u8| format!("f{f}");
    for op in ops {
        match *op {
            Op::Append { file, pages, seed, direct } => {
                let data: Vec<u8> = (0..pages as usize * PS as usize).map(|i| (i as u8).wrapping_mul(seed)).collect();
                let (w, direct) = writers.entry(file).or_insert_with(|| {
                    model.insert(file, Vec::new());
                    let direct = (direct && mode == Direct::AsOps) || mode == Direct::All;
                    let w =
                        if direct { fs.create_direct(&path(file), WriteHint::None) } else { fs.create(&path(file)) };
                    (w.unwrap(), direct)
                });
                w.append(&data).unwrap();
                if *direct {
                    ran.direct_bytes_written += data.len() as u64;
                }
                model.get_mut(&file).unwrap().extend_from_slice(&data);
            }
            Op::Read { file, offset, len, direct } => {
                let Some(want) = model.get(&file) else { continue };
                if want.is_empty() {
                    continue;
                }
                let offset = offset as usize % want.len();
                let len = (len as usize).min(want.len() - offset);
                let mut buf = vec![0u8; len];
                let direct = direct || mode == Direct::All;
                let r = if direct { fs.open_direct(&path(file)) } else { fs.open(&path(file)) }.unwrap();
                let before = read_bytes();
                prop_assert_eq!(r.read_at(offset as u64, &mut buf).unwrap(), len);
                prop_assert!(buf == want[offset..offset + len], "bytes of {} at {}", path(file), offset);
                let pages = (offset + len - 1) as u64 / PS - offset as u64 / PS + 1;
                if direct {
                    let read = (read_bytes() - before) / PS;
                    prop_assert!(read <= pages, "a direct read reads only what it asks for");
                    ran.direct_pages_read += read;
                } else {
                    ran.pages_asked += pages;
                }
            }
            Op::Sync { file } => {
                if let Some((w, _)) = writers.get_mut(&file) {
                    w.sync().unwrap();
                }
            }
            Op::Remove { file } => {
                if writers.remove(&file).is_some() {
                    fs.remove(&path(file)).unwrap();
                    model.remove(&file);
                }
            }
        }
    }
    for (w, _) in writers.values_mut() {
        w.sync().unwrap();
    }
    Ok(ran)
}

/// The identities of a history's cache statistics `s` and host writes `w`.
fn check_identities(s: &PageCacheStats, w: &HostWriteStats, ran: &Ran) -> Result<(), TestCaseError> {
    prop_assert_eq!(s.hits + s.misses, ran.pages_asked, "hits + misses = pages asked for");
    prop_assert_eq!(
        w.read_bytes / PS,
        s.misses + s.readahead_pages + ran.direct_pages_read,
        "device reads = misses + readahead + direct reads"
    );
    prop_assert_eq!(
        w.other_bytes,
        s.written_back() + ran.direct_bytes_written,
        "device writes = bytes written back + direct writes"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn simfs_cache_matches_the_model_and_its_identities(
        ops in proptest::collection::vec(op(), 1..80),
        pages in prop_oneof![Just(1u64), Just(3), Just(16), Just(200)],
    ) {
        let fs = simfs(pages);
        let ran = run(&fs, &|| fs.stats().read_bytes, &ops, Direct::AsOps)?;
        check_identities(&fs.page_cache_stats(), &fs.stats(), &ran)?;
    }

    #[test]
    fn zonefs_cache_matches_the_model_and_its_identities(
        ops in proptest::collection::vec(op(), 1..80),
        pages in prop_oneof![Just(1u64), Just(3), Just(16), Just(200)],
    ) {
        let fs = zonefs(pages);
        let ran = run(&fs, &|| fs.stats().read_bytes, &ops, Direct::ReadsAsOps)?;
        check_identities(&fs.page_cache_stats(), &fs.stats(), &ran)?;
    }

    /// Leaving clean pages on the device changes where a hit's bytes come from, nothing else:
    /// the same bytes read (the model's), the same device work, cache statistics and time.
    #[test]
    fn clean_pages_left_on_the_device_read_and_cost_the_same(
        ops in proptest::collection::vec(op(), 1..80),
        pages in prop_oneof![Just(1u64), Just(3), Just(16), Just(200)],
    ) {
        let (kept, left) = (simfs(pages), simfs_with(on_device(pages)));
        run(&kept, &|| kept.stats().read_bytes, &ops, Direct::AsOps)?;
        let ran = run(&left, &|| left.stats().read_bytes, &ops, Direct::AsOps)?;
        check_identities(&left.page_cache_stats(), &left.stats(), &ran)?;
        prop_assert_eq!(kept.stats(), left.stats());
        prop_assert_eq!(kept.page_cache_stats(), left.page_cache_stats());
        prop_assert_eq!(kept.sim_clock().now(), left.sim_clock().now());
        let (kept, left) = (zonefs(pages), zonefs_with(on_device(pages)));
        run(&kept, &|| kept.stats().read_bytes, &ops, Direct::ReadsAsOps)?;
        let ran = run(&left, &|| left.stats().read_bytes, &ops, Direct::ReadsAsOps)?;
        check_identities(&left.page_cache_stats(), &left.stats(), &ran)?;
        prop_assert_eq!(kept.stats(), left.stats());
        prop_assert_eq!(kept.page_cache_stats(), left.page_cache_stats());
        prop_assert_eq!(kept.sim_clock().now(), left.sim_clock().now());
    }

    #[test]
    fn direct_io_everywhere_costs_what_no_cache_costs(
        ops in proptest::collection::vec(op(), 1..80),
        pages in prop_oneof![Just(1u64), Just(16), Just(200)],
    ) {
        let (cached, none) = (simfs(pages), simfs(0));
        run(&cached, &|| cached.stats().read_bytes, &ops, Direct::All)?;
        run(&none, &|| none.stats().read_bytes, &ops, Direct::AsOps)?;
        prop_assert_eq!(cached.stats(), none.stats());
        prop_assert_eq!(cached.sim_clock().now(), none.sim_clock().now());
        prop_assert_eq!(cached.page_cache_stats().hits + cached.page_cache_stats().misses, 0);
        let (cached, none) = (zonefs(pages), zonefs(0));
        run(&cached, &|| cached.stats().read_bytes, &ops, Direct::All)?;
        run(&none, &|| none.stats().read_bytes, &ops, Direct::AsOps)?;
        prop_assert_eq!(cached.stats(), none.stats());
        prop_assert_eq!(cached.sim_clock().now(), none.sim_clock().now());
    }
}

fn append(w: &mut dyn WritableFile, pages: u64) {
    w.append(&vec![7u8; (pages * PS) as usize]).unwrap();
}

#[test]
fn each_write_back_cause_and_a_deletes_dropped_pages() {
    // 100 pages: background write-back above 10 dirty pages.
    let fs = simfs(100);
    let mut a = fs.create("a").unwrap();
    for _ in 0..20 {
        append(a.as_mut(), 1);
    }
    let s = fs.page_cache_stats();
    // The 11th dirty page passed the ratio: all 11 went; 9 are dirty since.
    assert_eq!((s.written_back_background, s.dirty_peak_bytes), (11 * PS, 11 * PS));
    assert_eq!(fs.file_size("a").unwrap(), 20 * PS, "dirty bytes count in the length");
    // The pages went in file order: consecutive device pages.
    let lpns: Vec<u64> = (0..11).map(|p| fs.lpn_of("a", p * PS).unwrap()).collect();
    assert!(lpns.windows(2).all(|w| w[1] == w[0] + 1), "{lpns:?}");
    drop(a);
    fs.remove("a").unwrap();
    let s = fs.page_cache_stats();
    assert_eq!(s.dropped_dirty_bytes, 9 * PS);
    assert_eq!(fs.stats().other_bytes, 11 * PS, "a deleted file's dirty pages were never written");

    // Expiry: a page dirtied, then 31 s later another append writes it back (the new partial page
    // waits).
    let mut b = fs.create("b").unwrap();
    append(b.as_mut(), 1);
    fs.sim_clock().sleep(31_000_000_000, Wait::Idle);
    b.append(&[1]).unwrap();
    assert_eq!(fs.page_cache_stats().written_back_expired, PS);
    b.sync().unwrap();
    assert_eq!(fs.page_cache_stats().written_back_fsync, 1);

    // Direct I/O: a direct read of a file with dirty pages writes them back first.
    let mut d = fs.create("d").unwrap();
    append(d.as_mut(), 2);
    let mut buf = vec![0u8; PS as usize];
    fs.open_direct("d").unwrap().read_at(PS, &mut buf).unwrap();
    assert_eq!(fs.page_cache_stats().written_back_direct, 2 * PS);
    assert!(buf.iter().all(|&x| x == 7));

    // Pressure: a one-page cache holds one dirty page at a time.
    let tiny = simfs(1);
    let mut c = tiny.create("c").unwrap();
    append(c.as_mut(), 3);
    assert_eq!(tiny.page_cache_stats().written_back_pressure, 2 * PS);
}

#[test]
fn a_sequential_read_misses_once_and_a_hit_costs_no_device_time() {
    let fs = simfs(1000);
    let mut w = fs.create("s").unwrap();
    append(w.as_mut(), 64);
    w.sync().unwrap();
    // A cold cache: the same file system with a fresh cache.
    fs.set_page_cache(PageCacheConfig::with_capacity(1000 * PS)).unwrap();
    let r = fs.open("s").unwrap();
    let mut buf = vec![0u8; PS as usize];
    for p in 0..64 {
        r.read_at(p * PS, &mut buf).unwrap();
    }
    let s = fs.page_cache_stats();
    assert_eq!((s.misses, s.readahead_pages, s.hits), (1, 63, 63));
    let before = fs.sim_clock().now();
    r.read_at(5 * PS, &mut buf).unwrap();
    assert_eq!(fs.sim_clock().now(), before, "a hit on a page whose readahead completed");
    assert_eq!(fs.stats().read_bytes, 64 * PS);
}

#[test]
fn a_power_cut_loses_the_unsynced_dirty_pages_only() {
    let fs = simfs(100);
    let mut w = fs.create("p").unwrap();
    append(w.as_mut(), 2);
    w.sync().unwrap();
    fs.sync_dir("").unwrap();
    append(w.as_mut(), 3);
    fs.power_cut().unwrap();
    assert!(matches!(w.append(&[1]), Err(FsError::Crashed { .. })));
    assert_eq!(fs.file_size("p").unwrap(), 2 * PS);
    let mut buf = vec![0u8; (2 * PS) as usize];
    fs.open("p").unwrap().read_at(0, &mut buf).unwrap();
    assert!(buf.iter().all(|&b| b == 7));
}

/// A clone gives the destination the source's cached pages (seed 000's remap), or with
/// `clone_keeps_pages` off leaves them uncached (Linux's FICLONERANGE).
#[test]
fn a_clone_keeps_the_sources_cached_pages_unless_told_not_to() {
    for (keep, clean_on_device) in [(true, false), (false, false), (true, true), (false, true)] {
        let fs = simfs(100);
        let cfg =
            PageCacheConfig { clone_keeps_pages: keep, clean_on_device, ..PageCacheConfig::with_capacity(100 * PS) };
        fs.set_page_cache(cfg).unwrap();
        let mut a = fs.create("a").unwrap();
        append(a.as_mut(), 2);
        a.sync().unwrap();
        let mut b = fs.create("b").unwrap();
        b.append_cloned("a", 0, 2 * PS).unwrap();
        let before = (fs.page_cache_stats(), fs.stats().read_bytes);
        let mut buf = vec![0u8; (2 * PS) as usize];
        fs.open("b").unwrap().read_at(0, &mut buf).unwrap();
        assert!(buf.iter().all(|&x| x == 7));
        let s = fs.page_cache_stats();
        let (hits, read) = (s.hits - before.0.hits, fs.stats().read_bytes - before.1);
        if keep {
            assert_eq!((hits, read), (2, 0), "the clone's pages were cached");
        } else {
            assert_eq!((hits, read), (0, 2 * PS), "the clone's pages came from the device");
        }
    }
}

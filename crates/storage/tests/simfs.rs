//! SimFs: the behavioural suite, the crash contract against MemFs through power cuts, and the
//! device-level effects that make it useful: clones are remaps, deletes are trims, every host write
//! is counted by cause.

mod common;

use std::sync::Arc;

use common::history_op;
use flashsim::SimClock;
use flashsim::{BlockSsd, Cause, HostLabel, Preset, SsdConfig};
use proptest::prelude::*;
use storage::conformance::{check_no_space, run_all};
use storage::history::{check_history, random_history, Subject};
use storage::{Fs, MemFs, PageCacheConfig, SimFs, SimFsOptions, WriteHint};

fn device(capacity: u64) -> BlockSsd {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(capacity)).unwrap();
    BlockSsd::new(cfg).unwrap()
}

fn simfs(capacity: u64) -> SimFs {
    let opts = SimFsOptions { journal_region_pages: 20, alloc_window_pages: 16 };
    SimFs::format(device(capacity), SimClock::new(), opts).unwrap()
}

/// A SimFs with a page cache of `cache` bytes.
fn cached(capacity: u64, cache: u64) -> SimFs {
    let fs = simfs(capacity);
    fs.set_page_cache(PageCacheConfig::with_capacity(cache)).unwrap();
    fs
}

#[test]
fn simfs_passes_the_behavioural_suite() {
    run_all(&|| Arc::new(simfs(64 << 20)) as Arc<dyn Fs>);
}

#[test]
fn simfs_passes_the_behavioural_suite_with_a_page_cache() {
    // Three pages (dirty pages pushed out under pressure) and 1 MiB.
    for cache in [12 << 10, 1 << 20] {
        run_all(&|| Arc::new(cached(64 << 20, cache)) as Arc<dyn Fs>);
    }
}

#[test]
fn simfs_reports_no_space() {
    let fs = simfs(64 << 20);
    let free = fs.free_bytes();
    check_no_space(&fs, free);
}

fn subject(name: &str, sim: SimFs) -> Subject {
    let handle = sim.clone();
    Subject {
        name: name.into(),
        fs: Arc::new(sim),
        crash: Box::new(move || handle.power_cut().expect("remount after power cut")),
    }
}

/// MemFs, the model, beside SimFs without a cache and with a three-page and a 256 KiB one.
fn subjects() -> Vec<Subject> {
    vec![
        Subject::mem(MemFs::new()),
        subject("SimFs", simfs(64 << 20)),
        subject("SimFs + 3-page cache", cached(64 << 20, 12 << 10)),
        subject("SimFs + 256 KiB cache", cached(64 << 20, 256 << 10)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn simfs_keeps_the_crash_contract_of_memfs(ops in proptest::collection::vec(history_op(true), 1..120)) {
        let r = check_history(&ops, subjects());
        prop_assert!(r.is_ok(), "{:?}", r.err());
    }
}

#[test]
fn long_seeded_histories_with_power_cuts() {
    for seed in 0..12 {
        let ops = random_history(seed, 400);
        if let Err(e) = check_history(&ops, subjects()) {
            panic!("seed {seed}: {e:?}");
        }
    }
}

#[test]
fn cloning_programs_no_nand_page_and_remaps_every_page() {
    let fs = simfs(64 << 20);
    let n = 64u64;
    let data: Vec<u8> = (0..n * 4096).map(|i| (i % 253) as u8).collect();
    storage::write_all(&fs, "src", &data, true).unwrap();
    let before = fs.with_device(|d| d.counters());
    let mut out = fs.create_with_hint("dst", WriteHint::Compaction { output_level: 2 }).unwrap();
    let outcome = out.append_cloned("src", 0, n * 4096).unwrap();
    assert_eq!(outcome.cloned_bytes, n * 4096);
    let after = fs.with_device(|d| d.counters());
    let d = after.delta(&before);
    assert_eq!(d.flash.programs, 0, "a clone programs nothing");
    assert_eq!(d.ftl.remapped_pages, n);
    assert_eq!(storage::read_all(&fs, "dst").unwrap(), data);
    assert_eq!(fs.stats().cloned_bytes_by_level, vec![0, 0, n * 4096]);
    // getLPN: both files name different LPNs that share physical pages.
    assert_ne!(fs.lpn_of("src", 0).unwrap(), fs.lpn_of("dst", 0).unwrap());
}

#[test]
fn deleting_a_file_trims_its_pages() {
    let fs = simfs(64 << 20);
    storage::write_all(&fs, "f", &vec![1u8; 100 * 4096], true).unwrap();
    fs.sync_dir("").unwrap();
    let lpn = fs.lpn_of("f", 0).unwrap();
    assert!(fs.with_device(|d| d.is_mapped(lpn)));
    let before = fs.with_device(|d| d.counters().ftl.host_trim_pages);
    fs.remove("f").unwrap();
    fs.sync_dir("").unwrap();
    let trimmed = fs.with_device(|d| d.counters().ftl.host_trim_pages) - before;
    assert_eq!(trimmed, 100);
    assert!(!fs.with_device(|d| d.is_mapped(lpn)));
}

#[test]
fn host_writes_are_counted_by_cause_and_metadata_is_on_the_device() {
    let fs = simfs(64 << 20);
    let mut wal = fs.create_with_hint("wal", WriteHint::Wal).unwrap();
    wal.append(&[7u8; 10_000]).unwrap();
    wal.sync().unwrap();
    let mut sst = fs.create_with_hint("sst", WriteHint::Flush).unwrap();
    sst.append(&[8u8; 8192]).unwrap();
    sst.sync().unwrap();
    fs.sync_dir("").unwrap();
    let s = fs.stats();
    // 10 000 bytes: two full pages, then the partial third page at sync.
    assert_eq!(s.wal_bytes, 3 * 4096);
    assert_eq!(s.flush_bytes, 2 * 4096);
    assert!(s.fs_metadata_bytes >= 3 * 4096, "{s:?}");
    let host = fs.with_device(|d| d.counters().ftl.host_write_pages) * 4096;
    assert_eq!(host, s.host_write_bytes(), "every device write has a cause");
    // The flash counts the same programs under the same causes, and reads under the file's.
    let flash = fs.with_device(|d| *d.media().counters());
    let pages = |label| flash.cause(Cause::Host(label)).programs * 4096;
    assert_eq!(pages(HostLabel::Wal), s.wal_bytes);
    assert_eq!(pages(HostLabel::Flush), s.flush_bytes);
    assert_eq!(pages(HostLabel::FsMetadata), s.fs_metadata_bytes);
    storage::read_all(&fs, "sst").unwrap();
    let read = fs.with_device(|d| d.media().counters().cause(Cause::Host(HostLabel::Flush)).reads);
    assert_eq!(read, 2, "the SST's two pages, read as flush output");
    // A remount from the device alone sees both files.
    fs.power_cut().unwrap();
    assert_eq!(fs.file_size("wal").unwrap(), 10_000);
    assert_eq!(storage::read_all(&fs, "sst").unwrap(), vec![8u8; 8192]);
}

#[test]
fn reads_advance_the_reading_lane_and_writes_do_not_wait() {
    let fs = simfs(64 << 20);
    let clock = fs.sim_clock().clone();
    let t0 = clock.now();
    let mut f = fs.create("f").unwrap();
    f.append(&vec![1u8; 64 * 4096]).unwrap();
    assert_eq!(clock.now(), t0, "buffered writes do not hold the lane");
    f.sync().unwrap();
    let t1 = clock.now();
    assert!(t1 > t0, "sync waits for the programs");
    let reader = fs.clone();
    let lane = fs
        .env()
        .spawn("reader", move || {
            let r = reader.open("f").unwrap();
            r.read_at(0, &mut vec![0u8; 4096]).unwrap();
        })
        .unwrap();
    assert_eq!(clock.now(), t1, "spawning a lane does not move the foreground");
    lane.join().unwrap();
    let (fg, bg) = (clock.spent(flashsim::Lane::Foreground), clock.spent(flashsim::Lane::Background));
    assert_eq!(bg.read_ns, clock.time(flashsim::Lane::Background) - t1, "the reading lane waited for its read");
    assert_eq!(fg.read_ns, 0, "the foreground read nothing");
    assert_eq!(fg.stall_ns, clock.now() - t1, "it waited for the reading lane to end");
}

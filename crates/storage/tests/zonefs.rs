//! ZoneFs behaviour beyond the common contract: placement per policy, host zone GC (victim,
//! preserved bytes, accounting), crashes inside a GC run, a full device without GC, the device's
//! zone limits, options that the device cannot honour, accounting by cause and simulated time.

use std::collections::{BTreeMap, BTreeSet};

use flashsim::{Cause, Geometry, HostLabel, Preset, SimClock, ZoneState, ZonedConfig, ZonedSsd};
use storage::conformance::{check_no_space, pattern};
use storage::zone::{GcStep, Lifetime};
use storage::{AllocPolicy, Fs, FsError, GcOptions, WriteHint, ZoneClass, ZoneFs, ZoneFsOptions};

const PAGE: usize = 4096;

/// 4 planes (2 channels x 2 planes per die); zones of one block per plane: `4 * pages_per_block`
/// pages; `zones` zones.
fn device(pages_per_block: u32, zones: u32, limits: (Option<u32>, Option<u32>)) -> ZonedSsd {
    let g = Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: zones,
        pages_per_block,
        page_size: PAGE as u32,
        oob_size: 64,
    };
    let mut cfg = ZonedConfig::new(g.clone(), Preset::Femu.timing(), 4 * g.block_bytes());
    (cfg.max_open_zones, cfg.max_active_zones) = limits;
    ZonedSsd::new(cfg).unwrap()
}

fn format(dev: ZonedSsd, policy: AllocPolicy, gc: bool) -> ZoneFs {
    let opts = ZoneFsOptions { policy, gc: gc.then(GcOptions::default), ..ZoneFsOptions::default() };
    ZoneFs::format(dev, SimClock::new(), opts).unwrap()
}

fn put(fs: &ZoneFs, path: &str, hint: WriteHint, data: &[u8]) {
    let mut w = fs.create_with_hint(path, hint).unwrap();
    w.append(data).unwrap();
    w.sync().unwrap();
}

fn zones_of(fs: &ZoneFs, path: &str) -> BTreeSet<u32> {
    fs.extents(path).unwrap().iter().map(|e| e.zone).collect()
}

#[test]
fn per_level_placement_keeps_classes_apart() {
    let fs = format(device(4, 32, (None, None)), AllocPolicy::PerLevel, false);
    let files: [(&str, WriteHint); 8] = [
        ("wal", WriteHint::Wal),
        ("manifest", WriteHint::Manifest),
        ("l0", WriteHint::Flush),
        ("l1", WriteHint::Compaction { output_level: 1 }),
        ("l2a", WriteHint::Compaction { output_level: 2 }),
        ("l2b", WriteHint::Compaction { output_level: 2 }),
        ("moved", WriteHint::Move { output_level: 2 }),
        ("short", WriteHint::ShortLived { output_level: 2 }),
    ];
    // Interleave the files' writes, as concurrent writers would.
    let mut writers: Vec<_> = files.iter().map(|(p, h)| fs.create_with_hint(p, *h).unwrap()).collect();
    for round in 0..5 {
        for (k, w) in writers.iter_mut().enumerate() {
            w.append(&pattern(k as u64 * 10 + round, 5 * PAGE + 100)).unwrap();
        }
    }
    writers.iter_mut().for_each(|w| w.sync().unwrap());
    drop(writers);
    fn class_of(p: &str) -> &str {
        match p {
            "l2a" | "l2b" | "moved" => "L2",
            other => other,
        }
    }
    let mut by_class: BTreeMap<&str, BTreeSet<u32>> = BTreeMap::new();
    for (p, _) in files {
        by_class.entry(class_of(p)).or_default().extend(zones_of(&fs, p));
    }
    let all: Vec<&BTreeSet<u32>> = by_class.values().collect();
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            assert!(a.is_disjoint(b), "classes share a zone: {by_class:?}");
        }
    }
    assert!(zones_of(&fs, "l2a").intersection(&zones_of(&fs, "l2b")).count() > 0, "one level shares its zones");
    assert!(zones_of(&fs, "moved").is_subset(&by_class["L2"]), "a move goes to its level's zones");
    let report = fs.zone_report();
    let class_in = |z: u32| report.zones[z as usize].class;
    assert!(zones_of(&fs, "short").iter().all(|&z| class_in(z) == Some(ZoneClass::TZone)));
    assert!(zones_of(&fs, "wal").iter().all(|&z| class_in(z) == Some(ZoneClass::Wal)));
    assert!(zones_of(&fs, "l1").iter().all(|&z| class_in(z) == Some(ZoneClass::Level(1))));
    for (k, (p, _)) in files.iter().enumerate() {
        let want: Vec<u8> = (0..5).flat_map(|r| pattern(k as u64 * 10 + r, 5 * PAGE + 100)).collect();
        assert_eq!(storage::read_all(&fs, p).unwrap(), want, "{p}");
    }
    fs.check_consistency().unwrap();
}

/// Two compaction windows of level 3 written at once (four SSTs each, appends interleaved, as
/// concurrent compactions into two key ranges would), then window 0's SSTs deleted (the strategy
/// compacted that window away). Returns the zones holding SSTs of both windows, and the zones
/// reset and bytes GC copied by the deletion.
fn compact_away_one_window(policy: AllocPolicy) -> (usize, u64, u64) {
    let fs = format(device(4, 32, (None, None)), policy, true);
    let name = |window: u8, k: usize| format!("w{window}-{k}");
    let mut writers = Vec::new();
    for k in 0..4 {
        for window in 0..2u8 {
            let hint = WriteHint::Window { output_level: 3, window };
            writers.push((window, fs.create_with_hint(&name(window, k), hint).unwrap()));
        }
    }
    // Eight pages per SST, two per zone (zones of 16 pages): whole pages, no padding.
    for round in 0..2u64 {
        for (k, (_, w)) in writers.iter_mut().enumerate() {
            w.append(&pattern(k as u64 * 10 + round, 4 * PAGE)).unwrap();
        }
    }
    writers.iter_mut().for_each(|(_, w)| w.sync().unwrap());
    drop(writers);
    let zones = |window: u8| -> BTreeSet<u32> { (0..4).flat_map(|k| zones_of(&fs, &name(window, k))).collect() };
    let shared = zones(0).intersection(&zones(1)).count();
    let before = fs.zone_report().counters;
    for k in 0..4 {
        fs.remove(&name(0, k)).unwrap();
    }
    fs.sync_dir("").unwrap();
    let after = fs.zone_report().counters;
    for k in 0..4 {
        let want: Vec<u8> = (0..2).flat_map(|r| pattern((2 * k as u64 + 1) * 10 + r, 4 * PAGE)).collect();
        assert_eq!(storage::read_all(&fs, &name(1, k)).unwrap(), want);
    }
    fs.check_consistency().unwrap();
    (shared, after.resets - before.resets, after.gc_copied_bytes - before.gc_copied_bytes)
}

#[test]
fn per_window_placement_gives_each_window_its_own_zones_which_die_whole() {
    let (shared, resets, copied) = compact_away_one_window(AllocPolicy::PerWindow);
    assert_eq!(shared, 0, "no zone holds SSTs of two windows");
    assert_eq!((resets, copied), (2, 0), "window 0's two zones are reset whole, nothing copied");
    let report = fs_classes_of_windows();
    assert_eq!(report, vec![ZoneClass::Window { level: 3, window: 0 }, ZoneClass::Window { level: 3, window: 1 }]);
    // The old layout (zones per level): both windows share every zone, and none dies.
    let (shared, resets, _) = compact_away_one_window(AllocPolicy::PerLevel);
    assert!(shared > 0, "per level, the windows share zones");
    assert_eq!(resets, 0, "per level, deleting one window's SSTs empties no zone");
}

/// The classes of the zones two windows' SSTs open under `per-window`.
fn fs_classes_of_windows() -> Vec<ZoneClass> {
    let fs = format(device(4, 32, (None, None)), AllocPolicy::PerWindow, false);
    for window in 0..2u8 {
        put(&fs, &format!("w{window}"), WriteHint::Window { output_level: 3, window }, &pattern(window as u64, PAGE));
    }
    let report = fs.zone_report();
    (0..2u8).flat_map(|w| zones_of(&fs, &format!("w{w}"))).filter_map(|z| report.zones[z as usize].class).collect()
}

#[test]
fn shared_placement_mixes_every_sst_in_one_stream_apart_from_the_wal() {
    let fs = format(device(4, 32, (None, None)), AllocPolicy::Shared, false);
    let mut wal = fs.create_with_hint("wal", WriteHint::Wal).unwrap();
    let mut l0 = fs.create_with_hint("l0", WriteHint::Flush).unwrap();
    let mut l3 = fs.create_with_hint("l3", WriteHint::Compaction { output_level: 3 }).unwrap();
    for i in 0..3 {
        wal.append(&pattern(i, 4 * PAGE)).unwrap();
        l0.append(&pattern(10 + i, 4 * PAGE)).unwrap();
        l3.append(&pattern(20 + i, 4 * PAGE)).unwrap();
    }
    for f in [&mut wal, &mut l0, &mut l3] {
        f.sync().unwrap();
    }
    let (w, a, b) = (zones_of(&fs, "wal"), zones_of(&fs, "l0"), zones_of(&fs, "l3"));
    assert!(a.intersection(&b).count() > 0, "SSTs of two levels share a zone: {a:?} {b:?}");
    assert_eq!(w.intersection(&a).count(), 0, "the WAL has zones of its own: {w:?} {a:?}");
    let class_in = |z: u32| fs.zone_report().zones[z as usize].class;
    assert!(a.iter().chain(&b).all(|&z| class_in(z) == Some(ZoneClass::Shared)));
    assert!(w.iter().all(|&z| class_in(z) == Some(ZoneClass::Wal)));
}

#[test]
fn lifetime_placement_follows_zenfs() {
    // 3 active zones: one for metadata, two for data.
    let fs = format(device(4, 32, (None, Some(3))), AllocPolicy::Lifetime, false);
    let write = |path: &str, hint: WriteHint| {
        let mut w = fs.create_with_hint(path, hint).unwrap();
        w.append(&pattern(path.len() as u64, 4 * PAGE)).unwrap();
        w.sync().unwrap();
        w
    };
    let zone = |path: &str| *zones_of(&fs, path).iter().next().unwrap();
    let long = WriteHint::Compaction { output_level: 2 };
    // An L2 (long) file opens a zone of lifetime Long.
    drop(write("l2", long));
    let a = zone("l2");
    // A flush (medium) goes to the open zone whose lifetime is longer: diff 1.
    drop(write("l0", WriteHint::Flush));
    assert_eq!(zone("l0"), a, "medium data joins the long zone");
    // Another long file: the only open zone has the same lifetime (50): a free token opens a new one.
    let w3 = write("l2-second", long);
    let b = zone("l2-second");
    assert_ne!(b, a);
    // With the second token taken and zone b busy, a long file takes zone a (equal lifetime).
    let w4 = write("l2-third", long);
    assert_eq!(zone("l2-third"), a, "no token: an equal lifetime is better than finishing a zone");
    // A WAL (short) file with both zones busy: no token left, nothing to reuse: the fullest zone is
    // finished and a new zone opened.
    let finishes = fs.zone_report().counters.finishes;
    let w5 = write("wal", WriteHint::Wal);
    assert!(fs.zone_report().counters.finishes > finishes);
    let c = zone("wal");
    assert!(c != a && c != b);
    let report = fs.zone_report();
    assert_eq!(report.zones[c as usize].class, Some(ZoneClass::Lifetime(Lifetime::Short)));
    assert_eq!(report.zones[b as usize].class, Some(ZoneClass::Lifetime(Lifetime::Long)));
    drop((w3, w4, w5));
    fs.with_device(|d| assert!(d.open_and_active_zones().1 <= 3));
    fs.check_consistency().unwrap();
}

/// Shared policy with GC: 10 zones of 16 pages (2 metadata, 8 data), one 16 KiB chunk = 4 pages
/// per file, so data zone `k` holds files `f{4k}..f{4k+3}`.
fn gc_setup(gc: bool) -> ZoneFs {
    let fs = format(device(4, 10, (None, None)), AllocPolicy::Shared, gc);
    for i in 0..24 {
        put(&fs, &format!("f{i}"), WriteHint::Flush, &pattern(i, 4 * PAGE));
    }
    fs.sync_dir("").unwrap();
    // Zone 2 keeps one file, zone 3 two, zone 4 three; zones 5-7 stay full of live data.
    for i in [0, 1, 2, 4, 5, 8] {
        fs.remove(&format!("f{i}")).unwrap();
    }
    fs.sync_dir("").unwrap();
    // Four more files fill zone 8; zone 9 is the last empty one.
    for i in 0..4 {
        put(&fs, &format!("g{i}"), WriteHint::Flush, &pattern(100 + i, 4 * PAGE));
    }
    fs.sync_dir("").unwrap();
    fs
}

fn live_files() -> Vec<(String, u64)> {
    let f = (0..24).filter(|i| ![0, 1, 2, 4, 5, 8].contains(i)).map(|i| (format!("f{i}"), i));
    f.chain((0..4).map(|i| (format!("g{i}"), 100 + i))).collect()
}

fn check_files(fs: &ZoneFs, files: &[(String, u64)]) {
    for (p, seed) in files {
        assert_eq!(storage::read_all(fs, p).unwrap(), pattern(*seed, 4 * PAGE), "{p}");
    }
    fs.check_consistency().unwrap();
}

#[test]
fn greedy_gc_moves_the_least_live_zones_and_keeps_every_file() {
    let fs = gc_setup(true);
    assert_eq!(fs.zone_report().counters.gc_runs, 0);
    assert_eq!(zones_of(&fs, "f3"), BTreeSet::from([2]));
    // The next zone the stream needs leaves one empty zone: GC reclaims zone 2 (1 live file),
    // then zone 3 (2 live files), into zone 9, and stops with two empty zones.
    put(&fs, "g4", WriteHint::Flush, &pattern(104, 4 * PAGE));
    fs.sync_dir("").unwrap();
    let r = fs.zone_report();
    assert_eq!(r.counters.gc_runs, 2);
    assert_eq!(r.counters.gc_copied_bytes, 12 * PAGE as u64);
    for f in ["f3", "f6", "f7"] {
        assert_eq!(zones_of(&fs, f), BTreeSet::from([9]), "{f} moved to the GC zone");
    }
    assert_eq!(zones_of(&fs, "f9"), BTreeSet::from([4]), "the third least live zone stays");
    assert_eq!(zones_of(&fs, "g4"), BTreeSet::from([2]), "new data goes to the first empty zone");
    let s = fs.stats();
    assert_eq!(s.zone_gc_bytes, 12 * PAGE as u64);
    let flash = fs.with_device(|d| *d.media().counters());
    let gc = flash.cause(Cause::Host(HostLabel::ZoneGc));
    assert_eq!(gc.programs * PAGE as u64, s.zone_gc_bytes, "GC copies are ZoneGc programs");
    assert_eq!(gc.reads, 12, "and ZoneGc reads");
    assert_eq!(gc.erases, 8, "two victims of one block per plane");
    let host = fs.with_device(|d| d.counters().ftl.host_write_pages) * PAGE as u64;
    assert_eq!(host, s.host_write_bytes(), "every device write has a cause");
    let mut files = live_files();
    files.push(("g4".into(), 104));
    check_files(&fs, &files);
    // The moved files' new places are durable.
    fs.power_cut().unwrap();
    check_files(&fs, &files);
}

#[test]
fn a_crash_at_every_step_of_a_gc_run_keeps_the_contract() {
    for step in [GcStep::AfterFirstCopy, GcStep::AfterCopies, GcStep::AfterCommit] {
        let fs = gc_setup(true);
        fs.crash_during_next_gc(step);
        let mut w = fs.create_with_hint("g4", WriteHint::Flush).unwrap();
        // The chunk goes to the device at once; the zone it needs sets GC off.
        let err =
            w.append(&pattern(104, 4 * PAGE)).and_then(|()| w.sync()).expect_err("the stopped GC run fails the write");
        assert!(err.to_string().contains("power loss during host zone GC"), "{step:?}: {err}");
        drop(w);
        fs.power_cut().unwrap();
        assert!(!fs.exists("g4").unwrap(), "{step:?}: g4 was never durable");
        check_files(&fs, &live_files());
        // The file system goes on: GC runs again and everything is still there.
        put(&fs, "g4", WriteHint::Flush, &pattern(104, 4 * PAGE));
        fs.sync_dir("").unwrap();
        assert!(fs.zone_report().counters.gc_runs >= 1, "{step:?}");
        let mut files = live_files();
        files.push(("g4".into(), 104));
        check_files(&fs, &files);
        fs.power_cut().unwrap();
        check_files(&fs, &files);
    }
}

#[test]
fn gc_reclaims_partly_written_zones_that_no_file_writes_any_more() {
    // Lifetime placement, 10 zones of 16 pages (2 metadata, 8 data), no zone limits. An Extreme
    // file (L3) opens a zone; the Long file (L2) written after it joins that zone (difference 1);
    // so pair k fills half of data zone 2 + k, which stays partly written and closed.
    let fs = format(device(4, 10, (None, None)), AllocPolicy::Lifetime, true);
    let (extreme, long) = (WriteHint::Compaction { output_level: 3 }, WriteHint::Compaction { output_level: 2 });
    let mut files = Vec::new();
    for k in 0..7u64 {
        put(&fs, &format!("e{k}"), extreme, &pattern(k, 4 * PAGE));
        put(&fs, &format!("l{k}"), long, &pattern(100 + k, 4 * PAGE));
        assert_eq!(zones_of(&fs, &format!("l{k}")), BTreeSet::from([2 + k as u32]));
        files.push((format!("l{k}"), 100 + k));
    }
    fs.sync_dir("").unwrap();
    for k in 0..4 {
        fs.remove(&format!("e{k}")).unwrap();
    }
    files.extend((4..7).map(|k| (format!("e{k}"), k)));
    fs.sync_dir("").unwrap();
    let r = fs.zone_report();
    assert!(r.data_zones().all(|z| z.state != ZoneState::Full), "no zone is full");
    assert_eq!(r.counters.gc_runs, 0);
    // The next file needs a new zone with one empty zone left: GC empties zones 2 and 3 (half
    // dead, closed) into zone 9 and the new file opens zone 2.
    put(&fs, "x", extreme, &pattern(200, 4 * PAGE));
    fs.sync_dir("").unwrap();
    files.push(("x".into(), 200));
    let r = fs.zone_report();
    assert_eq!(r.counters.gc_runs, 2);
    assert_eq!(r.counters.gc_copied_bytes, 8 * PAGE as u64);
    for f in ["l0", "l1"] {
        assert_eq!(zones_of(&fs, f), BTreeSet::from([9]), "{f} moved to the GC zone");
    }
    assert_eq!(zones_of(&fs, "l2"), BTreeSet::from([4]), "the third least live zone stays");
    assert_eq!(zones_of(&fs, "x"), BTreeSet::from([2]));
    check_files(&fs, &files);
    fs.power_cut().unwrap();
    check_files(&fs, &files);
}

#[test]
fn without_gc_a_device_of_half_dead_zones_is_full() {
    let fs = gc_setup(false);
    let err = (0..8)
        .map(|i| {
            let mut w = fs.create_with_hint(&format!("h{i}"), WriteHint::Flush)?;
            w.append(&pattern(200 + i, 4 * PAGE))?;
            w.sync()
        })
        .find_map(|r| r.err())
        .expect("the device fills");
    match &err {
        FsError::NoSpace { path, detail, .. } => {
            assert!(path.starts_with('h'), "{err}");
            assert!(detail.contains("GC is off"), "{err}");
        }
        other => panic!("expected NoSpace, got {other}"),
    }
    let r = fs.zone_report();
    assert_eq!(r.counters.gc_runs, 0);
    assert!(r.data_zones().any(|z| z.state == ZoneState::Full && z.live_bytes < r.zone_capacity_bytes / 2));
    check_files(&fs, &live_files());
}

#[test]
fn a_full_device_reports_no_space_and_recovers_when_files_go() {
    let fs = format(device(4, 8, (None, None)), AllocPolicy::Shared, false);
    check_no_space(&fs, 6 * 16 * PAGE as u64);
    let fs = format(device(4, 8, (None, None)), AllocPolicy::PerLevel, true);
    check_no_space(&fs, 6 * 16 * PAGE as u64);
}

#[test]
fn options_the_device_cannot_honour_are_refused_naming_the_field() {
    let err = |opts: ZoneFsOptions| {
        ZoneFs::format(device(4, 16, (Some(4), Some(6))), SimClock::new(), opts).err().unwrap().to_string()
    };
    let o = ZoneFsOptions::default();
    assert_eq!(
        err(ZoneFsOptions { max_open_zones: Some(8), ..o.clone() }),
        "invalid options: max_open_zones: 8 exceeds the device's limit of 4"
    );
    assert_eq!(
        err(ZoneFsOptions { max_active_zones: Some(7), ..o.clone() }),
        "invalid options: max_active_zones: 7 exceeds the device's limit of 6"
    );
    assert!(err(ZoneFsOptions { metadata_zones: 1, ..o.clone() }).starts_with("invalid options: metadata_zones: "));
    assert!(err(ZoneFsOptions { metadata_zones: 15, ..o.clone() }).contains("fewer than 2 data zones"));
    assert!(err(ZoneFsOptions { write_chunk_pages: Some(0), ..o.clone() }).contains("write_chunk_pages"));
    let gc = Some(GcOptions { free_zones_trigger: 0 });
    assert!(err(ZoneFsOptions { gc, ..o.clone() }).contains("gc.free_zones_trigger"));
    for e in [
        err(ZoneFsOptions { max_open_zones: Some(8), ..o.clone() }),
        err(ZoneFsOptions { metadata_zones: 1, ..o.clone() }),
    ] {
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

#[test]
fn many_streams_stay_within_the_devices_open_and_active_limits() {
    // Four level streams for three data tokens (the metadata zone holds the fourth): every zone
    // change finishes another stream's zone.
    let fs = format(device(4, 32, (Some(3), Some(4))), AllocPolicy::PerLevel, false);
    let hints: Vec<WriteHint> = (0..4).map(|l| WriteHint::Compaction { output_level: l }).collect();
    let mut writers: Vec<_> =
        hints.iter().enumerate().map(|(i, h)| fs.create_with_hint(&format!("l{i}"), *h).unwrap()).collect();
    for round in 0..6 {
        for (i, w) in writers.iter_mut().enumerate() {
            w.append(&pattern((i * 10 + round) as u64, 4 * PAGE + 7)).unwrap();
            let (open, active) = fs.with_device(|d| d.open_and_active_zones());
            assert!(open <= 3 && active <= 4, "open {open}, active {active}");
        }
    }
    writers.iter_mut().for_each(|w| w.sync().unwrap());
    let r = fs.zone_report();
    assert!(r.counters.finishes > 0, "tokens were freed by finishing zones");
    for i in 0..4 {
        let want: Vec<u8> = (0..6).flat_map(|r| pattern((i * 10 + r) as u64, 4 * PAGE + 7)).collect();
        assert_eq!(storage::read_all(&fs, &format!("l{i}")).unwrap(), want);
    }
    fs.check_consistency().unwrap();
}

#[test]
fn host_writes_padding_and_simulated_time() {
    let fs = format(device(4, 32, (None, None)), AllocPolicy::PerLevel, false);
    let clock = fs.sim_clock().clone();
    let t0 = clock.now();
    let mut wal = fs.create_with_hint("wal", WriteHint::Wal).unwrap();
    wal.append(&[7u8; 10_000]).unwrap();
    assert_eq!(clock.now(), t0, "buffered appends do not hold the lane");
    wal.sync().unwrap();
    assert!(clock.now() > t0, "sync waits for the programs and the journal");
    let mut sst = fs.create_with_hint("sst", WriteHint::Flush).unwrap();
    sst.append(&vec![8u8; 16 * PAGE]).unwrap();
    sst.sync().unwrap();
    fs.sync_dir("").unwrap();
    let s = fs.stats();
    // 10 000 bytes: three pages at the sync, the last padded.
    assert_eq!(s.wal_bytes, 3 * PAGE as u64);
    assert_eq!(s.flush_bytes, 16 * PAGE as u64);
    assert_eq!(fs.zone_report().counters.padding_bytes, 3 * PAGE as u64 - 10_000);
    assert!(s.fs_metadata_bytes > 0);
    let flash = fs.with_device(|d| *d.media().counters());
    let pages = |l| flash.cause(Cause::Host(l)).programs * PAGE as u64;
    assert_eq!((pages(HostLabel::Wal), pages(HostLabel::Flush)), (s.wal_bytes, s.flush_bytes));
    assert_eq!(pages(HostLabel::FsMetadata), s.fs_metadata_bytes);
    // Later appends to the WAL continue on the next page, in a new extent.
    wal.append(&[9u8; 100]).unwrap();
    wal.sync().unwrap();
    let e = fs.extents("wal").unwrap();
    assert_eq!(e.len(), 2);
    assert_eq!(e[1].start, e[0].start + 3);
    let mut want = vec![7u8; 10_000];
    want.extend_from_slice(&[9u8; 100]);
    assert_eq!(storage::read_all(&fs, "wal").unwrap(), want);
    // A read moves the lane that reads only: the foreground waits for the background lane's read
    // as a stall, not as a read of its own.
    let fg_read = clock.spent(flashsim::Lane::Foreground).read_ns;
    let reader = fs.clone();
    let lane = fs
        .env()
        .spawn("reader", move || {
            let r = reader.open("sst").unwrap();
            r.read_at(0, &mut vec![0u8; PAGE]).unwrap();
        })
        .unwrap();
    lane.join().unwrap();
    assert!(clock.spent(flashsim::Lane::Background).read_ns > 0);
    assert_eq!(clock.spent(flashsim::Lane::Foreground).read_ns, fg_read);
    // Utilisation: live bytes over capacity for each used data zone.
    let u = fs.zone_report().utilisation();
    assert_eq!(u.len(), 2);
    assert!(u.iter().all(|&x| x > 0.0 && x <= 1.0));
    assert_eq!(fs.zone_report().utilisation_histogram(10).iter().sum::<u64>(), 2);
}

#[test]
fn clone_range_is_unsupported_and_append_cloned_copies() {
    let fs = format(device(4, 32, (None, None)), AllocPolicy::Shared, false);
    put(&fs, "src", WriteHint::Flush, &pattern(1, 4 * PAGE));
    put(&fs, "dst", WriteHint::Flush, &pattern(2, PAGE));
    assert!(!fs.supports_clone());
    assert!(fs.clone_range("src", 0, "dst", PAGE as u64, PAGE as u64).unwrap_err().is_unsupported());
    let out = storage::clone_or_copy(&fs, "src", 0, "dst", PAGE as u64, 2 * PAGE as u64).unwrap();
    assert_eq!((out.cloned_bytes, out.copied_bytes), (0, 2 * PAGE as u64));
    let mut w = fs.create_with_hint("out", WriteHint::Compaction { output_level: 1 }).unwrap();
    let out = w.append_cloned("src", PAGE as u64, PAGE as u64).unwrap();
    assert_eq!(out.copied_bytes, PAGE as u64);
    w.sync().unwrap();
    assert_eq!(storage::read_all(&fs, "out").unwrap(), pattern(1, 4 * PAGE)[PAGE..2 * PAGE].to_vec());
}

/// A manifest-like file synced after every small append (a new extent per sync, since a synced
/// page is padded): each sync must cost the journal about one page, not a page per few hundred
/// extents the file already has. Writing the whole extent list at every sync cost 3.5x as much here.
#[test]
fn frequent_syncs_cost_the_journal_linearly_and_survive_a_power_cut() {
    let fs = format(device(64, 64, (None, None)), AllocPolicy::PerLevel, false);
    let mut w = fs.create_with_hint("manifest", WriteHint::Manifest).unwrap();
    fs.sync_dir("").unwrap();
    const SYNCS: usize = 1500;
    let mut want = Vec::new();
    for i in 0..SYNCS {
        let rec = pattern(i as u64, 100);
        w.append(&rec).unwrap();
        w.sync().unwrap();
        want.extend_from_slice(&rec);
    }
    let extents = fs.extents("manifest").unwrap().len();
    assert!(extents > SYNCS / 2, "the test needs many extents, has {extents}");
    let meta_pages = fs.stats().fs_metadata_bytes / PAGE as u64;
    assert!(meta_pages < 2 * SYNCS as u64, "{meta_pages} journal pages for {SYNCS} syncs");
    fs.power_cut().unwrap();
    assert_eq!(storage::read_all(&fs, "manifest").unwrap(), want);
    fs.check_consistency().unwrap();
}

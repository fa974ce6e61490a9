//! Gear on a zoned SSD, at a reduced scale of the zns-ll repro (16 SSTs per zone, level 3 of 16
//! zones, 14 active zones): with GearDB's compaction windows (a level's oldest SSTs, so its oldest
//! zones) on zones per level, gear compactions empty zones whole and host zone GC has next to
//! nothing to copy, on a device where the windows of before issue 28 (the run of SSTs from the
//! compaction pointer) made it copy 83 MB of the 358 MB written. The alternative
//! reading, a zone set per key-range window (`per-window`), finishes here too, with more zones
//! finished part-written.

use flashsim::{Geometry, Preset, SimClock, ZonedConfig, ZonedSsd};
use lsm::{CompactionStyle, Db, Options, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{AllocPolicy, GcOptions, ZoneClass, ZoneFs, ZoneFsOptions};

/// What a run left: host bytes written (GC copies included), bytes host GC copied, zone resets,
/// zones finished to free an active token, and zones opened for a key-range window.
#[derive(Debug)]
struct Outcome {
    host_bytes: u64,
    gc_copied: u64,
    resets: u64,
    finishes: u64,
    window_zones: usize,
}

/// 40,000 random puts of 512-byte values over 10,000 keys (fillrandom; 5.3 MB live) with gear
/// compaction on a zoned SSD of 100 zones of 256 KiB, placed by `policy`.
fn fill(policy: AllocPolicy) -> Outcome {
    let g = Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 100,
        pages_per_block: 16,
        page_size: 4096,
        oob_size: 64,
    };
    let zone = 4 * g.block_bytes();
    let dev = ZonedSsd::new(ZonedConfig::new(g, Preset::Femu.timing(), zone)).unwrap();
    let opts = ZoneFsOptions {
        policy,
        gc: Some(GcOptions { free_zones_trigger: 6 }),
        max_open_zones: Some(14),
        max_active_zones: Some(14),
        ..ZoneFsOptions::default()
    };
    let fs = ZoneFs::format(dev, SimClock::new(), opts).unwrap();
    let options = Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 16 << 10,
        max_bytes_for_level_base: 40 << 10,
        block_size: 4096,
        compaction: CompactionStyle::Gear,
        ..Options::default()
    };
    let db = Db::open(fs.env(), "db", options).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(28);
    let value = vec![7u8; 512];
    for _ in 0..40_000 {
        let key = format!("{:016}", rng.next_u64() % 10_000);
        db.put(&WriteOptions::default(), key.as_bytes(), &value).unwrap();
    }
    db.wait_for_background().unwrap();
    drop(db);
    fs.check_consistency().unwrap();
    let report = fs.zone_report();
    Outcome {
        host_bytes: fs.stats().host_write_bytes(),
        gc_copied: report.counters.gc_copied_bytes,
        resets: report.counters.resets,
        finishes: report.counters.finishes,
        window_zones: report.zones.iter().filter(|z| matches!(z.class, Some(ZoneClass::Window { .. }))).count(),
    }
}

#[test]
fn gear_windows_of_the_oldest_zones_empty_zones_whole() {
    let level = fill(AllocPolicy::PerLevel);
    assert!(level.resets > 0, "{level:?}");
    assert!(
        level.gc_copied * 100 < level.host_bytes,
        "host zone GC copies under 1 % of what is written (before issue 28: 83 MB of 358 MB): {level:?}"
    );
    assert_eq!(level.window_zones, 0);
    eprintln!("per-level: {level:?}");
    let window = fill(AllocPolicy::PerWindow);
    eprintln!("per-window: {window:?}");
    assert!(window.window_zones > 0, "key-range windows have zones of their own: {window:?}");
    assert!(window.finishes > level.finishes, "more streams than active zones: {window:?} vs {level:?}");
}

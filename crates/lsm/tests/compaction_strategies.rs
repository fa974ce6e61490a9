//! Every compaction strategy keeps the same data: the same workload under each ends with the same
//! database (and the model's), and each strategy does what makes it itself (lifetime-leveling
//! moves SSTs and writes short-lived ones; gear passes keys two levels down).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use flashsim::{BlockSsd, Preset, SimClock, SsdConfig};
use lsm::{CompactionStyle, Db, DbStats, Options, Profile, ReadOptions, WriteOptions};
use rand::{Rng, SeedableRng};
use storage::{Env, SimFs, SimFsOptions};

/// Small sizes, so that a few thousand writes reach level 3, with LevelDB's level-0 triggers (the
/// seeds' strategies ran on LevelDB; the workload below was shaped for them).
fn options(style: CompactionStyle) -> Options {
    Options {
        create_if_missing: true,
        write_buffer_size: 16 << 10,
        max_file_size: 8 << 10,
        max_bytes_for_level_base: 32 << 10,
        level_size_multiplier: 4,
        block_size: 1024,
        compaction: style,
        ..Options::profile(Profile::LevelDb)
    }
}

/// Random puts, overwrites and deletes over 4,000 keys, then over two narrow stretches of them (so
/// that upper levels hold files only there and the next level's files between them are moved by
/// lifetime-leveling); returns the final contents' FNV checksum, the model's, and the engine's
/// statistics. On a simulated SSD, so that when compactions run (and so what they do) is the same
/// on every machine.
fn run(style: CompactionStyle, seed: u64) -> (u64, u64, DbStats) {
    let cfg = SsdConfig::from_preset(Preset::Femu, Some(256 << 20)).unwrap();
    let fs = Arc::new(SimFs::format(BlockSsd::new(cfg).unwrap(), SimClock::new(), SimFsOptions::default()).unwrap());
    let db = Db::open(Env::new(fs.clone()), "db", options(style.clone())).unwrap();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
    let mut below = |n: u64| rng.next_u64() % n;
    let mut model = BTreeMap::new();
    for i in 0..30_000u64 {
        let k = if i < 15_000 { below(4000) } else { below(400) % 200 + 1800 * below(2) };
        let key = format!("key{k:06}").into_bytes();
        if below(10) == 0 {
            db.delete(&WriteOptions::default(), &key).unwrap();
            model.remove(&key);
        } else {
            let value = format!("value-{i}-{}", "x".repeat(20 + below(180) as usize)).into_bytes();
            db.put(&WriteOptions::default(), &key, &value).unwrap();
            model.insert(key, value);
        }
    }
    db.wait_for_background().unwrap();
    let stats = db.stats();
    // Reopen: the strategy's compaction pointers and files come back from the MANIFEST.
    drop(db);
    let db = Db::open(Env::new(fs), "db", options(style)).unwrap();
    let got = db.scan(&ReadOptions::default(), Bound::Unbounded, Bound::Unbounded).unwrap().map(|r| r.unwrap());
    (checksum(got), checksum(model.into_iter()), stats)
}

fn checksum(entries: impl Iterator<Item = (Vec<u8>, Vec<u8>)>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for (k, v) in entries {
        for b in k.iter().chain([0xffu8].iter()).chain(v.iter()).chain([0xfeu8].iter()) {
            h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    h
}

#[test]
fn every_strategy_ends_with_the_same_database() {
    let (leveled, model, _) = run(CompactionStyle::Leveled, 7);
    assert_eq!(leveled, model, "leveled matches the model");
    let others = CompactionStyle::NAMES.iter().map(|n| n.parse::<CompactionStyle>().unwrap());
    for style in others.filter(|s| *s != CompactionStyle::Leveled) {
        let (got, _, _) = run(style.clone(), 7);
        assert_eq!(got, model, "{style} ends with the same contents as the model");
    }
}

#[test]
fn lifetime_leveling_moves_and_writes_short_lived_ssts() {
    let (_, _, s) = run(CompactionStyle::LifetimeLeveling, 3);
    let moves: u64 = s.levels.iter().map(|l| l.move_rewrites).sum();
    let short: u64 = s.levels.iter().map(|l| l.short_lived_bytes).sum();
    let relinks: u64 = s.levels.iter().map(|l| l.moves).sum();
    assert!(moves > 0, "SSTs between compaction pointers are rewritten: {:?}", s.levels);
    assert!(short > 0, "outputs past the new compaction pointer are short-lived");
    assert_eq!(relinks, 0, "lifetime-leveling never relinks a file into another level's zones");
    assert!(s.levels.len() > 3 && s.levels[3].bytes > 0, "the workload reaches level 3: {:?}", s.levels);
}

#[test]
fn gear_passes_keys_into_deeper_windows() {
    let (_, _, s) = run(CompactionStyle::Gear, 5);
    let passive: u64 = s.levels.iter().map(|l| l.passive_bytes).sum();
    let relinks: u64 = s.levels.iter().map(|l| l.moves).sum();
    assert!(passive > 0, "some keys go straight past the next level: {:?}", s.levels);
    assert_eq!(relinks, 0, "gear rewrites rather than relinks (zones per level)");
}

//! What the crate-level tests share: small PLSC, LSM-in-device, KVFTL and DFTL-KV configurations
//! on which compaction and GC run within a few hundred operations, keys, values, and a
//! deterministic workload.
#![allow(dead_code)]

pub mod model;

use flashsim::{Geometry, MediaConfig, Nanos, Preset};
use kvssd::{DftlKvConfig, KvDevice, KvftlConfig, LsmConfig, PlscConfig, Variant};

/// The `plsc` preset scaled down: 2 channels x 1 chip x 1 die x 2 planes (4 planes, 2 dies),
/// 8 blocks of 16 pages of 1 KiB per plane = 512 pages. Pages and blocks are smaller than the
/// preset's so that records straddle pages often and GC runs within a few hundred operations.
/// Thresholds: L0 3 USTs (12 pages), L1 48 pages, GC below 240 free pages.
pub fn small_config() -> PlscConfig {
    let mut cfg = PlscConfig::new(MediaConfig::new(small_geometry(), Preset::Plsc.timing()));
    cfg.max_key_size = 32;
    cfg.l0_threshold_pages = 12;
    cfg.l1_threshold_pages = 48;
    cfg.gc_threshold_pages = 240;
    cfg
}

/// The LSM-in-device baseline on the geometry of [`small_config`], with LevelDB's sizes scaled
/// down so that a few hundred operations fill several levels: SSTs and memtable of 4 KiB (4
/// pages), L0 compacted at 3 SSTs (so that lookups meet two overlapping L0 SSTs), L1 4 KiB, x2 per level (L5 64 KiB), 7 levels; GC below 240
/// free pages, as PLSC's; not striped (the default).
pub fn small_lsm_config() -> LsmConfig {
    let mut cfg = LsmConfig::new(MediaConfig::new(small_geometry(), Preset::Plsc.timing()));
    cfg.max_key_size = 32;
    cfg.sst_bytes = 4096;
    cfg.write_buffer_bytes = 4096;
    cfg.l0_compaction_trigger = 3;
    cfg.l1_max_bytes = 4096;
    cfg.level_size_multiplier = 2;
    cfg.gc_threshold_pages = 240;
    cfg
}

/// One serial chip (as the `kvftl` preset) of 160 blocks of 4 pages of 512 bytes (320 KiB): blocks
/// fill within a few dozen puts, so that GC runs often, and values of a few pages (up to 2 KiB, a
/// whole block) cross pages and blocks.
pub fn kv_geometry() -> Geometry {
    Geometry {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: 160,
        pages_per_block: 4,
        page_size: 512,
        oob_size: 64,
    }
}

/// The paper's variants scaled to [`kv_geometry`]'s 512-byte pages as the paper's are to its 16 KiB
/// pages: SP 2^7 (a quarter page, as 2^12), NP 3, WS 64 B (an eighth of a page, as 2^11).
pub fn kv_variants() -> [Variant; 4] {
    [
        Variant::Pure,
        Variant::SmallestPartition { min_p: 7 },
        Variant::MaxPartitions { n: 3 },
        Variant::MaxWaste { bytes: 64 },
    ]
}

/// KVFTL on [`kv_geometry`]: partitions 2^0..2^11 (values up to 2 KiB), keys up to 32 bytes, our
/// default GC threshold for that range (26 blocks), tables in RAM or cached in `ram_budget` bytes.
pub fn small_kvftl(variant: Variant, ram_budget: Option<u64>) -> KvftlConfig {
    let mut cfg = KvftlConfig::new(MediaConfig::new(kv_geometry(), Preset::Kvftl.timing()));
    cfg.max_key_size = 32;
    cfg.max_p = 11;
    cfg.gc_threshold_blocks = kvssd::kvftl::default_gc_threshold(160, 0, 11);
    cfg.variant = variant;
    cfg.ram_budget = ram_budget;
    cfg
}

/// DFTL-KV on a device of [`kv_geometry`]'s pages but larger blocks, so that greedy GC's victims
/// hold valid pages (with 4-page blocks, a value's pages fill whole blocks that die together):
/// one die of two planes of 24 blocks of 16 pages of 512 bytes (384 KiB), pages striped over the
/// planes. KVFTL's limits there (keys up to 32 bytes, values up to 2 KiB), our default GC
/// threshold (5 blocks), the map in RAM or a CMT of `ram_budget` bytes of entries. The 768 LPAs
/// are spread over 24 translation pages of 32 entries (320 of 512 bytes; full pages would need
/// 16): the paper's 208 suit a device of some GiB, here they would be 4-entry pages taking a
/// quarter of the device.
pub fn small_dftl_kv(ram_budget: Option<u64>) -> DftlKvConfig {
    let geometry = Geometry { planes_per_die: 2, blocks_per_plane: 24, pages_per_block: 16, ..kv_geometry() };
    let mut cfg = DftlKvConfig::new(MediaConfig::new(geometry, Preset::Kvftl.timing()));
    cfg.max_key_size = 32;
    cfg.max_value_size = 2048;
    cfg.ram_budget = ram_budget;
    cfg.gtd_entries = Some(24);
    cfg
}

/// [`small_dftl_kv`] under the pages reading as issue 28 had it: whole translation pages cached,
/// full translation pages (51 entries).
pub fn small_dftl_kv_pages(ram_budget: Option<u64>) -> DftlKvConfig {
    DftlKvConfig { cache: kvssd::dftl_kv::DftlCache::Pages, gtd_entries: None, ..small_dftl_kv(ram_budget) }
}

/// 2 channels x 1 chip x 1 die x 2 planes, 8 blocks of 16 pages of 1 KiB per plane.
pub fn small_geometry() -> Geometry {
    Geometry {
        channels: 2,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 2,
        blocks_per_plane: 8,
        pages_per_block: 16,
        page_size: 1024,
        oob_size: 64,
    }
}

#[allow(unused_imports)] // not every test file uses all three
pub use kvssd::conformance::model::{key, value, Lcg};

/// Deletes `k` at `t`: when the device answered, and whether the key held a value (an absent key
/// is the device's `KeyNotFound`, which says when it found out; any other error fails the test).
pub fn delete(dev: &mut dyn KvDevice, t: Nanos, k: &[u8]) -> (Nanos, bool) {
    kvssd::conformance::model::delete(dev, t, k).unwrap_or_else(|e| panic!("{}: delete: {e}", dev.name()))
}

/// Which keys [`churn`] uses: `hot` of them four times in five, the rest of `keys` otherwise, and
/// values of 0 to `max_len` bytes.
pub struct Churn {
    pub ops: u64,
    pub hot: u64,
    pub keys: u64,
    pub max_len: u64,
}

impl Churn {
    /// PLSC's and the LSM's small devices: 5000 requests over 48 keys (8 hot), values to 1499 bytes.
    pub const SMALL: Churn = Churn { ops: 5000, hot: 8, keys: 48, max_len: 1499 };

    /// The key-value FTLs' small devices: `ops` requests over 160 keys (16 hot), values to 2 KiB.
    pub const fn kv(ops: u64) -> Churn {
        Churn { ops, hot: 16, keys: 160, max_len: 2048 }
    }
}

/// Puts (six in ten), overwrites, gets (three in ten) and deletes over hot and cold keys, from a
/// fixed seed, until compaction and GC have run; returns the device.
pub fn churn<D: KvDevice + 'static>(mut dev: D, c: Churn) -> D {
    let mut r = Lcg(42);
    let mut t: Nanos = 0;
    for seq in 0..c.ops {
        let k = key(if r.below(5) < 4 { r.below(c.hot) } else { c.hot + r.below(c.keys - c.hot) } as usize);
        t += 1_000;
        t = match r.below(10) {
            0..=5 => dev.store(t, &k, &value(seq, r.below(c.max_len + 1) as usize)).unwrap().done,
            6..=8 => dev.retrieve(t, &k).unwrap().done,
            _ => delete(&mut dev, t, &k).0,
        };
    }
    dev
}

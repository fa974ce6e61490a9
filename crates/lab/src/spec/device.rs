//! The device and file system a run uses: a simulated block SSD with SimFs (`sim`), a simulated
//! ZNS SSD with ZoneFs (`zone`), a host directory (`posix:DIR`) or memory (`mem`); for a
//! key-value SSD, the NAND array it manages itself (the preset's chip at `capacity`).
//!
//! One struct is the command line's device flags, an experiment file's `[device]` table and the
//! `device` object of a run's JSON. Every rule that derives a device configuration from it (the
//! chip, its size, the zones, where page contents live) is written here once.
//!
//! A simulated device keeps its page contents where `store` says: `memory`, `file` (an unnamed
//! sparse file in the system's temporary directory, or `file:DIR`), `compact` (memory without the
//! pages' runs of zero bytes: with zero values, keys and headers only), or `auto`: memory up to
//! [`AUTO_MEMORY`] of live pages, a temporary file beyond, or `compact` when the values are zeros
//! (`RunSpec::device_as_built`). The store changes memory and speed, never a result.

use std::path::PathBuf;

use flashsim::{
    BlockSsd, DataMode, Ftl, GcDestination, GcPolicy, Geometry, GeometryOverrides, MediaConfig, Preset, SsdConfig,
    Timing, ZonedConfig,
};
use serde::{Deserialize, Serialize};
use storage::{AllocPolicy, GcOptions, ZoneFsOptions};

use super::flat::{self, Flat};
use super::named::{parser, serde_name, serde_name_opt, Bytes, BytesOrOff, NameError, Named};
use super::names::FtlName;
use crate::error::{LabError, Result};

/// The file system (and so the device) the engine runs on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum FsKind {
    /// SimFs on a simulated block SSD.
    #[default]
    Sim,
    /// ZoneFs on a simulated ZNS SSD.
    Zone,
    /// A host directory, in wall-clock time.
    Posix(PathBuf),
    /// A fresh reflink XFS on a loop device (root), in wall-clock time, with the bytes the device
    /// took (`crate::loop_device`); `capacity` sizes its image.
    XfsLoop,
    /// Memory, in wall-clock time.
    Mem,
}

impl Named for FsKind {
    fn parse_name(text: &str) -> Result<FsKind, NameError> {
        match text.trim() {
            "sim" => Ok(FsKind::Sim),
            "zone" => Ok(FsKind::Zone),
            "mem" => Ok(FsKind::Mem),
            "xfs-loop" => Ok(FsKind::XfsLoop),
            t => match t.strip_prefix("posix:") {
                Some("") => Err("posix: needs a directory, e.g. posix:/tmp/flashkv".into()),
                Some(dir) => Ok(FsKind::Posix(PathBuf::from(dir))),
                None => Err(format!("unknown file system '{t}'; accepted: sim, zone, posix:DIR, mem, xfs-loop").into()),
            },
        }
    }
    fn name(&self) -> String {
        match self {
            FsKind::Sim => "sim".into(),
            FsKind::Zone => "zone".into(),
            FsKind::Posix(dir) => format!("posix:{}", dir.display()),
            FsKind::Mem => "mem".into(),
            FsKind::XfsLoop => "xfs-loop".into(),
        }
    }
}

/// Where a simulated device keeps its page contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Store {
    #[default]
    Auto,
    Memory,
    Compact,
    /// A temporary sparse file, in this directory or the system's temporary one.
    File(Option<PathBuf>),
}

impl Named for Store {
    fn parse_name(text: &str) -> Result<Store, NameError> {
        match text.trim() {
            "auto" => Ok(Store::Auto),
            "memory" => Ok(Store::Memory),
            "compact" => Ok(Store::Compact),
            "file" => Ok(Store::File(None)),
            t => match t.strip_prefix("file:") {
                Some(dir) if !dir.is_empty() => Ok(Store::File(Some(PathBuf::from(dir)))),
                _ => Err(format!("unknown store '{t}'; accepted: auto, memory, compact, file, file:DIR").into()),
            },
        }
    }
    fn name(&self) -> String {
        match self {
            Store::Auto => "auto".into(),
            Store::Memory => "memory".into(),
            Store::Compact => "compact".into(),
            Store::File(None) => "file".into(),
            Store::File(Some(dir)) => format!("file:{}", dir.display()),
        }
    }
}

impl Store {
    /// The store of a run whose values are zeros: `auto` becomes `compact`, which keeps only keys
    /// and headers in memory; a store given explicitly stays.
    pub fn for_zero_values(self) -> Store {
        match self {
            Store::Auto => Store::Compact,
            other => other,
        }
    }
}

/// Host zone GC: off (a zone is reused only once nothing in it is live), or run when this many
/// empty zones are left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneGc {
    Off,
    AtFreeZones(u32),
}

impl Default for ZoneGc {
    fn default() -> Self {
        ZoneGc::AtFreeZones(GcOptions::default().free_zones_trigger)
    }
}

impl Named for ZoneGc {
    fn parse_name(text: &str) -> Result<ZoneGc, NameError> {
        match text.trim() {
            "off" => Ok(ZoneGc::Off),
            n => match n.parse::<u32>() {
                Ok(z) if z >= 1 => Ok(ZoneGc::AtFreeZones(z)),
                _ => Err(format!("'{n}': accepted: off, or a number of free zones of at least 1").into()),
            },
        }
    }
    fn name(&self) -> String {
        match self {
            ZoneGc::Off => "off".into(),
            ZoneGc::AtFreeZones(n) => n.to_string(),
        }
    }
}

/// `--store auto` keeps up to this many bytes of page contents in memory.
pub const AUTO_MEMORY: u64 = 4 << 30;

/// The spare factor of a simulated block SSD unless given.
pub const DEFAULT_SPARE_FACTOR: f64 = 0.07;

/// Memory a simulated run needs besides page contents: the FTL's and file system's tables (bytes
/// per physical page, a generous bound) and the engine (memtables, caches).
const TABLE_BYTES_PER_PAGE: u64 = 64;
const ENGINE_BYTES: u64 = 256 << 20;

impl Named for FtlName {
    fn parse_name(text: &str) -> Result<FtlName, NameError> {
        crate::plugins::registry().ftl_name(text.trim()).map_err(NameError::from)
    }
    fn name(&self) -> String {
        self.as_str().to_string()
    }
}

/// The device and file system of a run (`--fs`, `--preset`, ...; `[device]`). The preset's
/// dimensions ([`flashsim::GeometryOverrides`], embedded: their fields are this table's) left out
/// keep the preset's.
#[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
// Read by `flat::deserialize` (the `Deserialize` impl below), which refuses unknown fields.
#[serde(remote = "Self", default, deny_unknown_fields)]
pub struct DeviceSpec {
    /// Where the database lives: sim (simulated block SSD), zone (simulated ZNS SSD with ZoneFs),
    /// posix:DIR (a host directory), mem, xfs-loop (a fresh reflink XFS on a loop device, root
    /// only, with the bytes the device took).
    #[arg(long, default_value = "sim", value_parser = parser::<FsKind>)]
    #[serde(with = "serde_name")]
    pub fs: FsKind,
    /// Device preset for simulated devices: femu, plsc, kvftl.
    #[arg(long, default_value = "femu", value_parser = parser::<Preset>)]
    #[serde(with = "serde_name")]
    pub preset: Preset,
    /// Raw capacity of the simulated device (e.g. 4GiB); the preset's own when absent.
    #[arg(long, value_parser = parser::<Bytes>)]
    #[serde(with = "serde_name_opt")]
    pub capacity: Option<Bytes>,
    /// NAND latencies instead of the preset's: a named chip (femu, ssdsim, seed004) or
    /// READ/PROGRAM/ERASE/TRANSFER-PER-BYTE such as 20us/200us/1.5ms/25ns.
    #[arg(long, value_parser = parser::<Timing>)]
    #[serde(with = "serde_name_opt")]
    pub timing: Option<Timing>,
    /// Flash page size instead of the preset's (a power of two, e.g. 32KiB); blocks keep the
    /// preset's number of pages.
    #[arg(long, value_parser = parser::<Bytes>)]
    #[serde(with = "serde_name_opt")]
    pub page_size: Option<Bytes>,
    /// Spare factor of a simulated block SSD (1 - user capacity / raw capacity).
    #[arg(long, default_value_t = DEFAULT_SPARE_FACTOR, value_parser = crate::input::fraction, allow_hyphen_values = true)]
    pub spare_factor: f64,
    /// Where the simulated device keeps page contents: auto (compact when the values are zeros, an
    /// experiment's `values = "zeros"`; else memory up to 4 GiB of live pages and a temporary file
    /// beyond), memory, compact (memory without zero runs), file (a temporary sparse file),
    /// file:DIR.
    #[arg(long, default_value = "auto", value_parser = parser::<Store>)]
    #[serde(with = "serde_name")]
    pub store: Store,
    /// Zone size (a whole number of erase blocks striped evenly over the planes); the default is
    /// one erase block in every plane (femu: 64 MiB).
    #[arg(long, value_parser = parser::<Bytes>)]
    #[serde(with = "serde_name_opt")]
    pub zone_size: Option<Bytes>,
    /// Erase block size of the zoned device (a whole number of pages); the preset's when absent.
    /// Smaller blocks keep small zones striped over every plane at a reduced scale.
    #[arg(long, value_parser = parser::<Bytes>)]
    #[serde(with = "serde_name_opt")]
    pub block_size: Option<Bytes>,
    /// Zone placement: shared (one stream for every file), per-level (WAL, metadata, each level
    /// and the T-zone in zones of their own), per-window (per-level, and each key-range window
    /// the strategy names, gear's placement windows, in zones of its own), lifetime (ZenFS's
    /// lifetime-hint matching).
    #[arg(long, default_value = "shared", value_parser = parser::<AllocPolicy>)]
    #[serde(with = "serde_name")]
    pub zone_policy: AllocPolicy,
    /// Host zone GC: off (zones are reused only once nothing in them is live), or the number of
    /// empty zones left at which GC runs.
    #[arg(long, default_value = "1", value_parser = parser::<ZoneGc>, allow_hyphen_values = true)]
    #[serde(with = "serde_name")]
    pub zone_gc: ZoneGc,
    /// The device's limit on open zones (none when absent).
    #[arg(long)]
    pub max_open_zones: Option<u32>,
    /// The device's limit on active (open or closed) zones (none when absent).
    #[arg(long)]
    pub max_active_zones: Option<u32>,
    // The preset's dimensions, replaced when given: flags and fields of their own, owned by the
    // simulator.
    #[command(flatten)]
    #[serde(flatten, skip_deserializing)]
    pub geometry: GeometryOverrides,
    /// Free blocks a simulated block SSD keeps for GC (its reserve; 1 when absent).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gc_reserve: Option<u32>,
    /// Flash translation layer of a simulated block SSD: page (page-level mapping with GC, TRIM
    /// and remap), or a plug-in's name.
    // Left out of a spec's JSON when built in: experiment files and results read as before.
    #[arg(long, default_value = "page", value_parser = parser::<FtlName>)]
    #[serde(with = "serde_name", skip_serializing_if = "FtlName::is_page")]
    pub ftl: FtlName,
    /// GC victim policy of a simulated block SSD: greedy, cost-benefit, fifo.
    #[arg(long, default_value = "greedy", value_parser = parser::<GcPolicy>)]
    #[serde(with = "serde_name")]
    pub gc: GcPolicy,
    /// Where block-SSD GC puts a victim's valid pages: spread (the other planes' frontiers, as
    /// FEMU's GC) or in-plane (the victim's plane, by copyback, as SSDSim's); the preset's when
    /// absent (femu and kvftl: spread; plsc: in-plane).
    #[arg(long, value_parser = parser::<GcDestination>)]
    #[serde(with = "serde_name_opt")]
    pub gc_destination: Option<GcDestination>,
    /// GC relocates pages that stay in their plane by copyback (on by default; --no-copyback reads
    /// and programs them over the channel). Only in-plane GC keeps pages in their plane.
    #[arg(long = "no-copyback", action = clap::ArgAction::SetFalse)]
    pub copyback: bool,
    /// The host's page cache over the simulated file system's files (sim, zone), e.g. 64MiB; 0:
    /// none, every read and write goes to the device. CLOCK replacement, Linux's readahead (128
    /// KiB at most) and dirty write-back (10 % background ratio, 30 s expiry).
    // Left out of a spec's JSON when off: experiment files and results without one read as before.
    #[arg(long, default_value = "0", value_parser = parser::<BytesOrOff>)]
    #[serde(with = "serde_name", skip_serializing_if = "BytesOrOff::is_off")]
    pub page_cache: BytesOrOff,
}

impl Default for DeviceSpec {
    fn default() -> Self {
        DeviceSpec {
            fs: FsKind::Sim,
            preset: Preset::Femu,
            capacity: None,
            timing: None,
            page_size: None,
            spare_factor: DEFAULT_SPARE_FACTOR,
            store: Store::Auto,
            zone_size: None,
            block_size: None,
            zone_policy: AllocPolicy::Shared,
            zone_gc: ZoneGc::default(),
            max_open_zones: None,
            max_active_zones: None,
            geometry: GeometryOverrides::default(),
            gc_reserve: None,
            ftl: FtlName::Page,
            gc: GcPolicy::Greedy,
            gc_destination: None,
            copyback: true,
            page_cache: BytesOrOff(0),
        }
    }
}

impl Serialize for DeviceSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        DeviceSpec::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for DeviceSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<DeviceSpec, D::Error> {
        flat::deserialize(d)
    }
}

impl Flat for DeviceSpec {
    type Part = GeometryOverrides;
    const PART_AT: usize = 13;

    fn own<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<DeviceSpec, D::Error> {
        DeviceSpec::deserialize(d)
    }

    fn part_mut(&mut self) -> &mut GeometryOverrides {
        &mut self.geometry
    }
}

/// An error about `device.<field>`.
fn invalid(field: &str, reason: impl Into<String>) -> LabError {
    LabError::invalid(format!("device.{field}"), reason)
}

/// A flash layer's configuration error, named as the device field it is about.
fn flash_field(e: flashsim::FlashError) -> LabError {
    match e {
        // The flash layer's names for what a `[device]` field sets.
        flashsim::FlashError::InvalidConfig { field: "gc_reserve_blocks", reason } => invalid("gc_reserve", reason),
        flashsim::FlashError::InvalidConfig { field, reason } => invalid(field, reason),
        other => LabError::Flash(other),
    }
}

impl DeviceSpec {
    /// The image of an `xfs-loop` file system: `capacity`, never under the loop device's default.
    pub fn xfs_image_bytes(&self) -> u64 {
        self.capacity.map_or(crate::loop_device::DEFAULT_IMAGE, |c| c.0).max(crate::loop_device::DEFAULT_IMAGE)
    }

    /// The preset's geometry with `page_size` applied (before any resizing), and its timings or
    /// `timing`'s.
    pub fn chip(&self) -> Result<(Geometry, Timing)> {
        let mut g = self.geometry.apply(self.preset.geometry()).map_err(flash_field)?;
        if let Some(p) = self.page_size {
            g.page_size = u32::try_from(p.0)
                .ok()
                .filter(|b| b.is_power_of_two() && *b >= 512)
                .ok_or_else(|| invalid("page_size", format!("{} is not a power of two from 512 B to 2 GiB", p.0)))?;
        }
        Ok((g, self.timing.clone().unwrap_or_else(|| self.preset.timing())))
    }

    /// The chip's geometry resized to `capacity` (the preset's own capacity when absent), or as
    /// `blocks_per_plane` makes it.
    fn sized(&self, g: Geometry) -> Result<Geometry> {
        match (self.capacity, self.geometry.blocks_per_plane) {
            (Some(_), Some(_)) => Err(invalid("blocks_per_plane", "give capacity or blocks_per_plane, not both")),
            (Some(c), None) => flashsim::preset::scale(g, c.0).map_err(flash_field),
            (None, _) => {
                g.validate().map_err(flash_field)?;
                Ok(g)
            }
        }
    }

    /// Where block-SSD GC puts a victim's valid pages: `gc_destination`, or the preset's.
    pub fn gc_destination(&self) -> GcDestination {
        self.gc_destination.unwrap_or_else(|| self.preset.gc_destination())
    }

    /// The simulated block SSD's configuration (`fs = sim`).
    pub fn ssd_config(&self) -> Result<SsdConfig> {
        let (g, timing) = self.chip()?;
        let mut cfg = SsdConfig::new(self.sized(g)?, timing);
        if !(0.0..1.0).contains(&self.spare_factor) {
            return Err(invalid("spare_factor", format!("{} is not in [0, 1)", self.spare_factor)));
        }
        cfg.spare_factor = self.spare_factor;
        cfg.gc_policy = self.gc.clone();
        if let Some(r) = self.gc_reserve {
            cfg.gc_reserve_blocks = r;
        }
        cfg.gc_destination = self.gc_destination();
        cfg.copyback = self.copyback;
        cfg.media.store = self.data_mode();
        cfg.validate().map_err(flash_field)?;
        Ok(cfg)
    }

    /// The simulated block SSD (`fs = sim`): the FTL `ftl` names on [`DeviceSpec::ssd_config`].
    pub fn block_ssd(&self) -> Result<Box<dyn Ftl>> {
        self.ftl_on(&self.ssd_config()?)
    }

    /// The FTL `ftl` names on `cfg` (this device's configuration, adjusted by the caller).
    pub fn ftl_on(&self, cfg: &SsdConfig) -> Result<Box<dyn Ftl>> {
        match self.ftl {
            FtlName::Page => Ok(Box::new(BlockSsd::new(cfg.clone())?)),
            FtlName::Plugin(name) => crate::plugins::registry().build_ftl(name, cfg),
        }
    }

    /// The simulated ZNS device's configuration (`fs = zone`).
    pub fn zoned_config(&self) -> Result<ZonedConfig> {
        let (mut g, timing) = self.chip()?;
        if let (Some(_), Some(_)) = (self.block_size, self.geometry.pages_per_block) {
            return Err(invalid("block_size", "give block_size or pages_per_block, not both"));
        }
        if let Some(b) = self.block_size {
            if b.0 % g.page_size as u64 != 0 {
                return Err(invalid("block_size", format!("{} is not a whole number of {} B pages", b.0, g.page_size)));
            }
            g.pages_per_block = u32::try_from(b.0 / g.page_size as u64)
                .map_err(|_| invalid("block_size", format!("{} is too large", b.0)))?;
        }
        let g = self.sized(g)?;
        let zone = self.zone_size.map_or(g.total_planes() as u64 * g.block_bytes(), |z| z.0);
        let mut cfg = ZonedConfig::new(g, timing, zone);
        cfg.max_open_zones = self.max_open_zones;
        cfg.max_active_zones = self.max_active_zones;
        cfg.media.store = self.data_mode();
        cfg.validate().map_err(flash_field)?;
        Ok(cfg)
    }

    /// The NAND array of a device that is an FTL of its own (a key-value SSD): the preset's
    /// geometry at `capacity`, its timings, pages kept where `store` says.
    pub fn media_config(&self) -> Result<MediaConfig> {
        let (g, timing) = self.chip()?;
        let mut cfg = MediaConfig::new(self.sized(g)?, timing);
        cfg.store = self.data_mode();
        Ok(cfg)
    }

    /// The flash page (what page-relative value sizes are relative to).
    pub fn page_size(&self) -> Result<u32> {
        Ok(self.chip()?.0.page_size)
    }

    /// The host page cache of `page_cache` bytes; its clean whole pages left on the device when
    /// the device keeps its pages compact in memory (our choice: a run of zero-valued records
    /// then holds their keys and headers once, on its device, and the cache neither copies nor
    /// keeps them; what is measured is the same).
    pub fn page_cache_config(&self) -> storage::PageCacheConfig {
        storage::PageCacheConfig {
            clean_on_device: self.store == Store::Compact,
            ..storage::PageCacheConfig::with_capacity(self.page_cache.0)
        }
    }

    /// ZoneFs's options (`zone_policy`, `zone_gc`).
    pub fn zone_fs_options(&self) -> ZoneFsOptions {
        let gc = match self.zone_gc {
            ZoneGc::Off => None,
            ZoneGc::AtFreeZones(n) => Some(GcOptions { free_zones_trigger: n }),
        };
        ZoneFsOptions { policy: self.zone_policy.clone(), gc, ..ZoneFsOptions::default() }
    }

    /// Checks everything the device needs, so a bad field fails before any run starts.
    pub fn validate(&self) -> Result<()> {
        if self.page_cache.0 > 0 && !matches!(self.fs, FsKind::Sim | FsKind::Zone) {
            return Err(invalid(
                "page_cache",
                format!("only a simulated file system (sim, zone) has one; '{}' uses the host's", self.fs.name()),
            ));
        }
        if !self.ftl.is_page() && !matches!(self.fs, FsKind::Sim) {
            return Err(invalid(
                "ftl",
                format!("applies to a simulated block SSD (fs = sim), not to '{}'", self.fs.name()),
            ));
        }
        match self.fs {
            FsKind::Sim => self.ssd_config().map(|_| ()),
            FsKind::Zone => self.zoned_config().map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Where the device keeps its pages under `store`.
    fn data_mode(&self) -> DataMode {
        match &self.store {
            Store::Auto => DataMode::MemoryThenFile { memory_bytes: AUTO_MEMORY, dir: std::env::temp_dir() },
            Store::File(dir) => DataMode::TempFile(dir.clone().unwrap_or_else(std::env::temp_dir)),
            Store::Memory => DataMode::Memory,
            Store::Compact => DataMode::Compact,
        }
    }

    /// The simulated device's media and the bytes it offers the host (`None` on real files).
    fn simulated_media(&self) -> Result<Option<(MediaConfig, u64)>> {
        Ok(match self.fs {
            FsKind::Sim => {
                let cfg = self.ssd_config()?;
                let user = cfg.user_bytes();
                Some((cfg.media, user))
            }
            FsKind::Zone => {
                let cfg = self.zoned_config()?;
                let user = cfg.media.geometry.total_pages() * cfg.media.geometry.page_size as u64;
                Some((cfg.media, user))
            }
            _ => None,
        })
    }

    /// Memory one run on this device may need at most (its page cache, page contents bounded by
    /// the user capacity and the store's memory budget; in the compact store, twice the
    /// `kept_bytes` of its records, for old versions not yet dropped), for sizing how many runs go
    /// in parallel.
    pub fn memory_estimate(&self, kept_bytes: u64) -> Result<u64> {
        let Some((media, user_bytes)) = self.simulated_media()? else {
            return Ok(ENGINE_BYTES);
        };
        let tables = media.geometry.total_pages() * TABLE_BYTES_PER_PAGE;
        let pages = match &media.store {
            DataMode::Memory => user_bytes,
            DataMode::MemoryThenFile { memory_bytes, .. } => user_bytes.min(*memory_bytes),
            DataMode::Compact => user_bytes.min(kept_bytes.saturating_mul(2)),
            _ => 0,
        };
        Ok(ENGINE_BYTES + self.page_cache.0 + tables + pages)
    }

    /// Disk one run on this device may fill, and where, when its device spills page contents to a
    /// file: the pages of `data_bytes` of user data still in the file (estimated at twice the
    /// data, for the versions an LSM keeps until compaction drops them and for blocks whose dead
    /// pages are not yet punched out; never more than the device holds) beyond what the store
    /// keeps in memory. `(0, None)` when nothing goes to a file. (1.5 times was too little: two
    /// paper-scale plsc runs admitted together filled the disk.)
    pub fn disk_estimate(&self, data_bytes: u64) -> Result<(u64, Option<PathBuf>)> {
        let Some((media, user_bytes)) = self.simulated_media()? else {
            return Ok((0, None));
        };
        let live = user_bytes.min(data_bytes.saturating_mul(2));
        Ok(match media.store {
            DataMode::MemoryThenFile { memory_bytes, dir } => (live.saturating_sub(memory_bytes), Some(dir)),
            DataMode::TempFile(dir) => (live, Some(dir)),
            DataMode::SparseFile(path) => (live, path.parent().map(PathBuf::from)),
            _ => (0, None),
        })
    }
}

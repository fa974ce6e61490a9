//! The storage stack an experiment runs on: a simulated block SSD with SimFs (`--fs sim`), a
//! simulated ZNS SSD with ZoneFs (`--fs zone`), a host directory (`--fs posix:DIR`), or memory
//! (`--fs mem`), and the engine options that go with it (simulation runs the engine in simulated
//! time on the file system's clock).
//!
//! A simulated device keeps its page contents where `--store` says: `memory`, `file` (an unnamed
//! sparse file in the system's temporary directory, or `file:DIR`), `compact` (memory without the
//! pages' runs of zero bytes: with zero values, keys and headers only), or `auto`: memory up to
//! [`AUTO_MEMORY`] of live pages, a temporary file beyond. The store changes memory and speed, never
//! a result.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use flashsim::{
    BlockSsd, DataMode, FlashReport, Geometry, MediaConfig, Preset, SsdConfig, Timing, ZonedConfig, ZonedSsd,
};
use flashsim::{Lane, SimClock};
use serde::{Deserialize, Serialize};
use storage::{AllocPolicy, Fs, GcOptions, HostWriteStats, MemFs, PosixFs, SimFs, SimFsOptions};
use storage::{ZoneFs, ZoneFsOptions, ZoneReport};

use crate::kv_device::{KvDesign, SharedKvSsd};
use crate::size::parse_size;

/// Device flags shared by `bench`, `ycsb` and `mixgraph`.
#[derive(clap::Args, Debug, Clone, Serialize, Deserialize)]
pub struct DeviceArgs {
    /// Where the database lives: sim (simulated block SSD), zone (simulated ZNS SSD with ZoneFs),
    /// posix:DIR (a host directory), mem.
    #[arg(long, default_value = "sim")]
    pub fs: String,
    /// Device preset for --fs sim and zone: femu, plsc, kvftl.
    #[arg(long, default_value = "femu")]
    pub preset: String,
    /// Raw capacity of the simulated device (e.g. 4GiB); the preset's own when absent.
    #[arg(long)]
    pub capacity: Option<String>,
    /// NAND latencies instead of the preset's: a named chip (femu, ssdsim, seed004) or
    /// READ/PROGRAM/ERASE/TRANSFER-PER-BYTE such as 20us/200us/1.5ms/25ns.
    #[arg(long)]
    pub timing: Option<String>,
    /// Flash page size instead of the preset's (a power of two, e.g. 32KiB); blocks keep the
    /// preset's number of pages.
    #[arg(long)]
    pub page_size: Option<String>,
    /// Spare factor of the simulated device.
    #[arg(long, default_value_t = 0.07, value_parser = crate::input::fraction, allow_hyphen_values = true)]
    pub spare_factor: f64,
    /// Where the simulated device keeps page contents: auto (memory up to 4 GiB of live pages, a
    /// temporary file beyond), memory, compact (memory without zero runs: for --values zeros),
    /// file (a temporary sparse file), file:DIR.
    #[arg(long, default_value = "auto")]
    pub store: String,
    #[command(flatten)]
    pub zone: ZoneArgs,
}

/// The zoned device and ZoneFs flags (`--fs zone`).
#[derive(clap::Args, Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ZoneArgs {
    /// Zone size (a whole number of erase blocks striped evenly over the planes); the default is
    /// one erase block in every plane (femu: 64 MiB).
    #[arg(long)]
    pub zone_size: Option<String>,
    /// Erase block size of the zoned device (a whole number of pages); the preset's when absent.
    /// Smaller blocks keep small zones striped over every plane at a reduced scale.
    #[arg(long)]
    pub block_size: Option<String>,
    /// Zone placement: shared (one stream for every file), per-level (WAL, metadata, each level and
    /// the T-zone in zones of their own), lifetime (ZenFS's lifetime-hint matching).
    #[arg(long, default_value = "shared")]
    pub zone_policy: String,
    /// Host zone GC: off (zones are reused only once nothing in them is live), or the number of
    /// empty zones left at which GC runs.
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    pub zone_gc: String,
    /// The device's limit on open zones (none when absent).
    #[arg(long)]
    pub max_open_zones: Option<u32>,
    /// The device's limit on active (open or closed) zones (none when absent).
    #[arg(long)]
    pub max_active_zones: Option<u32>,
}

impl Default for ZoneArgs {
    fn default() -> Self {
        ZoneArgs {
            zone_size: None,
            block_size: None,
            zone_policy: "shared".into(),
            zone_gc: "1".into(),
            max_open_zones: None,
            max_active_zones: None,
        }
    }
}

impl Default for DeviceArgs {
    fn default() -> Self {
        DeviceArgs {
            fs: "sim".into(),
            preset: "femu".into(),
            capacity: None,
            timing: None,
            page_size: None,
            spare_factor: 0.07,
            store: "auto".into(),
            zone: ZoneArgs::default(),
        }
    }
}

/// `--store auto` keeps up to this many bytes of page contents in memory.
pub const AUTO_MEMORY: u64 = 4 << 30;

/// Memory a simulated run needs besides page contents: the FTL's and file system's tables (bytes
/// per physical page, a generous bound) and the engine (memtables, caches).
const TABLE_BYTES_PER_PAGE: u64 = 64;
const ENGINE_BYTES: u64 = 256 << 20;

impl DeviceArgs {
    /// The preset's geometry with `--page-size` applied (before any resizing), and its timings or
    /// `--timing`'s.
    pub fn chip(&self) -> Result<(Geometry, Timing), String> {
        let preset = Preset::parse(&self.preset).map_err(|e| format!("--preset: {e}"))?;
        let mut g = preset.geometry();
        if let Some(p) = &self.page_size {
            let bytes = parse_size("--page-size", p)?;
            g.page_size = u32::try_from(bytes)
                .ok()
                .filter(|b| b.is_power_of_two() && *b >= 512)
                .ok_or_else(|| format!("--page-size: {p} is not a power of two from 512 B to 2 GiB"))?;
        }
        let timing = match &self.timing {
            Some(t) => Timing::parse(t).map_err(|e| format!("--timing: {e}"))?,
            None => preset.timing(),
        };
        Ok((g, timing))
    }

    /// The chip's geometry resized to `--capacity` (the preset's own capacity when absent).
    fn sized(&self, g: Geometry) -> Result<Geometry, String> {
        match &self.capacity {
            Some(c) => flashsim::preset::scale(g, parse_size("--capacity", c)?).map_err(|e| format!("--capacity: {e}")),
            None => Ok(g),
        }
    }

    /// The simulated device's configuration (`--fs sim`).
    pub fn ssd_config(&self) -> Result<SsdConfig, String> {
        let (g, timing) = self.chip()?;
        let mut cfg = SsdConfig::new(self.sized(g)?, timing);
        if !(0.0..1.0).contains(&self.spare_factor) {
            return Err(format!("--spare-factor: {} is not in [0, 1)", self.spare_factor));
        }
        cfg.spare_factor = self.spare_factor;
        cfg.media.store = self.data_mode()?;
        Ok(cfg)
    }

    /// The simulated ZNS device's configuration (`--fs zone`); every bad field is a one-line error
    /// naming it.
    pub fn zoned_config(&self) -> Result<ZonedConfig, String> {
        let z = &self.zone;
        let (mut g, timing) = self.chip()?;
        if let Some(b) = &z.block_size {
            let bytes = parse_size("--block-size", b)?;
            if bytes % g.page_size as u64 != 0 {
                return Err(format!("--block-size: {b} is not a whole number of {} B pages", g.page_size));
            }
            g.pages_per_block =
                u32::try_from(bytes / g.page_size as u64).map_err(|_| format!("--block-size: {b} is too large"))?;
        }
        let g = self.sized(g)?;
        let zone = match &z.zone_size {
            Some(s) => parse_size("--zone-size", s)?,
            None => g.total_planes() as u64 * g.block_bytes(),
        };
        let mut cfg = ZonedConfig::new(g, timing, zone);
        cfg.max_open_zones = z.max_open_zones;
        cfg.max_active_zones = z.max_active_zones;
        cfg.media.store = self.data_mode()?;
        cfg.validate().map_err(|e| format!("--fs zone: {e}"))?;
        Ok(cfg)
    }

    /// The NAND array of a device that is an FTL of its own (a key-value SSD): the preset's
    /// geometry at `--capacity`, its timings, pages kept where `--store` says.
    pub fn media_config(&self) -> Result<MediaConfig, String> {
        let (g, timing) = self.chip()?;
        let mut cfg = MediaConfig::new(self.sized(g)?, timing);
        cfg.store = self.data_mode()?;
        Ok(cfg)
    }

    /// The flash page (what page-relative value sizes are relative to).
    pub fn page_size(&self) -> Result<u32, String> {
        Ok(self.chip()?.0.page_size)
    }

    /// ZoneFs's options (`--zone-policy`, `--zone-gc`).
    pub fn zone_fs_options(&self) -> Result<ZoneFsOptions, String> {
        let z = &self.zone;
        let policy = AllocPolicy::parse(&z.zone_policy).ok_or_else(|| {
            format!("--zone-policy: unknown policy '{}'; accepted: shared, per-level, lifetime", z.zone_policy)
        })?;
        let gc = match z.zone_gc.as_str() {
            "off" => None,
            n => Some(GcOptions {
                free_zones_trigger: n
                    .parse()
                    .ok()
                    .filter(|&t| t >= 1)
                    .ok_or_else(|| format!("--zone-gc: '{n}' is neither off nor a number of free zones >= 1"))?,
            }),
        };
        Ok(ZoneFsOptions { policy, gc, ..ZoneFsOptions::default() })
    }

    /// Checks every device flag without building the device (experiment files are checked when read).
    pub fn validate(&self) -> Result<(), String> {
        match self.fs.as_str() {
            "sim" => self.ssd_config().map(|_| ()),
            "zone" => self.zoned_config().and_then(|_| self.zone_fs_options()).map(|_| ()),
            _ => Ok(()),
        }
    }

    /// Where the device keeps its pages under `--store`.
    fn data_mode(&self) -> Result<DataMode, String> {
        match self.store.as_str() {
            "auto" => Ok(DataMode::MemoryThenFile { memory_bytes: AUTO_MEMORY, dir: std::env::temp_dir() }),
            "file" => Ok(DataMode::TempFile(std::env::temp_dir())),
            "memory" => Ok(DataMode::Memory),
            "compact" => Ok(DataMode::Compact),
            other => match other.strip_prefix("file:") {
                Some(dir) if !dir.is_empty() => Ok(DataMode::TempFile(PathBuf::from(dir))),
                _ => Err(format!("--store: unknown store '{other}'; accepted: auto, memory, compact, file, file:DIR")),
            },
        }
    }

    /// The simulated device's media and the bytes it offers the host (`None` on real files).
    fn simulated_media(&self) -> Result<Option<(MediaConfig, u64)>, String> {
        Ok(match self.fs.as_str() {
            "sim" => {
                let cfg = self.ssd_config()?;
                let user = cfg.user_bytes();
                Some((cfg.media, user))
            }
            "zone" => {
                let cfg = self.zoned_config()?;
                let user = cfg.media.geometry.total_pages() * cfg.media.geometry.page_size as u64;
                Some((cfg.media, user))
            }
            _ => None,
        })
    }

    /// Memory one run on this stack may need at most (page contents bounded by the user capacity
    /// and the store's memory budget; in the compact store, twice the `kept_bytes` of its records,
    /// for old versions not yet dropped), for sizing how many runs go in parallel.
    pub fn memory_estimate(&self, kept_bytes: u64) -> Result<u64, String> {
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
        Ok(ENGINE_BYTES + tables + pages)
    }

    /// Disk one run on this stack may fill, and where, when its device spills page contents to a
    /// file: the pages of `data_bytes` of user data still in the file (estimated at twice the data,
    /// for the versions an LSM keeps until compaction drops them and for blocks whose dead pages are
    /// not yet punched out; never more than the device holds) beyond what the store keeps in memory.
    /// `(0, None)` when nothing goes to a file. (1.5 times was too little: two paper-scale plsc runs
    /// admitted together filled the disk.)
    pub fn disk_estimate(&self, data_bytes: u64) -> Result<(u64, Option<PathBuf>), String> {
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

    /// A short description for reports.
    /// `, CAPACITY, P KiB pages, NAND READ/PROGRAM/ERASE/TRANSFER` of a simulated device.
    pub fn shape(&self) -> String {
        let mut shape = self.capacity.as_deref().map_or(String::new(), |c| format!(", {c}"));
        if let Ok((g, timing)) = self.chip() {
            shape += &format!(", {} KiB pages, NAND {}", g.page_size >> 10, timing.label());
        }
        shape
    }

    pub fn describe(&self) -> String {
        let capacity = self.shape();
        match self.fs.as_str() {
            "sim" => format!("simulated {} SSD{capacity} (spare factor {})", self.preset, self.spare_factor),
            "zone" => {
                let z = &self.zone;
                let zone = match self.zoned_config() {
                    Ok(c) => format!("{} MiB zones", c.zone_size >> 20),
                    Err(_) => "zones".into(),
                };
                let gc = if z.zone_gc == "off" { "no GC".to_string() } else { format!("GC at {} free", z.zone_gc) };
                format!("simulated {} ZNS SSD{capacity}, {zone}, ZoneFs {} placement, {gc}", self.preset, z.zone_policy)
            }
            _ => self.fs.clone(),
        }
    }
}

pub enum Backend {
    Sim(SimFs),
    Zone(ZoneFs),
    Posix,
    Mem,
    /// A key-value SSD: the engine is the device, with no file system.
    Kv(SharedKvSsd),
}

/// A built stack: the file system (none under a key-value SSD), and for simulation its clock.
pub struct Stack {
    pub fs: Option<Arc<dyn Fs>>,
    pub backend: Backend,
    pub clock: Option<SimClock>,
    started: Instant,
}

impl Stack {
    pub fn build(a: &DeviceArgs) -> Result<Stack, String> {
        let started = Instant::now();
        if a.fs == "sim" {
            let dev = BlockSsd::new(a.ssd_config()?).map_err(|e| e.to_string())?;
            let clock = SimClock::new();
            let fs = SimFs::format(dev, clock.clone(), SimFsOptions::default()).map_err(|e| e.to_string())?;
            return Ok(Stack {
                fs: Some(Arc::new(fs.clone())),
                backend: Backend::Sim(fs),
                clock: Some(clock),
                started,
            });
        }
        if a.fs == "zone" {
            let dev = ZonedSsd::new(a.zoned_config()?).map_err(|e| format!("--fs zone: {e}"))?;
            let opts = a.zone_fs_options()?;
            let clock = SimClock::new();
            let fs = ZoneFs::format(dev, clock.clone(), opts).map_err(|e| format!("--fs zone: {e}"))?;
            return Ok(Stack {
                fs: Some(Arc::new(fs.clone())),
                backend: Backend::Zone(fs),
                clock: Some(clock),
                started,
            });
        }
        if a.fs == "mem" {
            return Ok(Stack { fs: Some(Arc::new(MemFs::new())), backend: Backend::Mem, clock: None, started });
        }
        if let Some(dir) = a.fs.strip_prefix("posix:") {
            if dir.is_empty() {
                return Err("--fs: posix: needs a directory, e.g. posix:/tmp/flashkv".into());
            }
            let fs = PosixFs::new(PathBuf::from(dir)).map_err(|e| format!("--fs: {e}"))?;
            return Ok(Stack { fs: Some(Arc::new(fs)), backend: Backend::Posix, clock: None, started });
        }
        Err(format!("--fs: unknown file system '{}'; accepted: sim, zone, posix:DIR, mem", a.fs))
    }

    /// A key-value SSD of `design` on the device flags' preset and capacity, in simulated time.
    pub fn kv_device(a: &DeviceArgs, design: KvDesign) -> Result<Stack, String> {
        if a.fs != "sim" {
            return Err(format!(
                "--engine {}: a key-value SSD has no file system below it; --fs {} does not apply (leave --fs out)",
                design.name(),
                a.fs
            ));
        }
        let dev = design.build(a)?;
        let clock = SimClock::new();
        Ok(Stack {
            fs: None,
            backend: Backend::Kv(Arc::new(std::sync::Mutex::new(dev))),
            clock: Some(clock),
            started: Instant::now(),
        })
    }

    /// The file system, for an engine that needs one.
    pub fn fs(&self) -> Result<Arc<dyn Fs>, String> {
        self.fs.clone().ok_or_else(|| "this stack is a key-value SSD: it has no file system".to_string())
    }

    pub fn simulated(&self) -> bool {
        self.clock.is_some()
    }

    /// Now, in the time that measures throughput: the foreground's simulated nanoseconds, or wall-clock
    /// nanoseconds since the stack was built.
    pub fn now_ns(&self) -> u64 {
        match &self.clock {
            Some(c) => c.time(Lane::Foreground),
            None => self.started.elapsed().as_nanos() as u64,
        }
    }

    /// NAND operations so far (simulation only), for the simulator's speed.
    pub fn nand_ops(&self) -> Option<u64> {
        match &self.backend {
            Backend::Sim(fs) => Some(fs.with_device(|d| d.media().counters().nand_ops())),
            Backend::Zone(fs) => Some(fs.with_device(|d| d.media().counters().nand_ops())),
            Backend::Kv(d) => Some(d.lock().unwrap_or_else(|e| e.into_inner()).media().counters().nand_ops()),
            _ => None,
        }
    }

    /// A key-value SSD's own work.
    pub fn device_work(&self) -> Option<kvssd::DeviceWork> {
        match &self.backend {
            Backend::Kv(d) => Some(d.lock().unwrap_or_else(|e| e.into_inner()).work()),
            _ => None,
        }
    }

    /// Device-level accounting, when there is a simulated device.
    pub fn device_report(&self) -> Option<DeviceReport> {
        let (stats, flash, zones) = match &self.backend {
            Backend::Sim(fs) => (fs.stats(), fs.with_device(|d| d.report()), None),
            Backend::Zone(fs) => {
                let page = fs.with_device(|d| d.config().geometry().page_size as u64);
                let zone_size = fs.with_device(|d| d.config().zone_size);
                (fs.stats(), fs.with_device(|d| d.report()), Some(ZoneSummary::new(&fs.zone_report(), zone_size, page)))
            }
            Backend::Kv(d) => return Some(d.lock().unwrap_or_else(|e| e.into_inner()).device_report()),
            _ => return None,
        };
        Some(DeviceReport::new(&stats, flash, zones))
    }
}

impl DeviceReport {
    /// A key-value SSD's report: the host's writes are the pages programmed for its data (its
    /// flushes), and the device's compaction writes are reported per level, as the LSM's are.
    pub fn of_kv_ssd(flash: FlashReport, compaction_by_level: Vec<u64>) -> DeviceReport {
        let host = flash.host_write_bytes;
        DeviceReport {
            host_write_bytes: HostWrites {
                total: host,
                wal: 0,
                flush: host,
                compaction_by_level: compaction_by_level.clone(),
                manifest: 0,
                fs_metadata: 0,
                other: 0,
                moves: 0,
                t_zone: 0,
                zone_gc: 0,
            },
            levels: compaction_by_level
                .iter()
                .enumerate()
                .map(|(level, &b)| LevelDevice {
                    level,
                    host_write_bytes: b + if level == 0 { host } else { 0 },
                    cloned_bytes: 0,
                })
                .collect(),
            flash,
            zones: None,
        }
    }

    fn new(s: &HostWriteStats, flash: FlashReport, zones: Option<ZoneSummary>) -> DeviceReport {
        // GC copies cannot be attributed to a level; each level's flash programs are its own host
        // page writes, and the GC share is reported whole.
        let levels = s
            .compaction_bytes
            .iter()
            .enumerate()
            .map(|(level, &bytes)| LevelDevice {
                level,
                host_write_bytes: bytes + if level == 0 { s.flush_bytes } else { 0 },
                cloned_bytes: s.cloned_bytes_by_level.get(level).copied().unwrap_or(0),
            })
            .collect();
        DeviceReport {
            host_write_bytes: HostWrites {
                total: s.host_write_bytes(),
                wal: s.wal_bytes,
                flush: s.flush_bytes,
                compaction_by_level: s.compaction_bytes.clone(),
                manifest: s.manifest_bytes,
                fs_metadata: s.fs_metadata_bytes,
                other: s.other_bytes,
                moves: s.move_bytes,
                t_zone: s.t_zone_bytes,
                zone_gc: s.zone_gc_bytes,
            },
            flash,
            levels,
            zones,
        }
    }
}

/// What a ZoneFs run did to its zones (seed 003's measures): the utilisation of every data zone
/// in use at the end (live bytes / zone capacity), resets, host GC, padding and space
/// amplification.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ZoneSummary {
    pub zone_size: u64,
    pub zone_capacity: u64,
    pub data_zones: usize,
    /// Data zones holding anything at the end.
    pub used_zones: usize,
    /// Live bytes / zone capacity of each used data zone, in zone order.
    pub utilisation: Vec<f64>,
    /// Used zones per tenth of utilisation ([0, 0.1), ..., [0.9, 1.0]).
    pub utilisation_histogram: Vec<u64>,
    /// Used zones at least 90 % utilised (seed 003: "over 90 % at most zones").
    pub zones_over_90_percent: usize,
    /// Bytes written in used data zones / live bytes.
    pub space_amplification: Option<f64>,
    pub resets: u64,
    pub gc_runs: u64,
    pub gc_copied_bytes: u64,
    pub padding_bytes: u64,
}

impl ZoneSummary {
    fn new(r: &ZoneReport, zone_size: u64, page: u64) -> ZoneSummary {
        let utilisation = r.utilisation();
        ZoneSummary {
            zone_size,
            zone_capacity: r.zone_capacity_bytes,
            data_zones: r.data_zones().count(),
            used_zones: r.used_data_zones(),
            zones_over_90_percent: utilisation.iter().filter(|&&u| u >= 0.9).count(),
            utilisation,
            utilisation_histogram: r.utilisation_histogram(10),
            space_amplification: r.space_amplification(page),
            resets: r.counters.resets,
            gc_runs: r.counters.gc_runs,
            gc_copied_bytes: r.counters.gc_copied_bytes,
            padding_bytes: r.counters.padding_bytes,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HostWrites {
    pub total: u64,
    pub wal: u64,
    pub flush: u64,
    pub compaction_by_level: Vec<u64>,
    pub manifest: u64,
    pub fs_metadata: u64,
    pub other: u64,
    /// SSTs rewritten unchanged into their level's zone (lifetime-leveling's moves).
    pub moves: u64,
    /// Short-lived SSTs written to the T-zone (lifetime-leveling).
    pub t_zone: u64,
    /// Live data copied by host zone GC (ZoneFs).
    pub zone_gc: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LevelDevice {
    pub level: usize,
    /// Pages the engine wrote into this level (flushes count at level 0), in bytes.
    pub host_write_bytes: u64,
    pub cloned_bytes: u64,
}

/// What the simulated device saw: the file system's writes by cause, the device's own report, and
/// host writes per level.
#[derive(Clone, Debug)]
pub struct DeviceReport {
    pub host_write_bytes: HostWrites,
    pub flash: FlashReport,
    pub levels: Vec<LevelDevice>,
    /// Zones, on a ZNS device.
    pub zones: Option<ZoneSummary>,
}

//! The storage stack an experiment runs on: a simulated SSD with SimFs (`--fs sim`), a host
//! directory (`--fs posix:DIR`), or memory (`--fs mem`), and the engine options that go with it
//! (simulation runs the engine in simulated time on the SimFs clock).
//!
//! A simulated device keeps its page contents where `--store` says: `memory`, `file` (an unnamed
//! sparse file in the system's temporary directory, or `file:DIR`), or `auto`: memory up to
//! [`AUTO_MEMORY`] of live pages, a temporary file beyond. The store changes memory and speed, never
//! a result.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use flashsim::{BlockSsd, DataMode, FlashReport, Preset, SsdConfig};
use flashsim::{Lane, SimClock};
use serde::Serialize;
use storage::{Fs, MemFs, PosixFs, SimFs, SimFsOptions};

use crate::size::parse_size;

/// Device flags shared by `bench`, `ycsb` and `mixgraph`.
#[derive(clap::Args, Debug, Clone)]
pub struct DeviceArgs {
    /// Where the database lives: sim (simulated SSD), posix:DIR (a host directory), mem.
    #[arg(long, default_value = "sim")]
    pub fs: String,
    /// Device preset for --fs sim: femu, plsc, kvftl.
    #[arg(long, default_value = "femu")]
    pub preset: String,
    /// Raw capacity of the simulated device (e.g. 4GiB); the preset's own when absent.
    #[arg(long)]
    pub capacity: Option<String>,
    /// Spare factor of the simulated device.
    #[arg(long, default_value_t = 0.07)]
    pub spare_factor: f64,
    /// Where the simulated device keeps page contents: auto (memory up to 4 GiB of live pages, a
    /// temporary file beyond), memory, file (a temporary sparse file), file:DIR.
    #[arg(long, default_value = "auto")]
    pub store: String,
}

/// `--store auto` keeps up to this many bytes of page contents in memory.
pub const AUTO_MEMORY: u64 = 4 << 30;

/// Memory a simulated run needs besides page contents: the FTL's and file system's tables (bytes
/// per physical page, a generous bound) and the engine (memtables, caches).
const TABLE_BYTES_PER_PAGE: u64 = 64;
const ENGINE_BYTES: u64 = 256 << 20;

impl DeviceArgs {
    /// The simulated device's configuration (`--fs sim`).
    pub fn ssd_config(&self) -> Result<SsdConfig, String> {
        let preset = Preset::parse(&self.preset).map_err(|e| format!("--preset: {e}"))?;
        let capacity = self.capacity.as_deref().map(|c| parse_size("--capacity", c)).transpose()?;
        let mut cfg = SsdConfig::from_preset(preset, capacity).map_err(|e| format!("--capacity: {e}"))?;
        if !(0.0..1.0).contains(&self.spare_factor) {
            return Err(format!("--spare-factor: {} is not in [0, 1)", self.spare_factor));
        }
        cfg.spare_factor = self.spare_factor;
        cfg.media.store = self.data_mode()?;
        Ok(cfg)
    }

    /// Where the device keeps its pages under `--store`.
    fn data_mode(&self) -> Result<DataMode, String> {
        match self.store.as_str() {
            "auto" => Ok(DataMode::MemoryThenFile { memory_bytes: AUTO_MEMORY, dir: std::env::temp_dir() }),
            "file" => Ok(DataMode::TempFile(std::env::temp_dir())),
            "memory" => Ok(DataMode::Memory),
            other => match other.strip_prefix("file:") {
                Some(dir) if !dir.is_empty() => Ok(DataMode::TempFile(PathBuf::from(dir))),
                _ => Err(format!("--store: unknown store '{other}'; accepted: auto, memory, file, file:DIR")),
            },
        }
    }

    /// Memory one run on this stack may need at most (page contents bounded by the user capacity
    /// and the store's memory budget), for sizing how many runs go in parallel.
    pub fn memory_estimate(&self) -> Result<u64, String> {
        if self.fs != "sim" {
            return Ok(ENGINE_BYTES);
        }
        let cfg = self.ssd_config()?;
        let tables = cfg.geometry().total_pages() * TABLE_BYTES_PER_PAGE;
        let pages = match &cfg.media.store {
            DataMode::Memory => cfg.user_bytes(),
            DataMode::MemoryThenFile { memory_bytes, .. } => cfg.user_bytes().min(*memory_bytes),
            _ => 0,
        };
        Ok(ENGINE_BYTES + tables + pages)
    }

    /// A short description for reports.
    pub fn describe(&self) -> String {
        if self.fs == "sim" {
            format!(
                "simulated {} SSD{} (spare factor {})",
                self.preset,
                self.capacity.as_deref().map_or(String::new(), |c| format!(", {c}")),
                self.spare_factor
            )
        } else {
            self.fs.clone()
        }
    }
}

pub enum Backend {
    Sim(SimFs),
    Posix,
    Mem,
}

/// A built stack: the file system, and for simulation its clock.
pub struct Stack {
    pub fs: Arc<dyn Fs>,
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
            return Ok(Stack { fs: Arc::new(fs.clone()), backend: Backend::Sim(fs), clock: Some(clock), started });
        }
        if a.fs == "mem" {
            return Ok(Stack { fs: Arc::new(MemFs::new()), backend: Backend::Mem, clock: None, started });
        }
        if let Some(dir) = a.fs.strip_prefix("posix:") {
            if dir.is_empty() {
                return Err("--fs: posix: needs a directory, e.g. posix:/tmp/flashkv".into());
            }
            let fs = PosixFs::new(PathBuf::from(dir)).map_err(|e| format!("--fs: {e}"))?;
            return Ok(Stack { fs: Arc::new(fs), backend: Backend::Posix, clock: None, started });
        }
        Err(format!("--fs: unknown file system '{}'; accepted: sim, posix:DIR, mem", a.fs))
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
            _ => None,
        }
    }

    /// Device-level accounting, when there is a simulated device.
    pub fn device_report(&self) -> Option<DeviceReport> {
        let Backend::Sim(fs) = &self.backend else {
            return None;
        };
        let s = fs.stats();
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
        Some(DeviceReport {
            host_write_bytes: HostWrites {
                total: s.host_write_bytes(),
                wal: s.wal_bytes,
                flush: s.flush_bytes,
                compaction_by_level: s.compaction_bytes.clone(),
                manifest: s.manifest_bytes,
                fs_metadata: s.fs_metadata_bytes,
                other: s.other_bytes,
            },
            flash: fs.with_device(|d| d.report()),
            levels,
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct HostWrites {
    pub total: u64,
    pub wal: u64,
    pub flush: u64,
    pub compaction_by_level: Vec<u64>,
    pub manifest: u64,
    pub fs_metadata: u64,
    pub other: u64,
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
}

//! The storage stack an experiment runs on: a simulated SSD with SimFs (`--fs sim`), a host
//! directory (`--fs posix:DIR`), or memory (`--fs mem`), and the engine options that go with it
//! (simulation runs the engine in simulated time on the SimFs clock).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use flashsim::{BlockSsd, DataMode, Preset, SsdConfig};
use serde::Serialize;
use storage::{Fs, Lane, MemFs, PosixFs, SimClock, SimFs, SimFsOptions};

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
}

/// What the stack stands on.
impl DeviceArgs {
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
            let preset = Preset::parse(&a.preset).map_err(|e| format!("--preset: {e}"))?;
            let capacity = a.capacity.as_deref().map(|c| parse_size("--capacity", c)).transpose()?;
            let mut cfg = SsdConfig::from_preset(preset, capacity).map_err(|e| format!("--capacity: {e}"))?;
            if !(0.0..1.0).contains(&a.spare_factor) {
                return Err(format!("--spare-factor: {} is not in [0, 1)", a.spare_factor));
            }
            cfg.spare_factor = a.spare_factor;
            cfg.data = DataMode::Memory;
            let dev = BlockSsd::new(cfg).map_err(|e| e.to_string())?;
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
            Backend::Sim(fs) => Some(fs.with_device(|d| d.counters().nand_ops())),
            _ => None,
        }
    }

    /// Device-level accounting, when there is a simulated device.
    pub fn device_report(&self, user_bytes: u64) -> Option<DeviceReport> {
        let Backend::Sim(fs) = &self.backend else {
            return None;
        };
        let s = fs.stats();
        let (counters, page_size, nvram) = fs.with_device(|d| (*d.counters(), d.page_size(), d.nvram()));
        let r = counters.report(page_size);
        let host = s.host_write_bytes();
        let ratio = |x: u64| {
            if user_bytes == 0 {
                0.0
            } else {
                x as f64 / user_bytes as f64
            }
        };
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
                total: host,
                wal: s.wal_bytes,
                flush: s.flush_bytes,
                compaction_by_level: s.compaction_bytes.clone(),
                manifest: s.manifest_bytes,
                fs_metadata: s.fs_metadata_bytes,
                other: s.other_bytes,
            },
            flash_program_bytes: r.flash_program_bytes,
            flash_read_bytes: r.flash_read_bytes,
            erases: r.erases,
            gc_copied_pages: r.gc_copied_pages,
            copybacks: r.copybacks,
            remapped_pages: r.remapped_pages,
            write_amplification: ratio(r.flash_program_bytes),
            host_write_amplification: ratio(host),
            device_write_amplification: r.device_write_amplification.unwrap_or(0.0),
            nvram_bytes: nvram.peak_bytes,
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

/// What the simulated device saw.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceReport {
    pub host_write_bytes: HostWrites,
    pub flash_program_bytes: u64,
    pub flash_read_bytes: u64,
    pub erases: u64,
    pub gc_copied_pages: u64,
    pub copybacks: u64,
    pub remapped_pages: u64,
    /// flash_program_bytes / user_bytes.
    pub write_amplification: f64,
    /// host_write_bytes / user_bytes.
    pub host_write_amplification: f64,
    /// NAND programs / host page writes (GC overhead alone).
    pub device_write_amplification: f64,
    pub nvram_bytes: u64,
    pub levels: Vec<LevelDevice>,
}

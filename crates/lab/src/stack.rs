//! A built storage stack: the file system a run's plan names (SimFs on a simulated block SSD,
//! ZoneFs on a simulated ZNS SSD, a host directory, memory, a reflink XFS on a loop device) or a
//! key-value SSD with no file system, its simulated clock, and the device-level accounting a
//! result reports (host writes by cause, the flash report, zones, a real device's written bytes).

use std::sync::Arc;
use std::time::Instant;

use flashsim::{Lane, MediaConfig, SimClock, ZonedSsd};
use storage::{Fs, MemFs, PosixFs, SimFs, SimFsOptions, ZoneFs};

use crate::error::{LabError, Result};
use crate::kv_device::SharedKvSsd;
use crate::loop_device::LoopDevice;
use crate::result::{
    per_user_byte, DeviceReport, FlashSection, FsSection, Lanes, LsmSection, PageCacheSummary, PhaseResult, RunResult,
    TimeBase, ZoneSummary,
};
use crate::spec::{KvDesign, KvReadings, Storage};

pub enum Backend {
    Sim(SimFs),
    Zone(ZoneFs),
    Posix,
    Mem,
    /// A real block device: a reflink XFS on a loop device.
    XfsLoop(LoopDevice),
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
    /// The file system `storage` plans and the device below it.
    pub fn build(storage: &Storage) -> Result<Stack> {
        let started = Instant::now();
        let (fs, backend, clock): (Arc<dyn Fs>, Backend, Option<SimClock>) = match storage {
            Storage::Sim { ssd, ftl, page_cache } => {
                let clock = SimClock::new();
                let fs = SimFs::format(ftl.build(ssd)?, clock.clone(), SimFsOptions::default())?;
                fs.set_page_cache(*page_cache)?;
                (Arc::new(fs.clone()), Backend::Sim(fs), Some(clock))
            }
            Storage::Zone { zoned, fs: options, page_cache } => {
                let clock = SimClock::new();
                let fs = ZoneFs::format(ZonedSsd::new(zoned.clone())?, clock.clone(), options.clone())?;
                fs.set_page_cache(*page_cache)?;
                (Arc::new(fs.clone()), Backend::Zone(fs), Some(clock))
            }
            Storage::Mem => (Arc::new(MemFs::new()), Backend::Mem, None),
            Storage::Posix(dir) => (Arc::new(PosixFs::new(dir.clone())?), Backend::Posix, None),
            Storage::XfsLoop { image_bytes } => {
                let dev = LoopDevice::new(*image_bytes)?;
                (Arc::new(PosixFs::new(dev.db_dir())?), Backend::XfsLoop(dev), None)
            }
        };
        Ok(Stack { fs: Some(fs), backend, clock, started })
    }

    /// A key-value SSD of `design` (under `readings`) on `media`, in simulated time, with the
    /// device and its clock for the engine that drives it.
    pub fn kv_device(
        design: KvDesign,
        readings: KvReadings,
        media: &MediaConfig,
    ) -> Result<(Stack, SharedKvSsd, SimClock)> {
        let device: SharedKvSsd = Arc::new(std::sync::Mutex::new(design.build(media, readings)?));
        let clock = SimClock::new();
        let stack = Stack {
            fs: None,
            backend: Backend::Kv(Arc::clone(&device)),
            clock: Some(clock.clone()),
            started: Instant::now(),
        };
        Ok((stack, device, clock))
    }

    /// The file system, for an engine that needs one.
    pub fn fs(&self) -> Result<Arc<dyn Fs>> {
        self.fs.clone().ok_or_else(|| LabError::Unsupported {
            engine: "this stack".into(),
            what: "a key-value SSD has no file system".into(),
        })
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

    /// Bytes a real block device took since the run's file system was made (once its dirty data
    /// is on the device): `xfs-loop` only.
    pub fn device_write_bytes(&self) -> Result<Option<u64>> {
        match &self.backend {
            Backend::XfsLoop(dev) => dev.written_since_mount().map(Some),
            _ => Ok(None),
        }
    }

    /// A key-value SSD's own work.
    pub fn device_work(&self) -> Option<kvssd::DeviceWork> {
        match &self.backend {
            Backend::Kv(d) => Some(d.lock().unwrap_or_else(|e| e.into_inner()).work()),
            _ => None,
        }
    }

    /// Writes the page cache's dirty bytes to the device, as an unmount would, so that a run's
    /// device accounting holds every byte the engine wrote.
    pub fn write_back(&self) -> Result<()> {
        match &self.backend {
            Backend::Sim(fs) => fs.write_back_all()?,
            Backend::Zone(fs) => fs.write_back_all()?,
            _ => {}
        }
        Ok(())
    }

    /// The result of `phases` run on this stack by an engine whose statistics are `stats` (the
    /// LSM engine's; none for a key-value SSD, whose accounting is the device's).
    pub fn result(
        &self,
        workload: &str,
        engine: String,
        device: String,
        phases: Vec<PhaseResult>,
        stats: Option<&lsm::DbStats>,
    ) -> RunResult {
        let stack = self;
        let dev = stack.device_report();
        let engine_write_bytes = stats.map_or(0, |s| s.engine_write_bytes());
        let host = dev.as_ref().map_or(engine_write_bytes, |d| d.host_write_bytes.total);
        let time_base = if stack.simulated() { TimeBase::Simulated } else { TimeBase::WallClock };
        let mut r = RunResult::base(workload, engine, device, time_base, phases, host);
        r.host.write_amplification = per_user_byte(host, r.host.user_bytes);
        r.host.write_bytes_by_cause = dev.as_ref().map(|d| d.host_write_bytes.clone());
        let flash = dev.as_ref().map(|d| &d.flash);
        r.flash = flash.map(|f| FlashSection::new(f, r.host.user_bytes));
        r.host.sim_time_s = stack.simulated().then(|| stack.now_ns() as f64 / 1e9);
        r.host.lanes = stack.clock.as_ref().map(|c| Lanes {
            foreground: c.spent(flashsim::Lane::Foreground),
            background: c.spent(flashsim::Lane::Background),
            out_of_order_requests: flash.map_or(0, |f| f.out_of_order),
            out_of_order_ns: flash.map_or(0, |f| f.out_of_order_ns),
            head_of_line_ns: flash.map_or(0, |f| f.head_of_line_ns),
        });
        r.lsm = stats.map(|stats| LsmSection::new(stats, dev.as_ref()));
        let fs = FsSection {
            page_cache: dev.as_ref().and_then(|d| d.page_cache.clone()),
            zones: dev.as_ref().and_then(|d| d.zones.clone()),
            device_write_bytes: None,
        };
        r.fs = (!fs.is_empty()).then_some(fs);
        r.kv_ssd = stack.device_work();
        r
    }

    /// Device-level accounting, when there is a simulated device.
    pub fn device_report(&self) -> Option<DeviceReport> {
        let (stats, flash, zones, cache) = match &self.backend {
            Backend::Sim(fs) => (fs.stats(), fs.with_device(|d| d.report()), None, fs.page_cache_stats()),
            Backend::Zone(fs) => {
                let page = fs.with_device(|d| d.config().geometry().page_size as u64);
                let zone_size = fs.with_device(|d| d.config().zone_size);
                let zones = ZoneSummary::new(&fs.zone_report(), zone_size, page);
                (fs.stats(), fs.with_device(|d| d.report()), Some(zones), fs.page_cache_stats())
            }
            Backend::Kv(d) => return Some(d.lock().unwrap_or_else(|e| e.into_inner()).device_report()),
            _ => return None,
        };
        let mut report = DeviceReport::new(&stats, flash, zones);
        report.page_cache = (cache.capacity_bytes > 0).then(|| PageCacheSummary::new(&cache));
        Some(report)
    }
}

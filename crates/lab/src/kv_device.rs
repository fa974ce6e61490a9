//! Key-value SSDs as engines: a `kvssd` device (the PLSC-tree, LevelDB inside the device) driven by the harness through
//! [`KvEngine`], on the stack's simulated clock, with no file system below it.
//!
//! Each request arrives at the foreground's simulated now and the foreground waits for its
//! completion, so phases, throughput and latencies are measured as for the LSM engine. The
//! device is built from the run's device flags: `--preset` (its geometry and timings) and
//! `--capacity`.

use std::sync::{Arc, Mutex, MutexGuard};

use flashsim::cause::MAX_LEVELS;
use flashsim::{Cause, FlashReport, FtlCounters, Lane, Media, SimClock};
use kvssd::{KvDevice, LsmConfig, LsmInDevice, Plsc, PlscConfig};

use crate::engine::{ContentDigest, KvEngine};
use crate::stack::{DeviceArgs, DeviceReport};

/// The key-value SSD designs `--engine` names besides `lsm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvDesign {
    /// The PLSC-tree (seed 002).
    Plsc,
    /// Seed 002's baseline: LevelDB inside the device, each SST consulted read whole; an SST's
    /// pages in one plane, or (`stripe`) spread over every plane as PLSC's USTs are.
    LsmInDevice { stripe: bool },
}

impl KvDesign {
    pub const NAMES: [&'static str; 3] = ["plsc", "lsm-in-device", "lsm-in-device-striped"];

    pub fn name(self) -> &'static str {
        match self {
            KvDesign::Plsc => "plsc",
            KvDesign::LsmInDevice { stripe: false } => "lsm-in-device",
            KvDesign::LsmInDevice { stripe: true } => "lsm-in-device-striped",
        }
    }

    /// The design `--engine NAME` asks for; `None` for `lsm` (the host engine on a file
    /// system), an error naming the accepted engines otherwise.
    pub fn parse(name: &str) -> Result<Option<KvDesign>, String> {
        match name {
            "lsm" => Ok(None),
            "plsc" => Ok(Some(KvDesign::Plsc)),
            "lsm-in-device" => Ok(Some(KvDesign::LsmInDevice { stripe: false })),
            "lsm-in-device-striped" => Ok(Some(KvDesign::LsmInDevice { stripe: true })),
            other => Err(format!("--engine: unknown engine '{other}'; accepted: lsm, {}", Self::NAMES.join(", "))),
        }
    }

    /// A fresh device of this design on the device flags' preset and capacity.
    pub fn build(self, a: &DeviceArgs) -> Result<KvSsd, String> {
        let what = |e: kvssd::KvError| format!("--engine {}: {e}", self.name());
        let media = a.media_config()?;
        Ok(KvSsd(match self {
            KvDesign::Plsc => Box::new(Plsc::new(PlscConfig::new(media)).map_err(what)?),
            KvDesign::LsmInDevice { stripe } => {
                Box::new(LsmInDevice::new(LsmConfig { stripe, ..LsmConfig::new(media) }).map_err(what)?)
            }
        }))
    }
}

/// A built key-value SSD.
pub struct KvSsd(Box<dyn KvDevice + Send>);

impl KvSsd {
    pub fn device(&mut self) -> &mut dyn KvDevice {
        self.0.as_mut()
    }

    pub fn media(&self) -> &Media {
        self.0.media()
    }

    pub fn describe(&self) -> String {
        self.0.describe()
    }

    pub fn work(&self) -> kvssd::DeviceWork {
        self.0.work()
    }

    /// What the device did, in the block SSD's terms: host pages are those programmed and read
    /// for the host's data (the flushes of its write buffer, its gets); compaction's programs are
    /// reported per level; the rest is GC.
    pub fn device_report(&self) -> DeviceReport {
        let m = self.media();
        let c = m.counters();
        let host = c.sum(|c| matches!(c, Cause::Host(_)));
        let ftl =
            FtlCounters { host_write_pages: host.programs, host_read_pages: host.reads, ..FtlCounters::default() };
        let ps = m.geometry().page_size as u64;
        let levels = (0..MAX_LEVELS as u8).map(|level| c.cause(Cause::DeviceCompaction { level }).programs * ps);
        let mut by_level: Vec<u64> = levels.collect();
        while by_level.last() == Some(&0) {
            by_level.pop();
        }
        DeviceReport::of_kv_ssd(FlashReport::of_media(m, ftl, 0.0), by_level)
    }
}

/// A key-value SSD shared by the engine (which drives it) and the stack (which reports on it).
pub type SharedKvSsd = Arc<Mutex<KvSsd>>;

/// A key-value SSD as the harness's engine.
pub struct KvDeviceEngine {
    dev: SharedKvSsd,
    clock: SimClock,
}

impl KvDeviceEngine {
    pub fn new(dev: SharedKvSsd, clock: SimClock) -> KvDeviceEngine {
        KvDeviceEngine { dev, clock }
    }

    fn lock(&self) -> MutexGuard<'_, KvSsd> {
        self.dev.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs one request at the foreground's now and waits for it.
    fn request<T>(
        &mut self,
        f: impl FnOnce(&mut dyn KvDevice, u64) -> kvssd::Result<kvssd::Completed<T>>,
    ) -> Result<T, String> {
        let at = self.clock.time(Lane::Foreground);
        let c = f(self.lock().device(), at).map_err(|e| e.to_string())?;
        self.clock.advance(Lane::Foreground, c.done);
        Ok(c.value)
    }
}

impl KvEngine for KvDeviceEngine {
    fn describe(&self) -> String {
        self.lock().describe()
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<(), String> {
        self.request(|d, at| d.store(at, key, value))
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<usize>, String> {
        Ok(self.request(|d, at| d.retrieve(at, key))?.map(|v| v.len()))
    }

    fn scan(&mut self, _start: &[u8], _len: u64) -> Result<(u64, u64), String> {
        Err(format!(
            "{}: a key-value SSD answers point requests only (store, retrieve, delete, exist): no scans, so \
             YCSB E and db_bench's seek and read-sequential benchmarks do not apply",
            self.lock().device().name()
        ))
    }

    fn settle(&mut self) -> Result<(), String> {
        // A device's work is inside the request that set it off: nothing runs behind the host.
        Ok(())
    }

    fn stats(&self) -> Option<lsm::DbStats> {
        None
    }

    fn close(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn recreate(&mut self) -> Result<(), String> {
        // A key-value SSD has no database to destroy short of formatting the device, which would
        // lose the run's accounting: one fill per run, then reads.
        Err(format!(
            "{}: db_bench starts each fill on a fresh database, which a key-value SSD cannot give without a \
             format; run one fill per bench (e.g. --benchmarks fillrandom,readrandom)",
            self.lock().device().name()
        ))
    }

    fn content_digest(&mut self) -> Result<ContentDigest, String> {
        Err(format!(
            "{}: a key-value SSD cannot list its keys, so it has no content digest",
            self.lock().device().name()
        ))
    }
}

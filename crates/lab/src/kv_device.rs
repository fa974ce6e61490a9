//! Key-value SSDs as engines: a `kvssd` device (the PLSC-tree, LevelDB inside the device) driven by the harness through
//! [`KvEngine`], on the stack's simulated clock, with no file system below it.
//!
//! Each request arrives at the foreground's simulated now and the foreground waits for its
//! completion, so phases, throughput and latencies are measured as for the LSM engine. The
//! device is built from the run's device flags: `--preset` (its geometry and timings) and
//! `--capacity`.

use std::sync::{Arc, Mutex, MutexGuard};

use flashsim::cause::MAX_LEVELS;
use flashsim::{Cause, FlashReport, FtlCounters, Media, MediaConfig, SimClock, Wait};
use kvssd::dftl_kv::{DftlCache, PAPER_GTD_ENTRIES};
use kvssd::{DftlKv, DftlKvConfig, KvDevice, Kvftl, KvftlConfig, LsmConfig, LsmInDevice, Plsc, PlscConfig};

use crate::engine::{ContentDigest, KvEngine};
use crate::error::{LabError, Result};
use crate::result::DeviceReport;
use crate::spec::{KvDesign, KvReadings};

impl KvDesign {
    /// A fresh device of this design, under `readings`, on the NAND array `media`. DFTL-KV's
    /// entries reading spreads the map over the seed's GTD of 208 translation pages; its pages
    /// reading is issue 28's, over full translation pages.
    pub fn build(self, media: &MediaConfig, readings: KvReadings) -> Result<KvSsd> {
        let media = media.clone();
        Ok(KvSsd(match self {
            KvDesign::Plsc => Box::new(Plsc::new(PlscConfig {
                gc_scope: readings.gc_scope,
                ust_planes: readings.ust_planes,
                ..PlscConfig::new(media)
            })?),
            KvDesign::LsmInDevice { filters } => {
                Box::new(LsmInDevice::new(LsmConfig { stripe: filters, filters, ..LsmConfig::new(media) })?)
            }
            KvDesign::Kvftl { variant, mapping_ram } => {
                let cfg = KvftlConfig {
                    ram_budget: mapping_ram,
                    buffer_reads: readings.buffer_reads,
                    ..KvftlConfig::new(media).with_variant(variant)
                };
                Box::new(Kvftl::new(cfg)?)
            }
            KvDesign::DftlKv { mapping_ram } => {
                let cache = readings.dftl_cache;
                let gtd_entries = (cache == DftlCache::Entries).then_some(PAPER_GTD_ENTRIES);
                let cfg = DftlKvConfig { ram_budget: mapping_ram, cache, gtd_entries, ..DftlKvConfig::new(media) };
                Box::new(DftlKv::new(cfg)?)
            }
            KvDesign::Plugin(name) => crate::plugins::registry().build_kv_ssd(name, &media)?,
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

    fn unsupported(&self, what: &str) -> LabError {
        LabError::Unsupported { engine: self.lock().device().name().to_string(), what: what.to_string() }
    }

    /// Runs one request at the foreground's now and waits for it.
    fn request<T>(
        &mut self,
        f: impl FnOnce(&mut dyn KvDevice, u64) -> kvssd::Result<kvssd::Completed<T>>,
    ) -> Result<T> {
        let at = self.clock.now();
        let c = f(self.lock().device(), at)?;
        self.clock.wait(c.done, Wait::Device);
        Ok(c.value)
    }
}

impl KvEngine for KvDeviceEngine {
    fn describe(&self) -> String {
        self.lock().describe()
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        self.request(|d, at| d.store(at, key, value))
    }

    fn get(&mut self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.request(|d, at| d.retrieve(at, key))?.map(|v| v.len()))
    }

    fn scan(&mut self, _start: &[u8], _len: u64) -> Result<(u64, u64)> {
        Err(self.unsupported(
            "a key-value SSD answers point requests only (store, retrieve, delete, exist): no scans, so YCSB E and \
             db_bench's seek and read-sequential benchmarks do not apply",
        ))
    }

    fn next(&mut self) -> Result<Option<u64>> {
        Err(self.unsupported("a key-value SSD cannot list its keys, so db_bench's readseq does not apply"))
    }

    fn settle(&mut self) -> Result<()> {
        // A device's work is inside the request that set it off: nothing runs behind the host.
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        Ok(())
    }

    fn recreate(&mut self) -> Result<()> {
        // A key-value SSD has no database to destroy short of formatting the device, which would
        // lose the run's accounting: one fill per run, then reads.
        Err(self.unsupported(
            "db_bench starts each fill on a fresh database, which a key-value SSD cannot give without a format; run \
             one fill per bench (e.g. --benchmarks fillrandom,readrandom)",
        ))
    }

    fn content_digest(&mut self) -> Result<ContentDigest> {
        Err(self.unsupported("a key-value SSD cannot list its keys, so it has no content digest"))
    }
}

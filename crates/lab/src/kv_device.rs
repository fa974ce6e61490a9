//! Key-value SSDs as engines: a `kvssd` device (the PLSC-tree, LevelDB inside the device) driven by the harness through
//! [`KvEngine`], on the stack's simulated clock, with no file system below it.
//!
//! Each request arrives at the foreground's simulated now and the foreground waits for its
//! completion, so phases, throughput and latencies are measured as for the LSM engine. The
//! device is built from the run's device flags: `--preset` (its geometry and timings) and
//! `--capacity`.

use std::sync::{Arc, Mutex, MutexGuard};

use flashsim::cause::MAX_LEVELS;
use flashsim::{Cause, FlashReport, FtlCounters, Media, SimClock, Wait};
use kvssd::{DftlKv, DftlKvConfig, KvDevice, Kvftl, KvftlConfig, LsmConfig, LsmInDevice, Plsc, PlscConfig, Variant};

use crate::engine::{ContentDigest, KvEngine};
use crate::size::parse_size;
use crate::stack::{DeviceArgs, DeviceReport};

/// The key-value SSD designs `--engine` names besides `lsm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum KvDesign {
    /// The PLSC-tree (seed 002).
    Plsc,
    /// Seed 002's baseline: LevelDB inside the device, each SST consulted read whole; an SST's
    /// pages in one plane, or (`stripe`) spread over every plane as PLSC's USTs are.
    LsmInDevice { stripe: bool },
    /// KVFTL (seed 004) with its value partitioner's variant; its PartitionPtrTables cached in
    /// `mapping_ram` bytes (`None`: every table in RAM, no mapping I/O).
    Kvftl { variant: Variant, mapping_ram: Option<u64> },
    /// Seed 004's baseline: a page-level DFTL whose cached entries carry value size and key id,
    /// its mapping cache in `mapping_ram` bytes (`None`: the whole map in RAM).
    DftlKv { mapping_ram: Option<u64> },
}

/// The parameters of the key-value FTL designs, as given on the command line or in an experiment
/// file (text, checked by [`KvDesign::parse`]); each applies to the designs its doc names.
#[derive(clap::Args, Clone, Debug, Default, PartialEq)]
pub struct KvOptions {
    /// kvftl-sp: the smallest partition (a power of two; the paper's evaluation: 4KiB).
    #[arg(long)]
    pub min_partition: Option<String>,
    /// kvftl-np: the most partitions of one value (the paper's evaluation: 3).
    #[arg(long)]
    pub max_partitions: Option<u8>,
    /// kvftl-ws: the most bytes a value may waste in its last partition (the paper's evaluation:
    /// 2KiB).
    #[arg(long)]
    pub max_waste: Option<String>,
    /// kvftl and dftl-kv: RAM for the mapping tables (e.g. 512KiB), or unlimited (the default:
    /// every table in RAM, no mapping I/O).
    #[arg(long)]
    pub mapping_ram: Option<String>,
}

impl KvDesign {
    pub const NAMES: [&'static str; 8] =
        ["plsc", "lsm-in-device", "lsm-in-device-striped", "kvftl", "kvftl-sp", "kvftl-np", "kvftl-ws", "dftl-kv"];

    pub fn name(self) -> &'static str {
        match self {
            KvDesign::Plsc => "plsc",
            KvDesign::LsmInDevice { stripe: false } => "lsm-in-device",
            KvDesign::LsmInDevice { stripe: true } => "lsm-in-device-striped",
            KvDesign::Kvftl { variant, .. } => variant.name(),
            KvDesign::DftlKv { .. } => "dftl-kv",
        }
    }

    /// The design `--engine NAME` asks for with `opts`; `None` for `lsm` (the host engine on a file
    /// system). Errors name the accepted engines, or the option that does not apply to `name` or
    /// is out of range.
    pub fn parse(name: &str, opts: &KvOptions) -> Result<Option<KvDesign>, String> {
        let design = match name {
            "lsm" => None,
            "plsc" => Some(KvDesign::Plsc),
            "lsm-in-device" => Some(KvDesign::LsmInDevice { stripe: false }),
            "lsm-in-device-striped" => Some(KvDesign::LsmInDevice { stripe: true }),
            "dftl-kv" => Some(KvDesign::DftlKv { mapping_ram: mapping_ram(opts)? }),
            other => match Variant::from_name(other) {
                Some(v) => Some(KvDesign::Kvftl { variant: variant(v, opts)?, mapping_ram: mapping_ram(opts)? }),
                None => {
                    return Err(format!(
                        "--engine: unknown engine '{other}'; accepted: lsm, {}",
                        Self::NAMES.join(", ")
                    ))
                }
            },
        };
        let takes = |flag: &str| {
            matches!(
                (flag, design),
                ("--min-partition", Some(KvDesign::Kvftl { variant: Variant::SmallestPartition { .. }, .. }))
                    | ("--max-partitions", Some(KvDesign::Kvftl { variant: Variant::MaxPartitions { .. }, .. }))
                    | ("--max-waste", Some(KvDesign::Kvftl { variant: Variant::MaxWaste { .. }, .. }))
                    | ("--mapping-ram", Some(KvDesign::Kvftl { .. } | KvDesign::DftlKv { .. }))
            )
        };
        for (flag, given) in [
            ("--min-partition", opts.min_partition.is_some()),
            ("--max-partitions", opts.max_partitions.is_some()),
            ("--max-waste", opts.max_waste.is_some()),
            ("--mapping-ram", opts.mapping_ram.is_some()),
        ] {
            if given && !takes(flag) {
                return Err(format!("{flag}: does not apply to --engine {name}"));
            }
        }
        Ok(design)
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
            KvDesign::Kvftl { variant, mapping_ram } => {
                let cfg = KvftlConfig { ram_budget: mapping_ram, ..KvftlConfig::new(media).with_variant(variant) };
                Box::new(Kvftl::new(cfg).map_err(what)?)
            }
            KvDesign::DftlKv { mapping_ram } => Box::new(
                DftlKv::new(DftlKvConfig { ram_budget: mapping_ram, ..DftlKvConfig::new(media) }).map_err(what)?,
            ),
        }))
    }
}

/// `--mapping-ram`: bytes, or `None` for unlimited.
fn mapping_ram(opts: &KvOptions) -> Result<Option<u64>, String> {
    match opts.mapping_ram.as_deref() {
        None | Some("unlimited") => Ok(None),
        Some(text) => match parse_size("--mapping-ram", text)? {
            0 => Err("--mapping-ram: 0 bytes hold no table entry; give a size or unlimited".into()),
            bytes => Ok(Some(bytes)),
        },
    }
}

/// The variant `v` (named by `--engine`, with the paper's parameter) with its option applied.
fn variant(v: Variant, opts: &KvOptions) -> Result<Variant, String> {
    Ok(match v {
        Variant::Pure => v,
        Variant::SmallestPartition { .. } => match &opts.min_partition {
            None => v,
            Some(text) => {
                let bytes = parse_size("--min-partition", text)?;
                if !bytes.is_power_of_two() {
                    return Err(format!("--min-partition: {text} is not a power of two (partitions are 2^p bytes)"));
                }
                Variant::SmallestPartition { min_p: bytes.trailing_zeros() as u8 }
            }
        },
        Variant::MaxPartitions { .. } => match opts.max_partitions {
            None => v,
            Some(0) => return Err("--max-partitions: must be at least 1".into()),
            Some(n) => Variant::MaxPartitions { n },
        },
        Variant::MaxWaste { .. } => match &opts.max_waste {
            None => v,
            Some(text) => Variant::MaxWaste { bytes: parse_size("--max-waste", text)? },
        },
    })
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
        let at = self.clock.now();
        let c = f(self.lock().device(), at).map_err(|e| e.to_string())?;
        self.clock.wait(c.done, Wait::Device);
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

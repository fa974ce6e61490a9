//! A run specification checked and resolved ([`RunSpec::plan`]) into the plan of its kind of
//! run: the LSM engine on a file system, a key-value SSD, or a simulated block SSD driven alone
//! by page writes or by a block trace.
//!
//! Contract:
//! - planning is the one place where a specification is checked as a whole and resolved; a plan
//!   holds every configuration its runner builds from (the engine's options, the device's and the
//!   file system's configurations, the workload with its sizes) and what a batch schedules by (the
//!   run's work, memory and disk), so nothing downstream resolves, derives or parses again;
//! - an error names the specification's field (`LabError::Invalid`);
//! - each kind of plan has one runner (`crate::runner`).

use std::path::PathBuf;

use flashsim::{BlockSsd, Ftl, MediaConfig, SsdConfig, ZonedConfig};
use storage::{PageCacheConfig, ZoneFsOptions};
use workload::{ValueData, ValueSize};

use super::{
    BlockTraceSpec, DeviceSpec, Engine, EngineSpec, FsKind, FtlName, KvDesign, KvReadings, Named, PageWrites, Replay,
    RunSpec, WorkloadKind, WorkloadSpec,
};
use crate::error::{LabError, Result};

/// A checked, resolved run: what results name it by, its kind with that kind's configurations,
/// and what a batch schedules it by.
#[derive(Debug)]
pub struct Plan {
    /// The workload, as results name it (`fillrandom`, `ycsb-a`, `pages`, ...).
    pub workload: String,
    /// The device, as results name it.
    pub device: String,
    pub kind: Kind,
    /// The run's weight in a batch's estimate of the time left: the user bytes of its load and
    /// of its operations.
    pub work: f64,
    /// Memory one run may need at most (`DeviceSpec::memory_estimate`).
    pub memory: u64,
    /// Disk its device may fill with spilled pages, and where (`DeviceSpec::disk_estimate`).
    pub disk: u64,
    pub spill_dir: Option<PathBuf>,
}

/// The kinds of run, each with what its runner needs.
#[derive(Debug)]
pub enum Kind {
    /// The LSM engine on a file system (boxed: its options outweigh the other kinds' plans).
    Lsm(Box<LsmPlan>),
    /// A key-value SSD design, with no file system.
    KvSsd(KvSsdPlan),
    /// Page writes on a simulated block SSD alone.
    PageWrites(PageWritesPlan),
    /// A block trace's requests on a simulated block SSD alone.
    BlockTrace(BlockTracePlan),
}

/// The LSM engine's run.
#[derive(Debug)]
pub struct LsmPlan {
    pub options: lsm::Options,
    pub storage: Storage,
    pub phases: Phases,
    /// Every write synced (`host.sync`).
    pub sync: bool,
    /// Host cores the engine's lanes share in simulated time (`host.cores`; none: one per lane).
    pub cores: Option<usize>,
    /// The host CPU model, in words.
    pub cpu: String,
    /// End with a digest of the contents (`RunSpec::digest`).
    pub digest: bool,
}

/// A key-value SSD's run: the design on the NAND array of the device's preset and capacity.
#[derive(Debug)]
pub struct KvSsdPlan {
    pub design: KvDesign,
    pub readings: KvReadings,
    pub media: MediaConfig,
    pub phases: Phases,
    pub digest: bool,
}

/// A page-write run: the FTL `ftl` on `ssd` (page contents never kept).
#[derive(Debug)]
pub struct PageWritesPlan {
    pub ssd: SsdConfig,
    pub ftl: FtlName,
    pub pages: PageWrites,
    pub seed: u64,
}

/// A block trace's replay: the FTL `ftl` on `ssd` (page contents never kept).
#[derive(Debug)]
pub struct BlockTracePlan {
    pub ssd: SsdConfig,
    pub ftl: FtlName,
    pub trace: BlockTraceSpec,
}

/// The workload of an engine's run, with its sizes resolved.
#[derive(Debug)]
pub struct Phases {
    pub workload: WorkloadSpec,
    pub records: u64,
    /// Operations of the measured phase.
    pub operations: u64,
    pub value_size: ValueSize,
}

/// The file system an LSM run builds, and the device below it, configured.
#[derive(Debug)]
pub enum Storage {
    /// SimFs on the FTL `ftl` of a simulated block SSD.
    Sim {
        ssd: SsdConfig,
        ftl: FtlName,
        page_cache: PageCacheConfig,
    },
    /// ZoneFs on a simulated ZNS SSD.
    Zone {
        zoned: ZonedConfig,
        fs: ZoneFsOptions,
        page_cache: PageCacheConfig,
    },
    Mem,
    Posix(PathBuf),
    /// A reflink XFS on a loop device over an image of `image_bytes`.
    XfsLoop {
        image_bytes: u64,
    },
}

impl Storage {
    /// The file system `device` names and the device below it, configured.
    pub fn of(device: &DeviceSpec) -> Result<Storage> {
        Ok(match &device.fs {
            FsKind::Sim => {
                Storage::Sim { ssd: device.ssd_config()?, ftl: device.ftl, page_cache: device.page_cache_config() }
            }
            FsKind::Zone => Storage::Zone {
                zoned: device.zoned_config()?,
                fs: device.zone_fs_options(),
                page_cache: device.page_cache_config(),
            },
            FsKind::Mem => Storage::Mem,
            FsKind::Posix(dir) => Storage::Posix(dir.clone()),
            FsKind::XfsLoop => Storage::XfsLoop { image_bytes: device.xfs_image_bytes() },
        })
    }
}

impl FtlName {
    /// A new FTL of this name on `cfg`.
    pub fn build(self, cfg: &SsdConfig) -> Result<Box<dyn Ftl>> {
        match self {
            FtlName::Page => Ok(Box::new(BlockSsd::new(cfg.clone())?)),
            FtlName::Plugin(name) => crate::plugins::registry().build_ftl(name, cfg),
        }
    }
}

impl Plan {
    /// The NAND array of a simulated device (none on real files).
    pub fn media(&self) -> Option<&MediaConfig> {
        match &self.kind {
            Kind::Lsm(p) => match &p.storage {
                Storage::Sim { ssd, .. } => Some(&ssd.media),
                Storage::Zone { zoned, .. } => Some(&zoned.media),
                Storage::Mem | Storage::Posix(_) | Storage::XfsLoop { .. } => None,
            },
            Kind::KvSsd(p) => Some(&p.media),
            Kind::PageWrites(PageWritesPlan { ssd, .. }) | Kind::BlockTrace(BlockTracePlan { ssd, .. }) => {
                Some(&ssd.media)
            }
        }
    }
}

impl Kind {
    /// The workload's phases of an engine's run.
    pub fn phases(&self) -> Option<&Phases> {
        match self {
            Kind::Lsm(p) => Some(&p.phases),
            Kind::KvSsd(p) => Some(&p.phases),
            Kind::PageWrites(_) | Kind::BlockTrace(_) => None,
        }
    }
}

impl RunSpec {
    /// The device as the run builds it. With zero values a page holds only keys and headers
    /// beyond its zero runs, so `auto` keeps pages compact instead of spilling a paper-scale
    /// device to a temporary file (the store changes memory and speed, never a result).
    pub fn device_as_built(&self) -> DeviceSpec {
        let mut device = self.device.clone();
        if self.workload.values == ValueData::Zeros {
            device.store = device.store.for_zero_values();
        }
        device
    }

    /// Checks the specification as a whole and resolves it into its kind's plan.
    pub fn plan(&self) -> Result<Plan> {
        if self.workload.name.is_device_only() {
            return self.plan_device_only();
        }
        if self.workload.trace.is_some() {
            return Err(LabError::invalid("workload.trace", "applies to workload block-trace only"));
        }
        let engine = self.engine.resolve()?;
        if let (true, Some(field)) = (self.engine.is_kv_ssd(), self.host.first_set()) {
            return Err(LabError::invalid(
                field,
                format!(
                    "engine {} is a key-value SSD: no host-side engine writes, syncs or computes",
                    self.engine.name.as_str()
                ),
            ));
        }
        self.host.validate()?;
        if self.engine.is_kv_ssd() && self.device.fs != FsKind::Sim {
            return Err(LabError::invalid(
                "device.fs",
                format!(
                    "engine {} is a key-value SSD, with no file system below it: fs {} does not apply (leave it out)",
                    self.engine.name.as_str(),
                    self.device.fs.name()
                ),
            ));
        }
        self.device.validate()?;
        self.check_direct_io()?;
        let phases = self.phases()?;
        let device = self.device_as_built();
        let record = phases.value_size.mean() + self.key_bytes();
        let data_bytes = (phases.records as f64 * record) as u64;
        let kept_bytes = match self.workload.values {
            ValueData::Generated => data_bytes,
            // With zero values the compact store keeps about a record's key and headers (two
            // 64-byte granules).
            ValueData::Zeros => phases.records * (self.key_bytes() as u64 + 128),
        };
        let (disk, spill_dir) = device.disk_estimate(data_bytes)?;
        let work = (phases.records + phases.operations) as f64 * record;
        let (described, kind) = match engine {
            Engine::Kv(design) => (
                format!("simulated {} key-value SSD ({}){}", device.preset.name(), design.name(), device.shape()),
                Kind::KvSsd(KvSsdPlan {
                    design,
                    readings: self.engine.readings(),
                    media: device.media_config()?,
                    phases,
                    digest: self.digest,
                }),
            ),
            Engine::Lsm { mut options } => {
                options.cpu = self.host.cpu_model()?;
                let plan = LsmPlan {
                    options: *options,
                    storage: Storage::of(&device)?,
                    phases,
                    sync: self.host.sync,
                    cores: self.host.cores,
                    cpu: self.host.describe_cpu(),
                    digest: self.digest,
                };
                (self.device.describe(), Kind::Lsm(Box::new(plan)))
            }
        };
        Ok(Plan {
            workload: self.workload.name.label(),
            device: described,
            kind,
            work,
            memory: device.memory_estimate(kept_bytes)?,
            disk,
            spill_dir,
        })
    }

    /// Direct I/O bypasses the page cache of the simulated file systems, and applies to nothing
    /// else.
    fn check_direct_io(&self) -> Result<()> {
        if !(self.engine.lsm.direct_reads || self.engine.lsm.direct_writes) {
            return Ok(());
        }
        let field = if self.engine.lsm.direct_reads { "engine.direct_reads" } else { "engine.direct_writes" };
        let on = match &self.device.fs {
            _ if self.engine.is_kv_ssd() => format!("engine {}, a key-value SSD", self.engine.name.as_str()),
            FsKind::Sim | FsKind::Zone => return Ok(()),
            fs => format!("fs {}", fs.name()),
        };
        Err(LabError::invalid(
            field,
            format!("direct I/O bypasses the page cache of the simulated file systems (sim, zone): it does not apply to {on}"),
        ))
    }

    /// The workload's phases with their sizes: value sizes relative to the device's page, records
    /// from a data size, YCSB properties' record sizes.
    fn phases(&self) -> Result<Phases> {
        let mut value_size = self.workload.value_size.resolve(self.device.page_size()?)?;
        let (records, operations) = self.workload.counts(value_size)?;
        if let (WorkloadKind::Ycsb(y), false) = (&self.workload.name, self.workload.ycsb.is_empty()) {
            // The properties may set the fields: the record's sizes are theirs.
            let g = self.workload.generator_spec(records, operations, value_size);
            value_size = self.workload.ycsb_config(*y, &g)?.record_sizes();
        }
        let order = self.workload.order;
        match &self.workload.name {
            _ if order.is_mixed() => {}
            WorkloadKind::Ycsb(y) => {
                let g = self.workload.generator_spec(records, operations, value_size);
                order.split(&self.workload.ycsb_config(*y, &g)?).map_err(|e| LabError::invalid("workload.order", e))?;
            }
            other => {
                let why = format!("{} applies to YCSB workloads, not {}", order.name(), other.name());
                return Err(LabError::invalid("workload.order", why));
            }
        }
        Ok(Phases { workload: self.workload.clone(), records, operations, value_size })
    }

    /// A key: the workload's size, or 24 bytes when it keeps its own.
    fn key_bytes(&self) -> f64 {
        self.workload.key_size.unwrap_or(24) as f64
    }

    /// Page writes and block traces drive a simulated block SSD alone: no engine, no file system.
    fn plan_device_only(&self) -> Result<Plan> {
        let what = match self.workload.name {
            WorkloadKind::PageWrites => "page writes go",
            _ => "block trace requests go",
        };
        if self.engine != EngineSpec::default() || self.host.first_set().is_some() {
            return Err(LabError::invalid("engine", format!("{what} to the device alone: no engine applies")));
        }
        if self.device.fs != FsKind::Sim {
            return Err(LabError::invalid(
                "device.fs",
                format!("{what} to a simulated block SSD (sim), not {}", self.device.fs.name()),
            ));
        }
        match (&self.workload.name, &self.workload.trace) {
            (WorkloadKind::BlockTrace, Some(t)) => t.validate()?,
            (WorkloadKind::BlockTrace, None) => {
                return Err(LabError::invalid("workload.trace", "block-trace needs a trace: { file, format }"))
            }
            (_, Some(_)) => return Err(LabError::invalid("workload.trace", "applies to workload block-trace only")),
            _ => self.workload.pages.validate()?,
        }
        self.device.validate()?;
        let mut ssd = self.device.ssd_config()?;
        // Page contents are never read back: only the mapping, the counts and the timing matter.
        ssd.media.store = flashsim::DataMode::MetadataOnly;
        let ftl = self.device.ftl;
        let (device, kind) = match &self.workload.trace {
            Some(trace) => {
                let closed = match trace.replay {
                    Replay::Closed => format!(", queue depth {}", trace.queue_depth),
                    Replay::Open => String::new(),
                };
                let described = format!(
                    "{} (GC {}); trace {} ({}, {} replay{closed}{})",
                    self.device.describe(),
                    self.device.gc.name(),
                    trace
                        .file
                        .file_name()
                        .map_or_else(|| trace.file.display().to_string(), |n| n.to_string_lossy().into()),
                    trace.format,
                    trace.replay.name(),
                    if trace.precondition { ", preconditioned" } else { "" },
                );
                (described, Kind::BlockTrace(BlockTracePlan { ssd, ftl, trace: trace.clone() }))
            }
            None => (
                format!(
                    "{} (GC {} {}, copyback {})",
                    self.device.describe(),
                    self.device.gc.name(),
                    ssd.gc_destination.name(),
                    ssd.copyback
                ),
                Kind::PageWrites(PageWritesPlan {
                    ssd,
                    ftl,
                    pages: self.workload.pages.clone(),
                    seed: self.workload.seed,
                }),
            ),
        };
        let page = self.device.page_size()? as f64 + self.key_bytes();
        Ok(Plan {
            workload: self.workload.name.label(),
            device,
            kind,
            work: page,
            memory: self.device.memory_estimate(0)?,
            disk: 0,
            spill_dir: None,
        })
    }
}

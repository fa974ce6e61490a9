//! The result of one run, under the accounting names of docs/design.md, the same for every command.
//!
//! Contract:
//! - A result is in sections, one per layer the run went through: `host` (always), `lsm` (the LSM
//!   engine), `fs` (the file system's own: page cache, zones, a real device's byte count), `flash`
//!   (a simulated device), `ftl` (page writes), `kv_ssd` (a key-value SSD's own work). A section or
//!   field that does not apply to a kind of run is absent, never 0 or 1.
//! - Each figure is defined once. A write amplification divides the writes below a layer by the
//!   user bytes of the same interval: `host.` and `flash.write_amplification` over the whole run,
//!   `ftl.write_amplification` over a page-write run's overwrites after the warmup (whose host and
//!   flash write amplifications are therefore absent: its phases leave the warmup out).
//! - Every number of a section can be named by its dotted path ([`metrics`]).
//! - In simulation every number is exact and deterministic; wall-clock time is kept out of this
//!   structure (it goes to a separate timing record) so that the same configuration and seed give
//!   a byte-identical `results.json`. On real files the device is not visible: host writes are
//!   what the engine wrote into files, and the flash figures are absent.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use flashsim::{LatencySummary, NvramUsage};

use crate::engine::ContentDigest;

mod device;
mod metrics;
mod render;

pub use device::{DeviceReport, HostWrites, LevelDevice, PageCacheSummary, WrittenBack, ZoneSummary};
pub use metrics::{check_metric, metric_value, MetricError, ALIASES};
pub use render::render;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LevelResult {
    pub level: usize,
    pub files: usize,
    pub bytes: u64,
    /// Compaction input bytes read from the level above and from this level.
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_moved: u64,
    /// Output bytes placed by remapping / reflink instead of writing (RemapCom).
    pub bytes_remapped: u64,
    /// Host (device page) writes into this level, flushes counted at level 0 (simulation only).
    pub host_write_bytes: Option<u64>,
    pub compactions: u64,
    pub input_data_blocks: u64,
    pub output_data_blocks: u64,
    pub padding_bytes: u64,
    /// RemapCom: unchanged data blocks found among this level's compaction inputs, and cloned
    /// (remapped) into its outputs.
    pub udbs: u64,
    pub udbs_cloned: u64,
    /// Seconds the flushes (level 0) and compactions into this level held the engine's single
    /// background job slot, in the run's time base (simulated: the background lane's time).
    pub job_s: f64,
}

/// One measured phase (a load, a run, one db_bench benchmark).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PhaseResult {
    pub name: String,
    pub ops: u64,
    pub elapsed_s: f64,
    pub ops_per_sec: f64,
    pub micros_per_op: f64,
    /// Keys + values written by this phase.
    pub user_bytes: u64,
    /// Keys + values read by this phase.
    pub read_bytes: u64,
    /// Point reads that found their key.
    pub found: u64,
    /// Records returned by scans.
    pub scanned_records: u64,
    /// Latency of all operations, and per kind.
    pub latency: LatencySummary,
    pub latency_by_kind: BTreeMap<String, LatencySummary>,
    /// Throughput over time: (seconds since the phase began, operations per second over the
    /// window that ended then), [`TIMELINE_WINDOWS`] windows of equal operation counts; the last
    /// window includes the wait for background work.
    pub timeline: Vec<(f64, f64)>,
}

/// What a page-write run measured over its overwrites after the warmup.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FtlSummary {
    pub pattern: String,
    pub capacity_writes: f64,
    pub warmup: f64,
    pub queue_depth: u32,
    /// NAND programs / host page writes over the measured part.
    pub write_amplification: f64,
    /// The large-block limit of greedy GC (and of FIFO) under uniform writes (Xiang & Kurkoski),
    /// at the configured and at the effective spare factor, for comparison.
    pub theory_write_amplification: Option<f64>,
    pub theory_write_amplification_effective: Option<f64>,
    /// Idle pages (free blocks, unwritten parts of open blocks) averaged over the measured writes.
    pub measured_spare_factor: f64,
    pub measured_host_write_pages: u64,
    pub measured_nand_programs: u64,
    /// Victim blocks collected, and those the host had to wait for.
    pub gc_runs: u64,
    pub foreground_gc_runs: u64,
    pub nvram: NvramUsage,
}

/// One run's result: what ran (in words), its phases, and its figures in sections, one section
/// per layer the run went through. A section, or a field, that does not apply to a kind of run is
/// absent (never 0 or 1): a key-value SSD run has no `lsm` section, a page-write run no host write
/// amplification, a run on real files no `flash`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub workload: String,
    pub engine: String,
    pub device: String,
    /// What elapsed times and throughputs are measured in.
    pub time_base: TimeBase,
    pub phases: Vec<PhaseResult>,
    pub host: HostSection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lsm: Option<LsmSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsSection>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flash: Option<FlashSection>,
    /// A page-write run's measurement over its overwrites after the warmup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ftl: Option<FtlSummary>,
    /// A key-value SSD's own work (flushes, compactions, GC, the put time they held up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kv_ssd: Option<kvssd::DeviceWork>,
    /// The database's contents at the end, when the run asked for it (`RunSpec::digest`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_digest: Option<ContentDigest>,
}

/// The host: the workload's operations as it issued them, and what it wrote below itself (to the
/// device in simulation, into files on real files).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct HostSection {
    /// Keys + values the workload wrote, summed over the phases (page writes: the fill's and the
    /// measured overwrites' pages).
    pub user_bytes: u64,
    /// What reached the device (simulation: whole pages) or the files (real files).
    pub write_bytes: u64,
    /// The same by cause (simulation; `total` is `write_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bytes_by_cause: Option<HostWrites>,
    /// `write_bytes / user_bytes`. Absent for page writes: their host writes are the user's, and
    /// the phases leave the warmup's overwrites out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// Throughput and latency of the last phase (the measured one).
    pub ops_per_sec: f64,
    pub latency: flashsim::LatencySummary,
    /// Simulated time of the whole run (simulation only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sim_time_s: Option<f64>,
    /// Where each lane's simulated time went: reads, data writes and file-system metadata waited
    /// for, key-value SSD commands, stalls, idle time (simulation only; each lane's parts sum to
    /// its time).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lanes: Option<Lanes>,
    /// The engine's work in host CPU cost terms by lane and the model that charged it (LSM runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<HostCpuResult>,
}

/// The LSM engine's own accounting (`lsm::DbStats`): LSM runs only.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LsmSection {
    /// What the engine wrote into files (WAL records, SSTs, MANIFEST), in bytes.
    pub write_bytes: u64,
    pub stall_count: u64,
    pub stall_s: f64,
    /// The same stalls by cause.
    pub stalls_by_cause: StallsByCause,
    /// RemapCom: UDBs / data blocks of the compaction inputs, and cloned UDBs / output data blocks.
    pub udb_ratio_inputs: f64,
    pub udb_ratio_outputs: f64,
    pub levels: Vec<LevelResult>,
}

/// The file system between the engine and the device, where it has something of its own to
/// report; the section is absent when none of its parts is.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FsSection {
    /// The host's page cache over a simulated file system, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<PageCacheSummary>,
    /// Zones (ZNS device with ZoneFs only): utilisation, resets, host GC, space amplification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<ZoneSummary>,
    /// Bytes a real block device took (the kernel's count, after the engine closed and the file
    /// system synced): `xfs-loop` runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
}

/// The simulated NAND flash and its FTL: simulated devices only. Counts are over the whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FlashSection {
    /// NAND page programs x page size, GC relocations included, remaps excluded.
    pub program_bytes: u64,
    pub read_bytes: u64,
    pub erases: u64,
    pub gc_copied_pages: u64,
    pub copybacks: u64,
    pub remapped_pages: u64,
    /// `program_bytes / host.user_bytes`, both over the whole run. Absent for page writes, whose
    /// user bytes leave the warmup out: theirs is `ftl.write_amplification`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_amplification: Option<f64>,
    /// Die time of every flash operation summed over dies, and pages, erases and die time per
    /// cause (host data by the host's label, GC, mapping pages).
    pub busy_s: f64,
    pub by_cause: Vec<flashsim::CauseReport>,
    /// Erases per block (min / mean / max).
    pub wear: flashsim::Wear,
    /// The device's configured spare factor and the one GC works with (the FTL's own idle pages
    /// taken out).
    pub spare_factor: f64,
    pub effective_spare_factor: f64,
}

/// What every simulated run's report says of its time base.
pub const SIMULATED_TIME_NOTE: &str = "Simulated time: each flash operation occupies its die for its latency and its \
     channel for its transfer; the caller's operations and the engine's background job (flushes, compactions) run as \
     lanes of one clock whose requests reach the flash in simulated-time order, so an operation waits only for what \
     was queued ahead of it, and a background job's result is visible from its end. A device's own work (GC, a \
     key-value SSD's compactions) runs inside the request that sets it off. What remains approximate is measured in \
     each run's `host.lanes`: operations issued inside one operation after it waited (ZoneFs's zone GC and its sync's \
     journal record; a key-value SSD's GC) can reach a die out of order (`out_of_order_requests`); on a block SSD a \
     request's own operations (GC relocations and erases, writes after a foreground GC) join their dies' queues with \
     it and hold a die until their input is ready (`head_of_line_ns`). Host CPU: each run's model (`host.cpu`) charges the engine's work to \
     the lane doing it (`cpu_ns`).";

/// The simulated time of the foreground (user operations) and background (flushes, compactions)
/// lanes, by what each waited for; the flash operations that reached the device out of
/// simulated-time order (0 when every lane's requests arrive in order), with how late they were
/// in total; and the die time lost to device operations queued before their input was ready.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lanes {
    pub foreground: flashsim::LaneTime,
    pub background: flashsim::LaneTime,
    #[serde(default)]
    pub out_of_order_requests: u64,
    #[serde(default)]
    pub out_of_order_ns: u64,
    /// Die time lost to device operations queued before their input was ready.
    #[serde(default)]
    pub head_of_line_ns: u64,
}

/// An LSM run's stalls by cause: LevelDB's slowdown (a write delayed at the level-0 slowdown
/// trigger), a wait for the previous memtable's flush, a wait for level 0 below the stop trigger.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallsByCause {
    pub slowdown: StallTime,
    pub memtable: StallTime,
    pub l0_stop: StallTime,
}

/// How many stalls, and their time in all (simulated seconds in simulation, wall-clock otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StallTime {
    pub count: u64,
    pub s: f64,
}

impl From<lsm::Stalls> for StallTime {
    fn from(s: lsm::Stalls) -> StallTime {
        StallTime { count: s.count, s: s.nanos as f64 / 1e9 }
    }
}

/// The host CPU an LSM run used: the model and cores (in words) and the work each lane counted
/// (`lsm::cpu`); the time charged for it is each lane's `cpu_ns` in [`Lanes`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCpuResult {
    pub model: String,
    pub foreground: lsm::cpu::CpuCounts,
    pub background: lsm::cpu::CpuCounts,
}

/// One note per host CPU model the simulated runs of `results` used (in the order first met):
/// what a report says of the time it charged.
pub fn host_cpu_notes(results: &[RunResult]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let models = results.iter().filter(|r| r.time_base == TimeBase::Simulated).filter_map(|r| r.host.cpu.as_ref());
    for m in models {
        let note = format!("Host CPU in simulated time: {}.", m.model);
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    notes
}

/// The clock a run's times are measured in: `simulated` (the device model's) or `wall-clock`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimeBase {
    Simulated,
    WallClock,
}

impl std::fmt::Display for TimeBase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeBase::Simulated => "simulated",
            TimeBase::WallClock => "wall-clock",
        })
    }
}

/// A run's result and the NAND operations its device carried out (simulation only), as a kind's
/// runner gives them back (`crate::runner`).
pub type Measured = crate::error::Result<(RunResult, Option<u64>)>;

/// Wall-clock time of a run (kept apart from the deterministic result).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Timing {
    pub wall_time_s: f64,
    pub nand_ops_per_wall_sec: Option<f64>,
}

impl RunResult {
    /// The result of `phases` run on a simulated device alone (no file system, no engine; the
    /// device's `flash` report at simulated time `end_ns`): the host writes are the device's.
    /// With `ftl`, a page-write run's measurement after its warmup: the flash's whole-run write
    /// amplification and the host's are then left out, as its phases leave the warmup out.
    pub fn of_device(
        workload: &str,
        engine: String,
        device: String,
        phases: Vec<PhaseResult>,
        flash: flashsim::FlashReport,
        end_ns: u64,
        ftl: Option<FtlSummary>,
    ) -> RunResult {
        let host = flash.host_write_bytes;
        let mut r = RunResult::base(workload, engine, device, TimeBase::Simulated, phases, host);
        let mut section = FlashSection::new(&flash, r.host.user_bytes);
        if ftl.is_none() {
            r.host.write_amplification = per_user_byte(host, r.host.user_bytes);
        } else {
            section.write_amplification = None;
        }
        r.flash = Some(section);
        r.host.sim_time_s = Some(end_ns as f64 / 1e9);
        r.ftl = ftl;
        r
    }

    /// A result of `phases` with `host_write_bytes`, and nothing measured beyond them.
    pub(crate) fn base(
        workload: &str,
        engine: String,
        device: String,
        time_base: TimeBase,
        phases: Vec<PhaseResult>,
        host_write_bytes: u64,
    ) -> RunResult {
        let user_bytes: u64 = phases.iter().map(|p| p.user_bytes).sum();
        let last = phases.last();
        RunResult {
            workload: workload.to_string(),
            engine,
            device,
            time_base,
            host: HostSection {
                user_bytes,
                write_bytes: host_write_bytes,
                ops_per_sec: last.map_or(0.0, |p| p.ops_per_sec),
                latency: last.map_or_else(Default::default, |p| p.latency.clone()),
                ..HostSection::default()
            },
            lsm: None,
            fs: None,
            flash: None,
            ftl: None,
            kv_ssd: None,
            content_digest: None,
            phases,
        }
    }

    /// The LSM engine's levels (none for other runs).
    pub fn levels(&self) -> &[LevelResult] {
        self.lsm.as_ref().map_or(&[], |s| &s.levels)
    }

    /// The zones of a run on ZoneFs.
    pub fn zones(&self) -> Option<&ZoneSummary> {
        self.fs.as_ref().and_then(|f| f.zones.as_ref())
    }

    /// The run's write amplification, as the short metric name `write_amplification` gives it:
    /// over the measured interval of a page-write run (`ftl`), else the flash's over the whole
    /// run, else (no flash seen: real files) the host's.
    pub fn write_amplification(&self) -> Option<f64> {
        self.ftl
            .as_ref()
            .map(|f| f.write_amplification)
            .or(self.flash.as_ref().and_then(|f| f.write_amplification))
            .or(self.host.write_amplification)
    }
}

impl FlashSection {
    /// The device's flash accounting, over a run whose workload wrote `user_bytes`.
    pub(crate) fn new(f: &flashsim::FlashReport, user_bytes: u64) -> FlashSection {
        FlashSection {
            program_bytes: f.flash_program_bytes,
            read_bytes: f.flash_read_bytes,
            erases: f.erases,
            gc_copied_pages: f.gc_copied_pages,
            copybacks: f.copybacks,
            remapped_pages: f.remapped_pages,
            write_amplification: per_user_byte(f.flash_program_bytes, user_bytes),
            busy_s: f.flash_busy_s,
            by_cause: f.flash_by_cause.clone(),
            wear: f.wear,
            spare_factor: f.spare_factor,
            effective_spare_factor: f.effective_spare_factor,
        }
    }
}

impl FsSection {
    pub fn is_empty(&self) -> bool {
        self.page_cache.is_none() && self.zones.is_none() && self.device_write_bytes.is_none()
    }
}

impl LsmSection {
    /// The engine's statistics, with each level's host writes from the device's report `dev`.
    pub(crate) fn new(stats: &lsm::DbStats, dev: Option<&DeviceReport>) -> LsmSection {
        let all = stats.stalls();
        let (udb_ratio_inputs, udb_ratio_outputs) = stats.udb_ratios();
        let levels = stats
            .levels
            .iter()
            .enumerate()
            .map(|(level, l)| LevelResult {
                level,
                files: l.files,
                bytes: l.bytes,
                bytes_read: l.bytes_read_input_level + l.bytes_read_output_level,
                bytes_written: l.bytes_written,
                bytes_moved: l.bytes_moved,
                bytes_remapped: l.cloned_bytes,
                job_s: l.micros as f64 / 1e6,
                host_write_bytes: dev
                    .map(|d| d.levels.iter().find(|x| x.level == level).map_or(0, |x| x.host_write_bytes)),
                compactions: l.compactions,
                input_data_blocks: l.input_data_blocks,
                output_data_blocks: l.output_data_blocks,
                padding_bytes: l.padding_bytes,
                udbs: l.udbs_found,
                udbs_cloned: l.udbs_cloned,
            })
            .collect();
        LsmSection {
            write_bytes: stats.engine_write_bytes(),
            stall_count: all.count,
            stall_s: all.nanos as f64 / 1e9,
            stalls_by_cause: StallsByCause {
                slowdown: stats.slowdowns.into(),
                memtable: stats.memtable_stalls.into(),
                l0_stop: stats.l0_stop_stalls.into(),
            },
            udb_ratio_inputs,
            udb_ratio_outputs,
            levels,
        }
    }
}

/// `bytes` per user byte; none when nothing was written.
pub(crate) fn per_user_byte(bytes: u64, user_bytes: u64) -> Option<f64> {
    (user_bytes > 0).then(|| bytes as f64 / user_bytes as f64)
}

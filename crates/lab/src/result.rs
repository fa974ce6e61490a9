//! The result of one run, under the accounting names of docs/design.md, the same for every command.
//!
//! In simulation every number is exact and deterministic; wall-clock time is kept out of this
//! structure (it goes to a separate timing record) so that the same configuration and seed give a
//! byte-identical `results.json`. On real files the device is not visible: host writes are what
//! the engine wrote into files, and the flash figures are absent.

use serde::{Deserialize, Serialize};

use crate::engine::ContentDigest;
use crate::harness::PhaseResult;
use crate::stack::{HostWrites, Stack, ZoneSummary};

#[derive(Clone, Debug, Serialize, Deserialize)]
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

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub workload: String,
    pub engine: String,
    pub device: String,
    /// What elapsed times and throughputs are measured in.
    pub time_base: TimeBase,
    pub phases: Vec<PhaseResult>,
    /// Keys + values the workload wrote.
    pub user_bytes: u64,
    /// What reached the device (simulation: whole pages by cause) or the files (real files).
    pub host_write_bytes: u64,
    pub host_write_bytes_by_cause: Option<HostWrites>,
    /// What the engine wrote into files (WAL records, SSTs), in bytes.
    pub engine_write_bytes: u64,
    pub flash_program_bytes: Option<u64>,
    pub flash_read_bytes: Option<u64>,
    pub erases: Option<u64>,
    pub gc_copied_pages: Option<u64>,
    pub copybacks: Option<u64>,
    pub remapped_pages: Option<u64>,
    /// flash_program_bytes / user_bytes (simulation only).
    pub write_amplification: Option<f64>,
    /// host_write_bytes / user_bytes.
    pub host_write_amplification: f64,
    /// Die time of every flash operation summed over dies, and pages, erases and die time per
    /// cause (host data by the host's label, GC, mapping pages), simulation only.
    pub flash_busy_s: Option<f64>,
    pub flash_by_cause: Option<Vec<flashsim::CauseReport>>,
    /// Erases per block (min / mean / max), simulation only.
    pub wear: Option<flashsim::Wear>,
    /// The device's configured spare factor and the one GC works with (the FTL's own idle pages
    /// taken out), simulation only.
    pub spare_factor: Option<f64>,
    pub effective_spare_factor: Option<f64>,
    /// Simulated time of the whole run (simulation only).
    pub sim_time_s: Option<f64>,
    /// Where each lane's simulated time went: reads, data writes and file-system metadata waited
    /// for, key-value SSD commands, stalls, idle time (simulation only; each lane's parts sum to
    /// its time).
    pub lanes: Option<Lanes>,
    /// Throughput and latency of the last phase (the measured one).
    pub ops_per_sec: f64,
    pub latency: flashsim::LatencySummary,
    pub stall_count: u64,
    pub stall_s: f64,
    /// The same stalls by cause (the LSM engine only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls_by_cause: Option<StallsByCause>,
    /// RemapCom: UDBs / data blocks of the compaction inputs, and cloned UDBs / output data blocks.
    pub udb_ratio_inputs: f64,
    pub udb_ratio_outputs: f64,
    pub levels: Vec<LevelResult>,
    /// Zones (ZNS device with ZoneFs only): utilisation, resets, host GC, space amplification.
    pub zones: Option<ZoneSummary>,
    /// A key-value SSD's own work (flushes, compactions, GC, the put time they held up).
    pub device_work: Option<kvssd::DeviceWork>,
    /// The host's page cache over a simulated file system, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<crate::stack::PageCacheSummary>,
    /// The engine's work in host CPU cost terms by lane and the model that charged it (LSM runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cpu: Option<HostCpuResult>,
    /// The database's contents at the end, when the run asked for it (`RunSpec::digest`).
    pub content_digest: Option<ContentDigest>,
    /// Bytes a real block device took (the kernel's count, after the engine closed and the file
    /// system synced): `xfs-loop` runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_write_bytes: Option<u64>,
    /// A page-write run's measurement over its overwrites after the warmup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ftl: Option<crate::page_writes::FtlSummary>,
}

/// What every simulated run's report says of its time base.
pub const SIMULATED_TIME_NOTE: &str = "Simulated time: each flash operation occupies its die for its latency and its \
     channel for its transfer; the caller's operations and the engine's background job (flushes, compactions) run as \
     lanes of one clock whose requests reach the flash in simulated-time order, so an operation waits only for what \
     was queued ahead of it, and a background job's result is visible from its end. A device's own work (GC, a \
     key-value SSD's compactions) runs inside the request that sets it off. What remains approximate is measured in \
     each run's `lanes`: operations issued inside one operation after it waited (ZoneFs's zone GC and its sync's \
     journal record; a key-value SSD's GC) can reach a die out of order (`out_of_order_requests`); on a block SSD a \
     request's own operations (GC relocations and erases, writes after a foreground GC) join their dies' queues with \
     it and hold a die until their input is ready (`head_of_line_ns`). Host CPU: each run's model (`host_cpu`) charges the engine's work to \
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HostCpuResult {
    pub model: String,
    pub foreground: lsm::cpu::CpuCounts,
    pub background: lsm::cpu::CpuCounts,
}

/// One note per host CPU model the simulated runs of `results` used (in the order first met):
/// what a report says of the time it charged.
pub fn host_cpu_notes(results: &[RunResult]) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    let models = results.iter().filter(|r| r.time_base == TimeBase::Simulated).filter_map(|r| r.host_cpu.as_ref());
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

/// Wall-clock time of a run (kept apart from the deterministic result).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Timing {
    pub wall_time_s: f64,
    pub nand_ops_per_wall_sec: Option<f64>,
}

impl RunResult {
    /// The result of `phases` run on `stack` by an engine whose statistics are `stats`.
    pub fn collect(
        workload: &str,
        engine: String,
        device: String,
        stack: &Stack,
        phases: Vec<PhaseResult>,
        stats: &lsm::DbStats,
    ) -> RunResult {
        let dev = stack.device_report();
        let engine_write_bytes = stats.engine_write_bytes();
        let host = dev.as_ref().map_or(engine_write_bytes, |d| d.host_write_bytes.total);
        let time_base = if stack.simulated() { TimeBase::Simulated } else { TimeBase::WallClock };
        let mut r = RunResult::base(workload, engine, device, time_base, phases, host);
        r.host_write_bytes_by_cause = dev.as_ref().map(|d| d.host_write_bytes.clone());
        r.engine_write_bytes = engine_write_bytes;
        let flash = dev.as_ref().map(|d| &d.flash);
        if let Some(f) = flash {
            r.set_flash(f);
        }
        r.sim_time_s = stack.simulated().then(|| stack.now_ns() as f64 / 1e9);
        r.lanes = stack.clock.as_ref().map(|c| Lanes {
            foreground: c.spent(flashsim::Lane::Foreground),
            background: c.spent(flashsim::Lane::Background),
            out_of_order_requests: flash.map_or(0, |f| f.out_of_order),
            out_of_order_ns: flash.map_or(0, |f| f.out_of_order_ns),
            head_of_line_ns: flash.map_or(0, |f| f.head_of_line_ns),
        });
        let all = stats.stalls();
        r.stall_count = all.count;
        r.stall_s = all.nanos as f64 / 1e9;
        r.stalls_by_cause = Some(StallsByCause {
            slowdown: stats.slowdowns.into(),
            memtable: stats.memtable_stalls.into(),
            l0_stop: stats.l0_stop_stalls.into(),
        });
        (r.udb_ratio_inputs, r.udb_ratio_outputs) = stats.udb_ratios();
        r.levels = stats
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
                    .as_ref()
                    .map(|d| d.levels.iter().find(|x| x.level == level).map_or(0, |x| x.host_write_bytes)),
                compactions: l.compactions,
                input_data_blocks: l.input_data_blocks,
                output_data_blocks: l.output_data_blocks,
                padding_bytes: l.padding_bytes,
                udbs: l.udbs_found,
                udbs_cloned: l.udbs_cloned,
            })
            .collect();
        r.zones = dev.as_ref().and_then(|d| d.zones.clone());
        r.page_cache = dev.as_ref().and_then(|d| d.page_cache.clone());
        r.device_work = stack.device_work();
        r
    }

    /// The result of `phases` run on a simulated device alone (no file system, no engine; the
    /// device's `flash` report at simulated time `end_ns`): the host writes are the device's.
    pub fn of_device(
        workload: &str,
        engine: String,
        device: String,
        phases: Vec<PhaseResult>,
        flash: flashsim::FlashReport,
        end_ns: u64,
    ) -> RunResult {
        let host = flash.host_write_bytes;
        let mut r = RunResult::base(workload, engine, device, TimeBase::Simulated, phases, host);
        r.set_flash(&flash);
        r.sim_time_s = Some(end_ns as f64 / 1e9);
        r
    }

    /// A result of `phases` with `host_write_bytes`, and nothing measured beyond them.
    fn base(
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
            user_bytes,
            host_write_bytes,
            host_write_bytes_by_cause: None,
            engine_write_bytes: 0,
            flash_program_bytes: None,
            flash_read_bytes: None,
            erases: None,
            gc_copied_pages: None,
            copybacks: None,
            remapped_pages: None,
            write_amplification: None,
            host_write_amplification: per_user_byte(host_write_bytes, user_bytes),
            flash_busy_s: None,
            flash_by_cause: None,
            wear: None,
            spare_factor: None,
            effective_spare_factor: None,
            sim_time_s: None,
            lanes: None,
            ops_per_sec: last.map_or(0.0, |p| p.ops_per_sec),
            latency: last.map_or_else(empty_latency, |p| p.latency.clone()),
            stall_count: 0,
            stall_s: 0.0,
            stalls_by_cause: None,
            udb_ratio_inputs: 0.0,
            udb_ratio_outputs: 0.0,
            levels: Vec::new(),
            zones: None,
            device_work: None,
            page_cache: None,
            host_cpu: None,
            content_digest: None,
            device_write_bytes: None,
            ftl: None,
            phases,
        }
    }

    /// The device's flash accounting.
    fn set_flash(&mut self, f: &flashsim::FlashReport) {
        self.flash_program_bytes = Some(f.flash_program_bytes);
        self.flash_read_bytes = Some(f.flash_read_bytes);
        self.erases = Some(f.erases);
        self.gc_copied_pages = Some(f.gc_copied_pages);
        self.copybacks = Some(f.copybacks);
        self.remapped_pages = Some(f.remapped_pages);
        self.write_amplification = Some(per_user_byte(f.flash_program_bytes, self.user_bytes));
        self.flash_busy_s = Some(f.flash_busy_s);
        self.flash_by_cause = Some(f.flash_by_cause.clone());
        self.wear = Some(f.wear);
        self.spare_factor = Some(f.spare_factor);
        self.effective_spare_factor = Some(f.effective_spare_factor);
    }
}

/// `bytes` per user byte (0 when nothing was written).
fn per_user_byte(bytes: u64, user_bytes: u64) -> f64 {
    if user_bytes == 0 {
        0.0
    } else {
        bytes as f64 / user_bytes as f64
    }
}

fn empty_latency() -> flashsim::LatencySummary {
    flashsim::LatencySummary { count: 0, mean_us: 0.0, p50_us: 0.0, p99_us: 0.0, p999_us: 0.0, max_us: 0.0 }
}

/// The human-readable tables of a run: phases, levels, write amplification by cause.
pub fn render(r: &RunResult) -> String {
    use crate::table::Table;
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let cpu = match (&r.host_cpu, r.time_base) {
        (_, TimeBase::WallClock) => "the host's real CPU".to_string(),
        (Some(c), TimeBase::Simulated) => format!("host CPU: {}", c.model),
        (None, TimeBase::Simulated) => "host CPU time is not modelled".into(),
    };
    let mut out = format!("{} on {} with {} ({} time; {cpu})\n\n", r.workload, r.device, r.engine, r.time_base);
    let mut t = Table::new(&["phase", "ops", "ops/s", "p50 us", "p99 us", "p99.9 us", "MiB written", "MiB read"]);
    for p in &r.phases {
        t.row(vec![
            p.name.clone(),
            p.ops.to_string(),
            // No time passed (in simulation, nothing reached the device): no rate to give.
            if p.elapsed_s > 0.0 { format!("{:.0}", p.ops_per_sec) } else { "-".into() },
            format!("{:.1}", p.latency.p50_us),
            format!("{:.1}", p.latency.p99_us),
            format!("{:.1}", p.latency.p999_us),
            mb(p.user_bytes),
            mb(p.read_bytes),
        ]);
    }
    out.push_str(&t.render());
    let levels = levels_table(r);
    if !levels.is_empty() {
        out.push('\n');
        out.push_str(&levels);
    }
    out.push_str(&accounting(r));
    out
}

/// The levels the run wrote or left files in; nothing when there are none (a key-value SSD, page
/// writes), rather than a table's header alone.
fn levels_table(r: &RunResult) -> String {
    use crate::table::Table;
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let mut t = Table::new(&[
        "level",
        "files",
        "size MiB",
        "read MiB",
        "written MiB",
        "moved MiB",
        "remapped MiB",
        "host MiB",
        "compactions",
    ]);
    let mut rows = 0;
    for l in &r.levels {
        if l.files == 0 && l.bytes_written == 0 && l.bytes_moved == 0 {
            continue;
        }
        rows += 1;
        t.row(vec![
            format!("L{}", l.level),
            l.files.to_string(),
            mb(l.bytes),
            mb(l.bytes_read),
            mb(l.bytes_written),
            mb(l.bytes_moved),
            mb(l.bytes_remapped),
            l.host_write_bytes.map_or("-".into(), mb),
            l.compactions.to_string(),
        ]);
    }
    if rows == 0 {
        return String::new();
    }
    t.render()
}

/// Host and flash writes by cause, wear, zones, a key-value SSD's own work, stalls.
fn accounting(r: &RunResult) -> String {
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let mut out = String::new();
    out.push_str(&format!(
        "\nuser {} MiB; host writes {} MiB (host WA {:.2})",
        mb(r.user_bytes),
        mb(r.host_write_bytes),
        r.host_write_amplification
    ));
    if let Some(h) = &r.host_write_bytes_by_cause {
        out.push_str(&format!(
            ": wal {}, flush {}, compaction {}, manifest {}, fs metadata {}",
            mb(h.wal),
            mb(h.flush),
            mb(h.compaction_by_level.iter().sum()),
            mb(h.manifest),
            mb(h.fs_metadata)
        ));
        for (name, bytes) in [("moves", h.moves), ("T-zone", h.t_zone), ("zone GC", h.zone_gc)] {
            if bytes > 0 {
                out.push_str(&format!(", {name} {}", mb(bytes)));
            }
        }
    }
    out.push('\n');
    if let Some(c) = &r.page_cache {
        let w = &c.written_back_bytes;
        out.push_str(&format!(
            "page cache {} MiB: hit ratio {}, {} misses, {} pages read ahead; written back {} MiB (fsync {}, background \
             {}, expired {}, pressure {}, clone {}, direct I/O {}, at the end {}); dirty peak {} MiB, {} MiB of deleted files never \
             written\n",
            mb(c.capacity_bytes),
            c.hit_ratio.map_or("-".into(), |h| format!("{:.1} %", h * 100.0)),
            c.misses,
            c.readahead_pages,
            mb(w.total),
            mb(w.fsync),
            mb(w.background),
            mb(w.expired),
            mb(w.pressure),
            mb(w.clone),
            mb(w.direct),
            mb(w.unmount),
            mb(c.dirty_peak_bytes),
            mb(c.dropped_dirty_bytes)
        ));
    }
    if let Some(l) = &r.lanes {
        let s = |ns: u64| format!("{:.3}", ns as f64 / 1e9);
        for (name, t) in [("foreground", &l.foreground), ("background", &l.background)] {
            out.push_str(&format!(
                "{name} lane {} s: cpu {}, waiting for a core {}, reads {}, writes {}, metadata {}, device {}, stalls {}, \
                 idle {}, zone GC {}\n",
                s(t.total_ns()),
                s(t.cpu_ns),
                s(t.cpu_queue_ns),
                s(t.read_ns),
                s(t.write_ns),
                s(t.metadata_ns),
                s(t.device_ns),
                s(t.stall_ns),
                s(t.idle_ns),
                s(t.gc_ns)
            ));
        }
    }
    if let (Some(f), Some(wa)) = (r.flash_program_bytes, r.write_amplification) {
        out.push_str(&format!(
            "flash programs {} MiB (write amplification {:.2}); GC copied {} pages; {} erases; {} pages remapped\n",
            mb(f),
            wa,
            r.gc_copied_pages.unwrap_or(0),
            r.erases.unwrap_or(0),
            r.remapped_pages.unwrap_or(0)
        ));
    }
    if let (Some(busy), Some(causes)) = (r.flash_busy_s, &r.flash_by_cause) {
        let parts: Vec<String> = causes.iter().map(|c| c.to_string()).collect();
        out.push_str(&format!("flash time {busy:.2} s (summed over dies): {}\n", parts.join(", ")));
    }
    if let (Some(w), Some(sf), Some(eff)) = (r.wear, r.spare_factor, r.effective_spare_factor) {
        out.push_str(&format!(
            "wear: {} / {:.2} / {} erases per block (min / mean / max); spare factor {sf} ({eff:.4} effective)\n",
            w.min_erases, w.mean_erases, w.max_erases
        ));
    }
    if let Some(z) = &r.zones {
        out.push_str(&format!(
            "zones: {} of {} data zones in use, {} at >= 90 % utilisation (histogram by tenths {:?}); space \
             amplification {}; {} resets; host GC {} runs, {} MiB copied\n",
            z.used_zones,
            z.data_zones,
            z.zones_over_90_percent,
            z.utilisation_histogram,
            z.space_amplification.map_or("-".into(), |s| format!("{s:.2}")),
            z.resets,
            z.gc_runs,
            mb(z.gc_copied_bytes)
        ));
    }
    if let Some(w) = &r.device_work {
        out.push_str(&format!(
            "device work: {} flushes, compactions by level {:?}, GC {} runs moving {} pages; puts waited {:.3} s \
             beyond their flushes for them ({:.3} s of it compaction); {} reads answered from device DRAM\n",
            w.flushes,
            w.compactions_by_level,
            w.gc_runs,
            w.gc_moved_pages,
            w.held_ns as f64 / 1e9,
            w.compaction_ns as f64 / 1e9,
            w.dram_hits
        ));
        if let Some(n) = w.ssts_read_per_get {
            out.push_str(&format!("SSTs read per get: {n:.2}\n"));
        }
    }
    out.push_str(&format!("stalls: {} ({:.3} s)", r.stall_count, r.stall_s));
    if let Some(c) = &r.stalls_by_cause {
        out.push_str(&format!(
            ": {} slowdowns ({:.3} s), {} memtable ({:.3} s), {} level-0 stop ({:.3} s)",
            c.slowdown.count, c.slowdown.s, c.memtable.count, c.memtable.s, c.l0_stop.count, c.l0_stop.s
        ));
    }
    out.push('\n');
    if let Some(l) = r.lanes.filter(|l| l.out_of_order_requests > 0) {
        out.push_str(&format!(
            "flash operations issued out of simulated-time order: {} ({:.3} s late in total)\n",
            l.out_of_order_requests,
            l.out_of_order_ns as f64 / 1e9
        ));
    }
    out
}

//! `flashkv ftl`: a synthetic single-page workload on a simulated block SSD.
//!
//! The device is filled sequentially, then `writes` capacity-writes of single-page writes follow
//! in the chosen pattern. Write amplification (NAND programs / host page writes) is measured over
//! the part of the overwrites after `warmup` (the second half by default), which is how GC
//! steady-state results are reported in the literature. Writes are issued with a fixed queue
//! depth: a new write is issued when the oldest outstanding one completes, in simulated time.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use flashsim::theory::greedy_wa_limit;
use flashsim::{
    BlockSsd, CauseReport, DataMode, GcPolicy, HostLabel, HostOp, LatencySummary, Nanos, NvramUsage, Preset, SsdConfig,
    Wear,
};
use rand::{Rng, SeedableRng};
use serde::Serialize;
use workload::zipfian::Zipfian;

use crate::error::{LabError, Result};
use crate::spec::named::{parser, NameError, Named};
use crate::spec::{format_size, Bytes};
use crate::table::Table;

#[derive(clap::Args, Debug, Clone)]
pub struct FtlArgs {
    /// Device preset: femu, plsc, kvftl.
    #[arg(long, default_value = "femu", value_parser = parser::<Preset>)]
    pub preset: Preset,
    /// Raw NAND capacity (e.g. 1GiB); the preset's own when absent.
    #[arg(long, value_parser = parser::<Bytes>)]
    pub capacity: Option<Bytes>,
    /// Spare factor S_f = 1 - user capacity / raw capacity.
    #[arg(long, default_value_t = 0.07, value_parser = crate::input::fraction, allow_hyphen_values = true)]
    pub spare_factor: f64,
    #[arg(long, allow_hyphen_values = true)]
    pub pages_per_block: Option<u32>,
    /// Override the preset's channel count.
    #[arg(long, allow_hyphen_values = true)]
    pub channels: Option<u32>,
    /// Override the preset's chips per channel.
    #[arg(long, allow_hyphen_values = true)]
    pub chips: Option<u32>,
    /// Override the preset's dies per chip.
    #[arg(long, allow_hyphen_values = true)]
    pub dies: Option<u32>,
    /// Override the preset's planes per die.
    #[arg(long, allow_hyphen_values = true)]
    pub planes: Option<u32>,
    /// GC victim policy: greedy, cost-benefit, fifo.
    #[arg(long, default_value = "greedy", value_parser = parser::<GcPolicy>)]
    pub gc: GcPolicy,
    /// Write pattern: seq, uniform, zipf:THETA (YCSB's zipfian over the user pages).
    #[arg(long, default_value = "uniform", value_parser = parser::<Pattern>)]
    pub pattern: Pattern,
    /// Device capacities written after the sequential fill.
    #[arg(long, default_value_t = 12.0, allow_hyphen_values = true)]
    pub writes: f64,
    /// Fraction of the overwrites before measurement starts.
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    pub warmup: f64,
    /// Outstanding writes.
    #[arg(long, default_value_t = 64, allow_hyphen_values = true)]
    pub queue_depth: u32,
    /// Relocate GC pages by read + program instead of copyback.
    #[arg(long)]
    pub no_copyback: bool,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Print the result as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Write pattern of the overwrite phase.
#[derive(Clone, Debug, PartialEq)]
pub enum Pattern {
    Seq,
    Uniform,
    Zipf(f64),
}

impl Named for Pattern {
    fn parse_name(s: &str) -> std::result::Result<Pattern, NameError> {
        let accepted = "accepted: seq, uniform, zipf:THETA (0 < THETA, THETA != 1)";
        match s {
            "seq" => Ok(Pattern::Seq),
            "uniform" => Ok(Pattern::Uniform),
            _ => match s.strip_prefix("zipf:") {
                Some(t) => match t.parse::<f64>() {
                    Ok(theta) if theta > 0.0 && theta != 1.0 && theta.is_finite() => Ok(Pattern::Zipf(theta)),
                    _ => Err(format!("bad zipf exponent '{t}'; {accepted}").into()),
                },
                None => Err(format!("unknown pattern '{s}'; {accepted}").into()),
            },
        }
    }

    fn name(&self) -> String {
        match self {
            Pattern::Seq => "seq".into(),
            Pattern::Uniform => "uniform".into(),
            Pattern::Zipf(t) => format!("zipf:{t}"),
        }
    }
}

/// A validated FTL experiment.
#[derive(Clone, Debug)]
pub struct FtlSpec {
    pub preset: Preset,
    pub config: SsdConfig,
    pub pattern: Pattern,
    pub writes: f64,
    pub warmup: f64,
    pub queue_depth: u32,
    pub seed: u64,
}

impl FtlSpec {
    pub fn from_args(a: &FtlArgs) -> Result<FtlSpec> {
        let preset = a.preset;
        let mut g = preset.geometry();
        let default_capacity = g.capacity_bytes();
        for (flag, value, slot) in [
            ("--pages-per-block", a.pages_per_block, &mut g.pages_per_block),
            ("--channels", a.channels, &mut g.channels),
            ("--chips", a.chips, &mut g.chips_per_channel),
            ("--dies", a.dies, &mut g.dies_per_chip),
            ("--planes", a.planes, &mut g.planes_per_die),
        ] {
            if let Some(v) = value {
                if v == 0 {
                    return Err(LabError::invalid(flag, "must be at least 1"));
                }
                *slot = v;
            }
        }
        let capacity = a.capacity.map_or(default_capacity, |c| c.0);
        let geometry =
            flashsim::preset::scale(g, capacity).map_err(|e| LabError::invalid("device.capacity", e.to_string()))?;
        let mut config = SsdConfig::new(geometry, preset.timing());
        if !(0.0..1.0).contains(&a.spare_factor) {
            return Err(LabError::invalid("device.spare_factor", format!("{} is not in [0, 1)", a.spare_factor)));
        }
        config.spare_factor = a.spare_factor;
        config.gc_policy = a.gc;
        config.copyback = !a.no_copyback;
        config.media.store = DataMode::MetadataOnly;
        config.validate()?;
        if !(a.writes > 0.0 && a.writes.is_finite()) {
            return Err(LabError::invalid(
                "writes",
                format!("{} must be a positive number of capacity-writes", a.writes),
            ));
        }
        if !(0.0..1.0).contains(&a.warmup) {
            return Err(LabError::invalid("warmup", format!("{} is not in [0, 1)", a.warmup)));
        }
        if a.queue_depth == 0 {
            return Err(LabError::invalid("queue_depth", "must be at least 1"));
        }
        Ok(FtlSpec {
            preset,
            config,
            pattern: a.pattern.clone(),
            writes: a.writes,
            warmup: a.warmup,
            queue_depth: a.queue_depth,
            seed: a.seed,
        })
    }
}

/// The outcome of one FTL run, with the accounting names of docs/design.md.
#[derive(Clone, Debug, Serialize)]
pub struct FtlResult {
    pub preset: String,
    pub raw_capacity_bytes: u64,
    pub user_bytes: u64,
    pub spare_factor: f64,
    /// The spare factor GC works with once the pages the FTL keeps idle by design (its GC reserve,
    /// half of each open frontier) are taken out, and the same measured: idle pages (free blocks,
    /// unwritten parts of open blocks) averaged over the measured writes.
    pub effective_spare_factor: f64,
    pub measured_spare_factor: f64,
    pub pages_per_block: u32,
    pub page_size: u32,
    pub planes: u32,
    pub gc: GcPolicy,
    pub pattern: String,
    pub capacity_writes: f64,
    pub warmup: f64,
    pub queue_depth: u32,
    pub seed: u64,
    /// NAND programs / host page writes over the measured part of the run.
    pub write_amplification: f64,
    /// The large-block limit of greedy GC (and of FIFO) under uniform writes (Xiang & Kurkoski), at
    /// the configured and at the effective spare factor, for comparison.
    pub theory_write_amplification: Option<f64>,
    pub theory_write_amplification_effective: Option<f64>,
    pub measured_host_write_pages: u64,
    pub measured_nand_programs: u64,
    pub erases: u64,
    pub gc_copied_pages: u64,
    pub copybacks: u64,
    /// Victim blocks collected, and those the host had to wait for.
    pub gc_runs: u64,
    pub foreground_gc_runs: u64,
    pub flash_program_bytes: u64,
    pub flash_read_bytes: u64,
    /// Die time per cause over the whole run (fill included).
    pub flash_busy_s: f64,
    pub flash_by_cause: Vec<CauseReport>,
    pub wear: Wear,
    pub sim_time_s: f64,
    /// Simulated throughput of the measured part, host pages per simulated second.
    pub ops_per_sec: f64,
    pub wall_time_s: f64,
    pub nand_ops: u64,
    pub nand_ops_per_wall_sec: f64,
    pub write_latency: LatencySummary,
    pub nvram: NvramUsage,
}

/// Runs the experiment; `progress` draws a bar on a terminal.
pub fn run(spec: &FtlSpec, progress: bool) -> Result<FtlResult> {
    let start_wall = Instant::now();
    let mut ssd = BlockSsd::new(spec.config.clone())?;
    let user = ssd.user_pages();
    let overwrites = (spec.writes * user as f64).round() as u64;
    let measure_from = (spec.warmup * overwrites as f64).round() as u64;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(spec.seed);
    let mut zipf = match spec.pattern {
        Pattern::Zipf(theta) => {
            Some(Zipfian::new(user, theta).map_err(|e| LabError::invalid("pattern", e.to_string()))?)
        }
        _ => None,
    };
    let bar = crate::progress::bar(progress, user + overwrites, "ftl");
    let mut queue = Queue::new(spec.queue_depth);
    for lpn in 0..user {
        let at = queue.issue_time();
        queue.complete(ssd.write_no_data(at, lpn, 1, HostLabel::Unlabelled)?);
        if lpn % 65536 == 0 {
            bar.set_position(lpn);
        }
    }
    let mut start = ssd.counters();
    let mut start_time = queue.issue_time();
    for i in 0..overwrites {
        if i == measure_from {
            start = ssd.counters();
            start_time = queue.issue_time();
            ssd.reset_latencies();
        }
        let lpn = match (&spec.pattern, zipf.as_mut()) {
            (Pattern::Seq, _) => i % user,
            (Pattern::Zipf(_), Some(z)) => z.next(&mut rng),
            _ => rng.next_u64() % user,
        };
        let at = queue.issue_time();
        queue.complete(ssd.write_no_data(at, lpn, 1, HostLabel::Unlabelled)?);
        if i % 65536 == 0 {
            bar.set_position(user + i);
        }
    }
    bar.finish_and_clear();
    let end_time = queue.drain();
    let all = ssd.counters();
    let measured = all.delta(&start);
    let wall = start_wall.elapsed().as_secs_f64();
    let g = ssd.geometry().clone();
    let sim_span = (end_time - start_time) as f64 / 1e9;
    let uniform = spec.pattern == Pattern::Uniform;
    Ok(FtlResult {
        preset: spec.preset.name().into(),
        raw_capacity_bytes: g.capacity_bytes(),
        user_bytes: spec.config.user_bytes(),
        spare_factor: spec.config.spare_factor,
        effective_spare_factor: spec.config.effective_spare_factor(),
        measured_spare_factor: ssd.measured_spare_factor(&measured),
        pages_per_block: g.pages_per_block,
        page_size: g.page_size,
        planes: g.total_planes(),
        gc: spec.config.gc_policy,
        pattern: spec.pattern.name(),
        capacity_writes: spec.writes,
        warmup: spec.warmup,
        queue_depth: spec.queue_depth,
        seed: spec.seed,
        write_amplification: measured.write_amplification().unwrap_or(0.0),
        theory_write_amplification: uniform.then(|| greedy_wa_limit(spec.config.spare_factor)),
        theory_write_amplification_effective: uniform.then(|| greedy_wa_limit(spec.config.effective_spare_factor())),
        measured_host_write_pages: measured.ftl.host_write_pages,
        measured_nand_programs: measured.flash.programs,
        erases: all.flash.erases,
        gc_copied_pages: all.ftl.gc_copied_pages,
        copybacks: all.flash.copybacks,
        gc_runs: all.ftl.gc_runs,
        foreground_gc_runs: all.ftl.foreground_gc_runs,
        flash_program_bytes: all.flash.programs * g.page_size as u64,
        flash_read_bytes: all.flash.reads * g.page_size as u64,
        flash_busy_s: all.flash.busy_ns as f64 / 1e9,
        flash_by_cause: all.flash.by_cause_report(),
        wear: ssd.wear(),
        sim_time_s: end_time as f64 / 1e9,
        ops_per_sec: if sim_span > 0.0 { measured.ftl.host_write_pages as f64 / sim_span } else { 0.0 },
        wall_time_s: wall,
        nand_ops: all.flash.nand_ops(),
        nand_ops_per_wall_sec: all.flash.nand_ops() as f64 / wall.max(1e-9),
        write_latency: ssd.latencies().summary(HostOp::Write),
        nvram: ssd.nvram(),
    })
}

/// Fixed queue depth in simulated time: each new request is issued when a slot frees.
struct Queue {
    depth: usize,
    outstanding: BinaryHeap<Reverse<Nanos>>,
    last_issue: Nanos,
}

impl Queue {
    fn new(depth: u32) -> Self {
        Queue { depth: depth as usize, outstanding: BinaryHeap::new(), last_issue: 0 }
    }

    fn issue_time(&mut self) -> Nanos {
        if self.outstanding.len() >= self.depth {
            if let Some(Reverse(t)) = self.outstanding.pop() {
                self.last_issue = self.last_issue.max(t);
            }
        }
        self.last_issue
    }

    fn complete(&mut self, done: Nanos) {
        self.outstanding.push(Reverse(done));
    }

    fn drain(&mut self) -> Nanos {
        self.outstanding.drain().map(|Reverse(t)| t).max().unwrap_or(self.last_issue).max(self.last_issue)
    }
}

/// The human-readable result.
pub fn render(r: &FtlResult) -> String {
    let mut t = Table::new(&["metric", "value"]);
    let mut row = |k: &str, v: String| t.row(vec![k.into(), v]);
    row(
        "device",
        format!(
            "{} {} raw, {} user, {} planes",
            r.preset,
            format_size(r.raw_capacity_bytes),
            format_size(r.user_bytes),
            r.planes
        ),
    );
    row(
        "spare factor: configured / effective / measured",
        format!("{} / {:.4} / {:.4}", r.spare_factor, r.effective_spare_factor, r.measured_spare_factor),
    );
    row("pages per block", r.pages_per_block.to_string());
    row("gc / pattern", format!("{:?} / {}", r.gc, r.pattern));
    row("write amplification", format!("{:.3}", r.write_amplification));
    let vs = |th: f64| format!("{th:.3} ({:+.1} %)", (r.write_amplification / th - 1.0) * 100.0);
    if let Some(th) = r.theory_write_amplification {
        row("large-block limit", vs(th));
    }
    if let Some(th) = r.theory_write_amplification_effective {
        row("large-block limit, effective spare", vs(th));
    }
    row("erases", r.erases.to_string());
    row("gc copied pages", r.gc_copied_pages.to_string());
    row("copybacks", r.copybacks.to_string());
    row(
        "wear (erases per block)",
        format!("{} / {:.1} / {}", r.wear.min_erases, r.wear.mean_erases, r.wear.max_erases),
    );
    let causes: Vec<String> = r.flash_by_cause.iter().map(|c| c.to_string()).collect();
    row("flash time by cause", causes.join(", "));
    row("simulated time", format!("{:.2} s", r.sim_time_s));
    row("write throughput (simulated)", format!("{:.0} pages/s", r.ops_per_sec));
    row(
        "write latency p50 / p99 / p99.9",
        format!("{:.0} / {:.0} / {:.0} us", r.write_latency.p50_us, r.write_latency.p99_us, r.write_latency.p999_us),
    );
    row("wall time", format!("{:.2} s", r.wall_time_s));
    row("NAND ops per wall second", format!("{:.2} M", r.nand_ops_per_wall_sec / 1e6));
    t.render()
}

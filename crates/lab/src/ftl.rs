//! `flashkv ftl`: the page-write workload (`crate::page_writes`) on a simulated block SSD, for GC
//! and write-amplification studies, or with `--trace` a recorded block trace replayed on it
//! (`crate::block_replay`). The flags make one `RunSpec` (`workload.name = "pages"` or
//! `"block-trace"`) that the runner runs like any other; the result is a `RunResult` (with an
//! `ftl` section for page writes).

use std::path::PathBuf;

use workload::block_trace::BlockTraceFormat;

use crate::publish::OutputArgs;
use crate::result::RunResult;
use crate::spec::named::parser;
use crate::spec::{
    format_size, Addresses, BlockTraceSpec, DeviceSpec, EngineSpec, PageWrites, Pattern, Replay, RunSpec, WorkloadKind,
    WorkloadSpec,
};
use crate::table::Table;

#[derive(clap::Args, Debug, Clone)]
pub struct FtlArgs {
    /// Write pattern: seq, uniform, zipf:THETA (YCSB's zipfian over the user pages).
    #[arg(long, default_value = "uniform", value_parser = parser::<Pattern>)]
    pub pattern: Pattern,
    /// Device capacities written after the sequential fill.
    #[arg(long, default_value_t = 12.0, allow_hyphen_values = true)]
    pub writes: f64,
    /// Fraction of the overwrites before measurement starts.
    #[arg(long, default_value_t = 0.5, allow_hyphen_values = true)]
    pub warmup: f64,
    /// Outstanding writes (outstanding requests of a closed-loop trace replay).
    #[arg(long, default_value_t = 64, allow_hyphen_values = true)]
    pub queue_depth: u32,
    /// Replay this block trace instead of the pattern (see --trace-format).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// The trace's format: msr (MSR Cambridge / SNIA IOTTA CSV) or blkparse (blkparse's text).
    #[arg(long, default_value = "msr", value_parser = parser::<BlockTraceFormat>)]
    pub trace_format: BlockTraceFormat,
    /// closed (a request issues when one of --queue-depth slots frees) or open (at the trace's times).
    #[arg(long, default_value = "closed", value_parser = parser::<Replay>)]
    pub replay: Replay,
    /// Replay on a fresh device instead of one written once sequentially first.
    #[arg(long)]
    pub no_precondition: bool,
    /// Requests beyond the device's user space: error, or wrap (modulo the user pages).
    #[arg(long, default_value = "error", value_parser = parser::<Addresses>)]
    pub addresses: Addresses,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub device: DeviceSpec,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FtlArgs {
    pub fn spec(&self) -> RunSpec {
        if let Some(file) = &self.trace {
            let trace = BlockTraceSpec {
                replay: self.replay,
                queue_depth: self.queue_depth,
                precondition: !self.no_precondition,
                addresses: self.addresses,
                ..BlockTraceSpec::new(file.clone(), self.trace_format)
            };
            let workload = WorkloadSpec { trace: Some(trace), ..WorkloadSpec::new(WorkloadKind::BlockTrace, 1, 0) };
            return RunSpec::new(EngineSpec::default(), self.device.clone(), workload);
        }
        let pages = PageWrites {
            pattern: self.pattern,
            writes: self.writes,
            warmup: self.warmup,
            queue_depth: self.queue_depth,
        };
        let workload = WorkloadSpec { seed: self.seed, pages, ..WorkloadSpec::new(WorkloadKind::PageWrites, 1, 0) };
        RunSpec::new(EngineSpec::default(), self.device.clone(), workload)
    }
}

/// The FTL's table: the device, the measured write amplification beside greedy GC's large-block
/// limit, GC's work, wear, flash time by cause, throughput and latency (a trace replay's own
/// tables for `--trace`).
pub fn render(r: &RunResult) -> String {
    let Some(f) = &r.ftl else { return crate::block_replay::render(r) };
    let flash = r.flash.as_ref();
    let mut t = Table::new(&["metric", "value"]);
    let mut row = |k: &str, v: String| t.row(vec![k.into(), v]);
    row("device", r.device.clone());
    row("user data", format_size(r.phases.first().map_or(0, |p| p.user_bytes)));
    row(
        "spare factor: configured / effective / measured",
        format!(
            "{} / {:.4} / {:.4}",
            flash.map_or(0.0, |x| x.spare_factor),
            flash.map_or(0.0, |x| x.effective_spare_factor),
            f.measured_spare_factor
        ),
    );
    row("pattern", f.pattern.clone());
    row("write amplification (measured part)", format!("{:.3}", f.write_amplification));
    let vs = |th: f64| format!("{th:.3} ({:+.1} %)", (f.write_amplification / th - 1.0) * 100.0);
    if let Some(th) = f.theory_write_amplification {
        row("large-block limit", vs(th));
    }
    if let Some(th) = f.theory_write_amplification_effective {
        row("large-block limit, effective spare", vs(th));
    }
    row("erases", flash.map_or(0, |x| x.erases).to_string());
    row("gc copied pages", flash.map_or(0, |x| x.gc_copied_pages).to_string());
    row("gc runs (foreground)", format!("{} ({})", f.gc_runs, f.foreground_gc_runs));
    row("copybacks", flash.map_or(0, |x| x.copybacks).to_string());
    if let Some(w) = flash.map(|x| x.wear) {
        row("wear (erases per block)", format!("{} / {:.1} / {}", w.min_erases, w.mean_erases, w.max_erases));
    }
    let causes: Vec<String> = flash.iter().flat_map(|x| &x.by_cause).map(|c| c.to_string()).collect();
    row("flash time by cause", causes.join(", "));
    row("simulated time", format!("{:.2} s", r.host.sim_time_s.unwrap_or(0.0)));
    row("write throughput (simulated)", format!("{:.0} pages/s", r.host.ops_per_sec));
    let l = &r.host.latency;
    row("write latency p50 / p99 / p99.9", format!("{:.0} / {:.0} / {:.0} us", l.p50_us, l.p99_us, l.p999_us));
    t.render()
}

//! `flashkv repro NAME`: reproduce a seed paper's experiments and put our measurement beside the
//! paper's number, at a reduced scale in minutes or at the paper's scale on request.

mod kvftl;
mod plsc;
mod remapcom;
mod remapcom_xfs;
mod zns_ll;

use std::path::PathBuf;

use crate::batch::{Executor, Runner};
use crate::error::{LabError, Result};
use crate::publish;
use crate::report::model::{Cell, ResultSet, ResultTable};
use crate::result::{RunResult, Timing};
use crate::run_cache::RunCache;
use crate::runner::Outcome;
use crate::spec::named::parser;
use crate::spec::{RunSpec, Store};

#[derive(clap::Args, Debug, Clone)]
pub struct ReproArgs {
    /// remapcom (simulated FEMU SSD), remapcom-xfs (real reflink XFS on a loop device), zns-ll
    /// (compaction strategies on a simulated ZNS SSD), plsc (key-value SSDs, seed 002), kvftl
    /// (key-value FTLs, seed 004).
    pub name: String,
    /// small (the paper's ratios at 1/16 of its size, minutes), paper (the paper's sizes: hours),
    /// or tiny (for tests).
    #[arg(long, default_value = "small")]
    pub scale: String,
    /// Only these parts, comma-separated (remapcom: fig9-11, table3, fig12, fig13, fig14, fig15).
    #[arg(long)]
    pub only: Option<String>,
    /// Where simulated devices keep page contents: auto, memory, compact, file, file:DIR (see
    /// `--store` of bench). Under auto, the repros whose values are zeros (remapcom, plsc, kvftl)
    /// use compact.
    #[arg(long, default_value = "auto", value_parser = parser::<Store>)]
    pub store: Store,
    /// NAND latencies instead of the repro's preset's (plsc: SSDSim's defaults), as `--timing` of
    /// bench: femu, ssdsim, seed004, or READ/PROGRAM/ERASE/TRANSFER-PER-BYTE.
    #[arg(long, value_parser = parser::<flashsim::Timing>)]
    pub timing: Option<flashsim::Timing>,
    /// The result folder (default: results/repro-NAME-SCALE). Finished runs are kept in its
    /// `runs/` folder: a repro interrupted and started again resumes where it stopped.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run everything again: delete the result folder's finished runs first.
    #[arg(long)]
    pub fresh: bool,
    /// Where the runs go: local, ray or ray=ADDRESS (see `--executor` of run).
    #[arg(long, default_value = "local", value_parser = str::parse::<Executor>)]
    pub executor: Executor,
}

/// A repro's scale: the paper's sizes divided by one divisor, so that device, data, SST, memtable
/// and level sizes keep the paper's ratios (and the tree its number of levels).
pub struct Scale {
    pub name: &'static str,
    divisor: u64,
}

impl Scale {
    /// The scale named `s` among a repro's `(name, divisor)` choices.
    pub fn parse(s: &str, choices: &[(&'static str, u64)]) -> Result<Scale> {
        match choices.iter().find(|(name, _)| *name == s) {
            Some(&(name, divisor)) => Ok(Scale { name, divisor }),
            None => {
                let names: Vec<&str> = choices.iter().map(|c| c.0).collect();
                Err(LabError::invalid("scale", format!("unknown scale '{s}'; accepted: {}", names.join(", "))))
            }
        }
    }

    /// A size of the paper, at this scale.
    pub fn size(&self, paper: u64) -> u64 {
        paper / self.divisor
    }

    /// What the paper's sizes are divided by.
    pub fn divisor(&self) -> u64 {
        self.divisor
    }
}

pub const NAMES: &str = "remapcom, remapcom-xfs, zns-ll, plsc, kvftl";

/// What a repro's parallel runs gave: each run's result (`None` when it failed), the wall-clock
/// figures of those that finished, their results as JSON (labelled), and a row per failure.
pub struct Outcomes {
    pub results: Vec<Option<RunResult>>,
    pub timings: Vec<Timing>,
    pub runs: Vec<serde_json::Value>,
    pub failed: Vec<Vec<Cell>>,
}

/// Sorts `outcomes` of `specs`: a run that fails (a device that runs out of space, say) is a
/// result too, reported beside the others instead of ending the repro.
pub fn collect(specs: &[(String, RunSpec)], outcomes: Vec<Outcome>) -> Result<Outcomes> {
    let mut o = Outcomes { results: Vec::new(), timings: Vec::new(), runs: Vec::new(), failed: Vec::new() };
    for ((label, _), outcome) in specs.iter().zip(outcomes) {
        match outcome {
            Ok((r, t)) => {
                let mut v = serde_json::to_value(&r).map_err(LabError::json("a run's result"))?;
                if let Some(m) = v.as_object_mut() {
                    m.insert("experiment".into(), serde_json::json!(label));
                }
                o.runs.push(v);
                o.results.push(Some(r));
                o.timings.push(t);
            }
            Err(e) => {
                o.failed.push(vec![Cell::Text(label.clone()), Cell::Text(e.to_string())]);
                o.results.push(None);
            }
        }
    }
    Ok(o)
}

/// A note and a table of the failed runs, if any.
pub fn report_failures(set: &mut ResultSet, failed: Vec<Vec<Cell>>) {
    if failed.is_empty() {
        return;
    }
    set.notes
        .push(format!("{} run(s) failed: their cells read \"failed\" (see the table of failed runs).", failed.len()));
    set.tables.push(ResultTable {
        name: "failed runs".into(),
        columns: ["run", "error"].map(String::from).to_vec(),
        rows: failed,
    });
}

/// The report's note on the values of a repro that writes zeros.
pub const ZERO_VALUES_NOTE: &str =
    "Values are zeros of the workload's sizes (our choice, `values = \"zeros\"`): every \
     count and simulated time depends on sizes only (nothing here compresses; tested against generated values), and \
     the device then keeps only keys and headers in memory (`--store compact`), which is what lets the paper's scale \
     run on one machine.";

/// A failed run's cell.
pub fn failed() -> Cell {
    Cell::Text("failed".into())
}

/// `x` rounded to `places` decimals.
pub fn round(x: f64, places: i32) -> Cell {
    let f = 10f64.powi(places);
    Cell::Number((x * f).round() / f)
}

/// Bytes as MiB with one decimal.
pub fn mb(b: u64) -> Cell {
    Cell::Number((b as f64 / (1u64 << 20) as f64 * 10.0).round() / 10.0)
}

/// `a / b` when both runs finished.
pub fn ratio(a: Option<f64>, b: Option<f64>) -> Cell {
    a.zip(b).map_or_else(failed, |(a, b)| round(a / b.max(1e-9), 2))
}

pub fn run(a: &ReproArgs, progress: bool) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("results/repro-{}-{}", a.name, a.scale)));
    let only: Option<Vec<String>> = a.only.as_ref().map(|s| s.split(',').map(|p| p.trim().to_string()).collect());
    if a.timing.is_some() && a.name != "plsc" {
        return Err(LabError::invalid(
            "timing",
            format!("{} runs on its paper's device timings; only plsc takes --timing", a.name),
        ));
    }
    // Long runs: progress lines always go to stderr.
    let cache = RunCache::open(&out, a.fresh)?;
    let runner = Runner { progress: true, cache: Some(cache), executor: a.executor.clone() };
    let (set, timings) = match a.name.as_str() {
        "remapcom" => remapcom::run(
            &Scale::parse(&a.scale, &remapcom::SCALES)?,
            &a.store.clone().for_zero_values(),
            only.as_deref(),
            &runner,
        )?,
        "remapcom-xfs" => remapcom_xfs::run(&a.scale, progress)?,
        "zns-ll" => {
            if a.only.is_some() {
                return Err(LabError::invalid("only", "zns-ll runs as one whole (fillrandom and YCSB share its rows)"));
            }
            zns_ll::run(&Scale::parse(&a.scale, &zns_ll::SCALES)?, &a.store, &runner)?
        }
        "plsc" => {
            if a.only.is_some() {
                return Err(LabError::invalid("only", "plsc runs as one whole (every table needs every run)"));
            }
            plsc::run(
                &Scale::parse(&a.scale, &plsc::SCALES)?,
                &a.store.clone().for_zero_values(),
                a.timing.as_ref(),
                &runner,
            )?
        }
        "kvftl" => {
            if a.only.is_some() {
                return Err(LabError::invalid("only", "kvftl runs as one whole (its tables share their runs)"));
            }
            kvftl::run(&Scale::parse(&a.scale, &kvftl::SCALES)?, &a.store.clone().for_zero_values(), &runner)?
        }
        other => return Err(LabError::invalid("name", format!("unknown experiment '{other}'; accepted: {NAMES}"))),
    };
    print!("{}", publish::summary(&set));
    publish::write_folder(&out, &set, &timings)?;
    println!("report: {}", out.join("index.html").display());
    Ok(())
}

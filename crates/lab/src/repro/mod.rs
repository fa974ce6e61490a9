//! `flashkv repro NAME`: reproduce a seed paper's experiments and put our measurement beside the
//! paper's number, at a reduced scale in minutes or at the paper's scale on request.
//!
//! A repro's runs are data: experiment files in crates/lab/experiments/repro/NAME/ (built into
//! the binary), whose values are the paper's scale and whose `[[scale]]` tables give the others;
//! `flashkv run FILE --scale S` runs one alone, to the same runs. A repro's Rust is the rest: which
//! runs `--only` picks, and the report that reads the runs by key (their label in the file) beside
//! the paper's numbers.

/// One of a repro's experiment files, built into the binary: `repro_file!("zns-ll/ycsb.toml")`
/// is crates/lab/experiments/repro/zns-ll/ycsb.toml.
macro_rules! repro_file {
    ($path:literal) => {
        $crate::repro::ReproFile {
            path: concat!("crates/lab/experiments/repro/", $path),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/experiments/repro/", $path)),
        }
    };
}

mod claims;
mod kvftl;
mod plsc;
mod remapcom;
mod remapcom_xfs;
#[cfg(test)]
mod tests;
mod zns_ll;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::batch::{Executor, Runner};
use crate::error::{LabError, Result};
use crate::experiment::{Experiment, LabelledRun};
use crate::publish;
use crate::report::model::{Cell, ResultSet, ResultTable};
use crate::result::{RunResult, Timing};
use crate::run_cache::RunCache;
use crate::spec::host::HostCpu;
use crate::spec::named::parser;
use crate::spec::{RunSpec, Store};

#[derive(clap::Args, Debug, Clone)]
pub struct ReproArgs {
    /// The repro: remapcom (seed 000 on the simulated FEMU SSD), remapcom-xfs (seed 000's fills on
    /// a real reflink XFS on a loop device), zns-ll (seed 003: compaction strategies on a
    /// simulated ZNS SSD), plsc (seed 002: key-value SSDs), kvftl (seed 004: key-value FTLs).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(NAMES))]
    pub name: String,
    /// small (the paper's ratios at 1/16 of its size, minutes), paper (the paper's sizes: hours),
    /// or tiny (for tests).
    #[arg(long, default_value = "small")]
    pub scale: String,
    /// Only these parts, comma-separated (remapcom: fig9-11, table3, fig12, fig13, fig14, fig15,
    /// cache: a page-cache sweep; zns-ll: fillrandom, ycsb, or one YCSB workload on GC and LL:
    /// ycsb-load, ycsb-a ... ycsb-f).
    #[arg(long)]
    pub only: Option<String>,
    /// Where simulated devices keep page contents: auto, memory, compact, file, file:DIR (see
    /// `--store` of bench). Under auto, the simulated repros, whose values are zeros, use
    /// compact.
    #[arg(long, default_value = "auto", value_parser = parser::<Store>)]
    pub store: Store,
    /// NAND latencies instead of the repro's preset's (plsc: SSDSim's defaults), as `--timing` of
    /// bench: femu, ssdsim, seed004, or READ/PROGRAM/ERASE/TRANSFER-PER-BYTE.
    #[arg(long, value_parser = parser::<flashsim::Timing>)]
    pub timing: Option<flashsim::Timing>,
    /// The host CPU cost model of the engine's runs, as `--cpu` of bench: calibrated (the default),
    /// off (flash time alone), or a file `flashkv calibrate` wrote. Key-value SSD runs have no host
    /// engine and keep none.
    #[arg(long, value_parser = parser::<HostCpu>)]
    pub cpu: Option<HostCpu>,
    /// The result folder (default: results/repro-NAME-SCALE). Finished runs are kept in its
    /// `runs/` folder: a repro interrupted and started again resumes where it stopped.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run everything again: delete the result folder's finished runs first.
    #[arg(long, conflicts_with = "report_only")]
    pub fresh: bool,
    /// Run nothing: rebuild the report with this build's report from the result folder's
    /// finished runs, whatever build ran them (a run missing from the folder reads "failed", with
    /// the error it failed with when it ran, if it did).
    #[arg(long)]
    pub report_only: bool,
    /// Where the runs go: local, local=N (N runs at once), ray or ray=ADDRESS (see `--executor` of
    /// run).
    #[arg(long, default_value = "local", value_parser = str::parse::<Executor>)]
    pub executor: Executor,
}

/// A repro's scale: one of its experiment files' `[[scale]]`s, which divide the paper's sizes so
/// that device, data, SST, memtable and level sizes keep the paper's ratios (and the tree its
/// number of levels).
pub struct Scale {
    pub name: String,
    divisor: u64,
}

impl Scale {
    /// The scale named `s` among a repro's `(name, divisor)` choices.
    pub fn parse(s: &str, choices: &[(String, u64)]) -> Result<Scale> {
        match choices.iter().find(|(name, _)| name == s) {
            Some((name, divisor)) => Ok(Scale { name: name.clone(), divisor: *divisor }),
            None => {
                let names: Vec<&str> = choices.iter().map(|c| c.0.as_str()).collect();
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

/// One of a repro's experiment files (see `repro_file!`): the runs of one or more of its parts,
/// which `flashkv run PATH --scale NAME` runs alone.
pub struct ReproFile {
    /// Its path in the repository.
    pub path: &'static str,
    pub text: &'static str,
}

impl ReproFile {
    /// The file's experiment at its scale `scale`.
    pub fn at(&self, scale: &str) -> Result<Experiment> {
        Experiment::parse_at(self.text, Path::new("."), Some(scale))
            .map_err(|e| LabError::Experiment(format!("{}: {e}", self.path)))
    }

    /// The run labelled `key` at `scale`.
    pub fn spec(&self, scale: &str, key: &str) -> Result<RunSpec> {
        self.at(scale)?.runs().into_iter().find(|(k, _)| k == key).map(|(_, s)| s).ok_or_else(|| LabError::MissingRun {
            key: key.to_string(),
            why: format!("not among the runs of {}", self.path),
        })
    }
}

/// Every repro, by name.
pub const NAMES: [&str; 5] = ["remapcom", "remapcom-xfs", "zns-ll", "plsc", "kvftl"];

/// Every repro, in the order of [`NAMES`].
fn registry() -> [&'static dyn Repro; 5] {
    [&remapcom::RemapCom, &remapcom_xfs::RemapComXfs, &zns_ll::ZnsLl, &plsc::PlscRepro, &kvftl::KvftlRepro]
}

/// What a repro runs with: its scale, where devices keep their pages, the parts asked for, a NAND
/// timing when the repro takes one, and the host CPU model of its engine runs (`None`: each
/// run's own, the default model).
pub struct Context {
    pub scale: Scale,
    pub store: Store,
    pub only: Option<Vec<String>>,
    pub timing: Option<flashsim::Timing>,
    pub cpu: Option<HostCpu>,
}

impl Context {
    /// Whether `part` is asked for (every part when `--only` is absent).
    pub fn wants(&self, part: &str) -> bool {
        self.only.as_ref().is_none_or(|o| o.iter().any(|p| p == part))
    }
}

/// One run of a repro: its key (unique in the repro, its progress label), its specification, and
/// the labels its JSON in results.json carries.
pub struct Run {
    pub key: String,
    pub spec: RunSpec,
    pub labels: Vec<(String, String)>,
}

/// A seed paper's reproduction: data (its runs, in experiment files, each run under a key) and a
/// report that reads them by key beside the paper's numbers. The runner runs, caches and resumes
/// them; a run that fails is reported beside the others (a device that runs out of space is a
/// result too).
pub trait Repro: Sync {
    fn name(&self) -> &'static str;
    /// The result set's title.
    fn title(&self) -> &'static str;
    /// Its experiment files: its runs, in the order results.json lists them (a key met again is
    /// the same run). Every file has the same scales.
    fn files(&self) -> &'static [ReproFile];
    /// The parts `--only` may pick; none when the repro runs as one whole, and why.
    fn parts(&self) -> Result<&'static [&'static str], &'static str> {
        Err("runs as one whole")
    }
    /// Whether run `key` of `file` belongs to a part asked for (every run without `--only`).
    fn wanted(&self, _c: &Context, _file: &ReproFile, _key: &str) -> bool {
        true
    }
    /// Whether `--timing` changes the repro's chip (the others run on their paper's timings).
    fn takes_timing(&self) -> bool {
        false
    }
    /// Why the repro cannot run on this machine, if it cannot.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// Its tables, figures and notes from the finished runs.
    fn report(&self, c: &Context, runs: &Runs) -> Result<ResultSet>;
    /// Its claims table (`claims::table_name`), as its report has it; a repro whose report needs
    /// every run gives it without them too, as a claim whose run is missing reads "failed".
    fn claims(&self, c: &Context, runs: &Runs) -> Result<ResultTable> {
        let name = claims::table_name(&c.scale.name);
        let set = self.report(c, runs)?;
        set.tables.into_iter().find(|t| t.name == name).ok_or_else(|| LabError::MissingRun {
            key: name,
            why: format!("no such table in the report of {}", self.name()),
        })
    }
}

/// A repro's scales (name, divisor): its first file's, the default first.
pub fn scales(repro: &dyn Repro) -> Result<Vec<(String, u64)>> {
    let first = repro.files().first().ok_or_else(|| LabError::invalid("name", "a repro without experiment files"))?;
    let e = Experiment::parse(first.text).map_err(|e| LabError::Experiment(format!("{}: {e}", first.path)))?;
    Ok(e.scales().to_vec())
}

/// The runs of `repro` at `c`: its files' runs at the scale, those of the parts asked for, with
/// the command line's store (over the files' own, where they give one) and timing. A run's
/// labels are its file's `labels`, or `"experiment": key`.
pub fn runs(repro: &dyn Repro, c: &Context) -> Result<Vec<Run>> {
    if let Some(why) = repro.unavailable() {
        return Err(LabError::Unavailable(format!("repro {} {why}", repro.name())));
    }
    let mut runs = Vec::new();
    let mut seen = BTreeSet::new();
    for file in repro.files() {
        for LabelledRun { label: key, labels, mut spec } in file.at(&c.scale.name)?.labelled_runs() {
            if !repro.wanted(c, file, &key) || !seen.insert(key.clone()) {
                continue;
            }
            if c.store != Store::Auto && spec.device.store != Store::Auto {
                spec.device.store = c.store.clone();
            }
            if let Some(t) = &c.timing {
                spec.device.timing = Some(t.clone());
            }
            let labels = if labels.is_empty() { vec![("experiment".to_string(), key.clone())] } else { labels };
            runs.push(Run { key, spec, labels });
        }
    }
    Ok(runs)
}

/// A repro's finished runs, by key.
pub struct Runs {
    results: BTreeMap<String, RunResult>,
    failed: BTreeMap<String, String>,
}

impl Runs {
    /// The run `key`, if it finished.
    pub fn get(&self, key: &str) -> Option<&RunResult> {
        self.results.get(key)
    }

    /// The run `key`; its failure (or its absence from the plan) is the error.
    pub fn need(&self, key: &str) -> Result<&RunResult> {
        self.get(key).ok_or_else(|| LabError::MissingRun {
            key: key.to_string(),
            why: self.failed.get(key).cloned().unwrap_or_else(|| "not among the repro's runs".into()),
        })
    }
}

/// Runs `repro` with `runner` and assembles its result set: the report, the runs' JSON in plan
/// order (each with its labels), and a table of the failed runs.
pub fn reproduce(repro: &dyn Repro, c: &Context, runner: &Runner) -> Result<(ResultSet, Vec<Timing>)> {
    let mut planned = runs(repro, c)?;
    if let Some(cpu) = &c.cpu {
        for run in planned.iter_mut().filter(|r| !r.spec.engine.is_kv_ssd()) {
            run.spec.host.cpu = cpu.clone();
        }
    }
    let specs: Vec<(String, RunSpec)> = planned.iter().map(|r| (r.key.clone(), r.spec.clone())).collect();
    let outcomes = runner.run_many(&specs, 0)?;
    let mut runs = Runs { results: BTreeMap::new(), failed: BTreeMap::new() };
    let (mut json, mut timings, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for (run, outcome) in planned.iter().zip(outcomes) {
        match outcome {
            Ok((r, t)) => {
                let mut v = serde_json::to_value(&r).map_err(LabError::json("a run's result"))?;
                if let Some(m) = v.as_object_mut() {
                    for (k, label) in &run.labels {
                        m.insert(k.to_string(), serde_json::json!(label));
                    }
                }
                json.push(v);
                timings.push(t);
                runs.results.insert(run.key.clone(), r);
            }
            Err(e) => {
                // The run's own error: its key is said beside it.
                let why = match e {
                    LabError::Run { label, source } if label == run.key => source.to_string(),
                    LabError::MissingRun { key, why } if key == run.key => why,
                    e => e.to_string(),
                };
                failed.push(vec![Cell::Text(run.key.clone()), Cell::Text(why.clone())]);
                runs.failed.insert(run.key.clone(), why);
            }
        }
    }
    let mut set = ResultSet { title: repro.title().to_string(), ..repro.report(c, &runs)? };
    let finished: Vec<RunResult> = runs.results.values().cloned().collect();
    set.notes.extend(crate::result::host_cpu_notes(&finished));
    set.runs = json;
    report_failures(&mut set, failed);
    Ok((set, timings))
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

/// `flashkv repro NAME`: the repro at the scale asked for, its result folder written.
pub fn run(a: &ReproArgs) -> Result<()> {
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("results/repro-{}-{}", a.name, a.scale)));
    let repro = registry().into_iter().find(|r| r.name() == a.name).ok_or_else(|| {
        LabError::invalid("name", format!("unknown repro '{}'; accepted: {}", a.name, NAMES.join(", ")))
    })?;
    if a.timing.is_some() && !repro.takes_timing() {
        return Err(LabError::invalid(
            "timing",
            format!("{} runs on its paper's device timings; only plsc takes --timing", a.name),
        ));
    }
    let only: Option<Vec<String>> = a.only.as_ref().map(|s| s.split(',').map(|p| p.trim().to_string()).collect());
    if let Some(o) = &only {
        match repro.parts() {
            Err(why) => return Err(LabError::invalid("only", format!("{} {why}", a.name))),
            Ok(parts) => {
                if let Some(bad) = o.iter().find(|p| !parts.contains(&p.as_str())) {
                    return Err(LabError::invalid(
                        "only",
                        format!("unknown part '{bad}'; accepted: {}", parts.join(", ")),
                    ));
                }
            }
        }
    }
    let c = Context {
        scale: Scale::parse(&a.scale, &scales(repro)?)?,
        store: a.store.clone(),
        only,
        timing: a.timing.clone(),
        cpu: a.cpu.clone(),
    };
    // A folder of another result set is refused now, not after the runs.
    crate::report::check_folder(&out, repro.title())?;
    // Long runs: progress lines always go to stderr.
    let cache = if a.report_only { RunCache::finished_runs(&out)? } else { RunCache::open(&out, a.fresh)? };
    let runner = Runner { progress: true, cache: Some(cache), executor: a.executor.clone() };
    let (set, timings) = reproduce(repro, &c, &runner)?;
    publish_folder(&out, &set, &timings)
}

fn publish_folder(out: &std::path::Path, set: &ResultSet, timings: &[Timing]) -> Result<()> {
    print!("{}", publish::summary(set));
    publish::write_folder(out, set, timings)?;
    println!("report: {}", out.join("index.html").display());
    Ok(())
}

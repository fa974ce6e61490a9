//! Experiments as TOML files: an engine, a device, a workload, a list of variants and a sweep over
//! one parameter, or a grid of sweeps (`[[sweep]]`, every combination). `flashkv run FILE` runs
//! every variant at every sweep point and writes a result folder (results.json, results.csv, one
//! chart per figure, index.html).
//!
//! ```toml
//! title = "Write amplification vs value size"
//! metrics = ["write_amplification", "ops_per_sec"]      # what the figures plot (optional): a
//!                                                       # short name, or any number of a run's
//!                                                       # result by its path: "flash.erases"
//! [engine]                                              # name = "lsm" (default) or "plsc", ...
//! write_buffer_size = "4MiB"                            # lsm options (sizes as "4MiB" or numbers)
//! [device]                                              # fs = "sim" | "zone" | "posix:DIR" | "mem"
//! fs = "sim"
//! preset = "femu"
//! capacity = "1GiB"
//! [workload]                                            # any db_bench, YCSB or Mixgraph name
//! name = "fillrandom"
//! records = 100000
//! value_size = 1024
//! [[variant]]
//! name = "aligned"
//! engine = { align_blocks = true }
//! [sweep]
//! parameter = "workload.value_size"
//! values = [256, 1024, 4096]
//! ```
//!
//! The sections are the run specification's own structs (`spec::EngineSpec`, `DeviceSpec`,
//! `WorkloadSpec`, and `HostSpec` for `[host]`): a variant overrides any of their fields, the
//! sweep sets one (`section.field`, or deeper: `workload.ycsb.readproportion`) to each value in
//! turn, or applies each of its cases (named tables of overrides; a grid: each combination, the
//! last sweep innermost), and each point is checked as a whole (`RunSpec::plan`) when the file is
//! read. Unknown fields and wrong types are errors that name the field (and, for names, the
//! accepted values). A YCSB property file (`workload.ycsb_file`) is read relative to the
//! experiment file.
//!
//! A file may give its runs' labels (`label`, `labels`: see `grid`), end each run with a full scan
//! into its content digest (`digest = true`), and run at scales (`[[scale]]` and `scaled`: see
//! `scale`): its values are then the paper's sizes, and a scale divides the fields listed. The
//! repros' runs are such files (experiments/repro/NAME/).

mod fields;
mod grid;
mod scale;
mod tables;

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};

use self::fields::{bad, set_path, typed_section, value_label};
use self::grid::{Sets, Sweep};
use crate::batch::Runner;
use crate::error::{LabError, Result};
use crate::report::model::ResultSet;
use crate::result::{RunResult, Timing};
use crate::runner::Outcome;
use crate::spec::{DeviceSpec, EngineSpec, HostSpec, RunSpec, WorkloadSpec};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExperimentFile {
    title: String,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    metrics: Vec<String>,
    #[serde(default)]
    engine: EngineSection,
    #[serde(default)]
    device: Table,
    workload: Table,
    #[serde(default)]
    host: Table,
    #[serde(default)]
    variant: Vec<Table>,
    /// `[sweep]` (one) or `[[sweep]]` (a grid).
    sweep: Option<Value>,
    /// Each run's label, a template over `{variant}` and the sweeps' names.
    label: Option<String>,
    /// Labels each run's JSON carries, templates as `label`.
    #[serde(default)]
    labels: BTreeMap<String, String>,
    /// Each run ends with a full scan into its result's content digest.
    #[serde(default)]
    digest: bool,
    /// `[[scale]]`: the scales the file runs at (the first the default).
    #[serde(default)]
    scale: Vec<Table>,
    /// The fields (`section.field`) a scale divides.
    #[serde(default)]
    scaled: Vec<String>,
}

/// `engine = "plsc"` (a name alone) or an `[engine]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum EngineSection {
    Name(String),
    Table(Table),
}

impl Default for EngineSection {
    fn default() -> Self {
        EngineSection::Table(Table::new())
    }
}

impl EngineSection {
    fn table(&self) -> Table {
        match self {
            EngineSection::Name(n) => Table::from_iter([("name".to_string(), Value::String(n.clone()))]),
            EngineSection::Table(t) => t.clone(),
        }
    }
}

/// One point of the experiment: a variant at a value of each sweep (none without a sweep), its
/// label and its labels.
struct Point {
    variant: String,
    at: Vec<Value>,
    spec: RunSpec,
    label: String,
    labels: Vec<(String, String)>,
}

/// A run of an experiment: its label (unique in the experiment), the labels its JSON carries
/// (`labels`, in their names' order) and its specification.
#[derive(Clone, Debug, PartialEq)]
pub struct LabelledRun {
    pub label: String,
    pub labels: Vec<(String, String)>,
    pub spec: RunSpec,
}

/// A parsed, checked experiment, at one of its scales.
pub struct Experiment {
    file: ExperimentFile,
    sweeps: Vec<Sweep>,
    points: Vec<Point>,
    /// The scales (name, divisor) and the one the runs are at.
    scales: Vec<(String, u64)>,
    scale: Option<usize>,
}

impl Experiment {
    pub fn load(path: &Path) -> Result<Experiment> {
        Experiment::load_at(path, None)
    }

    /// The experiment file at `path`, at its scale `scale` (its first when `None`).
    pub fn load_at(path: &Path, scale: Option<&str>) -> Result<Experiment> {
        let text = std::fs::read_to_string(path).map_err(LabError::io(path, "read the experiment file"))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Experiment::parse_at(&text, dir, scale).map_err(|e| bad(format!("{}: {e}", path.display())))
    }

    /// An experiment's text, its files (a YCSB property file) relative to the current directory.
    pub fn parse(text: &str) -> Result<Experiment> {
        Experiment::parse_in(text, Path::new("."))
    }

    /// An experiment's text, its files relative to `dir`.
    pub fn parse_in(text: &str, dir: &Path) -> Result<Experiment> {
        Experiment::parse_at(text, dir, None)
    }

    /// An experiment's text at its scale `scale` (its first when `None`), its files relative to
    /// `dir`.
    pub fn parse_at(text: &str, dir: &Path, scale: Option<&str>) -> Result<Experiment> {
        let file: ExperimentFile = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        Experiment::from_file(file, dir, scale)
    }

    /// An experiment given as JSON, an object of the file's sections and fields (for callers that
    /// hold the experiment as data, such as the Python package's dicts), read straight into the
    /// experiment without making its text, at its first scale; its files relative to the current
    /// directory.
    pub fn from_json(json: &str) -> Result<Experiment> {
        Experiment::from_file(file_from_json(json)?.1, Path::new("."), None)
    }

    /// The experiment of a file's sections at `scale` (its first when `None`): every point made
    /// and checked; files relative to `dir`.
    fn from_file(file: ExperimentFile, dir: &Path, scale: Option<&str>) -> Result<Experiment> {
        for m in &file.metrics {
            crate::result::check_metric(m).map_err(|e| LabError::invalid("metrics", e.to_string()))?;
        }
        let scales = scale::scales(&file.scale, &file.scaled)?;
        let at_scale = scale::pick(&scales, scale)?;
        let variants = grid::variants(&file.variant)?;
        let sweeps = grid::sweeps(file.sweep.as_ref(), &file.scaled, at_scale.map_or(1, |s| s.divisor))?;
        let mut points = Vec::new();
        for (name, overrides) in &variants {
            for at in grid::combinations(&sweeps) {
                let values: Vec<Value> = sweeps.iter().zip(&at).map(|(s, &i)| s.values[i].clone()).collect();
                let sweep_values = point_label(&sweeps, &values).map_or(String::new(), |v| format!(" @ {v}"));
                let spec = point_spec(&file, &sweeps, overrides, &at, at_scale, dir)
                    .map_err(|e| bad(format!("variant '{name}'{sweep_values}: {e}")))?;
                let label = match &file.label {
                    Some(t) => grid::render(t, name, &sweeps, &at)?,
                    None => format!("{name}{sweep_values}"),
                };
                let labels = file
                    .labels
                    .iter()
                    .map(|(k, t)| Ok((k.clone(), grid::render(t, name, &sweeps, &at)?)))
                    .collect::<Result<_>>()?;
                points.push(Point { variant: name.clone(), at: values, spec, label, labels });
            }
        }
        if file.label.is_some() {
            let mut seen = std::collections::BTreeSet::new();
            if let Some(p) = points.iter().find(|p| !seen.insert(p.label.as_str())) {
                return Err(bad(format!("label: two runs are labelled '{}'", p.label)));
            }
        }
        let scale = at_scale.and_then(|s| scales.iter().position(|o| o.name == s.name));
        let scales = scales.iter().map(|s| (s.name.clone(), s.divisor)).collect();
        Ok(Experiment { file, sweeps, points, scales, scale })
    }

    /// The experiment-file text of `json`, an object of the same sections and fields (for callers
    /// that hold the experiment as data and need a file, such as the Python package handing its
    /// dict to a plug-in binary; [`Experiment::from_json`] reads it without the text).
    pub fn text_from_json(json: &str) -> Result<String> {
        let (table, _) = file_from_json(json)?;
        toml::to_string(&table).map_err(|e| bad(format!("experiment: {e}")))
    }

    pub fn title(&self) -> &str {
        &self.file.title
    }

    /// The file's scales (name, divisor), the default first; empty without `[[scale]]`.
    pub fn scales(&self) -> &[(String, u64)] {
        &self.scales
    }

    /// The scale the runs are at (name, divisor), if the file has scales.
    pub fn at_scale(&self) -> Option<(&str, u64)> {
        self.scale.map(|i| (self.scales[i].0.as_str(), self.scales[i].1))
    }

    /// Every point as a labelled run (`label`'s template, else `variant`, `variant @ sweep value`,
    /// or in a grid `variant @ field=value, field=value`).
    pub fn runs(&self) -> Vec<(String, RunSpec)> {
        self.points.iter().map(|p| (p.label.clone(), p.spec.clone())).collect()
    }

    /// Every point's label, its `labels` and its run.
    pub fn labelled_runs(&self) -> Vec<LabelledRun> {
        self.points
            .iter()
            .map(|p| LabelledRun { label: p.label.clone(), labels: p.labels.clone(), spec: p.spec.clone() })
            .collect()
    }

    /// A point's sweep values: the value of one sweep, or `field=value` of each in a grid.
    fn point_label(&self, p: &Point) -> Option<String> {
        point_label(&self.sweeps, &p.at)
    }

    /// Runs every point with `runner`; returns the result set and the wall-clock timings.
    pub fn run(&self, runner: &Runner) -> Result<(ResultSet, Vec<Timing>)> {
        self.assemble(runner.run_many(&self.runs(), 0)?)
    }

    /// The result set of the points' `outcomes` (in the order of [`Experiment::runs`], wherever
    /// they ran), and their timings; the first failed run is the error.
    pub fn assemble(&self, outcomes: Vec<Outcome>) -> Result<(ResultSet, Vec<Timing>)> {
        if outcomes.len() != self.points.len() {
            return Err(bad(format!("{} outcomes for the experiment's {} runs", outcomes.len(), self.points.len())));
        }
        let mut results: Vec<RunResult> = Vec::new();
        let mut timings = Vec::new();
        for o in outcomes {
            // The runner's error names the run already.
            let (r, t) = o?;
            timings.push(t);
            results.push(r);
        }
        Ok((self.result_set(&results), timings))
    }
}

/// The sections of `json` (an object), as a table and read into the file's struct.
fn file_from_json(json: &str) -> Result<(Table, ExperimentFile)> {
    let table: Table = serde_json::from_str(json).map_err(LabError::json("experiment"))?;
    // The object's own mistakes (a missing title, an unknown section) are named without a line:
    // it has no text of the user's whose line numbers would point somewhere.
    let file = Value::Table(table.clone())
        .try_into::<ExperimentFile>()
        .map_err(|e| bad(format!("experiment: {}", e.message().trim())))?;
    Ok((table, file))
}

/// Sweep values as a label: the value of one sweep, or `field=value` of each in a grid.
fn point_label(sweeps: &[Sweep], values: &[Value]) -> Option<String> {
    match values {
        [] => None,
        [v] => Some(value_label(v)),
        values => Some(
            sweeps
                .iter()
                .zip(values)
                .map(|(s, v)| format!("{}={}", s.field_name(), value_label(v)))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    }
}

/// Adds `overrides` (sections of fields) to `sections`, each field replaced whole.
fn override_sections(sections: &mut Table, overrides: &Table) -> Result<()> {
    for (section, v) in overrides {
        let Value::Table(t) = v else {
            return Err(bad(format!("'{section}' must be a table of overrides")));
        };
        let Some(Value::Table(base)) = sections.get_mut(section) else {
            return Err(bad(format!("unknown section '{section}'; accepted: engine, device, workload, host")));
        };
        base.extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Ok(())
}

/// The run of one point: the file's sections, the variant's overrides, each sweep's value or
/// case, the scale, read into the run specification's structs and checked as a whole; files
/// relative to `dir`.
fn point_spec(
    file: &ExperimentFile,
    sweeps: &[Sweep],
    overrides: &Table,
    at: &[usize],
    scale: Option<&scale::ScaleDef>,
    dir: &Path,
) -> Result<RunSpec> {
    let mut sections = Table::new();
    sections.insert("engine".into(), Value::Table(file.engine.table()));
    sections.insert("device".into(), Value::Table(file.device.clone()));
    sections.insert("workload".into(), Value::Table(file.workload.clone()));
    sections.insert("host".into(), Value::Table(file.host.clone()));
    override_sections(&mut sections, overrides)?;
    for (s, &i) in sweeps.iter().zip(at) {
        match &s.sets {
            Sets::Field(values) => set_path(&mut sections, &s.parameter, values[i].clone())?,
            Sets::Cases(cases) => override_sections(&mut sections, &cases[i])?,
        }
    }
    if let Some(scale) = scale {
        scale.apply(&mut sections, &file.scaled)?;
    }
    let section = |name: &str| sections.get(name).cloned().unwrap_or(Value::Table(Table::new()));
    let mut spec = RunSpec {
        host: typed_section::<HostSpec>(section("host"), "host")?,
        digest: file.digest,
        ..RunSpec::new(
            typed_section::<EngineSpec>(section("engine"), "engine")?,
            typed_section::<DeviceSpec>(section("device"), "device")?,
            typed_section::<WorkloadSpec>(section("workload"), "workload")?,
        )
    };
    spec.workload.locate_files(dir)?;
    // Everything a run needs is checked now, not when the run comes up.
    spec.plan()?;
    Ok(spec)
}

#[cfg(test)]
mod tests;

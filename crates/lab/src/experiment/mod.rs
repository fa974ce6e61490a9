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
//! turn (a grid: each combination, the last sweep innermost), and each point is checked as a whole
//! (`RunSpec::plan`) when the file is read. Unknown fields and wrong types are errors that name the field (and, for names, the
//! accepted values). A YCSB property file (`workload.ycsb_file`) is read relative to the
//! experiment file.

mod tables;

use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};

use crate::batch::Runner;
use crate::error::{LabError, Result};
use crate::report::model::ResultSet;
use crate::result::{RunResult, Timing};
use crate::runner::Outcome;
use crate::spec::{DeviceSpec, EngineSpec, HostSpec, RunSpec, WorkloadSpec};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Sweep {
    parameter: String,
    values: Vec<Value>,
}

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

/// One point of the experiment: a variant at a value of each sweep (none without a sweep).
struct Point {
    variant: String,
    at: Vec<Value>,
    spec: RunSpec,
}

/// A parsed, checked experiment.
pub struct Experiment {
    file: ExperimentFile,
    sweeps: Vec<Sweep>,
    points: Vec<Point>,
}

fn bad(message: impl Into<String>) -> LabError {
    LabError::Experiment(message.into())
}

impl Experiment {
    pub fn load(path: &Path) -> Result<Experiment> {
        let text = std::fs::read_to_string(path).map_err(LabError::io(path, "read the experiment file"))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Experiment::parse_in(&text, dir).map_err(|e| bad(format!("{}: {e}", path.display())))
    }

    /// An experiment's text, its files (a YCSB property file) relative to the current directory.
    pub fn parse(text: &str) -> Result<Experiment> {
        Experiment::parse_in(text, Path::new("."))
    }

    /// An experiment's text, its files relative to `dir`.
    pub fn parse_in(text: &str, dir: &Path) -> Result<Experiment> {
        let file: ExperimentFile = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
        Experiment::from_file(file, dir)
    }

    /// An experiment given as JSON, an object of the file's sections and fields (for callers that
    /// hold the experiment as data, such as the Python package's dicts), read straight into the
    /// experiment without making its text; its files relative to the current directory.
    pub fn from_json(json: &str) -> Result<Experiment> {
        Experiment::from_file(file_from_json(json)?.1, Path::new("."))
    }

    /// The experiment of a file's sections: every point made and checked; files relative to `dir`.
    fn from_file(file: ExperimentFile, dir: &Path) -> Result<Experiment> {
        for m in &file.metrics {
            crate::result::check_metric(m).map_err(|e| LabError::invalid("metrics", e.to_string()))?;
        }
        let variants = variants(&file)?;
        let sweeps = sweeps(&file)?;
        // Every combination of the sweeps' values, the last sweep innermost.
        let mut grid: Vec<Vec<Value>> = vec![Vec::new()];
        for s in &sweeps {
            grid = grid
                .into_iter()
                .flat_map(|at| s.values.iter().map(move |v| [at.clone(), vec![v.clone()]].concat()))
                .collect();
        }
        let mut points = Vec::new();
        for (name, overrides) in &variants {
            for at in &grid {
                let spec = point_spec(&file, &sweeps, overrides, at, dir)
                    .map_err(|e| bad(format!("variant '{name}': {e}")))?;
                points.push(Point { variant: name.clone(), at: at.clone(), spec });
            }
        }
        Ok(Experiment { file, sweeps, points })
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

    /// Every point as a labelled run (`variant`, `variant @ sweep value`, or in a grid
    /// `variant @ field=value, field=value`).
    pub fn runs(&self) -> Vec<(String, RunSpec)> {
        self.points
            .iter()
            .map(|p| {
                let at = self.point_label(p).map_or(String::new(), |v| format!(" @ {v}"));
                (format!("{}{at}", p.variant), p.spec.clone())
            })
            .collect()
    }

    /// A point's sweep values: the value of one sweep, or `field=value` of each in a grid.
    fn point_label(&self, p: &Point) -> Option<String> {
        match p.at.as_slice() {
            [] => None,
            [v] => Some(value_label(v)),
            values => Some(
                self.sweeps
                    .iter()
                    .zip(values)
                    .map(|(s, v)| format!("{}={}", s.field_name(), value_label(v)))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        }
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

/// The variants, each with its name and its overrides (one default variant when none is given).
fn variants(file: &ExperimentFile) -> Result<Vec<(String, Table)>> {
    if file.variant.is_empty() {
        return Ok(vec![("default".into(), Table::new())]);
    }
    file.variant
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut v = v.clone();
            let name = match v.remove("name") {
                Some(Value::String(s)) => s,
                Some(other) => {
                    return Err(LabError::invalid(
                        format!("variant {}.name", i + 1),
                        format!("must be a string, got {other}"),
                    ))
                }
                None => format!("variant {}", i + 1),
            };
            Ok((name, v))
        })
        .collect()
}

/// The sweeps: none, `[sweep]`, or each `[[sweep]]` of a grid.
fn sweeps(file: &ExperimentFile) -> Result<Vec<Sweep>> {
    let tables = match &file.sweep {
        None => return Ok(Vec::new()),
        Some(t @ Value::Table(_)) => vec![("sweep".to_string(), t.clone())],
        Some(Value::Array(list)) => {
            list.iter().enumerate().map(|(i, t)| (format!("sweep {}", i + 1), t.clone())).collect()
        }
        Some(other) => {
            return Err(LabError::invalid(
                "sweep",
                format!("must be [sweep] or [[sweep]] tables (parameter and values), got {other}"),
            ))
        }
    };
    let mut sweeps: Vec<Sweep> = Vec::new();
    for (name, table) in tables {
        let s: Sweep = typed_section(table, &name)?;
        if s.values.is_empty() {
            return Err(LabError::invalid(format!("{name}.values"), "at least one value is needed"));
        }
        if !s.parameter.contains('.') {
            return Err(LabError::invalid(
                format!("{name}.parameter"),
                format!("'{}' must be section.field, e.g. workload.value_size", s.parameter),
            ));
        }
        if sweeps.iter().any(|o| o.parameter == s.parameter) {
            return Err(LabError::invalid(format!("{name}.parameter"), format!("'{}' is swept twice", s.parameter)));
        }
        sweeps.push(s);
    }
    Ok(sweeps)
}

impl Sweep {
    /// The parameter's last segment (`value_size` of `workload.value_size`).
    fn field_name(&self) -> &str {
        self.parameter.rsplit('.').next().unwrap_or(&self.parameter)
    }
}

/// The run of one point: the file's sections, the variant's overrides, each sweep's value, read
/// into the run specification's structs and checked as a whole; files relative to `dir`.
fn point_spec(file: &ExperimentFile, sweeps: &[Sweep], overrides: &Table, at: &[Value], dir: &Path) -> Result<RunSpec> {
    let mut sections = Table::new();
    sections.insert("engine".into(), Value::Table(file.engine.table()));
    sections.insert("device".into(), Value::Table(file.device.clone()));
    sections.insert("workload".into(), Value::Table(file.workload.clone()));
    sections.insert("host".into(), Value::Table(file.host.clone()));
    for (section, v) in overrides {
        let Value::Table(t) = v else {
            return Err(bad(format!("'{section}' must be a table of overrides")));
        };
        let Some(Value::Table(base)) = sections.get_mut(section) else {
            return Err(bad(format!("unknown section '{section}'; accepted: engine, device, workload, host")));
        };
        base.extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    for (s, v) in sweeps.iter().zip(at) {
        set_path(&mut sections, &s.parameter, v.clone())?;
    }
    let section = |name: &str| sections.get(name).cloned().unwrap_or(Value::Table(Table::new()));
    let mut spec = RunSpec {
        host: typed_section::<HostSpec>(section("host"), "host")?,
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

/// Sets the field at `path` (`section.field`, or deeper through tables) to `value`, making the
/// tables on the way.
fn set_path(sections: &mut Table, path: &str, value: Value) -> Result<()> {
    let mut parts: Vec<&str> = path.split('.').collect();
    let field = parts.pop().unwrap_or(path);
    let mut table: &mut Table = match sections.get_mut(parts[0]) {
        Some(Value::Table(t)) => t,
        _ => {
            return Err(LabError::invalid(
                "sweep.parameter",
                format!("unknown section '{}' in '{path}'; accepted: engine, device, workload, host", parts[0]),
            ))
        }
    };
    for part in &parts[1..] {
        let entry = table.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(next) = entry else {
            return Err(LabError::invalid("sweep.parameter", format!("'{part}' in '{path}' is not a table")));
        };
        table = next;
    }
    table.insert(field.to_string(), value);
    Ok(())
}

/// Deserializes one section, naming the field (`section.field`) that is wrong.
fn typed_section<T: serde::de::DeserializeOwned>(v: Value, section: &str) -> Result<T> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { section.to_string() } else { format!("{section}.{path}") };
        LabError::invalid(field, e.inner().message().to_string())
    })
}

/// A sweep value as text (strings without their quotes).
fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Named, ZoneGc};

    const BASE: &str = r#"
title = "t"
[device]
capacity = "256MiB"
[workload]
name = "fillrandom"
records = 1000
"#;

    fn error(text: &str) -> String {
        Experiment::parse(text).err().expect("an error").to_string()
    }

    /// The experiment files the docs name as the commands behind their figures (some run for an
    /// hour, so CI does not run them): each still loads and every point plans, so a renamed field
    /// breaks this test rather than a reader's rerun.
    #[test]
    fn every_committed_experiment_file_loads() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let mut loaded = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!e.points.is_empty(), "{}: no runs", path.display());
                loaded += 1;
            }
        }
        assert!(loaded >= 13, "only {loaded} experiment files found in {}", dir.display());
    }

    #[test]
    fn variants_and_sweeps_expand_to_points() {
        let text = format!("{BASE}\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nengine = {{ align_blocks = true }}\n[sweep]\nparameter = \"workload.value_size\"\nvalues = [256, 1024]\n");
        let e = Experiment::parse(&text).unwrap();
        assert_eq!(e.points.len(), 4);
        assert!(e.points[2].spec.engine.lsm.align_blocks && !e.points[0].spec.engine.lsm.align_blocks);
        assert_eq!(e.points[1].spec.workload.value_size.name(), "1024");
        assert_eq!(e.runs()[1].0, "a @ 1024");
    }

    #[test]
    fn a_grid_of_sweeps_runs_every_combination() {
        let ycsb = BASE.replace("fillrandom", "a");
        let text = format!(
            "{ycsb}\n[[variant]]\nname = \"v\"\n[[sweep]]\nparameter = \"workload.value_size\"\nvalues = [256, 1024]\n\
             [[sweep]]\nparameter = \"workload.ycsb.readproportion\"\nvalues = [0.5, 0.9, 1.0]\n"
        );
        let e = Experiment::parse(&text).unwrap();
        assert_eq!(e.points.len(), 6, "2 x 3 combinations");
        let labels: Vec<String> = e.runs().into_iter().map(|(l, _)| l).collect();
        assert_eq!(labels[0], "v @ value_size=256, readproportion=0.5");
        assert_eq!(labels[5], "v @ value_size=1024, readproportion=1.0");
        let p = &e.points[4].spec.workload;
        assert_eq!((p.value_size.name().as_str(), p.ycsb.get("readproportion")), ("1024", Some("0.9")));
        // A figure over the last sweep, a line per value of the other.
        let fig = e.figure("ops_per_sec", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert_eq!(fig.categories, ["0.5", "0.9", "1.0"]);
        let names: Vec<&str> = fig.series.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["v, value_size=256", "v, value_size=1024"]);
        assert_eq!(fig.series[1].points, [(0.0, 4.0), (1.0, 5.0), (2.0, 6.0)]);
        let twice = text.replace("workload.ycsb.readproportion", "workload.value_size");
        assert!(error(&twice).contains("swept twice"), "{}", error(&twice));
        let bad = text.replace("0.9", "-0.9");
        assert!(error(&bad).contains("readproportion=-0.9"), "{}", error(&bad));
    }

    #[test]
    fn a_ycsb_property_file_is_read_beside_the_experiment() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine"), "readproportion=0.2\nupdateproportion=0.8\nrecordcount=500\n").unwrap();
        let text = "title = \"t\"\n[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"core\"\n\
                    ycsb_file = \"mine\"\noperations = 10\nycsb = { updateproportion = 0.7 }\n";
        let e = Experiment::parse_in(text, dir.path()).unwrap();
        let w = &e.points[0].spec.workload;
        assert_eq!((w.ycsb.get("readproportion"), w.ycsb.get("updateproportion")), (Some("0.2"), Some("0.7")));
        assert_eq!(
            e.points[0].spec.plan().unwrap().kind.phases().unwrap().records,
            500,
            "recordcount gives the records"
        );
        let json = serde_json::to_value(w).unwrap();
        assert!(json.get("ycsb_file").is_none() && json["ycsb"]["recordcount"] == "500", "{json}");
        let e = Experiment::parse_in(text, Path::new("/nonexistent")).err().unwrap().to_string();
        assert!(e.contains("mine") && e.contains("read the YCSB property file"), "{e}");
        let twice = text.replace("operations = 10", "operations = 10\nrecords = 7");
        let e = Experiment::parse_in(&twice, dir.path()).err().unwrap().to_string();
        assert!(e.contains("workload.records") && e.contains("recordcount=500"), "{e}");
        let fill = text.replace("\"core\"", "\"fillrandom\"");
        let e = Experiment::parse_in(&fill, dir.path()).err().unwrap().to_string();
        assert!(e.contains("workload.ycsb: YCSB properties apply to YCSB workloads"), "{e}");
    }

    #[test]
    fn every_shipped_experiment_file_is_valid() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!e.points.is_empty(), "{}", path.display());
                checked += 1;
            }
        }
        assert!(checked >= 5, "only {checked} experiment files in {}", dir.display());
    }

    #[test]
    fn errors_name_the_field_and_the_accepted_values() {
        let e = error(&BASE.replace("records = 1000", "records = \"many\""));
        assert!(e.contains("workload.records"), "{e}");
        let e = error(&format!("{BASE}\n[engine]\nwrite_bufer_size = 1\n"));
        assert!(e.contains("write_bufer_size"), "{e}");
        let e = error(&BASE.replace("fillrandom", "fillrandomly"));
        assert!(e.contains("workload.name") && e.contains("fillseq"), "{e}");
        let e = error(&format!("{BASE}\n[engine]\ncompaction = \"tiered\"\n"));
        assert!(e.contains("engine.compaction") && e.contains("leveled, gear, ll"), "{e}");
        let e = error(&format!("metrics = [\"speed\"]\n{BASE}"));
        assert!(e.contains("ops_per_sec"), "{e}");
        let e = error(&format!("{BASE}\n[sweep]\nparameter = \"value_size\"\nvalues = [1]\n"));
        assert!(e.contains("section.field"), "{e}");
        let e = error(&format!("{BASE}\n[engine]\nname = \"kvftl-np\"\nmax_waste = \"2KiB\"\n"));
        assert!(e.contains("engine.max_waste: does not apply to engine kvftl-np"), "{e}");
    }

    #[test]
    fn the_host_is_a_section() {
        let e = Experiment::parse(&format!("{BASE}[host]\nsync = true\n")).unwrap();
        assert!(e.points[0].spec.host.sync);
        let kv = "title = \"t\"\nengine = \"plsc\"\n[device]\ncapacity = \"2GiB\"\n\
                  [workload]\nname = \"a\"\nrecords = 10\n[host]\nsync = true\n";
        assert!(error(kv).contains("host.sync: engine plsc is a key-value SSD"), "{}", error(kv));
    }

    /// Page writes (`flashkv ftl`'s workload) are a workload like any other in a file.
    #[test]
    fn page_writes_are_a_workload() {
        let text = "title = \"gc\"\n[device]\ncapacity = \"256MiB\"\nchannels = 1\ngc = \"fifo\"\n\
                    [workload]\nname = \"pages\"\npages = { pattern = \"zipf:0.9\", writes = 2.0 }\n";
        let e = Experiment::parse(text).unwrap();
        let spec = &e.points[0].spec;
        assert_eq!(spec.workload.pages.pattern, crate::spec::Pattern::Zipf(0.9));
        assert_eq!(spec.workload.pages.queue_depth, 64, "the others keep their defaults");
        let bad = text.replace("writes = 2.0", "writes = -1.0");
        assert!(error(&bad).contains("workload.pages.writes"), "{}", error(&bad));
        let engine = format!("{text}[engine]\nremap = \"full\"\n");
        assert!(error(&engine).contains("no engine applies"), "{}", error(&engine));
    }

    /// A block trace is a workload too; its file is found beside the experiment file.
    #[test]
    fn block_traces_are_a_workload() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.csv"), "1,h,0,Write,0,4096,0\n").unwrap();
        let text = "title = \"trace\"\n[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"block-trace\"\n\
                    trace = { file = \"t.csv\", format = \"msr\", replay = \"open\" }\n";
        let e = Experiment::parse_in(text, dir.path()).unwrap();
        let t = e.points[0].spec.workload.trace.clone().unwrap();
        assert_eq!((t.file, t.replay, t.queue_depth), (dir.path().join("t.csv"), crate::spec::Replay::Open, 64));
        let missing = Experiment::parse_in(text, Path::new("/nonexistent")).err().unwrap().to_string();
        assert!(missing.contains("workload.trace.file") && missing.contains("is not a file"), "{missing}");
        let format = text.replace("\"msr\"", "\"pcap\"");
        let e = Experiment::parse_in(&format, dir.path()).err().unwrap().to_string();
        assert!(e.contains("workload.trace.format") && e.contains("msr, blkparse"), "{e}");
        let none = "title = \"t\"\n[workload]\nname = \"block-trace\"\n";
        assert!(error(none).contains("block-trace needs a trace"), "{}", error(none));
        let other = text.replace("block-trace", "fillrandom").replace("[workload]", "[workload]\nrecords = 10");
        let e = Experiment::parse_in(&other, dir.path()).err().unwrap().to_string();
        assert!(e.contains("workload.trace: applies to workload block-trace only"), "{e}");
    }

    #[test]
    fn zoned_devices_are_checked_when_read() {
        let zone = BASE.replace("[device]", "[device]\nfs = \"zone\"\nzone_policy = \"per-level\"\nzone_gc = 2");
        let e = Experiment::parse(&zone).unwrap();
        let d = &e.points[0].spec.device;
        assert_eq!((d.zone_policy.name(), d.zone_gc), ("per-level", ZoneGc::AtFreeZones(2)));
        let off = zone.replace("zone_gc = 2", "zone_gc = \"off\"");
        assert_eq!(Experiment::parse(&off).unwrap().points[0].spec.device.zone_gc, ZoneGc::Off);
        for (bad, field) in [
            ("zone_size = \"1536KiB\"", "device.zone_size: 1.5 MiB is not a multiple of the 1.0 MiB erase block"),
            ("zone_policy = \"tiered\"", "device.zone_policy: unknown policy 'tiered'"),
            ("zone_gc = 0", "device.zone_gc"),
            ("max_open_zones = 5000", "device.max_open_zones: 5000 exceeds the device's"),
        ] {
            let key = bad.split(' ').next().unwrap();
            let text = if zone.contains(&format!("{key} =")) {
                zone.lines().map(|l| if l.starts_with(key) { bad } else { l }).collect::<Vec<_>>().join("\n")
            } else {
                zone.replace("[device]", &format!("[device]\n{bad}"))
            };
            let e = error(&text);
            assert!(e.contains(field) && !e.contains('\n'), "{bad}: {e}");
        }
    }
}

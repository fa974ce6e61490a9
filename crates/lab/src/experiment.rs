//! Experiments as TOML files: an engine, a device, a workload, a list of variants and a sweep over
//! one parameter. `flashkv run FILE` runs every variant at every sweep value and writes a result
//! folder (results.json, results.csv, one SVG per figure, index.html).
//!
//! ```toml
//! title = "Write amplification vs value size"
//! metrics = ["write_amplification", "ops_per_sec"]      # what the figures plot (optional)
//! [engine]                                              # name = "lsm" (default) or "plsc";
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
//! A variant overrides any field of `engine`, `device` and `workload`; the sweep sets one field
//! (`section.field`) to each value in turn. Unknown fields and wrong types are errors that name the
//! field (and, for names, the accepted values).

use std::path::Path;

use serde::Deserialize;
use toml::{Table, Value};
use workload::ValueSize;

use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::result::{RunResult, TimeBase, Timing};
use crate::runner::{Outcome, RunSpec, Runner};
use crate::size::parse_size;
use crate::stack::{DeviceArgs, ZoneArgs};

/// A size given as a number of bytes or as a string with a unit.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

impl Size {
    fn bytes(&self, field: &str) -> Result<u64, String> {
        match self {
            Size::Bytes(b) => Ok(*b),
            Size::Text(t) => parse_size(field, t),
        }
    }

    fn text(&self) -> String {
        match self {
            Size::Bytes(b) => b.to_string(),
            Size::Text(t) => t.clone(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineConfig {
    /// The engine: "lsm" (the default: the LSM engine on the device's file system) or a key-value
    /// SSD design ("plsc", "kvftl-ws", ... as `--engine`), whose device is `[device]`'s preset and
    /// capacity.
    name: Option<String>,
    write_buffer_size: Option<Size>,
    max_file_size: Option<Size>,
    block_size: Option<Size>,
    block_cache: Option<Size>,
    /// Bytes a compaction reads ahead in each input table (0: block by block).
    compaction_readahead: Option<Size>,
    /// LevelDB's seek-triggered compaction (true by default).
    seek_compaction: Option<bool>,
    max_bytes_for_level_base: Option<Size>,
    bloom_bits_per_key: Option<u32>,
    l0_compaction_trigger: Option<usize>,
    l0_slowdown_writes_trigger: Option<usize>,
    l0_stop_writes_trigger: Option<usize>,
    #[serde(default)]
    align_blocks: bool,
    /// RemapCom mode: "off", "base" or "full" (base and full align blocks too).
    remap: Option<String>,
    /// Compaction strategy: "leveled", "gear" or "ll".
    compaction: Option<String>,
    #[serde(default)]
    sync: bool,
    /// The key-value FTLs' parameters (see `--min-partition` and the others on the command line).
    min_partition: Option<Size>,
    max_partitions: Option<u8>,
    max_waste: Option<Size>,
    /// RAM for the mapping tables: a size or "unlimited".
    mapping_ram: Option<Size>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DeviceConfig {
    #[serde(default = "default_fs")]
    fs: String,
    #[serde(default = "default_preset")]
    preset: String,
    capacity: Option<Size>,
    /// NAND latencies instead of the preset's: "ssdsim", "seed004", "femu" or "20us/200us/1.5ms/25ns".
    timing: Option<String>,
    /// Flash page size instead of the preset's.
    page_size: Option<Size>,
    #[serde(default = "default_spare")]
    spare_factor: f64,
    /// Where page contents live: "auto", "memory", "file" or "file:DIR" (see `stack`).
    #[serde(default = "default_store")]
    store: String,
    /// `fs = "zone"`: zone size, erase block size, placement ("shared", "per-level",
    /// "lifetime"), host GC ("off" or free zones at which it runs), device zone limits.
    zone_size: Option<Size>,
    block_size: Option<Size>,
    #[serde(default = "default_zone_policy")]
    zone_policy: String,
    #[serde(default = "default_zone_gc")]
    zone_gc: ZoneGc,
    max_open_zones: Option<u32>,
    max_active_zones: Option<u32>,
}

/// `zone_gc = "off"` or a number of free zones.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
enum ZoneGc {
    FreeZones(u32),
    Text(String),
}

impl ZoneGc {
    fn text(&self) -> String {
        match self {
            ZoneGc::FreeZones(n) => n.to_string(),
            ZoneGc::Text(t) => t.clone(),
        }
    }
}

fn default_zone_policy() -> String {
    "shared".into()
}
fn default_zone_gc() -> ZoneGc {
    ZoneGc::FreeZones(1)
}

fn default_fs() -> String {
    "sim".into()
}
fn default_preset() -> String {
    "femu".into()
}
fn default_spare() -> f64 {
    0.07
}
fn default_store() -> String {
    "auto".into()
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkloadConfig {
    name: String,
    /// Records (key space), or `data`: user bytes to write, records = data / (16 + value size).
    records: Option<u64>,
    data: Option<Size>,
    #[serde(default)]
    operations: u64,
    #[serde(default = "default_value_size")]
    value_size: Size,
    /// Key size in bytes; each workload's own when absent.
    key_size: Option<usize>,
    #[serde(default = "default_seed")]
    seed: u64,
    /// The values' bytes: "generated" (the workload's own) or "zeros" (see `runner::ValueData`).
    #[serde(default = "default_values")]
    values: String,
}

impl WorkloadConfig {
    /// The record count, from `records` or from `data` (keys of `key_size`, 16 bytes when absent, plus the mean
    /// value size; `page_size` for page-relative value sizes).
    fn record_count(&self, page_size: u32) -> Result<u64, String> {
        match (&self.records, &self.data) {
            (Some(r), None) if *r > 0 => Ok(*r),
            (None, Some(d)) => {
                let bytes = d.bytes("workload.data")?;
                let vs: ValueSize =
                    crate::input::value_size("workload.value_size", &self.value_size.text(), page_size)?;
                let key = self.key_size.unwrap_or(16) as u64;
                Ok((bytes / (key + vs.mean() as u64).max(1)).max(1))
            }
            (Some(_), None) => Err("workload.records: must be at least 1".into()),
            (Some(_), Some(_)) => Err("workload: give records or data, not both".into()),
            (None, None) => Err("workload: records or data is required".into()),
        }
    }
}

fn default_value_size() -> Size {
    Size::Bytes(1024)
}
fn default_seed() -> u64 {
    42
}
fn default_values() -> String {
    "generated".into()
}

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
    variant: Vec<Table>,
    sweep: Option<Sweep>,
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

/// The metrics a figure can plot.
const METRICS: [&str; 6] = [
    "write_amplification",
    "host_write_amplification",
    "ops_per_sec",
    "p99_latency_us",
    "remapped_pages",
    "sim_time_s",
];

/// One point of the experiment: a variant at a sweep value.
struct Point {
    variant: String,
    sweep_value: Option<Value>,
    engine: EngineConfig,
    device: DeviceConfig,
    workload: WorkloadConfig,
}

/// A parsed, checked experiment.
pub struct Experiment {
    file: ExperimentFile,
    points: Vec<Point>,
}

impl Experiment {
    pub fn load(path: &Path) -> Result<Experiment, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Experiment::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Experiment, String> {
        let file: ExperimentFile = toml::from_str(text).map_err(|e| e.to_string())?;
        for m in &file.metrics {
            if !METRICS.contains(&m.as_str()) {
                return Err(format!("metrics: unknown metric '{m}'; accepted: {}", METRICS.join(", ")));
            }
        }
        let variants: Vec<(String, Table)> = if file.variant.is_empty() {
            vec![("default".into(), Table::new())]
        } else {
            file.variant
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let mut v = v.clone();
                    let name = match v.remove("name") {
                        Some(Value::String(s)) => s,
                        Some(other) => return Err(format!("variant {}: name must be a string, got {other}", i + 1)),
                        None => format!("variant {}", i + 1),
                    };
                    Ok((name, v))
                })
                .collect::<Result<_, String>>()?
        };
        let sweep_values: Vec<Option<Value>> = match &file.sweep {
            Some(s) => {
                if s.values.is_empty() {
                    return Err("sweep.values: at least one value is needed".into());
                }
                s.values.iter().cloned().map(Some).collect()
            }
            None => vec![None],
        };
        let mut points = Vec::new();
        for (name, overrides) in &variants {
            for value in &sweep_values {
                let mut sections = Table::new();
                sections.insert("engine".into(), Value::Table(file.engine.table()));
                sections.insert("device".into(), Value::Table(file.device.clone()));
                sections.insert("workload".into(), Value::Table(file.workload.clone()));
                for (section, v) in overrides {
                    let Value::Table(t) = v else {
                        return Err(format!("variant '{name}': '{section}' must be a table of overrides"));
                    };
                    let Some(Value::Table(base)) = sections.get_mut(section) else {
                        return Err(format!(
                            "variant '{name}': unknown section '{section}'; accepted: engine, device, workload"
                        ));
                    };
                    for (k, v) in t {
                        base.insert(k.clone(), v.clone());
                    }
                }
                if let (Some(s), Some(v)) = (&file.sweep, value) {
                    let (section, field) = s.parameter.split_once('.').ok_or_else(|| {
                        format!("sweep.parameter: '{}' must be section.field, e.g. workload.value_size", s.parameter)
                    })?;
                    let Some(Value::Table(base)) = sections.get_mut(section) else {
                        return Err(format!(
                            "sweep.parameter: unknown section '{section}'; accepted: engine, device, workload"
                        ));
                    };
                    base.insert(field.to_string(), v.clone());
                }
                let typed =
                    |section: &str| -> Value { sections.get(section).cloned().unwrap_or(Value::Table(Table::new())) };
                let engine: EngineConfig = typed_section(&typed("engine"), "engine", name)?;
                let device: DeviceConfig = typed_section(&typed("device"), "device", name)?;
                let workload: WorkloadConfig = typed_section(&typed("workload"), "workload", name)?;
                let point = Point { variant: name.clone(), sweep_value: value.clone(), engine, device, workload };
                // Everything a run needs is checked now, not when the run comes up.
                run_spec(&point).map_err(|e| format!("variant '{name}': {e}"))?;
                points.push(point);
            }
        }
        Ok(Experiment { file, points })
    }

    /// The experiment-file text of `json`, an object of the same sections and fields (for callers
    /// that hold the experiment as data, such as the Python package's dicts).
    pub fn text_from_json(json: &str) -> Result<String, String> {
        let table: Table = serde_json::from_str(json).map_err(|e| format!("experiment: {e}"))?;
        toml::to_string(&table).map_err(|e| format!("experiment: {e}"))
    }

    pub fn title(&self) -> &str {
        &self.file.title
    }

    /// Every point as a labelled run (`variant`, or `variant @ sweep value`).
    pub fn runs(&self) -> Result<Vec<(String, RunSpec)>, String> {
        self.points
            .iter()
            .map(|p| {
                let label = format!(
                    "{}{}",
                    p.variant,
                    sweep_label(&p.sweep_value).map_or(String::new(), |v| format!(" @ {v}"))
                );
                run_spec(p).map(|spec| (label, spec)).map_err(|e| format!("variant '{}': {e}", p.variant))
            })
            .collect()
    }

    /// Runs every point with `runner`; returns the result set and the wall-clock timings.
    pub fn run(&self, runner: &Runner) -> Result<(ResultSet, Vec<Timing>), String> {
        let runs = self.runs()?;
        self.assemble(runner.run_many(&runs, 0)?)
    }

    /// The result set of the points' `outcomes` (in the order of [`Experiment::runs`], wherever
    /// they ran), and their timings; the first failed run is the error.
    pub fn assemble(&self, outcomes: Vec<Outcome>) -> Result<(ResultSet, Vec<Timing>), String> {
        if outcomes.len() != self.points.len() {
            return Err(format!("{} outcomes for the experiment's {} runs", outcomes.len(), self.points.len()));
        }
        let mut results = Vec::new();
        let mut timings = Vec::new();
        for o in outcomes {
            // The runner's error names the run already.
            let (r, t) = o?;
            timings.push(t);
            results.push(r);
        }
        Ok((self.result_set(&results), timings))
    }

    fn scale(&self) -> String {
        let p = &self.points[0];
        let dev = if p.device.fs == "sim" || p.device.fs == "zone" {
            format!("{} {}", p.device.preset, p.device.capacity.as_ref().map_or("default size".into(), |c| c.text()))
        } else {
            p.device.fs.clone()
        };
        let size = match &p.workload.data {
            Some(d) => format!("{} of data", d.text()),
            None => format!("{} records", p.workload.records.unwrap_or(0)),
        };
        let ops =
            if p.workload.operations > 0 { format!(", {} operations", p.workload.operations) } else { String::new() };
        format!("{size}{ops}, device {dev}")
    }

    fn result_set(&self, results: &[RunResult]) -> ResultSet {
        let sweep_name = self.file.sweep.as_ref().map(|s| s.parameter.clone());
        let mut columns = vec!["variant".to_string()];
        if let Some(s) = &sweep_name {
            columns.push(s.clone());
        }
        columns.extend(
            ["workload", "user MB", "host WA", "flash WA", "ops/s", "p99 us", "remapped pages", "sim time s"]
                .map(String::from),
        );
        let mut rows = Vec::new();
        for (p, r) in self.points.iter().zip(results) {
            let mut row: Vec<Cell> = vec![p.variant.clone().into()];
            if sweep_name.is_some() {
                row.push(sweep_label(&p.sweep_value).unwrap_or_default().into());
            }
            row.push(r.workload.clone().into());
            row.push((r.user_bytes as f64 / (1 << 20) as f64).into());
            row.push(r.host_write_amplification.into());
            row.push(r.write_amplification.map_or(Cell::Text("-".into()), Cell::Number));
            row.push(r.ops_per_sec.into());
            row.push(r.latency.p99_us.into());
            row.push(r.remapped_pages.map_or(Cell::Text("-".into()), |v| Cell::Number(v as f64)));
            row.push(r.sim_time_s.map_or(Cell::Text("-".into()), Cell::Number));
            rows.push(row);
        }
        let mut level_rows = Vec::new();
        for (p, r) in self.points.iter().zip(results) {
            for l in r.levels.iter().filter(|l| l.bytes_written > 0 || l.files > 0) {
                level_rows.push(vec![
                    Cell::Text(p.variant.clone()),
                    Cell::Text(sweep_label(&p.sweep_value).unwrap_or_default()),
                    Cell::Text(format!("L{}", l.level)),
                    Cell::Number(l.files as f64),
                    Cell::Number(l.bytes_read as f64 / (1 << 20) as f64),
                    Cell::Number(l.bytes_written as f64 / (1 << 20) as f64),
                    Cell::Number(l.bytes_remapped as f64 / (1 << 20) as f64),
                    l.host_write_bytes.map_or(Cell::Text("-".into()), |b| Cell::Number(b as f64 / (1 << 20) as f64)),
                ]);
            }
        }
        // Flash time per run by cause group (the per-level and per-label detail is in results.json).
        let mut cause_rows = Vec::new();
        for (p, r) in self.points.iter().zip(results) {
            let (Some(causes), Some(busy)) = (&r.flash_by_cause, r.flash_busy_s) else { continue };
            let mut row =
                vec![Cell::Text(p.variant.clone()), Cell::Text(sweep_label(&p.sweep_value).unwrap_or_default())];
            row.push(Cell::Number(busy));
            for (_, names) in CAUSE_GROUPS {
                let share: f64 =
                    causes.iter().filter(|c| in_group(&c.cause, names)).fold(0.0, |sum, c| sum + c.busy_share);
                row.push(Cell::Number((share * 1000.0).round() / 10.0));
            }
            cause_rows.push(row);
        }
        let metrics: Vec<String> = if self.file.metrics.is_empty() {
            vec!["write_amplification".into(), "ops_per_sec".into()]
        } else {
            self.file.metrics.clone()
        };
        let figures = metrics.iter().map(|m| self.figure(m, results)).collect();
        let mut notes = self.file.notes.clone();
        if results.iter().any(|r| r.time_base == TimeBase::Simulated) {
            notes.push(crate::result::SIMULATED_TIME_NOTE.into());
        }
        let mut tables = vec![
            ResultTable { name: "runs".into(), columns, rows },
            ResultTable {
                name: "levels".into(),
                columns: ["variant", "sweep", "level", "files", "read MB", "written MB", "remapped MB", "host MB"]
                    .map(String::from)
                    .to_vec(),
                rows: level_rows,
            },
        ];
        if !cause_rows.is_empty() {
            tables.push(ResultTable {
                name: "flash time by cause".into(),
                columns: ["variant", "sweep", "flash s"]
                    .into_iter()
                    .chain(CAUSE_GROUPS.iter().map(|g| g.0))
                    .map(String::from)
                    .collect(),
                rows: cause_rows,
            });
        }
        ResultSet {
            title: self.file.title.clone(),
            scale: self.scale(),
            notes,
            tables,
            figures,
            runs: self.points.iter().zip(results).filter_map(|(p, r)| self.labelled(p, r)).collect(),
        }
    }

    /// A run's JSON with its point: `variant`, and the sweep's parameter (e.g.
    /// `workload.value_size`) with its value, so that each run of results.json says what it was.
    fn labelled(&self, p: &Point, r: &RunResult) -> Option<serde_json::Value> {
        let mut v = serde_json::to_value(r).ok()?;
        let m = v.as_object_mut()?;
        m.insert("variant".into(), p.variant.clone().into());
        if let (Some(s), Some(value)) = (&self.file.sweep, sweep_label(&p.sweep_value)) {
            m.insert(s.parameter.clone(), value.into());
        }
        Some(v)
    }

    fn figure(&self, metric: &str, results: &[RunResult]) -> Figure {
        let value = |r: &RunResult| -> f64 {
            match metric {
                "write_amplification" => r.write_amplification.unwrap_or(r.host_write_amplification),
                "host_write_amplification" => r.host_write_amplification,
                "ops_per_sec" => r.ops_per_sec,
                "p99_latency_us" => r.latency.p99_us,
                "remapped_pages" => r.remapped_pages.unwrap_or(0) as f64,
                _ => r.sim_time_s.unwrap_or(0.0),
            }
        };
        let y_label = match metric {
            "write_amplification" => "write amplification (flash bytes / user bytes)",
            "host_write_amplification" => "host write amplification (host bytes / user bytes)",
            "ops_per_sec" => "throughput (operations / s)",
            "p99_latency_us" => "p99 latency (us)",
            "remapped_pages" => "remapped pages",
            _ => "simulated time (s)",
        };
        let mut variants: Vec<&str> = Vec::new();
        for p in &self.points {
            if !variants.contains(&p.variant.as_str()) {
                variants.push(&p.variant);
            }
        }
        match &self.file.sweep {
            Some(s) => {
                let categories: Vec<String> =
                    s.values.iter().map(|v| sweep_label(&Some(v.clone())).unwrap_or_default()).collect();
                let series = variants
                    .iter()
                    .map(|v| Series {
                        name: v.to_string(),
                        points: self
                            .points
                            .iter()
                            .zip(results)
                            .filter(|(p, _)| p.variant == *v)
                            .enumerate()
                            .map(|(i, (_, r))| (i as f64, value(r)))
                            .collect(),
                        dashed: false,
                    })
                    .collect();
                Figure {
                    id: format!("{metric}_vs_{}", s.parameter.replace('.', "_")),
                    title: format!("{} vs {}", metric.replace('_', " "), s.parameter),
                    kind: FigureKind::Line,
                    x_label: s.parameter.clone(),
                    y_label: y_label.into(),
                    categories,
                    series,
                }
            }
            None => Figure {
                id: metric.to_string(),
                title: metric.replace('_', " "),
                kind: FigureKind::Bar,
                x_label: "variant".into(),
                y_label: y_label.into(),
                categories: variants.iter().map(|v| v.to_string()).collect(),
                series: vec![Series {
                    name: metric.replace('_', " "),
                    points: results.iter().enumerate().map(|(i, r)| (i as f64, value(r))).collect(),
                    dashed: false,
                }],
            },
        }
    }
}

/// Deserializes one section, naming the field (`section.field`) that has the wrong type.
fn typed_section<T: serde::de::DeserializeOwned>(v: &Value, section: &str, variant: &str) -> Result<T, String> {
    serde_path_to_error::deserialize(v.clone()).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { section.to_string() } else { format!("{section}.{path}") };
        format!("variant '{variant}': {field}: {}", e.inner().message())
    })
}

fn sweep_label(v: &Option<Value>) -> Option<String> {
    v.as_ref().map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

/// Columns of the flash-time table: a cause group and the cause names it sums (names of
/// `flashsim::Cause`; one ending in '.' stands for every name it begins).
const CAUSE_GROUPS: [(&str, &[&str]); 7] = [
    ("wal %", &["host.wal"]),
    ("flush %", &["host.flush"]),
    ("compaction %", &["host.compaction.", "host.move", "host.t-zone"]),
    ("other host %", &["host", "host.manifest", "host.fs-metadata"]),
    ("gc %", &["gc", "host.zone-gc"]),
    ("mapping %", &["mapping"]),
    ("device %", &["device."]),
];

fn in_group(cause: &str, names: &[&str]) -> bool {
    names.iter().any(|n| if n.ends_with('.') { cause.starts_with(n) } else { cause == *n })
}

/// The run a point describes.
fn run_spec(p: &Point) -> Result<RunSpec, String> {
    let w = &p.workload;
    let device = DeviceArgs {
        fs: p.device.fs.clone(),
        preset: p.device.preset.clone(),
        capacity: p.device.capacity.as_ref().map(|c| c.text()),
        timing: p.device.timing.clone(),
        page_size: p.device.page_size.as_ref().map(|s| s.text()),
        spare_factor: p.device.spare_factor,
        store: p.device.store.clone(),
        zone: ZoneArgs {
            zone_size: p.device.zone_size.as_ref().map(|s| s.text()),
            block_size: p.device.block_size.as_ref().map(|s| s.text()),
            zone_policy: p.device.zone_policy.clone(),
            zone_gc: p.device.zone_gc.text(),
            max_open_zones: p.device.max_open_zones,
            max_active_zones: p.device.max_active_zones,
        },
    };
    let page_size = device.page_size().map_err(|e| format!("device: {e}"))?;
    let spec = RunSpec {
        device,
        engine: engine_options(&p.engine)?,
        sync: p.engine.sync,
        workload: w.name.parse().map_err(|e| format!("workload.name: {e}"))?,
        records: w.record_count(page_size)?,
        operations: w.operations,
        value_size: crate::input::value_size("workload.value_size", &w.value_size.text(), page_size)?,
        key_size: w.key_size,
        seed: w.seed,
        digest: false,
        values: w.values.parse().map_err(|e| format!("workload.values: {e}"))?,
        kv: crate::kv_device::KvDesign::parse(p.engine.name.as_deref().unwrap_or("lsm"), &kv_options(&p.engine))
            .map_err(|e| engine_field(&e))?,
    };
    spec.device.validate()?;
    Ok(spec)
}

/// The key-value FTL parameters of `[engine]`, as the command line gives them.
fn kv_options(e: &EngineConfig) -> crate::kv_device::KvOptions {
    crate::kv_device::KvOptions {
        min_partition: e.min_partition.as_ref().map(Size::text),
        max_partitions: e.max_partitions,
        max_waste: e.max_waste.as_ref().map(Size::text),
        mapping_ram: e.mapping_ram.as_ref().map(Size::text),
    }
}

/// A command-line error about an engine flag, named as the experiment file's field.
fn engine_field(e: &str) -> String {
    [
        ("--engine", "engine.name"),
        ("--min-partition", "engine.min_partition"),
        ("--max-partitions", "engine.max_partitions"),
        ("--max-waste", "engine.max_waste"),
        ("--mapping-ram", "engine.mapping_ram"),
    ]
    .iter()
    .fold(e.to_string(), |e, (flag, field)| e.replace(flag, field))
}

fn engine_options(e: &EngineConfig) -> Result<lsm::Options, String> {
    let mut o = lsm::Options { create_if_missing: true, ..lsm::Options::default() };
    let size = |s: &Option<Size>, field: &str| -> Result<Option<u64>, String> {
        s.as_ref().map(|s| s.bytes(field)).transpose()
    };
    if let Some(v) = size(&e.write_buffer_size, "engine.write_buffer_size")? {
        o.write_buffer_size = v as usize;
    }
    if let Some(v) = size(&e.max_file_size, "engine.max_file_size")? {
        o.max_file_size = v;
    }
    if let Some(v) = size(&e.block_size, "engine.block_size")? {
        o.block_size = v as usize;
    }
    if let Some(v) = size(&e.block_cache, "engine.block_cache")? {
        o.block_cache_bytes = v as usize;
    }
    if let Some(v) = size(&e.compaction_readahead, "engine.compaction_readahead")? {
        o.compaction_readahead = v as usize;
    }
    if let Some(v) = e.seek_compaction {
        o.seek_compaction = v;
    }
    if let Some(v) = size(&e.max_bytes_for_level_base, "engine.max_bytes_for_level_base")? {
        o.max_bytes_for_level_base = v;
    }
    if let Some(v) = e.bloom_bits_per_key {
        o.bloom_bits_per_key = (v > 0).then_some(v);
    }
    if let Some(v) = e.l0_compaction_trigger {
        o.l0_compaction_trigger = v;
    }
    if let Some(v) = e.l0_slowdown_writes_trigger {
        o.l0_slowdown_writes_trigger = v;
    }
    if let Some(v) = e.l0_stop_writes_trigger {
        o.l0_stop_writes_trigger = v;
    }
    if let Some(m) = &e.remap {
        o.remap = m.parse().map_err(|err| format!("engine.remap: {err}"))?;
    }
    o.align_blocks = e.align_blocks || o.remap != lsm::RemapMode::Off;
    if let Some(c) = &e.compaction {
        o.compaction = c.parse().map_err(|err| format!("engine.compaction: {err}"))?;
    }
    o.validate().map_err(|e| format!("engine: {e}"))?;
    Ok(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
title = "t"
[device]
capacity = "256MiB"
[workload]
name = "fillrandom"
records = 1000
"#;

    #[test]
    fn variants_and_sweeps_expand_to_points() {
        let text = format!("{BASE}\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nengine = {{ align_blocks = true }}\n[sweep]\nparameter = \"workload.value_size\"\nvalues = [256, 1024]\n");
        let e = Experiment::parse(&text).unwrap();
        assert_eq!(e.points.len(), 4);
        assert!(e.points[2].engine.align_blocks && !e.points[0].engine.align_blocks);
        assert_eq!(e.points[1].workload.value_size.text(), "1024");
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
        let bad_type = BASE.replace("records = 1000", "records = \"many\"");
        let e = Experiment::parse(&bad_type).err().unwrap();
        assert!(e.contains("workload") && e.contains("records"), "{e}");
        let unknown = format!("{BASE}\n[engine]\nwrite_bufer_size = 1\n");
        let e = Experiment::parse(&unknown).err().unwrap();
        assert!(e.contains("write_bufer_size"), "{e}");
        let name = BASE.replace("fillrandom", "fillrandomly");
        let e = Experiment::parse(&name).err().unwrap();
        assert!(e.contains("workload.name") && e.contains("fillseq"), "{e}");
        let strategy = format!("{BASE}\n[engine]\ncompaction = \"tiered\"\n");
        let e = Experiment::parse(&strategy).err().unwrap();
        assert!(e.contains("engine.compaction") && e.contains("leveled, gear, ll"), "{e}");
        let metric = format!("metrics = [\"speed\"]\n{BASE}");
        let e = Experiment::parse(&metric).err().unwrap();
        assert!(e.contains("ops_per_sec"), "{e}");
        let sweep = format!("{BASE}\n[sweep]\nparameter = \"value_size\"\nvalues = [1]\n");
        assert!(Experiment::parse(&sweep).err().unwrap().contains("section.field"));
    }

    #[test]
    fn zoned_devices_are_checked_when_read() {
        let zone = BASE.replace("[device]", "[device]\nfs = \"zone\"\nzone_policy = \"per-level\"\nzone_gc = 2");
        let e = Experiment::parse(&zone).unwrap();
        let spec = run_spec(&e.points[0]).unwrap();
        assert_eq!((spec.device.zone.zone_policy.as_str(), spec.device.zone.zone_gc.as_str()), ("per-level", "2"));
        let off = zone.replace("zone_gc = 2", "zone_gc = \"off\"");
        assert!(Experiment::parse(&off).unwrap().points[0].device.zone_gc.text() == "off");
        for (bad, field) in [
            ("zone_size = \"1536KiB\"", "zone_size: 1.5 MiB is not a multiple of the 1.0 MiB erase block"),
            ("zone_policy = \"tiered\"", "--zone-policy: unknown policy 'tiered'"),
            ("zone_gc = 0", "--zone-gc"),
            ("max_open_zones = 5000", "max_open_zones: 5000 exceeds the device's"),
        ] {
            let key = bad.split(' ').next().unwrap();
            let text = if zone.contains(&format!("{key} =")) {
                zone.lines().map(|l| if l.starts_with(key) { bad } else { l }).collect::<Vec<_>>().join("\n")
            } else {
                zone.replace("[device]", &format!("[device]\n{bad}"))
            };
            let e = Experiment::parse(&text).err().unwrap();
            assert!(e.contains(field) && !e.contains('\n'), "{bad}: {e}");
        }
    }
}

//! An experiment's result set: a row per run (its variant, sweep values and headline metrics), the
//! levels, the flash time by cause, and a figure per metric (over the last sweep, a line per
//! variant and value of the other sweeps; or a bar per variant).

use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::result::{RunResult, TimeBase};
use crate::spec::{format_size, FsKind, Named, WorkloadKind};

use super::{value_label, Experiment, Point};

/// A sweep value as a table cell: numbers stay numbers.
fn value_cell(v: &toml::Value) -> Cell {
    match v {
        toml::Value::Integer(i) => Cell::Number(*i as f64),
        toml::Value::Float(f) => Cell::Number(*f),
        v => Cell::Text(value_label(v)),
    }
}

/// A sweep value as JSON: numbers stay numbers.
fn sweep_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => (*f).into(),
        toml::Value::Boolean(b) => (*b).into(),
        other => value_label(other).into(),
    }
}

impl Experiment {
    fn scale(&self) -> String {
        let s = &self.points[0].spec;
        let dev = match &s.device.fs {
            FsKind::Sim | FsKind::Zone => format!(
                "{} {}",
                s.device.preset.name(),
                s.device.capacity.map_or("default size".into(), |c| format_size(c.0))
            ),
            other => other.name(),
        };
        let w = &s.workload;
        let file_name =
            |f: &std::path::Path| f.file_name().map_or(f.display().to_string(), |n| n.to_string_lossy().into());
        // Page writes and block traces have no records: their size is the device's and the trace's.
        let size = match (&w.name, w.data) {
            (WorkloadKind::PageWrites, _) => {
                format!("a fill, then {} capacity-writes of {} page writes", w.pages.writes, w.pages.pattern.name())
            }
            (WorkloadKind::BlockTrace, _) => {
                format!("block trace {}", w.trace.as_ref().map_or("-".into(), |t| file_name(&t.file)))
            }
            (WorkloadKind::KvTrace, _) => {
                format!("key-value trace {}", w.kv_trace.as_deref().map_or("-".into(), file_name))
            }
            (_, Some(d)) => format!("{} of data", format_size(d.0)),
            // The records a YCSB property file gives (recordcount) are the plan's.
            (_, None) => format!("{} records", s.plan().map_or(w.records.unwrap_or(0), |p| p.records)),
        };
        let operations = s.plan().map_or(w.operations, |p| p.operations);
        let ops = if operations > 0 && !w.name.is_device_only() {
            format!(", {operations} operations")
        } else {
            String::new()
        };
        format!("{size}{ops}, device {dev}")
    }

    pub(super) fn result_set(&self, results: &[RunResult]) -> ResultSet {
        let mut columns = vec!["variant".to_string()];
        columns.extend(self.sweeps.iter().map(|s| s.parameter.clone()));
        columns.extend(
            ["workload", "user MiB", "host WA", "flash WA", "ops/s", "p99 us", "remapped pages", "sim time s"]
                .map(String::from),
        );
        let mut rows = Vec::new();
        for (p, r) in self.points.iter().zip(results) {
            let mut row: Vec<Cell> = vec![p.variant.clone().into()];
            row.extend(p.at.iter().map(value_cell));
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
                    self.sweep_cell(p),
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
            let mut row = vec![Cell::Text(p.variant.clone()), self.sweep_cell(p)];
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
        let figures = metrics
            .iter()
            .map(|m| self.figure(m, &results.iter().map(|r| metric_value(m, r)).collect::<Vec<_>>()))
            .collect();
        let mut notes = self.file.notes.clone();
        if results.iter().any(|r| r.time_base == TimeBase::Simulated) {
            notes.push(crate::result::SIMULATED_TIME_NOTE.into());
            notes.extend(crate::result::host_cpu_notes(results));
        }
        let mut tables = vec![ResultTable { name: "runs".into(), columns, rows }];
        // Key-value SSDs and page writes have no LSM levels: no table rather than an empty one.
        if !level_rows.is_empty() {
            tables.push(ResultTable {
                name: "levels".into(),
                columns: ["variant", "sweep", "level", "files", "read MiB", "written MiB", "remapped MiB", "host MiB"]
                    .map(String::from)
                    .to_vec(),
                rows: level_rows,
            });
        }
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

    /// A point's sweep values as one cell (the tables that have one sweep column): the value of
    /// one sweep, `field=value` of each in a grid.
    fn sweep_cell(&self, p: &Point) -> Cell {
        match p.at.as_slice() {
            [v] => value_cell(v),
            _ => Cell::Text(self.point_label(p).unwrap_or_default()),
        }
    }

    /// A run's JSON with its point: `variant`, and each sweep's parameter (e.g.
    /// `workload.value_size`) with its value, so that each run of results.json says what it was.
    fn labelled(&self, p: &Point, r: &RunResult) -> Option<serde_json::Value> {
        let mut v = serde_json::to_value(r).ok()?;
        let m = v.as_object_mut()?;
        m.insert("variant".into(), p.variant.clone().into());
        for (s, value) in self.sweeps.iter().zip(&p.at) {
            m.insert(s.parameter.clone(), sweep_json(value));
        }
        Some(v)
    }

    /// The figure of `metric`, whose value at each point is `values`' (in the points' order).
    pub(super) fn figure(&self, metric: &str, values: &[f64]) -> Figure {
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
        match self.sweeps.split_last() {
            Some((x, others)) => {
                let categories: Vec<String> = x.values.iter().map(value_label).collect();
                // A line per variant and combination of the other sweeps' values, over the last sweep.
                let mut series: Vec<Series> = Vec::new();
                for (p, r) in self.points.iter().zip(values) {
                    let (x_value, rest) = p.at.split_last().expect("a value per sweep");
                    let mut name = p.variant.clone();
                    for (s, v) in others.iter().zip(rest) {
                        name.push_str(&format!(", {}={}", s.field_name(), value_label(v)));
                    }
                    let i = x.values.iter().position(|v| v == x_value).unwrap_or(0) as f64;
                    match series.iter_mut().find(|s| s.name == name) {
                        Some(s) => s.points.push((i, *r)),
                        None => series.push(Series { name, points: vec![(i, *r)], dashed: false }),
                    }
                }
                let over = if others.is_empty() {
                    x.parameter.clone()
                } else {
                    format!(
                        "{} (a line per {})",
                        x.parameter,
                        others.iter().map(|s| s.field_name()).collect::<Vec<_>>().join(", ")
                    )
                };
                Figure {
                    id: format!("{metric}_vs_{}", x.parameter.replace('.', "_")),
                    title: format!("{} vs {over}", metric.replace('_', " ")),
                    kind: FigureKind::Line,
                    x_label: x.parameter.clone(),
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
                    points: values.iter().enumerate().map(|(i, v)| (i as f64, *v)).collect(),
                    dashed: false,
                }],
            },
        }
    }
}

/// A run's value of `metric` (one of `METRICS`).
fn metric_value(metric: &str, r: &RunResult) -> f64 {
    match metric {
        "write_amplification" => r.write_amplification.unwrap_or(r.host_write_amplification),
        "host_write_amplification" => r.host_write_amplification,
        "ops_per_sec" => r.ops_per_sec,
        "p99_latency_us" => r.latency.p99_us,
        "remapped_pages" => r.remapped_pages.unwrap_or(0) as f64,
        _ => r.sim_time_s.unwrap_or(0.0),
    }
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

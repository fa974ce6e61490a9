//! An experiment's result set: a row per run (its variant, sweep values and headline metrics), the
//! levels, the flash time by cause, and a figure per metric (over the last sweep, a line per
//! variant and value of the other sweeps; or a bar per variant).

use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::result::{metric_value, RunResult, TimeBase};
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
        let plan = s.plan();
        let phases = plan.as_ref().ok().and_then(|p| p.kind.phases());
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
            (_, None) => format!("{} records", phases.map_or(w.records.unwrap_or(0), |p| p.records)),
        };
        let operations = phases.map_or(w.operations, |p| p.operations);
        let ops = if operations > 0 && !w.name.is_device_only() {
            format!(", {operations} operations")
        } else {
            String::new()
        };
        let scale = self.at_scale().map_or(String::new(), |(name, d)| format!("{name} scale (1/{d}): "));
        format!("{scale}{size}{ops}, device {dev}")
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
            let number = |v: Option<f64>| v.map_or(Cell::Text("-".into()), Cell::Number);
            // A page-write run's flash write amplification is its measured interval's.
            let flash_wa = r.ftl.as_ref().map(|f| f.write_amplification);
            let flash = r.flash.as_ref();
            row.push((r.host.user_bytes as f64 / (1 << 20) as f64).into());
            row.push(number(r.host.write_amplification));
            row.push(number(flash_wa.or(flash.and_then(|f| f.write_amplification))));
            row.push(r.host.ops_per_sec.into());
            row.push(r.host.latency.p99_us.into());
            row.push(number(flash.map(|f| f.remapped_pages as f64)));
            row.push(number(r.host.sim_time_s));
            rows.push(row);
        }
        let mut level_rows = Vec::new();
        for (p, r) in self.points.iter().zip(results) {
            for l in r.lsm.iter().flat_map(|s| &s.levels).filter(|l| l.bytes_written > 0 || l.files > 0) {
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
            let Some(flash) = &r.flash else { continue };
            let (causes, busy) = (&flash.by_cause, flash.busy_s);
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
        let json: Vec<serde_json::Value> =
            results.iter().map(|r| serde_json::to_value(r).unwrap_or_default()).collect();
        // A run without the figure has no point (NaN points are dropped when the set is written).
        let figures = metrics
            .iter()
            .map(|m| {
                let values: Vec<f64> = json.iter().map(|r| metric_value(m, r).unwrap_or(f64::NAN)).collect();
                self.figure(m, &values)
            })
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
            ..ResultSet::default()
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

    /// A run's JSON with its point: `variant`, each sweep's parameter (e.g.
    /// `workload.value_size`) or name with its value, and the file's `labels`, so that each run of
    /// results.json says what it was.
    fn labelled(&self, p: &Point, r: &RunResult) -> Option<serde_json::Value> {
        let mut v = serde_json::to_value(r).ok()?;
        let m = v.as_object_mut()?;
        m.insert("variant".into(), p.variant.clone().into());
        for (s, value) in self.sweeps.iter().zip(&p.at) {
            m.insert(s.parameter.clone(), sweep_json(value));
        }
        for (k, label) in &p.labels {
            m.insert(k.clone(), label.clone().into());
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
            "sim_time_s" => "simulated time (s)",
            path => path,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A page-write run on a small device (two capacity-writes after the sequential fill).
    const PAGES: &str = "title = \"pages\"\n[device]\nchannels = 2\nchips = 1\ndies = 1\nplanes = 2\n\
        pages_per_block = 64\nblocks_per_plane = 128\ngc_reserve = 8\n[workload]\nname = \"pages\"\n\
        pages = { writes = 2.0 }\n";

    #[test]
    fn a_page_write_runs_write_amplification_is_its_measured_intervals() {
        let e = Experiment::parse(PAGES).unwrap();
        let (spec, r) = (&e.points[0].spec, crate::runner::run(&e.points[0].spec, false).unwrap().0);
        let measured = r.ftl.as_ref().expect("a page-write run has its ftl section").write_amplification;
        assert!(measured > 1.0, "{measured}: GC ran in the measured interval ({spec:?})");
        assert_eq!(metric_value("write_amplification", &serde_json::to_value(&r).unwrap()), Some(measured));
        let set = e.result_set(std::slice::from_ref(&r));
        let runs = &set.tables[0];
        let column = runs.columns.iter().position(|c| c == "flash WA").unwrap();
        assert_eq!(runs.rows[0][column], Cell::Number(measured), "the runs table's flash WA");
        let host = runs.columns.iter().position(|c| c == "host WA").unwrap();
        assert_eq!(runs.rows[0][host], Cell::Text("-".into()), "raw page writes have no host write amplification");
        assert_eq!(set.figures[0].series[0].points, vec![(0.0, measured)], "the figure of write_amplification");
    }

    /// Figures of any section's number by its dotted path; a run without it has no point.
    #[test]
    fn metrics_name_a_sections_numbers_by_path() {
        let text =
            format!("metrics = [\"ftl.write_amplification\", \"flash.erases\", \"host_write_amplification\"]\n{PAGES}");
        let e = Experiment::parse(&text).unwrap();
        let r = crate::runner::run(&e.points[0].spec, false).unwrap().0;
        let set = e.result_set(std::slice::from_ref(&r));
        let point = |i: usize| set.figures[i].series[0].points[0].1;
        assert_eq!(point(0), r.ftl.as_ref().unwrap().write_amplification);
        assert_eq!(point(1), r.flash.as_ref().unwrap().erases as f64);
        assert!(point(2).is_nan(), "no host write amplification: no point (dropped when written)");
        assert_eq!(set.figures[0].id, "ftl.write_amplification");
        let e = Experiment::parse(&format!("metrics = [\"ftl.write_amplifcation\"]\n{PAGES}")).err().unwrap();
        let e = e.to_string();
        assert!(e.contains("ftl has no 'write_amplifcation'") && e.contains("measured_nand_programs"), "{e}");
    }
}

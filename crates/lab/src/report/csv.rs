//! The CSV files of a result folder, for pandas, R, spreadsheets and Python's csv module. Each file
//! is one table: a header line, then one line per row.
//!
//! Common rules: fields follow RFC 4180 (a field with a comma, a double quote, a line break or
//! leading/trailing space is enclosed in double quotes, and a double quote inside is doubled; lines
//! end with CRLF). Numbers are written as numbers in full precision (integers as integers, other
//! numbers in Rust's shortest round-trip form), so nothing is lost against results.json; booleans are
//! `true`/`false`; a JSON null or a missing value is an empty field.
//!
//! # results.csv: one row per run
//!
//! A row per run of the set (`runs` in results.json, in order), a column per parameter and metric:
//! every scalar leaf of the run's JSON object, named by its path with dots, e.g. `host.ops_per_sec`,
//! `host.latency.p99_us`, `host.lanes.foreground.stall_ns`, `host.write_bytes_by_cause.wal` (the
//! names an experiment's `metrics` take; a results.json of schema version 1 gives its flat names,
//! `ops_per_sec`, `latency.p99_us`).
//! - Arrays of scalars are numbered from 0: `host.write_bytes_by_cause.compaction_by_level.2`.
//! - Arrays of objects are numbered too (`lsm.levels.0.bytes_written`), except when every element
//!   has a string `name` (phases) or `cause` (flash causes): then the element is named by it, so a
//!   column means the same thing in every run: `phases.fillrandom.ops_per_sec`,
//!   `phases.fillrandom.latency_by_kind.write.p99_us`, `flash.by_cause.gc.busy_s` (the naming field
//!   itself is not repeated; a name seen again in one array gets `#2`, `#3`, ...).
//! - Left out (they are in results.json): arrays of arrays (a phase's throughput `timeline`), the
//!   per-zone list `fs.zones.utilisation` (its summary `fs.zones.utilisation_histogram` is in), and any
//!   array longer than [`MAX_ITEMS`] in some run (left out of every run, so columns mean the same).
//!   Empty objects and arrays give no column.
//!
//! Columns are the union over the runs; a run without a column has an empty field there. Order:
//! first `run` (the run's position in results.json's `runs`, from 0, also in latency.csv, to join
//! the two), then the labels that say what a run was, those present of: `experiment`, `variant`,
//! `mode`, the sweep parameters (top-level keys with a dot, e.g. `workload.value_size`), `workload`,
//! `engine`, `device`; then every other column in order of first appearance (runs in order, each
//! run's keys in results.json's order).
//!
//! # latency.csv: long form, one row per (run, phase, operation kind)
//!
//! Columns: `run`, the same label columns as results.csv, `phase` (the phase's name), `kind` (`all`
//! for every operation of the phase, then each kind in `latency_by_kind`: read, write, scan, ...),
//! then `count`, `mean_us`, `p50_us`, `p99_us`, `p999_us`, `max_us`. Rows follow the runs, their
//! phases, and the kinds in that order. A run without phases has no rows.
//!
//! # tables/<name>.csv: one file per table of the report
//!
//! The column names, then the rows (padded with empty fields to the header's width). The file name
//! is the table's name in lower case with every run of other characters than ASCII letters and
//! digits made one `-` (see [`slug`]); a name already taken gets `-2`, `-3`, ...

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;

use super::model::{Cell, ResultSet, ResultTable};

/// Arrays longer than this (in any run) are left out of results.csv: they are per-item data
/// (zones, blocks, time windows), not a parameter or a metric.
pub const MAX_ITEMS: usize = 64;

/// Per-item lists left out of results.csv by name.
const LEFT_OUT: &[&str] = &["fs.zones.utilisation", "zones.utilisation"];

/// Top-level keys that label a run, in the order they come first (sweep parameters go after `mode`).
const LABELS_BEFORE_SWEEP: &[&str] = &["experiment", "variant", "mode"];
const LABELS_AFTER_SWEEP: &[&str] = &["workload", "engine", "device"];

/// The latency statistics of latency.csv, as named in results.json.
const LATENCY_FIELDS: &[&str] = &["count", "mean_us", "p50_us", "p99_us", "p999_us", "max_us"];

/// results.csv: one row per run.
pub fn runs(set: &ResultSet) -> String {
    let mut columns: Vec<String> = vec!["run".into()];
    let mut index: HashMap<String, usize> = HashMap::from([("run".to_string(), 0)]);
    let mut long: BTreeSet<String> = BTreeSet::new();
    let mut rows: Vec<HashMap<usize, String>> = Vec::new();
    for (i, run) in set.runs.iter().enumerate() {
        let mut flat = Flat { cells: vec![("run".into(), i.to_string())], long: &mut long };
        flat.value("", run);
        let mut row = HashMap::new();
        for (name, text) in flat.cells {
            let next = columns.len();
            let c = *index.entry(name.clone()).or_insert(next);
            if c == next {
                columns.push(name);
            }
            row.entry(c).or_insert(text);
        }
        rows.push(row);
    }
    // An array too long in one run is left out of all of them.
    let kept = |name: &str| !long.iter().any(|p| name.strip_prefix(p.as_str()).is_some_and(|r| r.starts_with('.')));
    let labels = label_columns(set);
    let mut order: Vec<usize> =
        std::iter::once("run").chain(labels.iter().map(String::as_str)).filter_map(|l| index.get(l).copied()).collect();
    let first: BTreeSet<usize> = order.iter().copied().collect();
    order.extend((0..columns.len()).filter(|c| !first.contains(c) && kept(&columns[*c])));

    let mut out = String::new();
    line(&mut out, order.iter().map(|&c| quote(&columns[c])));
    for row in &rows {
        line(&mut out, order.iter().map(|c| row.get(c).cloned().unwrap_or_default()));
    }
    out
}

/// latency.csv: one row per run, phase and operation kind ("all" first).
pub fn latency(set: &ResultSet) -> String {
    let labels = label_columns(set);
    let mut out = String::new();
    let header = ["run"]
        .into_iter()
        .chain(labels.iter().map(String::as_str))
        .chain(["phase", "kind"])
        .chain(LATENCY_FIELDS.iter().copied());
    line(&mut out, header.map(quote));
    for (i, run) in set.runs.iter().enumerate() {
        let Some(phases) = run.get("phases").and_then(Value::as_array) else { continue };
        let label_cells: Vec<String> = labels.iter().map(|l| run.get(l).map(scalar).unwrap_or_default()).collect();
        for phase in phases {
            let name = phase.get("name").map(scalar).unwrap_or_default();
            let all = phase.get("latency").filter(|v| v.is_object()).map(|s| ("all", s));
            let by_kind = phase.get("latency_by_kind").and_then(Value::as_object);
            let kinds = all.into_iter().chain(by_kind.into_iter().flatten().map(|(k, s)| (k.as_str(), s)));
            for (kind, stats) in kinds {
                let fields = std::iter::once(i.to_string())
                    .chain(label_cells.iter().cloned())
                    .chain([name.clone(), quote(kind)])
                    .chain(LATENCY_FIELDS.iter().map(|f| stats.get(*f).map(scalar).unwrap_or_default()));
                line(&mut out, fields);
            }
        }
    }
    out
}

/// One table of the report as CSV: its header, then its rows.
pub fn table(table: &ResultTable) -> String {
    let mut out = String::new();
    line(&mut out, table.columns.iter().map(|c| quote(c)));
    for row in &table.rows {
        let pad = table.columns.len().saturating_sub(row.len());
        line(&mut out, row.iter().map(cell_text).chain(std::iter::repeat_n(String::new(), pad)));
    }
    out
}

/// The file of each table of `set`, in order: `tables/<slug>.csv`, unique.
pub fn table_files(set: &ResultSet) -> Vec<String> {
    let mut taken = BTreeSet::new();
    set.tables
        .iter()
        .map(|t| {
            let base = slug(&t.name);
            let name =
                (1..).map(|n| if n == 1 { base.clone() } else { format!("{base}-{n}") }).find(|s| !taken.contains(s));
            let name = name.expect("some suffix is free");
            taken.insert(name.clone());
            format!("{}/{name}.csv", super::TABLES_DIR)
        })
        .collect()
}

/// A plain file stem for a name: lower-case ASCII letters and digits, every run of anything else
/// one `-`, no `-` at the ends, at most 60 characters; "table" if nothing is left.
/// "Table 3: per-level write reduction at 1 KB" -> "table-3-per-level-write-reduction-at-1-kb".
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    s.truncate(60);
    let s = s.trim_end_matches('-');
    if s.is_empty() {
        "table".into()
    } else {
        s.to_string()
    }
}

/// The top-level label columns of the set's runs, in the documented order (without `run`).
fn label_columns(set: &ResultSet) -> Vec<String> {
    let present = |k: &str| set.runs.iter().any(|r| r.get(k).is_some_and(is_scalar));
    let mut sweep: Vec<String> = Vec::new();
    for run in &set.runs {
        for (k, v) in run.as_object().into_iter().flatten() {
            if k.contains('.') && is_scalar(v) && !sweep.contains(k) {
                sweep.push(k.clone());
            }
        }
    }
    let named = |names: &'static [&'static str]| names.iter().filter(|k| present(k)).map(|k| k.to_string());
    named(LABELS_BEFORE_SWEEP).chain(sweep).chain(named(LABELS_AFTER_SWEEP)).collect()
}

/// A run's JSON flattened into (column, CSV field) pairs, in visiting order.
struct Flat<'a> {
    cells: Vec<(String, String)>,
    /// Paths of arrays left out for their length.
    long: &'a mut BTreeSet<String>,
}

impl Flat<'_> {
    fn value(&mut self, path: &str, v: &Value) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    self.value(&join(path, k), x);
                }
            }
            Value::Array(items) => self.array(path, items),
            _ => self.cells.push((if path.is_empty() { "value".into() } else { path.to_string() }, scalar(v))),
        }
    }

    fn array(&mut self, path: &str, items: &[Value]) {
        if LEFT_OUT.contains(&path) || items.iter().any(Value::is_array) {
            return;
        }
        if items.len() > MAX_ITEMS {
            self.long.insert(path.to_string());
            return;
        }
        let Some(field) = naming_field(items) else {
            for (i, x) in items.iter().enumerate() {
                self.value(&join(path, &i.to_string()), x);
            }
            return;
        };
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for item in items {
            let Some(m) = item.as_object() else { continue };
            let name = m.get(field).and_then(Value::as_str).unwrap_or_default();
            let n = seen.entry(name).or_insert(0);
            *n += 1;
            let key = if *n == 1 { name.to_string() } else { format!("{name}#{n}") };
            let base = join(path, &key);
            for (k, x) in m.iter().filter(|(k, _)| k.as_str() != field) {
                self.value(&join(&base, k), x);
            }
        }
    }
}

/// The field that names each element of an array of objects, if every element has it as a string.
fn naming_field(items: &[Value]) -> Option<&'static str> {
    ["name", "cause"]
        .into_iter()
        .find(|f| !items.is_empty() && items.iter().all(|x| x.get(*f).is_some_and(Value::is_string)))
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn is_scalar(v: &Value) -> bool {
    !v.is_object() && !v.is_array()
}

/// A JSON scalar as a CSV field (objects and arrays, not expected here, as their JSON text).
fn scalar(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (None, Some(i), _) => i.to_string(),
            (None, None, Some(f)) => number(f),
            _ => n.to_string(),
        },
        Value::String(s) => quote(s),
        _ => quote(&v.to_string()),
    }
}

fn number(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        super::format::non_finite(v).to_string()
    }
}

fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Number(v) => number(*v),
        Cell::Text(t) => quote(t),
    }
}

/// Appends one line of already-quoted fields. A line of one empty field is written `""`, so that
/// it is not read as a blank line (which readers skip).
fn line(out: &mut String, fields: impl Iterator<Item = String>) {
    let start = out.len();
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&field);
    }
    if out.len() == start {
        out.push_str("\"\"");
    }
    out.push_str("\r\n");
}

/// One field, quoted when RFC 4180 needs it (and when spaces at the ends would otherwise be lost).
pub fn quote(field: &str) -> String {
    let needs = field.contains([',', '"', '\r', '\n']) || field.starts_with(' ') || field.ends_with(' ');
    if needs {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

//! An experiment's points: its variants, its sweeps (a field set to each of its values, or cases:
//! named tables of overrides), and the labels of each point (`label` and `labels`, templates
//! over `{variant}` and the sweeps' names).
//!
//! ```toml
//! label = "ycsb {name} {row}"                   # each run's label (default: "variant @ values")
//! labels = { row = "{row}" }                    # more labels in each run's JSON (results.json)
//! [[sweep]]
//! parameter = "workload.name"                   # placeholder {name}: the field's last segment,
//! values = ["a", "b"]                           # or the sweep's `name`
//! [[sweep]]
//! name = "row"                                  # cases: each a name and overrides of sections
//! cases = [
//!   { name = "GC", engine = { compaction = "leveled" } },
//!   { name = "LL", engine = { compaction = "ll" }, device = { zone_policy = "per-level" } },
//! ]
//! ```
//!
//! A sweep of sizes whose cases are named by the paper's size (`scaled = true`, e.g. `name =
//! "2GiB"`) shows each name divided by the scale (`128 MiB` at a divisor of 16).

use serde::Deserialize;
use toml::{Table, Value};

use super::fields::{bad, typed_section, value_label};
use super::scale;
use crate::error::{LabError, Result};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepTable {
    parameter: Option<String>,
    #[serde(default)]
    values: Vec<Value>,
    name: Option<String>,
    cases: Option<Vec<Table>>,
    /// The cases' names are sizes of the paper, shown divided by the scale.
    #[serde(default)]
    scaled: bool,
}

/// What a sweep sets at each of its points.
#[derive(Clone, Debug)]
pub(super) enum Sets {
    /// The field `parameter` to each value.
    Field(Vec<Value>),
    /// Each case's overrides (sections of fields).
    Cases(Vec<Table>),
}

/// One sweep, resolved.
#[derive(Clone, Debug)]
pub(super) struct Sweep {
    /// The field swept (`section.field`), or a case sweep's name: its column and JSON key.
    pub parameter: String,
    /// Its placeholder in labels and its name in figures: `name`, else the field's last segment.
    pub name: String,
    /// Each point's value as labels, tables and figures show it.
    pub values: Vec<Value>,
    pub sets: Sets,
}

impl Sweep {
    /// The name figures and grid labels use.
    pub(super) fn field_name(&self) -> &str {
        &self.name
    }
}

/// The variants, each with its name and its overrides (one default variant when none is given).
pub(super) fn variants(list: &[Table]) -> Result<Vec<(String, Table)>> {
    if list.is_empty() {
        return Ok(vec![("default".into(), Table::new())]);
    }
    list.iter().enumerate().map(|(i, v)| named(v, &format!("variant {}", i + 1))).collect()
}

/// A table's `name` (or `fallback`) and the rest of it.
fn named(v: &Table, fallback: &str) -> Result<(String, Table)> {
    let mut v = v.clone();
    let name = match v.remove("name") {
        Some(Value::String(s)) => s,
        Some(other) => {
            return Err(LabError::invalid(format!("{fallback}.name"), format!("must be a string, got {other}")))
        }
        None => fallback.to_string(),
    };
    Ok((name, v))
}

/// The sweeps: none, `[sweep]`, or each `[[sweep]]` of a grid; sizes shown at `divisor`, the
/// values of a field in `scaled` too.
pub(super) fn sweeps(sweep: Option<&Value>, scaled: &[String], divisor: u64) -> Result<Vec<Sweep>> {
    let tables = match sweep {
        None => return Ok(Vec::new()),
        Some(t @ Value::Table(_)) => vec![("sweep".to_string(), t.clone())],
        Some(Value::Array(list)) => {
            list.iter().enumerate().map(|(i, t)| (format!("sweep {}", i + 1), t.clone())).collect()
        }
        Some(other) => {
            return Err(LabError::invalid(
                "sweep",
                format!("must be [sweep] or [[sweep]] tables (parameter and values, or name and cases), got {other}"),
            ))
        }
    };
    let mut sweeps: Vec<Sweep> = Vec::new();
    for (at, table) in tables {
        let s: SweepTable = typed_section(table, &at)?;
        let sweep = match (s.parameter, s.cases) {
            (Some(parameter), None) => {
                if s.values.is_empty() {
                    return Err(LabError::invalid(format!("{at}.values"), "at least one value is needed"));
                }
                if !parameter.contains('.') {
                    return Err(LabError::invalid(
                        format!("{at}.parameter"),
                        format!("'{parameter}' must be section.field, e.g. workload.value_size"),
                    ));
                }
                if s.scaled {
                    return Err(LabError::invalid(
                        format!("{at}.scaled"),
                        "applies to cases; a parameter's values are divided when it is listed in `scaled`",
                    ));
                }
                let shown = if scaled.contains(&parameter) {
                    s.values.iter().map(|v| scale::divide(v, divisor, &parameter)).collect::<Result<_>>()?
                } else {
                    s.values.clone()
                };
                let name = s.name.unwrap_or_else(|| parameter.rsplit('.').next().unwrap_or(&parameter).to_string());
                Sweep { parameter, name, values: shown, sets: Sets::Field(s.values) }
            }
            (None, Some(cases)) => {
                let name =
                    s.name.ok_or_else(|| LabError::invalid(format!("{at}.name"), "a sweep of cases needs a name"))?;
                if cases.is_empty() || !s.values.is_empty() {
                    return Err(LabError::invalid(
                        format!("{at}.cases"),
                        "at least one case is needed (and no values)",
                    ));
                }
                let mut values = Vec::new();
                let mut sets = Vec::new();
                for (i, c) in cases.iter().enumerate() {
                    let (case, overrides) = named(c, &format!("case {}", i + 1))?;
                    let case = match s.scaled {
                        true => scale::divided_size(&case, divisor, &format!("{at}.cases {}.name", i + 1))?,
                        false => case,
                    };
                    if values.contains(&Value::String(case.clone())) {
                        return Err(LabError::invalid(format!("{at}.cases"), format!("'{case}' is given twice")));
                    }
                    values.push(Value::String(case));
                    sets.push(overrides);
                }
                Sweep { parameter: name.clone(), name, values, sets: Sets::Cases(sets) }
            }
            _ => {
                return Err(LabError::invalid(
                    at,
                    "give parameter and values (one field), or name and cases (tables of overrides)",
                ))
            }
        };
        if sweeps.iter().any(|o| o.parameter == sweep.parameter || o.name == sweep.name) {
            return Err(LabError::invalid(format!("{at}.parameter"), format!("'{}' is swept twice", sweep.parameter)));
        }
        sweeps.push(sweep);
    }
    Ok(sweeps)
}

/// `template` with `{variant}` and each sweep's `{name}` replaced by the point's values; a
/// placeholder that is neither is an error.
pub(super) fn render(template: &str, variant: &str, sweeps: &[Sweep], at: &[usize]) -> Result<String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').ok_or_else(|| bad(format!("label '{template}': '{{' without '}}'")))?;
        let key = &rest[open + 1..open + close];
        match key {
            "variant" => out.push_str(variant),
            k => match sweeps.iter().zip(at).find(|(s, _)| s.name == k) {
                Some((s, &i)) => out.push_str(&value_label(&s.values[i])),
                None => {
                    let names: Vec<&str> =
                        std::iter::once("variant").chain(sweeps.iter().map(|s| s.name.as_str())).collect();
                    return Err(bad(format!(
                        "label '{template}': unknown placeholder {{{k}}}; accepted: {}",
                        names.join(", ")
                    )));
                }
            },
        }
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every combination of the sweeps' value indices, the last sweep innermost.
pub(super) fn combinations(sweeps: &[Sweep]) -> Vec<Vec<usize>> {
    let mut grid: Vec<Vec<usize>> = vec![Vec::new()];
    for s in sweeps {
        grid =
            grid.into_iter().flat_map(|at| (0..s.values.len()).map(move |i| [at.clone(), vec![i]].concat())).collect();
    }
    grid
}

//! An experiment file's scales: `[[scale]]` tables (a name and a divisor, the first the
//! default) and `scaled`, the fields whose values are the paper's sizes and counts. At a scale
//! each run's `scaled` fields are divided by its divisor; then the scale's `multiply` factors
//! apply, then its own sections' fields are set as written (not divided): the data form of a
//! size that is not a plain division (a minimum, a rounding, more room at a test scale).
//!
//! ```toml
//! scaled = ["device.capacity", "engine.write_buffer_size", "workload.records"]
//! [[scale]]
//! name = "small"                                  # the default: the first
//! divisor = 16
//! [[scale]]
//! name = "tiny"
//! divisor = 256
//! device = { capacity = "8GiB" }                  # at this scale, as written
//! multiply = { "device.capacity" = 1.5 }          # after the division
//! ```

use serde::Deserialize;
use toml::{Table, Value};

use super::fields::{get_path, set_path, typed_section};
use crate::error::{LabError, Result};
use crate::spec::{format_size, Bytes, Named};

/// One `[[scale]]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ScaleDef {
    pub name: String,
    pub divisor: u64,
    /// Factors applied to fields (`section.field`) after the division.
    #[serde(default)]
    multiply: Table,
    #[serde(default)]
    engine: Option<Table>,
    #[serde(default)]
    device: Option<Table>,
    #[serde(default)]
    workload: Option<Table>,
    #[serde(default)]
    host: Option<Table>,
}

/// The file's scales, checked: unique names, divisors of at least 1, `scaled` fields named
/// `section.field`.
pub(super) fn scales(tables: &[Table], scaled: &[String]) -> Result<Vec<ScaleDef>> {
    let mut out: Vec<ScaleDef> = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let s: ScaleDef = typed_section(Value::Table(t.clone()), &format!("scale {}", i + 1))?;
        if s.divisor == 0 {
            return Err(LabError::invalid(format!("scale '{}'.divisor", s.name), "must be at least 1"));
        }
        if out.iter().any(|o| o.name == s.name) {
            return Err(LabError::invalid("scale", format!("'{}' is given twice", s.name)));
        }
        for (field, factor) in &s.multiply {
            if !field.contains('.') || !matches!(factor, Value::Float(_) | Value::Integer(_)) {
                return Err(LabError::invalid(
                    format!("scale '{}'.multiply", s.name),
                    format!("'{field} = {factor}' must be section.field = a number"),
                ));
            }
        }
        out.push(s);
    }
    if out.is_empty() && !scaled.is_empty() {
        return Err(LabError::invalid("scaled", "fields to divide need [[scale]] tables (a name and a divisor)"));
    }
    if let Some(f) = scaled.iter().find(|f| !f.contains('.')) {
        return Err(LabError::invalid("scaled", format!("'{f}' must be section.field, e.g. device.capacity")));
    }
    Ok(out)
}

/// The scale `name` among `scales` (the first when `None`); `None` for a file without scales.
pub(super) fn pick<'a>(scales: &'a [ScaleDef], name: Option<&str>) -> Result<Option<&'a ScaleDef>> {
    match (scales, name) {
        ([], None) => Ok(None),
        ([], Some(n)) => Err(LabError::invalid("scale", format!("'{n}' asked for, but the file has no [[scale]]"))),
        ([first, ..], None) => Ok(Some(first)),
        (all, Some(n)) => all.iter().find(|s| s.name == n).map(Some).ok_or_else(|| {
            let names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
            LabError::invalid("scale", format!("unknown scale '{n}'; accepted: {}", names.join(", ")))
        }),
    }
}

/// `v` divided by `divisor`: a number, or a size ("24GiB", as a number of bytes); `off` stays.
pub(super) fn divide(v: &Value, divisor: u64, field: &str) -> Result<Value> {
    let bad = || LabError::invalid(field, format!("{v} is not a size or a count to divide by the scale"));
    match v {
        Value::Integer(i) if *i >= 0 => Ok(Value::Integer(*i / divisor as i64)),
        Value::String(s) if s.trim() == "off" || s.trim() == "0" => Ok(v.clone()),
        Value::String(s) => {
            let b = Bytes::parse_name(s).map_err(|_| bad())?;
            i64::try_from(b.0 / divisor).map(Value::Integer).map_err(|_| bad())
        }
        _ => Err(bad()),
    }
}

/// A size of the paper (a case name of a `scaled` sweep) as it reads at `divisor`.
pub(super) fn divided_size(name: &str, divisor: u64, field: &str) -> Result<String> {
    let b = Bytes::parse_name(name).map_err(|e| LabError::invalid(field, e.to_string()))?;
    Ok(format_size(b.0 / divisor))
}

impl ScaleDef {
    /// Applies the scale to a run's `sections`: the `scaled` fields divided, the factors, then
    /// the scale's own fields.
    pub(super) fn apply(&self, sections: &mut Table, scaled: &[String]) -> Result<()> {
        for path in scaled {
            if let Some(v) = get_path(sections, path) {
                let d = divide(v, self.divisor, path)?;
                set_path(sections, path, d)?;
            }
        }
        for (path, factor) in &self.multiply {
            let f = factor.as_float().or(factor.as_integer().map(|i| i as f64)).unwrap_or(1.0);
            if let Some(v) = get_path(sections, path) {
                let n = match divide(v, 1, path)? {
                    Value::Integer(n) => n,
                    _ => continue,
                };
                set_path(sections, path, Value::Integer((n as f64 * f).floor() as i64))?;
            }
        }
        for (section, t) in
            [("engine", &self.engine), ("device", &self.device), ("workload", &self.workload), ("host", &self.host)]
        {
            if let (Some(t), Some(Value::Table(base))) = (t, sections.get_mut(section)) {
                base.extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        }
        Ok(())
    }
}

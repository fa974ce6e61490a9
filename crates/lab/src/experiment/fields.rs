//! The experiment file's fields as TOML values: reading a section into its struct, naming the
//! field that is wrong, and setting or reading a field by its dotted path.

use toml::{Table, Value};

use crate::error::{LabError, Result};

pub(super) fn bad(message: impl Into<String>) -> LabError {
    LabError::Experiment(message.into())
}

/// Sets the field at `path` (`section.field`, or deeper through tables) to `value`, making the
/// tables on the way.
pub(super) fn set_path(sections: &mut Table, path: &str, value: Value) -> Result<()> {
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
pub(super) fn typed_section<T: serde::de::DeserializeOwned>(v: Value, section: &str) -> Result<T> {
    serde_path_to_error::deserialize(v).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { section.to_string() } else { format!("{section}.{path}") };
        LabError::invalid(field, e.inner().message().to_string())
    })
}

/// A sweep value as text (strings without their quotes).
pub(super) fn value_label(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The value at `path` (`section.field`, or deeper), if set.
pub(super) fn get_path<'a>(sections: &'a Table, path: &str) -> Option<&'a Value> {
    let mut parts = path.split('.');
    let mut v = sections.get(parts.next()?)?;
    for p in parts {
        v = v.as_table()?.get(p)?;
    }
    Some(v)
}

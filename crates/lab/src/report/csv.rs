//! results.csv: every table of a result set, for spreadsheets and scripts.
//!
//! Layout: one block per table, in order; a block is a line holding the table's name, the column
//! names, then the rows; blocks are separated by an empty line. Fields follow RFC 4180: a field with
//! a comma, a double quote, a line break or leading/trailing space is enclosed in double quotes, and
//! a double quote inside is doubled; lines end with CRLF. Numbers are written in full precision
//! (Rust's shortest round-trip form), so nothing is lost against results.json.

use super::model::{Cell, ResultSet};

/// The CSV text of all tables of `set`.
pub fn render(set: &ResultSet) -> String {
    let mut out = String::new();
    for (i, table) in set.tables.iter().enumerate() {
        if i > 0 {
            out.push_str("\r\n");
        }
        if table.name.is_empty() {
            // An empty name quoted, so the block does not start with an empty line.
            out.push_str("\"\"\r\n");
        } else {
            line(&mut out, std::iter::once(table.name.clone()));
        }
        line(&mut out, table.columns.iter().cloned());
        for row in &table.rows {
            line(&mut out, row.iter().map(cell_text));
        }
    }
    out
}

fn cell_text(cell: &Cell) -> String {
    match cell {
        Cell::Number(v) if v.is_finite() => format!("{v}"),
        Cell::Number(v) => super::format::non_finite(*v).to_string(),
        Cell::Text(t) => t.clone(),
    }
}

fn line(out: &mut String, fields: impl Iterator<Item = String>) {
    for (i, field) in fields.enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&quote(&field));
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

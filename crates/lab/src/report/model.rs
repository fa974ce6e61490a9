//! What a report shows: the result set every experiment and `repro` command produces, written as
//! `results.json` and rendered as tables, SVG charts and an HTML page.
//!
//! A result set is plain data (numbers and labels), so a report can be rebuilt from its JSON alone
//! (`flashkv report DIR`).

use serde::{Deserialize, Serialize};

/// One experiment's (or reproduction's) results.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ResultSet {
    pub title: String,
    /// What ran and at what scale (shown under the title and in every chart title).
    pub scale: String,
    /// Free-text notes: approximations, where the result differs from the paper, and why.
    pub notes: Vec<String>,
    pub tables: Vec<ResultTable>,
    pub figures: Vec<Figure>,
    /// The raw per-run results (any JSON), kept for people who want every number.
    #[serde(default)]
    pub runs: Vec<serde_json::Value>,
}

/// A table of cells; numbers stay numbers so CSV and JSON keep their precision.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct ResultTable {
    pub name: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum Cell {
    Number(f64),
    Text(String),
}

/// A chart: lines over a numeric or categorical x axis, or grouped bars over categories.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Figure {
    /// File stem of the SVG (e.g. "fig10_wa_fillrandom").
    pub id: String,
    pub title: String,
    pub kind: FigureKind,
    /// Axis labels with units, e.g. "KV size (bytes)", "write amplification (flash bytes / user bytes)".
    pub x_label: String,
    pub y_label: String,
    /// Category names for bars (and for lines over categories); empty for numeric x.
    #[serde(default)]
    pub categories: Vec<String>,
    pub series: Vec<Series>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum FigureKind {
    Line,
    Bar,
}

/// One named series. For bars and categorical lines, `points[i].0` is the category index.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Dashed (e.g. the paper's numbers drawn beside ours).
    #[serde(default)]
    pub dashed: bool,
}

impl From<f64> for Cell {
    fn from(v: f64) -> Cell {
        Cell::Number(v)
    }
}

impl From<&str> for Cell {
    fn from(v: &str) -> Cell {
        Cell::Text(v.to_string())
    }
}

impl From<String> for Cell {
    fn from(v: String) -> Cell {
        Cell::Text(v)
    }
}

//! What a report shows: the result set every experiment and `repro` command produces, written as
//! `results.json` and rendered as tables, SVG charts and an HTML page.
//!
//! A result set is plain data (numbers and labels), so a report can be rebuilt from its JSON alone
//! (`flashkv report DIR`).
//!
//! Its `schema_version` says the shape of its `runs`: 1 (a file without the field) for runs with
//! flat fields (`write_amplification`, `user_bytes`, ... at the top), 2 for runs in sections
//! (`host`, `lsm`, `fs`, `flash`, `ftl`, `kv_ssd`: `crate::result`). Runs are kept as JSON, so a
//! report rebuilds from either shape; results.csv names its columns after the shape it reads.

use serde::{Deserialize, Serialize};

/// The schema version of the result sets this build writes.
pub const SCHEMA_VERSION: u32 = 2;

/// One experiment's (or reproduction's) results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ResultSet {
    /// The shape of `runs` (see the module's docs); 1 when absent.
    #[serde(default = "first_schema")]
    pub schema_version: u32,
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

/// A set with nothing in it yet, of this build's schema version.
impl Default for ResultSet {
    fn default() -> Self {
        ResultSet {
            schema_version: SCHEMA_VERSION,
            title: String::new(),
            scale: String::new(),
            notes: Vec::new(),
            tables: Vec::new(),
            figures: Vec::new(),
            runs: Vec::new(),
        }
    }
}

/// Result sets written before the field existed.
fn first_schema() -> u32 {
    1
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

/// A cell as tables show it: a number with 3-4 significant digits (see `format::cell_number`),
/// text as it is.
impl std::fmt::Display for Cell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Cell::Number(v) => f.write_str(&super::format::cell_number(*v)),
            Cell::Text(t) => f.write_str(t),
        }
    }
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

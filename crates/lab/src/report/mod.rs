//! Reports: a [`ResultSet`] written as a result folder, and rebuilt from its JSON.
//!
//! Contract of a result folder (what [`write_report`] writes and [`rebuild`] regenerates):
//! - `results.json`: the result set, pretty-printed by serde_json in the model's field order. It is the
//!   source of truth: everything else is derived from it.
//! - `results.csv`: every table, one block per table (see [`csv`]).
//! - `<figure.id>.svg`: one chart per figure, titled "title (scale)" (see [`chart`]).
//! - `index.html`: a self-contained page (inline CSS, no script, no network) with the title, scale and
//!   notes, the tables, and each chart as `<img src="<id>.svg">` with a caption (see [`html`]).
//!
//! Output is deterministic: the same result set gives byte-identical files (no timestamps, no
//! hash-map order). JSON has no NaN or infinity, so before anything is written the set is normalised:
//! a non-finite table number becomes the text "NaN", "inf" or "-inf", and a non-finite chart point is
//! dropped (charts skip such points anyway). The page written from a set and the page rebuilt from its
//! JSON are therefore the same bytes.

pub mod chart;
pub mod csv;
mod format;
pub mod html;
pub mod model;

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use model::{Cell, ResultSet};

/// File names inside a result folder.
pub const JSON_FILE: &str = "results.json";
pub const CSV_FILE: &str = "results.csv";
pub const INDEX_FILE: &str = "index.html";

/// Writes the whole result folder for `set` into `dir` (created if missing): results.json,
/// results.csv, one SVG per figure and index.html. Existing files of the same names are replaced.
pub fn write_report(dir: &Path, set: &ResultSet) -> Result<(), String> {
    let set = normalized(set);
    check_figure_ids(&set)?;
    fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create directory: {e}", dir.display()))?;
    let json = to_json(&set)?;
    write_file(&dir.join(JSON_FILE), json.as_bytes())?;
    render_derived(dir, &set).map(|_| ())
}

/// Reads `dir/results.json` and regenerates results.csv, the SVG charts and index.html from it
/// (results.json itself is left as it is). Returns the path of index.html.
pub fn rebuild(dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(JSON_FILE);
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(format!(
                "{}: not found (a result folder holds the results.json that `flashkv run` writes)",
                path.display()
            ))
        }
        Err(e) => return Err(format!("{}: cannot read: {e}", path.display())),
    };
    let set = from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // A hand-edited file may hold what write_report would have normalised away.
    let set = normalized(&set);
    check_figure_ids(&set).map_err(|e| format!("{}: {e}", path.display()))?;
    render_derived(dir, &set)
}

/// The JSON text of a result set exactly as results.json holds it (pretty, trailing newline).
pub fn to_json(set: &ResultSet) -> Result<String, String> {
    let mut text =
        serde_json::to_string_pretty(set).map_err(|e| format!("cannot encode the result set as JSON: {e}"))?;
    text.push('\n');
    Ok(text)
}

/// Parses results.json text. The error says what is wrong and where (line and column).
pub fn from_json(text: &str) -> Result<ResultSet, String> {
    serde_json::from_str(text).map_err(|e| {
        let what = match e.classify() {
            serde_json::error::Category::Syntax => "invalid JSON",
            serde_json::error::Category::Eof => "invalid JSON (ends early)",
            serde_json::error::Category::Data => "JSON that is not a result set",
            serde_json::error::Category::Io => "unreadable JSON",
        };
        // serde_json's message ends with its own " at line L column C"; say the position once.
        let message = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = message.strip_suffix(&suffix).unwrap_or(&message);
        format!("{what} at line {}, column {}: {message}", e.line(), e.column())
    })
}

/// Writes everything derived from the JSON; returns the index path.
fn render_derived(dir: &Path, set: &ResultSet) -> Result<PathBuf, String> {
    write_file(&dir.join(CSV_FILE), csv::render(set).as_bytes())?;
    for fig in &set.figures {
        let svg = chart::render_svg(fig, &set.scale)
            .map_err(|e| format!("figure {:?}: cannot draw the chart: {e}", fig.id))?;
        write_file(&dir.join(format!("{}.svg", fig.id)), svg.as_bytes())?;
    }
    let index = dir.join(INDEX_FILE);
    write_file(&index, html::render(set).as_bytes())?;
    Ok(index)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    fs::write(path, bytes).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// A figure id becomes a file name and a link target, so it must be a plain, unique file stem.
fn check_figure_ids(set: &ResultSet) -> Result<(), String> {
    let mut seen = std::collections::BTreeSet::new();
    for (i, fig) in set.figures.iter().enumerate() {
        let id = fig.id.as_str();
        let plain = !id.is_empty()
            && !id.starts_with('.')
            && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !plain {
            return Err(format!(
                "figure {i} ({:?}): id {id:?} is not a plain file name (use letters, digits, '-', '_', '.')",
                fig.title
            ));
        }
        if !seen.insert(id) {
            return Err(format!("figure {i}: id {id:?} is used by an earlier figure too"));
        }
    }
    Ok(())
}

/// The set as JSON can hold it: non-finite table numbers become text, non-finite points are dropped.
fn normalized(set: &ResultSet) -> ResultSet {
    let mut set = set.clone();
    for table in &mut set.tables {
        for cell in table.rows.iter_mut().flatten() {
            if let Cell::Number(v) = *cell {
                if !v.is_finite() {
                    *cell = Cell::Text(format::non_finite(v).to_string());
                }
            }
        }
    }
    for series in set.figures.iter_mut().flat_map(|f| f.series.iter_mut()) {
        series.points.retain(|&(x, y)| x.is_finite() && y.is_finite());
    }
    set
}

//! Reports: a [`ResultSet`] written as a result folder, and rebuilt from its JSON.
//!
//! Contract of a result folder (what [`write_report`] writes and [`rebuild`] regenerates):
//! - `results.json`: the result set, pretty-printed by serde_json in the model's field order. It is the
//!   source of truth: everything else is derived from it.
//! - `results.csv`: one tidy table, a row per run and a column per parameter and metric (the run's
//!   JSON flattened to dotted names such as `latency.p99_us`), label columns first (see [`csv`]).
//! - `latency.csv`: latencies in long form, a row per run, phase and operation kind (see [`csv`]).
//! - `tables/<slug>.csv`: each table of the report (the comparisons with the paper), one file each,
//!   named after the table (see [`csv::table_files`]); no folder when the set has no table.
//! - `<figure.id>.svg`: one chart per figure, titled "title (scale)" (see [`chart`]), and
//!   `<figure.id>.png`: the same chart as a bitmap at twice the size, for papers (see [`raster`]).
//! - `index.html`: a self-contained page (inline CSS, no script, no network) with the title, scale and
//!   notes, the tables (each with a link to its CSV), each chart as `<img src="<id>.svg">` with a
//!   caption and links to its SVG and PNG, and links to the other files (see [`html`]).
//!
//! A folder holds one result set. [`write_report`] refuses a folder whose results.json has another
//! title (or is not a result set at all), so one experiment never overwrites another's results;
//! given the same title, it first removes the charts and table files the old set had and the new
//! one does not, so nothing stale is left. Other files (a repro's `runs/` cache, `timing.json`) are
//! left alone. [`check_folder`] makes the same check before a command spends time on its runs, and
//! checks that the folder can be created and written ([`check_place`]).
//!
//! Output is deterministic: the same result set gives byte-identical files (no timestamps, no
//! hash-map order). JSON has no NaN or infinity, so before anything is written the set is normalised:
//! a non-finite table number becomes the text "NaN", "inf" or "-inf", and a non-finite chart point is
//! dropped (charts skip such points anyway). The page written from a set and the page rebuilt from its
//! JSON are therefore the same bytes.

pub mod chart;
pub mod csv;
pub mod error;
mod format;
pub mod html;
pub mod markdown;
pub mod model;
pub mod raster;

use std::collections::BTreeSet;
use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

pub use error::{Op, ReportError};
use model::{Cell, ResultSet};

/// File names inside a result folder.
pub const JSON_FILE: &str = "results.json";
pub const CSV_FILE: &str = "results.csv";
pub const LATENCY_FILE: &str = "latency.csv";
pub const TABLES_DIR: &str = "tables";
pub const INDEX_FILE: &str = "index.html";

/// Writes the whole result folder for `set` into `dir` (created if missing): results.json,
/// results.csv, latency.csv, one CSV per table, one SVG and one PNG per figure, and index.html.
/// Refuses a folder that holds another result set (see the module's contract).
pub fn write_report(dir: &Path, set: &ResultSet) -> Result<(), ReportError> {
    let set = normalized(set);
    check_figure_ids(&set)?;
    let stale = stale_files(dir, &set)?;
    fs::create_dir_all(dir).map_err(|e| ReportError::io(Op::CreateDir, dir, e))?;
    for name in &stale {
        let path = dir.join(name);
        match fs::remove_file(&path) {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(ReportError::io(Op::Remove, &path, e)),
            _ => {}
        }
    }
    if set.tables.is_empty() {
        remove_if_empty(&dir.join(TABLES_DIR));
    }
    write_file(&dir.join(JSON_FILE), to_json(&set)?.as_bytes())?;
    render_derived(dir, &set).map(|_| ())
}

/// Reads `dir/results.json` and regenerates every file derived from it (results.json itself is
/// left as it is). Returns the path of index.html.
pub fn rebuild(dir: &Path) -> Result<PathBuf, ReportError> {
    let path = dir.join(JSON_FILE);
    let set = read_set(&path)?;
    if set.schema_version > model::SCHEMA_VERSION {
        let (version, known) = (set.schema_version, model::SCHEMA_VERSION);
        return Err(ReportError::Schema { path: Some(path), version, known });
    }
    // A hand-edited file may hold what write_report would have normalised away.
    let set = normalized(&set);
    check_figure_ids(&set).map_err(|e| e.in_file(&path))?;
    render_derived(dir, &set)
}

/// Writes the tables of `dir/results.json` into the markdown file `doc`: each table whose block
/// the file has, under a line saying where it comes from. A table's block is `<!-- NAME -->` ...
/// `<!-- end NAME -->` (NAME the table's name), or `<!-- NAME @ FOLDER -->` ... for the table of
/// the result folder named FOLDER only (a page that holds the same table at two scales). Returns
/// the names written; a file with no such block is an error.
pub fn tables_into(dir: &Path, doc: &Path) -> Result<Vec<String>, ReportError> {
    let set = read_set(&dir.join(JSON_FILE))?;
    let text = fs::read_to_string(doc).map_err(|e| ReportError::io(Op::Read, doc, e))?;
    let folder = dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    let from = format!(
        "Generated from the results.json of `{folder}` ({}) by `flashkv report {folder} --tables-into FILE`; do not \
         edit by hand.\n\n",
        set.scale
    );
    let blocks: Vec<(String, String)> = set
        .tables
        .iter()
        .flat_map(|t| [t.name.clone(), format!("{} @ {folder}", t.name)].map(|key| (key, t)))
        .filter(|(key, _)| markdown::block(&text, key).is_some())
        .map(|(key, t)| (key, format!("{from}{}", markdown::table(t))))
        .collect();
    if blocks.is_empty() {
        let key = set.tables.first().map_or_else(|| "TABLE".to_string(), |t| t.name.clone());
        return Err(ReportError::NoBlock { path: doc.to_path_buf(), key });
    }
    markdown::write_blocks(doc, &blocks)?;
    Ok(blocks.into_iter().map(|b| b.0).collect())
}

/// The JSON text of a result set exactly as results.json holds it (pretty, trailing newline).
pub fn to_json(set: &ResultSet) -> Result<String, ReportError> {
    let mut text = serde_json::to_string_pretty(set).map_err(ReportError::Encode)?;
    text.push('\n');
    Ok(text)
}

/// Parses results.json text. The error says what is wrong and where (line and column).
pub fn from_json(text: &str) -> Result<ResultSet, ReportError> {
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
        let message = message.strip_suffix(&suffix).unwrap_or(&message).to_string();
        ReportError::Json { path: None, what, line: e.line(), column: e.column(), message }
    })
}

/// The files of a folder derived from `set`, relative to it: its tables' CSVs and its charts.
pub fn derived_files(set: &ResultSet) -> Vec<String> {
    let charts = set.figures.iter().flat_map(|f| [format!("{}.svg", f.id), format!("{}.png", f.id)]);
    csv::table_files(set).into_iter().chain(charts).collect()
}

/// The result set in results.json at `path`.
fn read_set(path: &Path) -> Result<ResultSet, ReportError> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == ErrorKind::NotFound => return Err(ReportError::NoResults { path: path.to_path_buf() }),
        Err(e) => return Err(ReportError::io(Op::Read, path, e)),
    };
    from_json(&text).map_err(|e| e.in_file(path))
}

/// Checks that `dir` may receive a result set titled `title`: it is missing, or has no
/// results.json, or its results.json is a result set of the same title. [`write_report`] checks
/// this itself; a command can call it before its runs, so that it does not run them all only to
/// be refused at the end.
pub fn check_folder(dir: &Path, title: &str) -> Result<(), ReportError> {
    check_place(dir)?;
    previous_set(dir, title).map(|_| ())
}

/// Refuses `dir` unless a result folder can be written there: it exists as a folder or can be
/// made, and a file can be created in it. A command checks this before its runs, so that it does
/// not run them all only to fail writing its result folder. The check leaves nothing behind: its
/// probe file, and the folders it made, are removed (the result folder is made again when written).
pub fn check_place(dir: &Path) -> Result<(), ReportError> {
    if fs::metadata(dir).is_ok_and(|m| !m.is_dir()) {
        return Err(ReportError::NotAFolder { dir: dir.to_path_buf() });
    }
    // The folders missing now, innermost first: the ones the check makes and then removes.
    let missing: Vec<&Path> =
        dir.ancestors().take_while(|p| !p.as_os_str().is_empty() && fs::symlink_metadata(p).is_err()).collect();
    let probe = fs::create_dir_all(dir)
        .and_then(|()| tempfile::Builder::new().prefix(".flashkv-write-check-").tempfile_in(dir).map(drop));
    for made in &missing {
        // Only empty folders go: anything that appeared in one meanwhile is left alone.
        let _ = fs::remove_dir(made);
    }
    probe.map_err(|source| ReportError::NotWritable { dir: dir.to_path_buf(), source })
}

/// The result set in `dir`, if any, after checking that it has the title `title`.
fn previous_set(dir: &Path, title: &str) -> Result<Option<ResultSet>, ReportError> {
    let old = match read_set(&dir.join(JSON_FILE)) {
        Ok(old) => old,
        Err(ReportError::NoResults { .. }) => return Ok(None),
        // A parent of `dir` is a file: creating it will say so.
        Err(ReportError::Io { source, .. }) if source.kind() == ErrorKind::NotADirectory => return Ok(None),
        Err(e @ ReportError::Io { .. }) => return Err(e),
        Err(e) => return Err(ReportError::ForeignResults { dir: dir.to_path_buf(), reason: e.to_string() }),
    };
    if old.title != title {
        return Err(ReportError::OtherResults { dir: dir.to_path_buf(), existing: old.title, new: title.to_string() });
    }
    Ok(Some(old))
}

/// The files the folder's old result set has and `set` does not; an error if the folder holds
/// another result set.
fn stale_files(dir: &Path, set: &ResultSet) -> Result<Vec<String>, ReportError> {
    let Some(mut old) = previous_set(dir, &set.title)? else { return Ok(Vec::new()) };
    let new: BTreeSet<String> = derived_files(set).into_iter().collect();
    // Only plain names: a hand-edited old figure id must not make us remove files elsewhere.
    old.figures.retain(|f| plain_file_stem(&f.id));
    Ok(derived_files(&old).into_iter().filter(|f| !new.contains(f)).collect())
}

/// Removes `dir` if it is an empty directory (the tables folder of a set that no longer has tables).
fn remove_if_empty(dir: &Path) {
    if fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none()) {
        // Nothing is lost if this fails: an empty folder stays.
        let _ = fs::remove_dir(dir);
    }
}

/// Writes everything derived from the JSON; returns the index path.
fn render_derived(dir: &Path, set: &ResultSet) -> Result<PathBuf, ReportError> {
    write_file(&dir.join(CSV_FILE), csv::runs(set).as_bytes())?;
    write_file(&dir.join(LATENCY_FILE), csv::latency(set).as_bytes())?;
    if !set.tables.is_empty() {
        let tables = dir.join(TABLES_DIR);
        fs::create_dir_all(&tables).map_err(|e| ReportError::io(Op::CreateDir, &tables, e))?;
    }
    for (name, table) in csv::table_files(set).iter().zip(&set.tables) {
        write_file(&dir.join(name), csv::table(table).as_bytes())?;
    }
    for fig in &set.figures {
        let svg = chart::render_svg(fig, &set.scale)?;
        write_file(&dir.join(format!("{}.svg", fig.id)), svg.as_bytes())?;
        let png = raster::render_png(&fig.id, &svg)?;
        write_file(&dir.join(format!("{}.png", fig.id)), &png)?;
    }
    let index = dir.join(INDEX_FILE);
    write_file(&index, html::render(set).as_bytes())?;
    Ok(index)
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    fs::write(path, bytes).map_err(|e| ReportError::io(Op::Write, path, e))
}

/// Whether `id` can be a file stem and a link target: letters, digits, '-', '_', '.', not hidden.
fn plain_file_stem(id: &str) -> bool {
    !id.is_empty()
        && !id.starts_with('.')
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A figure id becomes a file name and a link target, so it must be a plain, unique file stem.
fn check_figure_ids(set: &ResultSet) -> Result<(), ReportError> {
    let mut seen = BTreeSet::new();
    for (index, fig) in set.figures.iter().enumerate() {
        let id = fig.id.as_str();
        if !plain_file_stem(id) {
            return Err(ReportError::FigureId { path: None, index, title: fig.title.clone(), id: id.to_string() });
        }
        if !seen.insert(id) {
            return Err(ReportError::DuplicateFigureId { path: None, index, id: id.to_string() });
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

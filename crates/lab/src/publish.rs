//! Getting results out: a readable table on the terminal, JSON on stdout, and result folders
//! (results.json, results.csv, charts, index.html, and timing.json for the wall-clock figures
//! kept out of the deterministic results).

use std::path::{Path, PathBuf};

use crate::batch::{Executor, Runner};
use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::report::model::{Cell, ResultSet, ResultTable};
use crate::result::{RunResult, Timing};
use crate::run_cache::RunCache;

/// Where a single-run command's result goes (`--json`, `--out`), the same for every command.
#[derive(clap::Args, Debug, Clone)]
pub struct OutputArgs {
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write a result folder here (results.json, results.csv, index.html).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Nothing on stderr but errors: no line stating the device, no progress bars (which are
    /// drawn only when stderr is a terminal anyway).
    #[arg(long)]
    pub quiet: bool,
}

/// Prints `text` (or the JSON of `r`) and, with `--out`, writes a one-run result folder.
pub fn emit(title: &str, r: &RunResult, t: &Timing, output: &OutputArgs, text: String) -> Result<()> {
    let (json, out) = (output.json, output.out.as_deref());
    if json {
        // The result's sections, and the wall clock apart under `timing` (as a result folder keeps
        // it apart in timing.json): the rest is the same for the same run.
        let mut v = serde_json::to_value(r).map_err(LabError::json("the result"))?;
        if let Some(o) = v.as_object_mut() {
            o.insert("timing".into(), serde_json::to_value(t).map_err(LabError::json("the timing"))?);
        }
        println!("{}", serde_json::to_string_pretty(&v).map_err(LabError::json("the result"))?);
    } else {
        print!("{text}");
        println!("wall time {:.1} s", t.wall_time_s);
    }
    if let Some(dir) = out {
        write_folder(dir, &single_run_set(title, r), std::slice::from_ref(t))?;
        if !json {
            println!("report: {}", dir.join("index.html").display());
        }
    }
    Ok(())
}

/// A result set with one run: its phases as a table.
fn single_run_set(title: &str, r: &RunResult) -> ResultSet {
    let rows = r
        .phases
        .iter()
        .map(|p| {
            vec![
                Cell::Text(p.name.clone()),
                Cell::Number(p.ops as f64),
                Cell::Number(p.ops_per_sec),
                Cell::Number(p.latency.p50_us),
                Cell::Number(p.latency.p99_us),
                Cell::Number(p.latency.p999_us),
            ]
        })
        .collect();
    ResultSet {
        title: title.to_string(),
        scale: format!("{} on {}", r.engine, r.device),
        notes: Vec::new(),
        tables: vec![ResultTable {
            name: "phases".into(),
            columns: ["phase", "ops", "ops/s", "p50 us", "p99 us", "p99.9 us"].map(String::from).to_vec(),
            rows,
        }],
        figures: Vec::new(),
        runs: serde_json::to_value(r).ok().into_iter().collect(),
        ..ResultSet::default()
    }
}

/// Writes the report and the wall-clock timings next to it.
pub fn write_folder(dir: &Path, set: &ResultSet, timings: &[Timing]) -> Result<()> {
    crate::report::write_report(dir, set)?;
    let t = serde_json::to_string_pretty(timings).map_err(LabError::json("the timings"))?;
    let path = dir.join("timing.json");
    std::fs::write(&path, t).map_err(LabError::io(path, "write"))
}

/// `flashkv run FILE` (at `scale`, for a file with scales), its runs carried out by `executor`;
/// finished runs are kept in the result folder (default: results/STEM, or results/STEM-SCALE), all
/// of them deleted first with `fresh`.
pub fn run_experiment(
    file: &Path,
    scale: Option<&str>,
    out: Option<PathBuf>,
    fresh: bool,
    executor: Executor,
    progress: bool,
) -> Result<()> {
    let e = Experiment::load_at(file, scale)?;
    let out = out.unwrap_or_else(|| {
        let stem = file.file_stem().map_or("experiment".into(), |s| s.to_string_lossy().to_string());
        // A file with scales keeps one folder per scale.
        let scale = e.at_scale().map_or(String::new(), |(name, _)| format!("-{name}"));
        PathBuf::from("results").join(format!("{stem}{scale}"))
    });
    // A folder of another result set is refused now, not after the runs.
    crate::report::check_folder(&out, e.title())?;
    let cache = RunCache::open(&out, fresh)?;
    let (set, timings) = e.run(&Runner { progress, cache: Some(cache), executor })?;
    print!("{}", summary(&set));
    write_folder(&out, &set, &timings)?;
    println!("report: {}", out.join("index.html").display());
    Ok(())
}

/// Every table of a result set as text, then the notes.
pub fn summary(set: &ResultSet) -> String {
    let mut out = format!("{} ({})\n", set.title, set.scale);
    for t in &set.tables {
        out.push_str(&format!("\n{}\n", t.name));
        let cols: Vec<&str> = t.columns.iter().map(String::as_str).collect();
        let mut table = crate::table::Table::new(&cols);
        for row in &t.rows {
            table.row(row.iter().map(format_cell).collect());
        }
        out.push_str(&table.render());
    }
    out.push('\n');
    for n in &set.notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

fn format_cell(c: &Cell) -> String {
    match c {
        Cell::Text(s) => s.clone(),
        Cell::Number(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Cell::Number(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Cell::Number(v) => format!("{v:.3}"),
    }
}

//! The default experiment (`flashkv` with no arguments): a small run of the engine on the simulated
//! FEMU SSD (experiments/demo.toml, built into the binary), its table on the terminal and its
//! report folder on disk. Well under a minute.

use std::path::Path;

use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::publish;

const DEMO: &str = include_str!("../experiments/demo.toml");

pub fn run(out: &Path, progress: bool) -> Result<()> {
    let e = Experiment::parse(DEMO).map_err(|e| LabError::Experiment(format!("built-in demo experiment: {e}")))?;
    crate::report::check_folder(out, e.title())?;
    eprintln!("{} (more: flashkv --help)", e.title());
    let (set, timings) = e.run(&crate::batch::Runner { progress, ..Default::default() })?;
    print!("{}", publish::summary(&set));
    publish::write_folder(out, &set, &timings)?;
    println!("report: {}", out.join("index.html").display());
    Ok(())
}

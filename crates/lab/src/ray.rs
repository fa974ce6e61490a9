//! Runs carried out as Ray tasks (`--executor ray[=ADDRESS]`). Ray is the engine: this module
//! hands the runs to the Python package's `flashkv.ray_runs`, which submits one task per run (each
//! calls the same `runner::run` through the package's native module) and reports each outcome as
//! it finishes. Nothing here schedules.
//!
//! The protocol, one JSON object per line:
//! - to `python -m flashkv.ray_runs [--address A]` on its stdin: `{"index", "spec"}` per run, then
//!   end of input;
//! - back on its stdout: `{"index", "outcome"}` per finished run, the outcome being `{"result",
//!   "timing"}` or `{"error"}`. Its stderr (Ray's own lines) passes through.
//!
//! The Python interpreter is `$FLASHKV_PYTHON`, or `python3`.
//!
//! A binary with plug-ins (`crate::plugins`) passes itself as `--binary`: the tasks run it
//! (`BINARY run-spec`, a spec on stdin and its outcome on stdout) instead of the package's native
//! module, which knows no plug-in's name; Ray ships it to the workers.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};
use crate::result::{RunResult, Timing};
use crate::runner::Outcome;
use crate::spec::RunSpec;

/// One run as sent to a worker.
#[derive(Serialize)]
struct Task<'a> {
    index: usize,
    spec: &'a RunSpec,
}

/// A run's outcome as it comes back (and as the native module's `run_spec` returns it).
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reply {
    Done { result: Box<RunResult>, timing: Timing },
    Failed { error: String },
}

impl From<Outcome> for Reply {
    fn from(o: Outcome) -> Reply {
        match o {
            Ok((result, timing)) => Reply::Done { result: Box::new(result), timing },
            Err(error) => Reply::Failed { error: error.to_string() },
        }
    }
}

impl From<Reply> for Outcome {
    fn from(r: Reply) -> Outcome {
        match r {
            Reply::Done { result, timing } => Ok((*result, timing)),
            Reply::Failed { error } => Err(LabError::Remote(error)),
        }
    }
}

/// `flashkv run-spec`: runs the specification (JSON) on stdin and prints its outcome (JSON), as a
/// Ray task does through the native module.
pub fn run_spec_on_stdin() -> Result<()> {
    let mut text = String::new();
    std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
        .map_err(|e| LabError::Ray(format!("reading a run specification on stdin: {e}")))?;
    let reply = match serde_json::from_str::<RunSpec>(&text) {
        Ok(spec) => Reply::from(crate::runner::run(&spec, false)),
        Err(e) => Reply::Failed { error: format!("run specification: {e}") },
    };
    println!("{}", serde_json::to_string(&reply).map_err(LabError::json("a run's outcome"))?);
    Ok(())
}

#[derive(Deserialize)]
struct Finished {
    index: usize,
    outcome: Reply,
}

/// The interpreter that runs `flashkv.ray_runs`.
fn python() -> String {
    std::env::var("FLASHKV_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// Runs `runs` (each with its index in the batch) on Ray at `address` (a Ray started here when
/// `None`), passing each outcome to `finished` as it comes back. Fails when the Python side cannot
/// start or ends early; a run that fails is an outcome, not an error.
pub fn run(address: Option<&str>, runs: &[(usize, &RunSpec)], mut finished: impl FnMut(usize, Outcome)) -> Result<()> {
    if runs.is_empty() {
        return Ok(());
    }
    let python = python();
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "flashkv.ray_runs"]);
    if let Some(a) = address {
        cmd.args(["--address", a]);
    }
    if !crate::plugins::registry().is_empty() {
        let me = std::env::current_exe().map_err(|e| LabError::Ray(format!("cannot find this binary to ship: {e}")))?;
        cmd.arg("--binary").arg(me);
    }
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().map_err(|e| {
        LabError::Ray(format!(
            "cannot start {python} (set FLASHKV_PYTHON to the interpreter with flashkv and ray): {e}"
        ))
    })?;
    let mut lines = String::new();
    for &(index, spec) in runs {
        lines += &serde_json::to_string(&Task { index, spec }).map_err(LabError::json("a run specification"))?;
        lines.push('\n');
    }
    // Written from a thread: the worker may answer before it has read everything.
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let writer = std::thread::spawn(move || stdin.write_all(lines.as_bytes()));
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut left: std::collections::BTreeSet<usize> = runs.iter().map(|r| r.0).collect();
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| LabError::Ray(format!("reading {python}'s output: {e}")))?;
        let Ok(done) = serde_json::from_str::<Finished>(&line) else {
            // Not ours (a library printing to stdout): pass it on.
            eprintln!("{line}");
            continue;
        };
        if left.remove(&done.index) {
            finished(done.index, done.outcome.into());
        }
    }
    let wrote = writer.join().map_err(|_| LabError::Ray("the writer thread panicked".into()))?;
    let status = child.wait().map_err(|e| LabError::Ray(format!("{python}: {e}")))?;
    if !left.is_empty() {
        let hint = if wrote.is_err() || !status.success() {
            format!(
                " ({python} -m flashkv.ray_runs exited with {status}; is the package installed? pip install ./python ray)"
            )
        } else {
            String::new()
        };
        return Err(LabError::Ray(format!("{} of {} runs came back{hint}", runs.len() - left.len(), runs.len())));
    }
    Ok(())
}

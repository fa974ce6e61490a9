//! `flashkv simcost`: what the simulator itself costs in host CPU.
//!
//! Every run of the experiment files given runs beside its twin on MemFs: the same engine and
//! workload on memory in wall-clock time, which is the engine's own work with nothing simulated.
//! Each run is a child process of its own (`flashkv run-spec`, which runs one specification and
//! nothing else), measured by the operating system (`wait4`: user + system CPU seconds, peak
//! resident memory) and by the wall clock. Rounds interleave the runs (every run once, in order,
//! then again), so a machine that gets busier or quieter meets them alike; the figures are medians
//! over the rounds. The overhead of a run is its median CPU seconds over its twin's; `cores` is
//! its CPU seconds over its wall seconds (1 for a run that keeps one core busy).
//!
//! No figure here is asserted anywhere: this machine's timing is noisy, so targets are read from
//! this command's output (docs/performance.md), never checked in a test.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde::Serialize;

use crate::error::{LabError, Result};
use crate::experiment::Experiment;
use crate::ray::Reply;
use crate::spec::{DeviceSpec, FsKind, RunSpec};
use crate::table::Table;

#[derive(clap::Args, Debug)]
pub struct SimcostArgs {
    /// Experiment files: each of their runs is measured beside its twin on MemFs.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Interleaved rounds (every run once per round); the figures are medians over them.
    #[arg(long, default_value_t = 5)]
    pub rounds: usize,
    /// Print JSON instead of the table.
    #[arg(long)]
    pub json: bool,
    /// The flashkv binary whose runs are measured (its `run-spec`): another build, for a before /
    /// after; this binary when absent.
    #[arg(long)]
    pub binary: Option<PathBuf>,
}

/// One process's cost.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Cost {
    /// User + system CPU seconds.
    pub cpu_s: f64,
    pub wall_s: f64,
    pub peak_rss_mib: f64,
}

/// A configuration's costs over the rounds, and their medians.
#[derive(Debug, Serialize)]
pub struct Measured {
    pub rounds: Vec<Cost>,
    pub median_cpu_s: f64,
    pub median_wall_s: f64,
    /// CPU seconds over wall seconds, of the medians.
    pub cores: f64,
    pub peak_rss_mib: f64,
}

/// A simulated run beside its twin on MemFs.
#[derive(Debug, Serialize)]
pub struct Comparison {
    pub name: String,
    pub simulated: Measured,
    pub mem: Measured,
    /// The simulated run's median CPU seconds over the twin's.
    pub overhead: f64,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub rounds: usize,
    pub runs: Vec<Comparison>,
}

/// The twin of `spec` on MemFs: its engine, workload and host, on memory in wall-clock time.
pub fn mem_twin(spec: &RunSpec) -> RunSpec {
    RunSpec { device: DeviceSpec { fs: FsKind::Mem, ..DeviceSpec::default() }, digest: false, ..spec.clone() }
}

pub fn run(args: &SimcostArgs) -> Result<()> {
    if args.rounds == 0 {
        return Err(LabError::Experiment("simcost: --rounds must be at least 1".into()));
    }
    let mut runs: Vec<(String, RunSpec)> = Vec::new();
    for file in &args.files {
        let exp = Experiment::load(file)?;
        for (name, spec) in exp.runs() {
            if !matches!(spec.device.fs, FsKind::Sim | FsKind::Zone) {
                return Err(LabError::Experiment(format!(
                    "{}: run '{name}' is not simulated (fs = sim or zone): it has no simulator to measure",
                    file.display()
                )));
            }
            runs.push((format!("{}: {name}", exp.title()), spec));
        }
    }
    let me = match &args.binary {
        Some(b) => b.clone(),
        None => std::env::current_exe()
            .map_err(|e| LabError::Unavailable(format!("simcost: cannot find this binary to run: {e}")))?,
    };
    let mut costs: Vec<[Vec<Cost>; 2]> = runs.iter().map(|_| [Vec::new(), Vec::new()]).collect();
    for round in 0..args.rounds {
        for (i, (name, spec)) in runs.iter().enumerate() {
            for (k, (what, s)) in [("MemFs", mem_twin(spec)), ("simulated", spec.clone())].into_iter().enumerate() {
                let c = run_child(&me, &s)
                    .map_err(|e| LabError::Run { label: format!("{name} ({what})"), source: Box::new(e) })?;
                eprintln!(
                    "simcost: round {}/{}: {name} ({what}): {:.2} CPU s, {:.2} s",
                    round + 1,
                    args.rounds,
                    c.cpu_s,
                    c.wall_s
                );
                costs[i][k].push(c);
            }
        }
    }
    let report = Report {
        rounds: args.rounds,
        runs: runs
            .into_iter()
            .zip(costs)
            .map(|((name, _), [mem, sim])| {
                let (mem, simulated) = (measured(mem), measured(sim));
                Comparison { name, overhead: simulated.median_cpu_s / mem.median_cpu_s, simulated, mem }
            })
            .collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).map_err(LabError::json("the simcost report"))?);
    } else {
        print!("{}", render(&report));
    }
    Ok(())
}

/// The medians of a configuration's rounds.
fn measured(rounds: Vec<Cost>) -> Measured {
    let median_cpu_s = median(rounds.iter().map(|c| c.cpu_s));
    let median_wall_s = median(rounds.iter().map(|c| c.wall_s));
    Measured {
        median_cpu_s,
        median_wall_s,
        cores: median_cpu_s / median_wall_s,
        peak_rss_mib: rounds.iter().map(|c| c.peak_rss_mib).fold(0.0, f64::max),
        rounds,
    }
}

/// The median (the mean of the middle two for an even count).
pub fn median(values: impl Iterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn render(r: &Report) -> String {
    let mut t = Table::new(&["run", "MemFs CPU s", "simulated CPU s", "overhead", "cores", "peak MiB"]);
    for c in &r.runs {
        t.row(vec![
            c.name.clone(),
            format!("{:.2}", c.mem.median_cpu_s),
            format!("{:.2}", c.simulated.median_cpu_s),
            format!("{:.3}", c.overhead),
            format!("{:.3}", c.simulated.cores),
            format!("{:.0}", c.simulated.peak_rss_mib),
        ]);
    }
    format!("medians of {} interleaved rounds (CPU = user + system)\n{}", r.rounds, t.render())
}

/// Runs `spec` in a child process (`BINARY run-spec`) and measures it.
fn run_child(binary: &PathBuf, spec: &RunSpec) -> Result<Cost> {
    let io = |what: &'static str| move |source| LabError::Io { path: binary.clone(), what, source };
    let text = serde_json::to_string(spec).map_err(LabError::json("a run specification"))?;
    let start = Instant::now();
    let mut child = Command::new(binary)
        .arg("run-spec")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(io("start"))?;
    // The spec is small: written whole before the reply is read.
    child.stdin.take().expect("stdin is piped").write_all(text.as_bytes()).map_err(io("write to"))?;
    let mut out = String::new();
    child.stdout.take().expect("stdout is piped").read_to_string(&mut out).map_err(io("read from"))?;
    let (status, usage) = wait4(child.id()).map_err(io("wait for"))?;
    let wall_s = start.elapsed().as_secs_f64();
    if !status_ok(status) {
        return Err(LabError::Remote(format!("run-spec exited with status {status}")));
    }
    match serde_json::from_str::<Reply>(out.trim()) {
        Ok(Reply::Done { .. }) => {}
        Ok(Reply::Failed { error }) => return Err(LabError::Remote(error)),
        Err(e) => return Err(LabError::Remote(format!("run-spec printed no outcome: {e}"))),
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok(Cost {
        cpu_s: secs(usage.ru_utime) + secs(usage.ru_stime),
        wall_s,
        // Linux gives ru_maxrss in KiB.
        peak_rss_mib: usage.ru_maxrss as f64 / 1024.0,
    })
}

/// Waits for the child `pid` and takes its resource usage (std's `wait` does not give it).
fn wait4(pid: u32) -> std::io::Result<(i32, libc::rusage)> {
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct, filled in by wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid for writes for the call's duration.
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r >= 0 {
            return Ok((status, usage));
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn status_ok(status: i32) -> bool {
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0].into_iter()), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0].into_iter()), 2.5);
        assert!(median(std::iter::empty()).is_nan());
    }

    #[test]
    fn a_twin_keeps_the_engine_and_workload_on_memfs() {
        let exp = Experiment::parse(
            "title = \"t\"\n[engine]\nwrite_buffer_size = \"768KiB\"\n[device]\nfs = \"zone\"\npage_cache = \"96MiB\"\n\
             [workload]\nname = \"fillrandom\"\nrecords = 1000\nvalue_size = 512\n",
        )
        .unwrap();
        let (_, spec) = exp.runs().remove(0);
        let twin = mem_twin(&spec);
        assert_eq!(twin.device.fs, FsKind::Mem);
        assert_eq!(twin.device.page_cache, DeviceSpec::default().page_cache);
        assert_eq!(serde_json::to_string(&twin.engine).unwrap(), serde_json::to_string(&spec.engine).unwrap());
        assert_eq!(serde_json::to_string(&twin.workload).unwrap(), serde_json::to_string(&spec.workload).unwrap());
    }
}

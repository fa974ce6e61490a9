//! `flashkv`'s command line, as a library function: the `flashkv` binary calls [`main`] with no
//! plug-ins, and a researcher's own binary with theirs (`crate::plugins`).
//!
//! With no arguments it runs a small demo experiment on the simulated SSD and prints its table.
//! Subcommands run the individual tools; every result is available as JSON with the accounting
//! names of docs/design.md, and as a result folder with tables and charts.

use crate::error::{LabError, Result};
use crate::plugins::{self, Registry};
use crate::publish::OutputArgs;
use crate::result::RunResult;
use crate::spec::RunSpec;
use crate::{bench, demo, ftl, publish, report, repro, result, runner, workload_cmd};

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(name = "flashkv", version, about = "Key-value stores and flash SSDs, simulated exactly and fast")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The default demo experiment (also what runs with no arguments).
    Demo {
        /// Where to write the report.
        #[arg(long, default_value = "results/demo")]
        out: PathBuf,
    },
    /// LevelDB's db_bench on the engine (simulated SSD, host directory or memory).
    Bench(bench::BenchArgs),
    /// A YCSB core workload: load, then run.
    Ycsb(workload_cmd::YcsbArgs),
    /// A FAST'20 Mixgraph workload: fill, then run.
    Mixgraph(workload_cmd::MixgraphArgs),
    /// Synthetic page writes, or a block trace, on a simulated block SSD (GC and write amplification studies).
    Ftl(ftl::FtlArgs),
    /// Runs an experiment file (TOML) and writes its result folder.
    Run {
        /// The experiment file.
        file: PathBuf,
        /// The scale, for a file with `[[scale]]` tables (its values are then the paper's, and the
        /// scale divides the fields it lists): its first scale when absent.
        #[arg(long)]
        scale: Option<String>,
        /// The result folder (default: results/<file stem>, or results/<file stem>-<scale> for a file
        /// with scales). Finished runs are kept in its `runs/` folder: an experiment interrupted and
        /// started again resumes where it stopped.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run everything again: delete the result folder's finished runs first.
        #[arg(long)]
        fresh: bool,
        /// Where the runs go: local (this machine's cores, as many at once as the cores and the
        /// memory estimate allow), local=N (N at once, whatever the memory estimate says), ray (a
        /// Ray started here) or ray=ADDRESS (a Ray cluster, e.g. ray=auto or ray=ray://HEAD:10001);
        /// ray needs the Python package (pip install ./python ray).
        #[arg(long, default_value = "local", value_parser = str::parse::<crate::batch::Executor>)]
        executor: crate::batch::Executor,
    },
    /// Reproduces a seed paper's experiments beside the paper's numbers (remapcom, remapcom-xfs,
    /// zns-ll, plsc, kvftl).
    Repro(repro::ReproArgs),
    /// Fits the host CPU cost model on this machine (in-memory db_bench runs, 100 B to 16 KiB
    /// values) and writes it where `--cpu` and experiment files take it.
    Calibrate(crate::calibrate::CalibrateArgs),
    /// Rebuilds the engine's database in DIR (a host directory) from the SSTs and WALs found there,
    /// when CURRENT or the MANIFEST is lost or damaged; nothing is deleted (unused files go to
    /// DIR/lost/).
    Repair {
        /// The database directory.
        dir: PathBuf,
    },
    /// What the simulator itself costs: each run of the experiment files beside the same engine
    /// and workload on MemFs, in child processes, interleaved rounds; CPU seconds (medians), the
    /// overhead ratio and the cores a simulated run uses.
    Simcost(crate::simcost::SimcostArgs),
    /// Rebuilds the page and charts of a result folder from its results.json.
    Report {
        /// The result folder.
        dir: PathBuf,
        /// Also write the folder's tables into this markdown file, each into its block: the
        /// lines `<!-- NAME -->` and `<!-- end NAME -->` around it, NAME the table's name (such
        /// as `claims (small)`, a repro's claims at its small scale), or `NAME @ FOLDER` for the
        /// table of the result folder named FOLDER only.
        #[arg(long, value_name = "FILE")]
        tables_into: Option<PathBuf>,
    },
    /// Runs the run specification (JSON) on stdin and prints its outcome (JSON): what a Ray task
    /// runs when the binary has plug-ins.
    #[command(hide = true)]
    RunSpec,
}

/// Runs flashkv's command line with `plugins` installed (the `flashkv` binary installs none; a
/// crate of one's own that registers plug-ins calls this from its `main`: see `crate::plugins`).
pub fn main(plugins: Registry) -> ExitCode {
    if let Err(e) = plugins::install(plugins) {
        eprintln!("flashkv: error: {e}");
        return ExitCode::from(2);
    }
    let cli = Cli::parse();
    let progress = std::io::stderr().is_terminal();
    let result = match cli.command {
        None => demo::run(&PathBuf::from("results/demo"), progress),
        Some(Command::Demo { out }) => demo::run(&out, progress),
        Some(Command::Ftl(args)) => run_one(&args.spec(), &args.output, "ftl", ftl::render, progress),
        Some(Command::Bench(args)) => {
            args.spec().and_then(|spec| run_one(&spec, &args.output, "db_bench", bench::render, progress))
        }
        Some(Command::Ycsb(args)) => {
            args.spec().and_then(|spec| run_one(&spec, &args.output, "ycsb", result::render, progress))
        }
        Some(Command::Mixgraph(args)) => run_one(&args.spec(), &args.output, "mixgraph", result::render, progress),
        Some(Command::Run { file, scale, out, fresh, executor }) => {
            publish::run_experiment(&file, scale.as_deref(), out, fresh, executor, progress)
        }
        Some(Command::Repro(args)) => repro::run(&args),
        Some(Command::Repair { dir }) => crate::repair::run(&dir),
        Some(Command::Calibrate(args)) => crate::calibrate::run(&args, progress),
        Some(Command::RunSpec) => crate::ray::run_spec_on_stdin(),
        Some(Command::Simcost(args)) => crate::simcost::run(&args),
        Some(Command::Report { dir, tables_into }) => report_folder(&dir, tables_into.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flashkv: error: {}", e.in_flags());
            ExitCode::from(2)
        }
    }
}

/// `flashkv report DIR`: the folder's page and charts rebuilt, and its tables written into a
/// markdown file when asked.
fn report_folder(dir: &Path, tables_into: Option<&Path>) -> Result<(), LabError> {
    let index = report::rebuild(dir)?;
    println!("report: {}", index.display());
    if let Some(doc) = tables_into {
        for name in report::tables_into(dir, doc)? {
            println!("{}: wrote {name}", doc.display());
        }
    }
    Ok(())
}

/// One run from a command's flags: its tables (or JSON) and, with `--out`, its result folder.
fn run_one(
    spec: &RunSpec,
    output: &OutputArgs,
    title: &str,
    render: fn(&RunResult) -> String,
    progress: bool,
) -> Result<()> {
    if let Some(dir) = &output.out {
        report::check_place(dir)?;
    }
    // A bad specification is refused before the device line, which would only precede the error.
    let plan = spec.plan()?;
    if !output.quiet {
        eprintln!("{}", crate::progress::device_line(&plan));
    }
    // Progress goes to stderr, so --json (on stdout) keeps it.
    let (r, t) = runner::run_plan(&plan, progress && !output.quiet)?;
    // ycsb and mixgraph are titled by their workload (ycsb-a, all_random, ...).
    let title = if matches!(title, "ycsb" | "mixgraph") { r.workload.clone() } else { title.to_string() };
    publish::emit(&title, &r, &t, output, render(&r))
}

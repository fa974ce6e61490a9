//! `flashkv`: the command line of the flash laboratory.
//!
//! With no arguments it runs a small demo experiment on the simulated SSD and prints its table.
//! Subcommands run the individual tools; every result is available as JSON with the accounting
//! names of DESIGN.md, and as a result folder with tables and charts.

use lab::{bench, demo, ftl, publish, report, repro, result, workload_cmd};

use std::io::IsTerminal;
use std::path::PathBuf;
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
    /// Synthetic page-write workload on a simulated block SSD (GC and write amplification studies).
    Ftl(ftl::FtlArgs),
    /// Runs an experiment file (TOML) and writes its result folder.
    Run {
        /// The experiment file.
        file: PathBuf,
        /// The result folder (default: results/<file stem>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Where the runs go: local (this machine's cores), ray (a Ray started here) or
        /// ray=ADDRESS (a Ray cluster, e.g. ray=auto or ray=ray://HEAD:10001); ray needs the
        /// Python package (pip install ./python ray).
        #[arg(long, default_value = "local", value_parser = str::parse::<lab::runner::Executor>)]
        executor: lab::runner::Executor,
    },
    /// Reproduces a seed paper's experiments beside the paper's numbers (remapcom, remapcom-xfs).
    Repro(repro::ReproArgs),
    /// Rebuilds the page and charts of a result folder from its results.json.
    Report {
        /// The result folder.
        dir: PathBuf,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let progress = std::io::stderr().is_terminal();
    let result = match cli.command {
        None => demo::run(&PathBuf::from("results/demo"), progress),
        Some(Command::Demo { out }) => demo::run(&out, progress),
        Some(Command::Ftl(args)) => run_ftl(&args),
        Some(Command::Bench(args)) => bench::run(&args, progress && !args.output.json)
            .and_then(|(r, t)| publish::emit("db_bench", &r, &t, &args.output, bench::render(&r))),
        Some(Command::Ycsb(args)) => workload_cmd::run_ycsb(&args, progress && !args.output.json).and_then(|(r, t)| {
            let text = result::render(&r);
            publish::emit(&r.workload.clone(), &r, &t, &args.output, text)
        }),
        Some(Command::Mixgraph(args)) => {
            workload_cmd::run_mixgraph(&args, progress && !args.output.json).and_then(|(r, t)| {
                let text = result::render(&r);
                publish::emit(&r.workload.clone(), &r, &t, &args.output, text)
            })
        }
        Some(Command::Run { file, out, executor }) => publish::run_experiment(&file, out, executor, progress),
        Some(Command::Repro(args)) => repro::run(&args, progress),
        Some(Command::Report { dir }) => {
            report::rebuild(&dir).map(|index| println!("report: {}", index.display())).map_err(|e| e.to_string())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("flashkv: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run_ftl(args: &ftl::FtlArgs) -> Result<(), String> {
    let spec = ftl::FtlSpec::from_args(args)?;
    let show_progress = !args.json && std::io::stderr().is_terminal();
    let result = ftl::run(&spec, show_progress)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?);
    } else {
        print!("{}", ftl::render(&result));
    }
    Ok(())
}

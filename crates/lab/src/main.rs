//! `flashkv`: the command line of the flash laboratory.
//!
//! With no arguments it runs a small demo experiment and prints its table. Subcommands run the
//! individual tools; every result is available as JSON with the accounting names of DESIGN.md.

mod bench;
mod demo;
mod ftl;
mod progress;
mod size;
mod stack;
mod table;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "flashkv",
    version,
    about = "Key-value stores and flash SSDs, simulated exactly and fast"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Synthetic page-write workload on a simulated block SSD (GC and write amplification studies).
    Ftl(ftl::FtlArgs),
    /// LevelDB's db_bench on the engine (simulated SSD, host directory or memory).
    Bench(bench::BenchArgs),
    /// The default demo experiment.
    Demo,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        None | Some(Command::Demo) => demo::run().map(|text| print!("{text}")),
        Some(Command::Ftl(args)) => run_ftl(&args),
        Some(Command::Bench(args)) => run_bench(&args),
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
        println!(
            "{}",
            serde_json::to_string_pretty(&result).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", ftl::render(&result));
    }
    Ok(())
}

fn run_bench(args: &bench::BenchArgs) -> Result<(), String> {
    let show_progress = !args.json && std::io::stderr().is_terminal();
    let report = bench::run(args, show_progress)?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?
        );
    } else {
        print!("{}", bench::render(&report));
    }
    Ok(())
}

//! `flashkv ycsb` and `flashkv mixgraph`: a load (fill) phase and a measured run phase of a YCSB
//! core workload or a FAST'20 Mixgraph workload, with the readable tables and, with `--out DIR`,
//! a result folder (results.json, results.csv, index.html).

use std::path::PathBuf;
use std::sync::Arc;

use workload::mixgraph::{Mixgraph, MixgraphConfig, MixgraphFill, MixgraphKind};
use workload::{ValueSize, Workload, WorkloadSpec, YcsbWorkload};

use crate::engine::{KvEngine, LsmEngine};
use crate::harness::run_phase;
use crate::result::{RunResult, Timing};
use crate::stack::{DeviceArgs, Stack};

/// Engine flags shared by the workload commands.
#[derive(clap::Args, Debug, Clone)]
pub struct EngineArgs {
    /// Sync every write.
    #[arg(long)]
    pub sync: bool,
    /// Align SST data blocks to the file system's block size (RemapCom needs it).
    #[arg(long)]
    pub align_blocks: bool,
}

impl EngineArgs {
    pub fn options(&self, stack: &Stack) -> lsm::Options {
        lsm::Options {
            align_blocks: self.align_blocks,
            ..stack.engine_options()
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct YcsbArgs {
    /// load, a, b, c, d, e, f.
    #[arg(long, default_value = "a")]
    pub workload: String,
    /// Records loaded (YCSB recordcount).
    #[arg(long, default_value_t = 100_000)]
    pub records: u64,
    /// Operations of the run phase (YCSB operationcount).
    #[arg(long, default_value_t = 100_000)]
    pub ops: u64,
    /// Record size in bytes (one field), or MIN-MAX.
    #[arg(long, default_value = "1024")]
    pub value_size: String,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write a result folder here (results.json, results.csv, index.html).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(clap::Args, Debug, Clone)]
pub struct MixgraphArgs {
    /// all_random, all_dist, prefix_random, prefix_dist.
    #[arg(long, default_value = "all_random")]
    pub workload: String,
    /// Key space (db_bench --num); the fill writes this many keys.
    #[arg(long, default_value_t = 200_000)]
    pub records: u64,
    /// Operations of the run phase.
    #[arg(long, default_value_t = 200_000)]
    pub ops: u64,
    #[arg(long, default_value_t = 1000)]
    pub seed: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub out: Option<PathBuf>,
}

fn check_counts(records: u64, ops: u64) -> Result<(), String> {
    if records == 0 {
        return Err("--records: must be at least 1".into());
    }
    if ops == 0 {
        return Err("--ops: must be at least 1".into());
    }
    Ok(())
}

pub fn run_ycsb(a: &YcsbArgs, progress: bool) -> Result<(RunResult, Timing), String> {
    let wall = std::time::Instant::now();
    check_counts(a.records, a.ops)?;
    let which: YcsbWorkload = a.workload.parse().map_err(|e| format!("--workload: {e}"))?;
    let value_size: ValueSize = a
        .value_size
        .parse()
        .map_err(|e| format!("--value-size: {e}"))?;
    let stack = Stack::build(&a.device)?;
    let mut engine = LsmEngine::open(
        Arc::clone(&stack.fs),
        a.engine.options(&stack),
        a.engine.sync,
    )?;
    let spec = WorkloadSpec {
        records: a.records,
        operations: a.ops,
        value_size,
    };
    let settle = stack.simulated();
    let load = Workload::Ycsb(YcsbWorkload::Load)
        .build(&spec, a.seed)
        .map_err(|e| e.to_string())?;
    let mut phases = vec![run_phase(
        "load",
        &mut engine,
        &stack,
        load,
        a.records,
        settle,
        progress,
    )?];
    if which != YcsbWorkload::Load {
        let ops = Workload::Ycsb(which)
            .build(&spec, a.seed + 1)
            .map_err(|e| e.to_string())?;
        phases.push(run_phase(
            &format!("run {}", which.name()),
            &mut engine,
            &stack,
            ops,
            a.ops,
            settle,
            progress,
        )?);
    }
    finish(
        &format!("ycsb-{}", which.name()),
        engine,
        &a.device,
        stack,
        phases,
        wall,
    )
}

pub fn run_mixgraph(a: &MixgraphArgs, progress: bool) -> Result<(RunResult, Timing), String> {
    let wall = std::time::Instant::now();
    check_counts(a.records, a.ops)?;
    let kind: MixgraphKind = a.workload.parse().map_err(|e| format!("--workload: {e}"))?;
    let stack = Stack::build(&a.device)?;
    let mut engine = LsmEngine::open(
        Arc::clone(&stack.fs),
        a.engine.options(&stack),
        a.engine.sync,
    )?;
    let cfg = MixgraphConfig::fast20(kind, a.records, a.ops);
    let settle = stack.simulated();
    let fill = MixgraphFill::new(&cfg, a.seed).map_err(|e| e.to_string())?;
    let mut phases = vec![run_phase(
        "fill",
        &mut engine,
        &stack,
        fill,
        a.records,
        settle,
        progress,
    )?];
    let mix = Mixgraph::new(cfg, a.seed + 1).map_err(|e| e.to_string())?;
    phases.push(run_phase(
        &format!("run {}", kind.name()),
        &mut engine,
        &stack,
        mix,
        a.ops,
        settle,
        progress,
    )?);
    finish(
        &format!("mixgraph-{}", kind.name()),
        engine,
        &a.device,
        stack,
        phases,
        wall,
    )
}

fn finish(
    name: &str,
    mut engine: LsmEngine,
    device: &DeviceArgs,
    stack: Stack,
    phases: Vec<crate::harness::PhaseResult>,
    wall: std::time::Instant,
) -> Result<(RunResult, Timing), String> {
    let stats = engine.stats().ok_or("the engine closed early")?;
    let desc = engine.describe();
    let result = RunResult::collect(name, desc, device.describe(), &stack, phases, &stats);
    engine.close()?;
    let wall_time_s = wall.elapsed().as_secs_f64();
    let nand = stack.nand_ops();
    Ok((
        result,
        Timing {
            wall_time_s,
            nand_ops_per_wall_sec: nand.map(|n| n as f64 / wall_time_s.max(1e-9)),
        },
    ))
}

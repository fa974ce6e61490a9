//! One run: a storage stack, the engine on it, and a workload's phases (a load or fill, then the
//! measured operations), measured into a [`RunResult`]. Every command, experiment and repro goes
//! through here, so they all measure the same way; [`crate::batch`] runs many.

use std::sync::Arc;
use std::time::Instant;

use workload::db_bench::DbBenchKind;
use workload::mixgraph::{Mixgraph, MixgraphConfig, MixgraphFill};
use workload::{Op, Workload, Ycsb, YcsbWorkload};

use crate::engine::{KvEngine, LsmEngine};
use crate::error::{LabError, Result};
use crate::harness::{run_phase, PhaseResult};
use crate::kv_device::KvDeviceEngine;
use crate::result::{HostCpuResult, RunResult, Timing};
use crate::spec::{Engine, Plan, RunSpec, WorkloadKind};
use crate::stack::{Backend, Stack};

/// What a run gives back.
pub type Outcome = Result<(RunResult, Timing)>;

/// Runs `spec`. Phases are: YCSB load, then the workload; Mixgraph fill, then the mix; db_bench's
/// benchmarks in order (each fill on a fresh database), after a fillrandom when the first only
/// reads. In simulation each phase ends when its background work is done, so its cost is inside
/// it.
pub fn run(spec: &RunSpec, progress: bool) -> Outcome {
    let wall = Instant::now();
    let plan = spec.plan()?;
    if let Engine::Device = plan.engine {
        return match spec.workload.name {
            WorkloadKind::BlockTrace => crate::block_replay::run(spec, progress),
            _ => crate::page_writes::run(spec, progress),
        };
    }
    let (stack, mut engine) = open(spec, &plan.engine)?;
    let phases = run_phases(spec, &plan, &stack, engine.as_mut(), progress)?;
    finish(spec, &plan, &stack, engine.as_mut(), phases, wall)
}

/// The workload's phases on `engine`.
fn run_phases(
    spec: &RunSpec,
    plan: &Plan,
    stack: &Stack,
    engine: &mut dyn KvEngine,
    progress: bool,
) -> Result<Vec<PhaseResult>> {
    let w = &spec.workload;
    let ws = w.generator_spec(plan.records, plan.operations, plan.value_size);
    let settle = stack.simulated();
    let mut phases: Vec<PhaseResult> = Vec::new();
    let mut phase = |name: &str, ops: Box<dyn Iterator<Item = Op> + Send>, n: u64, engine: &mut dyn KvEngine| {
        run_phase(name, engine, stack, ops, n, settle, progress).map(|p| phases.push(p))
    };
    let build = |w: Workload, seed: u64| w.build(&ws, seed);
    let ycsb = |y: YcsbWorkload, seed: u64| -> Result<Box<dyn Iterator<Item = Op> + Send>> {
        Ok(Box::new(Ycsb::new(w.ycsb_config(y, &ws)?, seed)?))
    };
    match &w.name {
        WorkloadKind::Ycsb(y) => {
            phase("load", ycsb(YcsbWorkload::Load, w.seed)?, plan.records, engine)?;
            if *y != YcsbWorkload::Load && plan.operations > 0 {
                let name = format!("run {}", y.name());
                phase(&name, ycsb(*y, w.seed + 1)?, plan.operations, engine)?;
            }
        }
        WorkloadKind::Mixgraph(k) => {
            let mut cfg = MixgraphConfig::fast20(*k, plan.records, plan.operations.max(1));
            if let Some(k) = w.key_size {
                cfg.key_size = k;
            }
            let fill = MixgraphFill::new(&cfg, w.seed)?;
            phase("fill", w.values.apply(Box::new(fill)), plan.records, engine)?;
            if plan.operations > 0 {
                let mix = Mixgraph::new(cfg, w.seed + 1)?;
                phase(&format!("run {}", k.name()), w.values.apply(Box::new(mix)), plan.operations, engine)?;
            }
        }
        WorkloadKind::KvTrace => {
            let file = w.kv_trace.as_ref().ok_or_else(|| LabError::invalid("workload.kv_trace", "missing"))?;
            replay_kv_trace(file, w.values, w.seed, &mut |ops, n| phase("replay", ops, n, engine))?;
        }
        WorkloadKind::PageWrites | WorkloadKind::BlockTrace => {
            unreachable!("page writes and block traces run without an engine (page_writes, block_replay)")
        }
        WorkloadKind::DbBench(list) => {
            let mut ran = 0;
            if list.first().is_some_and(|k| !k.writes()) {
                let fill = Workload::DbBench(DbBenchKind::FillRandom);
                phase("fillrandom", build(fill, w.seed)?, plan.records, engine)?;
                ran += 1;
            }
            for (i, k) in list.iter().enumerate() {
                if k.fresh_db() && ran > 0 {
                    engine.recreate()?;
                }
                let n = if k.writes() { plan.records } else { plan.operations.max(1) };
                phase(k.name(), build(Workload::DbBench(*k), w.seed + 1 + i as u64)?, n, engine)?;
                ran += 1;
            }
        }
    }
    for p in phases.iter_mut().filter(|p| p.name == DbBenchKind::ReadSeq.name()) {
        // db_bench counts every record read by readseq as one operation.
        p.ops = p.scanned_records;
        p.ops_per_sec = if p.elapsed_s > 0.0 { p.ops as f64 / p.elapsed_s } else { 0.0 };
        p.micros_per_op = if p.ops > 0 { p.elapsed_s * 1e6 / p.ops as f64 } else { 0.0 };
    }
    Ok(phases)
}

/// Replays the key-value trace in `file` as one phase (`phase(ops, count)`): a first pass checks
/// every line and counts the operations, so that a malformed line stops the run before it starts.
/// A RocksDB query trace (`workload::rocksdb_trace`) is told by its header; any other file is in
/// `workload::kv_trace`'s format.
fn replay_kv_trace(
    file: &std::path::Path,
    values: workload::ValueData,
    seed: u64,
    phase: &mut dyn FnMut(Box<dyn Iterator<Item = Op> + Send>, u64) -> Result<()>,
) -> Result<()> {
    use std::io::BufRead;
    use std::sync::Mutex;
    use workload::kv_trace::KvTrace;
    use workload::rocksdb_trace::{is_rocksdb_trace, RocksDbTrace};
    type Ops = Box<dyn Iterator<Item = std::result::Result<Op, workload::WorkloadError>> + Send>;
    let located =
        |e: workload::WorkloadError| LabError::invalid("workload.kv_trace", format!("{}, {e}", file.display()));
    let open = |values: workload::ValueData| -> Result<Ops> {
        let f = std::fs::File::open(file).map_err(LabError::io(file, "open the key-value trace"))?;
        let mut reader = std::io::BufReader::new(f);
        let start = reader.fill_buf().map_err(LabError::io(file, "read the key-value trace"))?;
        Ok(if is_rocksdb_trace(start) {
            Box::new(RocksDbTrace::new(reader, values).map_err(located)?)
        } else {
            Box::new(KvTrace::new(reader, values, seed))
        })
    };
    let mut count = 0;
    for op in open(workload::ValueData::Zeros)? {
        op.map_err(located)?;
        count += 1;
    }
    // The file is read again as the phase runs; should it change in between, its first bad line
    // ends the phase and is the run's error.
    let failed = Arc::new(Mutex::new(None));
    let seen = Arc::clone(&failed);
    let ops = open(values)?
        .map_while(move |op| op.map_err(|e| *seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(e)).ok());
    phase(Box::new(ops), count)?;
    let error = failed.lock().unwrap_or_else(|p| p.into_inner()).take();
    error.map_or(Ok(()), |e| Err(located(e)))
}

/// The store a run drives: the LSM engine on the device's file system, or the key-value SSD
/// `engine` names (its device is the device's preset and capacity).
pub fn open(spec: &RunSpec, engine: &Engine) -> Result<(Stack, Box<dyn KvEngine>)> {
    let device = &spec.device_as_built();
    Ok(match engine {
        Engine::Kv(design) => {
            let stack = Stack::kv_device(device, *design)?;
            let Backend::Kv(dev) = &stack.backend else { unreachable!("a key-value SSD stack") };
            let clock = stack.clock.clone().expect("a key-value SSD runs in simulated time");
            let engine = KvDeviceEngine::new(Arc::clone(dev), clock);
            (stack, Box::new(engine))
        }
        Engine::Device => unreachable!("page writes open no engine"),
        Engine::Lsm { options } => {
            let stack = Stack::build(device)?;
            if let (Some(clock), Some(cores)) = (&stack.clock, spec.host.cores) {
                clock.set_host_cores(cores);
            }
            let engine = LsmEngine::open(storage::Env::new(stack.fs()?), (**options).clone(), spec.host.sync)?;
            (stack, Box::new(engine))
        }
    })
}

/// The result of `phases` run on `engine` (and its content digest when asked), the engine closed,
/// and the wall-clock figures since `wall`.
fn finish(
    spec: &RunSpec,
    plan: &Plan,
    stack: &Stack,
    engine: &mut dyn KvEngine,
    phases: Vec<PhaseResult>,
    wall: Instant,
) -> Outcome {
    // A key-value SSD has no engine statistics of the LSM's kind: its accounting is the device's.
    let (stats, description) = match &plan.engine {
        Engine::Kv(d) => (
            None,
            format!("simulated {} key-value SSD ({}){}", spec.device.preset.name(), d.name(), spec.device.shape()),
        ),
        Engine::Device => unreachable!("page writes finish in page_writes::run"),
        Engine::Lsm { .. } => {
            (Some(engine.stats().ok_or(LabError::Engine(lsm::Error::Closed))?), spec.device.describe())
        }
    };
    stack.write_back()?;
    let mut result =
        RunResult::collect(&spec.workload.name.label(), engine.describe(), description, stack, phases, stats.as_ref());
    if let Some(stats) = &stats {
        result.host.cpu = Some(HostCpuResult {
            model: spec.host.describe_cpu(),
            foreground: stats.cpu_foreground,
            background: stats.cpu_background,
        });
    }
    if spec.digest {
        result.content_digest = Some(engine.content_digest()?);
    }
    engine.close()?;
    if let Some(bytes) = stack.device_write_bytes()? {
        result.fs.get_or_insert_with(Default::default).device_write_bytes = Some(bytes);
    }
    let wall_time_s = wall.elapsed().as_secs_f64();
    let nand_ops_per_wall_sec = stack.nand_ops().map(|n| n as f64 / wall_time_s.max(1e-9));
    Ok((result, Timing { wall_time_s, nand_ops_per_wall_sec }))
}

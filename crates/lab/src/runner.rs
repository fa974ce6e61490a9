//! One run: its plan's kind carried out by that kind's runner and measured into a [`RunResult`].
//! Every command, experiment and repro goes through here, so they all measure the same way;
//! [`crate::batch`] runs many.
//!
//! The LSM engine's run builds its file system and device, opens the engine with the planned
//! options and runs the workload's phases ([`crate::phases`]); a key-value SSD's run builds the
//! design on its NAND array and runs the same phases on it; page writes and block traces drive a
//! simulated block SSD alone ([`crate::page_writes`], [`crate::block_replay`]).

use std::sync::Arc;
use std::time::Instant;

use crate::engine::{KvEngine, LsmEngine};
use crate::error::{LabError, Result};
use crate::kv_device::KvDeviceEngine;
use crate::result::{HostCpuResult, Measured, RunResult, Timing};
use crate::spec::{Kind, KvSsdPlan, LsmPlan, Plan, RunSpec};
use crate::stack::Stack;

/// What a run gives back.
pub type Outcome = Result<(RunResult, Timing)>;

/// Plans `spec` and runs it (for an edge that holds a specification, not yet a plan).
pub fn run(spec: &RunSpec, progress: bool) -> Outcome {
    run_plan(&spec.plan()?, progress)
}

/// Runs `plan` with its kind's runner.
pub fn run_plan(plan: &Plan, progress: bool) -> Outcome {
    let wall = Instant::now();
    let (result, nand_ops) = match &plan.kind {
        Kind::Lsm(p) => run_lsm(plan, p, progress),
        Kind::KvSsd(p) => run_kv_ssd(plan, p, progress),
        Kind::PageWrites(p) => crate::page_writes::run(plan, p, progress),
        Kind::BlockTrace(p) => crate::block_replay::run(plan, p, progress),
    }?;
    let wall_time_s = wall.elapsed().as_secs_f64();
    let nand_ops_per_wall_sec = nand_ops.map(|n| n as f64 / wall_time_s.max(1e-9));
    Ok((result, Timing { wall_time_s, nand_ops_per_wall_sec }))
}

/// The LSM engine on its file system.
fn run_lsm(plan: &Plan, p: &LsmPlan, progress: bool) -> Measured {
    let stack = Stack::build(&p.storage)?;
    if let (Some(clock), Some(cores)) = (&stack.clock, p.cores) {
        clock.set_host_cores(cores);
    }
    let mut engine = LsmEngine::open(storage::Env::new(stack.fs()?), p.options.clone(), p.sync)?;
    let phases = crate::phases::run(&p.phases, &stack, &mut engine, progress)?;
    let stats = engine.stats().ok_or(LabError::Engine(lsm::Error::Closed))?;
    stack.write_back()?;
    let mut result = stack.result(&plan.workload, engine.describe(), plan.device.clone(), phases, Some(&stats));
    result.host.cpu = Some(HostCpuResult {
        model: p.cpu.clone(),
        foreground: stats.cpu_foreground,
        background: stats.cpu_background,
    });
    close(&mut engine, p.digest, &mut result)?;
    if let Some(bytes) = stack.device_write_bytes()? {
        result.fs.get_or_insert_with(Default::default).device_write_bytes = Some(bytes);
    }
    Ok((result, stack.nand_ops()))
}

/// A key-value SSD design: no engine statistics of the LSM's kind, its accounting is the
/// device's.
fn run_kv_ssd(plan: &Plan, p: &KvSsdPlan, progress: bool) -> Measured {
    let (stack, device, clock) = Stack::kv_device(p.design, p.readings, &p.media)?;
    let mut engine = KvDeviceEngine::new(Arc::clone(&device), clock);
    let phases = crate::phases::run(&p.phases, &stack, &mut engine, progress)?;
    let mut result = stack.result(&plan.workload, engine.describe(), plan.device.clone(), phases, None);
    close(&mut engine, p.digest, &mut result)?;
    Ok((result, stack.nand_ops()))
}

/// Closes `engine` once the result is taken, with the digest of its contents first when asked.
fn close(engine: &mut dyn KvEngine, digest: bool, result: &mut RunResult) -> Result<()> {
    if digest {
        result.content_digest = Some(engine.content_digest()?);
    }
    engine.close()
}

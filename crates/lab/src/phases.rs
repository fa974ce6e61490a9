//! A workload's phases on an engine: YCSB's load, then its workload; Mixgraph's fill, then its
//! mix; db_bench's benchmarks in order (each fill on a fresh database), after a fillrandom when
//! the first only reads; a key-value trace replayed as one phase. In simulation each phase ends
//! when its background work is done, so its cost is inside it ([`crate::harness::run_phase`]).

use std::sync::Arc;

use workload::db_bench::DbBenchKind;
use workload::mixgraph::{Mixgraph, MixgraphConfig, MixgraphFill};
use workload::{Op, Workload, Ycsb, YcsbWorkload};

use crate::engine::KvEngine;
use crate::error::{LabError, Result};
use crate::harness::run_phase;
use crate::result::PhaseResult;
use crate::spec::{Phases, WorkloadKind};
use crate::stack::Stack;

/// Runs the workload's phases on `engine` over `stack`.
pub fn run(plan: &Phases, stack: &Stack, engine: &mut dyn KvEngine, progress: bool) -> Result<Vec<PhaseResult>> {
    let w = &plan.workload;
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
                // One phase, or its puts then its gets (`workload.order`), each with a seed of its own.
                let split =
                    w.order.split(&w.ycsb_config(*y, &ws)?).map_err(|e| LabError::invalid("workload.order", e))?;
                for (i, (part, c, n)) in split.into_iter().enumerate() {
                    let ops = Box::new(Ycsb::new(c, w.seed + 1 + i as u64)?);
                    phase(&format!("run {}{part}", y.name()), ops, n, engine)?;
                }
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
        // Planned as runs of their own (`Kind::PageWrites`, `Kind::BlockTrace`).
        WorkloadKind::PageWrites | WorkloadKind::BlockTrace => {
            return Err(LabError::invalid("workload.name", format!("{} drives a device alone", w.name.label())))
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

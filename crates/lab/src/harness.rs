//! Runs a stream of workload operations against an engine and measures it: operations, elapsed
//! time (simulated on `--fs sim`, wall-clock otherwise), throughput, bytes, and latency percentiles
//! per operation kind (of every operation in simulation, of a fixed one in [`WALL_CLOCK_SAMPLE`]
//! on real files).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;
use workload::{Op, OpKind};

use crate::engine::KvEngine;
use crate::error::Result;
use crate::result::PhaseResult;
use crate::stack::Stack;

/// Windows of a phase's throughput timeline.
pub const TIMELINE_WINDOWS: u64 = 50;

/// On real files, latencies are measured on one operation in this many.
pub const WALL_CLOCK_SAMPLE: u64 = 8;

/// Runs `ops` on `engine`; `settle` waits for background work at the end (counted in the phase).
pub fn run_phase(
    name: &str,
    engine: &mut dyn KvEngine,
    stack: &Stack,
    ops: impl Iterator<Item = Op>,
    expected: u64,
    settle: bool,
    progress: bool,
) -> Result<PhaseResult> {
    let bar = crate::progress::bar(progress, expected, name);
    let new_hist = || -> Histogram<u64> {
        let mut h = Histogram::new(3).expect("3 significant figures is a valid histogram precision");
        h.auto(true);
        h
    };
    let mut all = new_hist();
    let mut by_kind: BTreeMap<OpKind, Histogram<u64>> = BTreeMap::new();
    let start = stack.now_ns();
    let (mut count, mut tally) = (0u64, Tally::default());
    // In simulation the clock is free and every operation is timed; on real files reading the
    // clock twice costs about as much as 2 % of a put, so one operation in `WALL_CLOCK_SAMPLE` is
    // timed (db_bench times none unless asked for a histogram). Throughput uses the phase's
    // elapsed time either way.
    let sample = if stack.simulated() { 1 } else { WALL_CLOCK_SAMPLE };
    let window = expected.div_ceil(TIMELINE_WINDOWS).max(1);
    let mut timeline = Vec::new();
    let mut window_start = (start, 0u64);
    let mut close_window = |count: u64, timeline: &mut Vec<(f64, f64)>| {
        let now = stack.now_ns();
        let dt = now.saturating_sub(window_start.0) as f64 / 1e9;
        let ops = (count - window_start.1) as f64;
        timeline.push(((now - start) as f64 / 1e9, if dt > 0.0 { ops / dt } else { 0.0 }));
        window_start = (now, count);
    };
    for op in ops {
        let timed = count % sample == 0;
        let t0 = if timed { stack.now_ns() } else { 0 };
        tally.apply(&op, engine)?;
        if timed {
            // 0 is a true measure in simulation: an operation that reached no device, with host CPU
            // not modelled (cpu = off), took no simulated time, not one nanosecond.
            let dt = stack.now_ns() - t0;
            let _ = all.record(dt);
            let _ = by_kind.entry(op.kind()).or_insert_with(new_hist).record(dt);
        }
        count += 1;
        if count % 4096 == 0 {
            bar.set_position(count);
        }
        if count % window == 0 && count < expected {
            close_window(count, &mut timeline);
        }
    }
    if settle {
        engine.settle()?;
    }
    close_window(count, &mut timeline);
    bar.finish_and_clear();
    let elapsed = (stack.now_ns() - start) as f64 / 1e9;
    Ok(PhaseResult {
        name: name.to_string(),
        ops: count,
        elapsed_s: elapsed,
        ops_per_sec: if elapsed > 0.0 { count as f64 / elapsed } else { 0.0 },
        micros_per_op: if count > 0 { elapsed * 1e6 / count as f64 } else { 0.0 },
        user_bytes: tally.user_bytes,
        read_bytes: tally.read_bytes,
        found: tally.found,
        scanned_records: tally.scanned,
        latency: flashsim::latency::summarize(&all),
        latency_by_kind: by_kind.iter().map(|(k, h)| (k.name().to_string(), flashsim::latency::summarize(h))).collect(),
        timeline,
    })
}

/// What a phase's operations wrote and read.
#[derive(Default)]
struct Tally {
    user_bytes: u64,
    read_bytes: u64,
    found: u64,
    scanned: u64,
}

impl Tally {
    /// Applies `op` to `engine` and counts it.
    fn apply(&mut self, op: &Op, engine: &mut dyn KvEngine) -> Result<()> {
        match op {
            Op::Insert { key, value } | Op::Update { key, value } => {
                engine.put(key, value)?;
                self.user_bytes += (key.len() + value.len()) as u64;
            }
            Op::Read { key } => self.get(key, engine)?,
            Op::ReadModifyWrite { key, value } => {
                self.get(key, engine)?;
                engine.put(key, value)?;
                self.user_bytes += (key.len() + value.len()) as u64;
            }
            Op::Scan { start_key, len } => {
                let (n, bytes) = engine.scan(start_key, *len)?;
                self.read_bytes += bytes;
                self.scanned += n;
            }
            Op::Next => {
                if let Some(bytes) = engine.next()? {
                    self.read_bytes += bytes;
                    self.scanned += 1;
                }
            }
        }
        Ok(())
    }

    fn get(&mut self, key: &[u8], engine: &mut dyn KvEngine) -> Result<()> {
        if let Some(n) = engine.get(key)? {
            self.found += 1;
            self.read_bytes += (key.len() + n) as u64;
        }
        Ok(())
    }
}

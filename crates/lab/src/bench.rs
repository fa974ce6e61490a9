//! `flashkv bench`: LevelDB's db_bench on the engine: benchmarks run in order on one database, each
//! a measured phase (micros/op, ops/s, MB/s; simulated time on `--fs sim`, wall-clock otherwise),
//! then the per-level statistics and, in simulation, the device's accounting.

use workload::db_bench::{DbBench, DbBenchConfig, DbBenchKind};
use workload::value_size::ValueSize;

use crate::harness::run_phase;
use crate::publish::OutputArgs;
use crate::result::{RunResult, Timing};
use crate::runner;
use crate::stack::DeviceArgs;
use crate::workload_cmd::EngineArgs;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Comma-separated db_bench benchmarks: fillseq, fillrandom, overwrite, readrandom, readseq,
    /// seekrandom, fillzipfian. As in db_bench, each fill starts on a freshly destroyed database.
    #[arg(long, default_value = "fillseq,fillrandom,overwrite,readrandom,readseq")]
    pub benchmarks: String,
    /// Keys (and writes per fill benchmark).
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub num: u64,
    /// Value size (bytes, or with a unit: 4KiB), or a range MIN-MAX; at most the engine's 64 MiB.
    #[arg(long, default_value = "100")]
    pub value_size: String,
    /// Key size in bytes (each workload's own when absent: YCSB "user" + number, about 23 B; db_bench 16; Mixgraph 48).
    #[arg(long)]
    pub key_size: Option<usize>,
    /// Key distribution of fillrandom: uniform or zipfian (YCSB's, theta 0.99).
    #[arg(long, default_value = "uniform")]
    pub key_dist: String,
    /// db_bench seeds its first benchmark with 1001.
    #[arg(long, default_value_t = 1001)]
    pub seed: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

fn parse_benchmarks(s: &str, key_dist: &str) -> Result<Vec<DbBenchKind>, String> {
    let zipf = match key_dist {
        "uniform" => false,
        "zipfian" => true,
        other => return Err(format!("--key-dist: unknown '{other}'; accepted: uniform, zipfian")),
    };
    let kinds: Vec<DbBenchKind> = crate::input::list("--benchmarks", s)?
        .into_iter()
        .map(|b| {
            let k: DbBenchKind = b.parse().map_err(|e| format!("--benchmarks: {e}"))?;
            Ok(if zipf && k == DbBenchKind::FillRandom { DbBenchKind::FillZipfian } else { k })
        })
        .collect::<Result<_, String>>()?;
    if kinds.is_empty() {
        return Err("--benchmarks: no benchmark named".into());
    }
    Ok(kinds)
}

pub fn run(a: &BenchArgs, progress: bool) -> Result<(RunResult, Timing), String> {
    let wall = std::time::Instant::now();
    let kinds = parse_benchmarks(&a.benchmarks, &a.key_dist)?;
    let value_size: ValueSize = crate::input::value_size("--value-size", &a.value_size, a.device.page_size()?)?;
    let kv = a.engine.kv()?;
    let (stack, mut engine) = runner::open(&a.device, &a.engine.options()?, a.engine.sync, kv)?;
    let mut phases = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        if kind.fresh_db() && i > 0 {
            engine.recreate()?;
        }
        let mut cfg = DbBenchConfig::new(*kind, a.num);
        cfg.value_size = value_size;
        if let Some(k) = a.key_size {
            cfg.key_size = k;
        }
        let ops = DbBench::new(cfg, a.seed + i as u64).map_err(|e| e.to_string())?;
        // In simulation a fill is over when its data is in the tree (its flushes and compactions
        // are charged to simulated time). On real files, as in db_bench, the next benchmark starts
        // while background compaction goes on.
        let settle = kind.writes() && stack.simulated();
        let mut p = run_phase(kind.name(), engine.as_mut(), &stack, ops, a.num, settle, progress)?;
        if *kind == DbBenchKind::ReadSeq {
            // db_bench counts every record read by readseq as one operation.
            p.ops = p.scanned_records;
            p.ops_per_sec = if p.elapsed_s > 0.0 { p.ops as f64 / p.elapsed_s } else { 0.0 };
            p.micros_per_op = if p.ops > 0 { p.elapsed_s * 1e6 / p.ops as f64 } else { 0.0 };
        }
        phases.push(p);
    }
    runner::finish("db_bench", &a.device, kv, &stack, engine.as_mut(), phases, false, wall)
}

/// db_bench's lines, then the common tables.
pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    for p in &r.phases {
        let mb_s =
            if p.elapsed_s > 0.0 { (p.user_bytes + p.read_bytes) as f64 / (1 << 20) as f64 / p.elapsed_s } else { 0.0 };
        out.push_str(&format!(
            "{:<12}: {:>10.3} micros/op; {:>10.0} ops/sec; {:>8.1} MB/s\n",
            p.name, p.micros_per_op, p.ops_per_sec, mb_s
        ));
    }
    out.push('\n');
    out.push_str(&crate::result::render(r));
    out
}

//! `flashkv bench`: LevelDB's db_bench on the engine: benchmarks run in order on one database, each
//! reporting micros/op, ops/s and MB/s (simulated time on `--fs sim`, wall-clock time otherwise),
//! then the engine's per-level compaction statistics and, in simulation, the device's accounting.

use std::sync::Arc;

use hdrhistogram::Histogram;
use lsm::{Db, ReadOptions, WriteOptions};
use serde::Serialize;
use workload::db_bench::{DbBench, DbBenchConfig, DbBenchKind};
use workload::op::Op;
use workload::value_size::ValueSize;

use crate::stack::{DeviceArgs, DeviceReport, Stack};
use crate::table::Table;

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Comma-separated db_bench benchmarks: fillseq, fillrandom, overwrite, readrandom, readseq,
    /// seekrandom, fillzipfian.
    #[arg(
        long,
        default_value = "fillseq,fillrandom,overwrite,readrandom,readseq"
    )]
    pub benchmarks: String,
    /// Keys (and writes per fill benchmark).
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,
    /// Value size in bytes, or a range MIN-MAX.
    #[arg(long, default_value = "100")]
    pub value_size: String,
    /// Key distribution of fillrandom: uniform or zipfian (YCSB's, theta 0.99).
    #[arg(long, default_value = "uniform")]
    pub key_dist: String,
    #[arg(long, default_value_t = 1001)]
    pub seed: u64,
    /// Sync every write.
    #[arg(long)]
    pub sync: bool,
    #[command(flatten)]
    pub device: DeviceArgs,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    pub name: String,
    pub ops: u64,
    pub elapsed_s: f64,
    pub micros_per_op: f64,
    pub ops_per_sec: f64,
    pub mb_per_sec: f64,
    pub user_bytes: u64,
    pub latency: flashsim::LatencySummary,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub time_base: &'static str,
    pub fs: String,
    pub num: u64,
    pub value_size: String,
    pub benchmarks: Vec<BenchResult>,
    pub user_bytes: u64,
    pub engine_write_bytes: u64,
    pub engine_write_amplification: f64,
    pub levels: Vec<LevelRow>,
    pub stall_count: u64,
    pub stall_s: f64,
    pub device: Option<DeviceReport>,
    pub wall_time_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct LevelRow {
    pub level: usize,
    pub files: usize,
    pub bytes: u64,
    pub bytes_read: u64,
    pub bytes_written: u64,
    pub bytes_moved: u64,
    pub compactions: u64,
}

fn parse_benchmarks(s: &str, key_dist: &str) -> Result<Vec<DbBenchKind>, String> {
    let zipf = match key_dist {
        "uniform" => false,
        "zipfian" => true,
        other => {
            return Err(format!(
                "--key-dist: unknown '{other}'; accepted: uniform, zipfian"
            ))
        }
    };
    s.split(',')
        .filter(|b| !b.trim().is_empty())
        .map(|b| {
            let k: DbBenchKind = b.trim().parse().map_err(|e| format!("--benchmarks: {e}"))?;
            Ok(if zipf && k == DbBenchKind::FillRandom {
                DbBenchKind::FillZipfian
            } else {
                k
            })
        })
        .collect()
}

pub fn run(a: &BenchArgs, progress: bool) -> Result<BenchReport, String> {
    let wall = std::time::Instant::now();
    let kinds = parse_benchmarks(&a.benchmarks, &a.key_dist)?;
    if kinds.is_empty() {
        return Err("--benchmarks: no benchmark named".into());
    }
    if a.num == 0 {
        return Err("--num: must be at least 1".into());
    }
    let value_size: ValueSize = a
        .value_size
        .parse()
        .map_err(|e| format!("--value-size: {e}"))?;
    let stack = Stack::build(&a.device)?;
    let db =
        Db::open(Arc::clone(&stack.fs), "db", stack.engine_options()).map_err(|e| e.to_string())?;
    let wopts = WriteOptions { sync: a.sync };
    let mut results = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        let mut cfg = DbBenchConfig::new(*kind, a.num);
        cfg.value_size = value_size;
        let gen = DbBench::new(cfg, a.seed + i as u64).map_err(|e| e.to_string())?;
        let bar = crate::progress::bar(progress, a.num, kind.name());
        let mut hist = Histogram::<u64>::new(3).map_err(|e| e.to_string())?;
        hist.auto(true);
        let start = stack.now_ns();
        let mut ops = 0u64;
        let mut bytes = 0u64;
        for op in gen {
            let t0 = stack.now_ns();
            let n = execute(&db, &wopts, &op, &mut bytes)?;
            let _ = hist.record((stack.now_ns() - t0).max(1));
            ops += n;
            if ops % 8192 == 0 {
                bar.set_position(ops);
            }
        }
        if kind.writes() && stack.simulated() {
            // In simulation a fill is over when its data is in the tree (its flushes and compactions
            // are charged to simulated time). On real files, as db_bench, the next benchmark starts
            // while background compaction goes on.
            db.wait_for_background().map_err(|e| e.to_string())?;
        }
        bar.finish_and_clear();
        let elapsed = (stack.now_ns() - start) as f64 / 1e9;
        results.push(BenchResult {
            name: kind.name().to_string(),
            ops,
            elapsed_s: elapsed,
            micros_per_op: if ops > 0 {
                elapsed * 1e6 / ops as f64
            } else {
                0.0
            },
            ops_per_sec: if elapsed > 0.0 {
                ops as f64 / elapsed
            } else {
                0.0
            },
            mb_per_sec: if elapsed > 0.0 {
                bytes as f64 / (1 << 20) as f64 / elapsed
            } else {
                0.0
            },
            user_bytes: bytes,
            latency: flashsim::latency::summarize(&hist),
        });
    }
    let stats = db.stats();
    let levels = stats
        .levels
        .iter()
        .enumerate()
        .map(|(level, l)| LevelRow {
            level,
            files: l.files,
            bytes: l.bytes,
            bytes_read: l.bytes_read_input_level + l.bytes_read_output_level,
            bytes_written: l.bytes_written,
            bytes_moved: l.bytes_moved,
            compactions: l.compactions,
        })
        .collect();
    let device = stack.device_report(stats.user_bytes);
    db.close().map_err(|e| e.to_string())?;
    Ok(BenchReport {
        time_base: if stack.simulated() {
            "simulated"
        } else {
            "wall-clock"
        },
        fs: a.device.fs.clone(),
        num: a.num,
        value_size: a.value_size.clone(),
        benchmarks: results,
        user_bytes: stats.user_bytes,
        engine_write_bytes: stats.engine_write_bytes(),
        engine_write_amplification: stats.write_amplification(),
        levels,
        stall_count: stats.slowdowns + stats.memtable_stalls + stats.l0_stop_stalls,
        stall_s: stats.stall_nanos as f64 / 1e9,
        device,
        wall_time_s: wall.elapsed().as_secs_f64(),
    })
}

/// Runs one workload operation; returns how many operations it counts as (readseq counts records).
fn execute(db: &Db, w: &WriteOptions, op: &Op, bytes: &mut u64) -> Result<u64, String> {
    let r = ReadOptions::default();
    match op {
        Op::Insert { key, value } | Op::Update { key, value } => {
            db.put(w, key, value).map_err(|e| e.to_string())?;
            *bytes += (key.len() + value.len()) as u64;
            Ok(1)
        }
        Op::Read { key } => {
            if let Some(v) = db.get(&r, key).map_err(|e| e.to_string())? {
                *bytes += (key.len() + v.len()) as u64;
            }
            Ok(1)
        }
        Op::ReadModifyWrite { key, value } => {
            db.get(&r, key).map_err(|e| e.to_string())?;
            db.put(w, key, value).map_err(|e| e.to_string())?;
            *bytes += (key.len() + value.len()) as u64;
            Ok(1)
        }
        Op::Scan { start_key, len } => {
            // As db_bench: position, then step and count, without copying keys or values out.
            let mut it = db.iter(&r).map_err(|e| e.to_string())?;
            it.seek(start_key);
            let mut n = 0;
            while it.valid() && n < *len {
                *bytes += (it.key().len() + it.value().len()) as u64;
                n += 1;
                it.next();
            }
            it.status().map_err(|e| e.to_string())?;
            Ok(n.max(1))
        }
    }
}

/// db_bench's lines, the level table, and the device accounting.
pub fn render(r: &BenchReport) -> String {
    let mut out = format!(
        "flashkv bench on {} ({} time; host CPU time is not modelled in simulation)\n",
        r.fs, r.time_base
    );
    for b in &r.benchmarks {
        out.push_str(&format!(
            "{:<12}: {:>10.3} micros/op; {:>10.0} ops/sec; {:>8.1} MB/s  (p50 {:.1} us, p99 {:.1} us, p99.9 {:.1} us)\n",
            b.name, b.micros_per_op, b.ops_per_sec, b.mb_per_sec, b.latency.p50_us, b.latency.p99_us, b.latency.p999_us
        ));
    }
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let mut t = Table::new(&[
        "level",
        "files",
        "size MB",
        "read MB",
        "written MB",
        "moved MB",
        "compactions",
        "host MB",
        "cloned MB",
    ]);
    for l in &r.levels {
        if l.files == 0 && l.bytes_written == 0 && l.bytes_moved == 0 {
            continue;
        }
        let dev = r
            .device
            .as_ref()
            .and_then(|d| d.levels.iter().find(|x| x.level == l.level));
        t.row(vec![
            format!("L{}", l.level),
            l.files.to_string(),
            mb(l.bytes),
            mb(l.bytes_read),
            mb(l.bytes_written),
            mb(l.bytes_moved),
            l.compactions.to_string(),
            dev.map_or("-".into(), |d| mb(d.host_write_bytes)),
            dev.map_or("-".into(), |d| mb(d.cloned_bytes)),
        ]);
    }
    out.push('\n');
    out.push_str(&t.render());
    out.push_str(&format!(
        "\nuser {} MB; engine wrote {} MB (write amplification {:.2}); stalls {} ({:.3} s)\n",
        mb(r.user_bytes),
        mb(r.engine_write_bytes),
        r.engine_write_amplification,
        r.stall_count,
        r.stall_s
    ));
    if let Some(d) = &r.device {
        let h = &d.host_write_bytes;
        out.push_str(&format!(
            "device: host writes {} MB (wal {}, flush {}, compaction {}, manifest {}, fs metadata {}); host WA {:.2}\n",
            mb(h.total),
            mb(h.wal),
            mb(h.flush),
            mb(h.compaction_by_level.iter().sum()),
            mb(h.manifest),
            mb(h.fs_metadata),
            d.host_write_amplification
        ));
        out.push_str(&format!(
            "        flash programs {} MB (GC copied {} pages, {} erases); flash WA {:.2}; device WA {:.3}; remapped {} pages\n",
            mb(d.flash_program_bytes),
            d.gc_copied_pages,
            d.erases,
            d.write_amplification,
            d.device_write_amplification,
            d.remapped_pages
        ));
    }
    out.push_str(&format!("wall time {:.1} s\n", r.wall_time_s));
    out
}

//! `flashkv bench`: LevelDB's db_bench on the engine: benchmarks run in order on one database
//! (each fill on a freshly destroyed one, as db_bench), each a measured phase (micros/op, ops/s,
//! MiB/s: db_bench's "MB/s" counts 2^20 bytes; simulated time on a simulated device, wall-clock
//! otherwise), then the per-level statistics and, in simulation, the device's accounting. The flags make one [`RunSpec`] that
//! the runner runs like any other.

use workload::db_bench::DbBenchKind;
use workload::ValueData;

use crate::error::{LabError, Result};
use crate::publish::OutputArgs;
use crate::result::RunResult;
use crate::spec::named::{parser, NameError, Named};
use crate::spec::{DeviceSpec, EngineSpec, HostSpec, RunSpec, ValueSizeSpec, WorkloadKind, WorkloadSpec};

/// Key distribution of fillrandom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KeyDist {
    #[default]
    Uniform,
    /// YCSB's zipfian (theta 0.99): fillrandom becomes fillzipfian.
    Zipfian,
}

impl Named for KeyDist {
    fn parse_name(text: &str) -> std::result::Result<KeyDist, NameError> {
        match text.trim() {
            "uniform" => Ok(KeyDist::Uniform),
            "zipfian" => Ok(KeyDist::Zipfian),
            other => Err(format!("unknown '{other}'; accepted: uniform, zipfian").into()),
        }
    }
    fn name(&self) -> String {
        match self {
            KeyDist::Uniform => "uniform".into(),
            KeyDist::Zipfian => "zipfian".into(),
        }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Comma-separated db_bench benchmarks: fillseq, fillrandom, overwrite, readrandom, readseq,
    /// seekrandom, fillzipfian. As in db_bench, each fill starts on a freshly destroyed database;
    /// a list that begins with a read is preceded by a fillrandom.
    #[arg(long, default_value = "fillseq,fillrandom,overwrite,readrandom,readseq", value_parser = parser::<WorkloadKind>)]
    pub benchmarks: WorkloadKind,
    /// Keys (and writes per fill benchmark, reads per read benchmark).
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub num: u64,
    /// Value size (bytes, or with a unit: 4KiB), a range MIN-MAX, or a class relative to the flash
    /// page (small, uniform, large); at most the engine's 64 MiB.
    #[arg(long, default_value = "100", value_parser = parser::<ValueSizeSpec>)]
    pub value_size: ValueSizeSpec,
    /// Key size in bytes (db_bench's own when absent: 16 B).
    #[arg(long)]
    pub key_size: Option<usize>,
    /// Key distribution of fillrandom: uniform or zipfian (YCSB's, theta 0.99).
    #[arg(long, default_value = "uniform", value_parser = parser::<KeyDist>)]
    pub key_dist: KeyDist,
    /// The i-th benchmark draws with seed + 1 + i (db_bench seeds its first with 1001).
    #[arg(long, default_value_t = 1000)]
    pub seed: u64,
    #[command(flatten)]
    pub engine: EngineSpec,
    #[command(flatten)]
    pub host: HostSpec,
    #[command(flatten)]
    pub device: DeviceSpec,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl BenchArgs {
    /// The run these flags describe; `--benchmarks` must name db_bench benchmarks.
    pub fn spec(&self) -> Result<RunSpec> {
        let WorkloadKind::DbBench(list) = &self.benchmarks else {
            return Err(LabError::invalid(
                "benchmarks",
                format!(
                    "'{}' is not a db_bench benchmark (see flashkv ycsb and flashkv mixgraph)",
                    self.benchmarks.name()
                ),
            ));
        };
        let list = list
            .iter()
            .map(|&k| match (k, self.key_dist) {
                (DbBenchKind::FillRandom, KeyDist::Zipfian) => DbBenchKind::FillZipfian,
                _ => k,
            })
            .collect();
        let workload = WorkloadSpec {
            value_size: self.value_size,
            key_size: self.key_size,
            seed: self.seed,
            values: ValueData::Generated,
            ..WorkloadSpec::new(WorkloadKind::DbBench(list), self.num, self.num)
        };
        Ok(RunSpec { host: self.host.clone(), ..RunSpec::new(self.engine.clone(), self.device.clone(), workload) })
    }
}

/// db_bench's lines, then the common tables.
pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    for p in &r.phases {
        if p.elapsed_s <= 0.0 {
            // In simulation a phase that never reached the device takes no time when host CPU is
            // not modelled (cpu = off): there is no rate to print.
            out.push_str(&format!("{:<12}: no {} time passed ({} ops)\n", p.name, r.time_base, p.ops));
            continue;
        }
        let mb_s = (p.user_bytes + p.read_bytes) as f64 / (1 << 20) as f64 / p.elapsed_s;
        out.push_str(&format!(
            "{:<12}: {:>10.3} micros/op; {:>10.0} ops/sec; {:>8.1} MiB/s\n",
            p.name, p.micros_per_op, p.ops_per_sec, mb_s
        ));
    }
    out.push('\n');
    out.push_str(&crate::result::render(r));
    out
}

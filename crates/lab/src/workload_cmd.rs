//! `flashkv ycsb` and `flashkv mixgraph`: a load (fill) phase and a measured run phase of a YCSB
//! core workload or a FAST'20 Mixgraph workload, with the readable tables and, with `--out DIR`,
//! a result folder (results.json, results.csv, index.html).

use workload::mixgraph::MixgraphKind;
use workload::{ValueSize, Workload, YcsbWorkload};

use crate::publish::OutputArgs;
use crate::result::{RunResult, Timing};
use crate::runner::{self, RunSpec};
use crate::stack::DeviceArgs;

/// Engine flags shared by the workload commands.
#[derive(clap::Args, Debug, Clone)]
pub struct EngineArgs {
    /// The engine: lsm (the LSM engine on --fs) or a key-value SSD design: plsc (the PLSC-tree,
    /// seed 002), lsm-in-device (seed 002's baseline: LevelDB inside the device; -striped spreads
    /// an SST's pages over every plane), kvftl, kvftl-sp, kvftl-np, kvftl-ws (seed 004's KVFTL and
    /// its variants), dftl-kv (seed 004's baseline); a device is --preset at --capacity, with no
    /// file system.
    #[arg(long, default_value = "lsm")]
    pub engine: String,
    /// Sync every write.
    #[arg(long)]
    pub sync: bool,
    /// Align SST data blocks to the file system's block size (RemapCom needs it).
    #[arg(long)]
    pub align_blocks: bool,
    /// RemapCom: off (LevelDB), base (UDB detection + remap), full (+ UDB retention). base and
    /// full align blocks too.
    #[arg(long, default_value = "off")]
    pub remap: String,
    /// Compaction strategy: leveled (LevelDB's), gear (GearDB's) or ll (lifetime-leveling, seed 003).
    #[arg(long, default_value = "leveled")]
    pub compaction: String,
    #[command(flatten)]
    pub kv: crate::kv_device::KvOptions,
}

impl EngineArgs {
    /// The key-value SSD `--engine` names, if not the LSM engine.
    pub fn kv(&self) -> Result<Option<crate::kv_device::KvDesign>, String> {
        crate::kv_device::KvDesign::parse(&self.engine, &self.kv)
    }

    /// Engine options from the flags (the runner adds the simulation clock).
    pub fn options(&self) -> Result<lsm::Options, String> {
        let remap: lsm::RemapMode = self.remap.parse().map_err(|e| format!("--remap: {e}"))?;
        let align_blocks = self.align_blocks || remap != lsm::RemapMode::Off;
        let compaction: lsm::CompactionStyle = self.compaction.parse().map_err(|e| format!("--compaction: {e}"))?;
        Ok(lsm::Options { align_blocks, remap, compaction, create_if_missing: true, ..lsm::Options::default() })
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct YcsbArgs {
    /// load, a, b, c, d, e, f.
    #[arg(long, default_value = "a")]
    pub workload: String,
    /// Records loaded (YCSB recordcount).
    #[arg(long, default_value_t = 100_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub records: u64,
    /// Operations of the run phase (YCSB operationcount).
    #[arg(long, default_value_t = 100_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub ops: u64,
    /// Record size (bytes, or with a unit: 4KiB; one field), or MIN-MAX; at most the engine's 64 MiB.
    #[arg(long, default_value = "1024")]
    pub value_size: String,
    /// Key size in bytes (each workload's own when absent: YCSB "user" + number, about 23 B; db_bench 16; Mixgraph 48).
    #[arg(long)]
    pub key_size: Option<usize>,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The values' bytes: generated (the workload's own) or zeros (same sizes and results; with
    /// --store compact the device keeps only keys and headers).
    #[arg(long, default_value = "generated")]
    pub values: String,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(clap::Args, Debug, Clone)]
pub struct MixgraphArgs {
    /// all_random, all_dist, prefix_random, prefix_dist.
    #[arg(long, default_value = "all_random")]
    pub workload: String,
    /// Key space (db_bench --num); the fill writes this many keys.
    #[arg(long, default_value_t = 200_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub records: u64,
    /// Operations of the run phase.
    #[arg(long, default_value_t = 200_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub ops: u64,
    /// Key size in bytes (each workload's own when absent: YCSB "user" + number, about 23 B; db_bench 16; Mixgraph 48).
    #[arg(long)]
    pub key_size: Option<usize>,
    #[arg(long, default_value_t = 1000)]
    pub seed: u64,
    /// The values' bytes: generated (the workload's own) or zeros (same sizes and results; with
    /// --store compact the device keeps only keys and headers).
    #[arg(long, default_value = "generated")]
    pub values: String,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub device: DeviceArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run_ycsb(a: &YcsbArgs, progress: bool) -> Result<(RunResult, Timing), String> {
    let which: YcsbWorkload = a.workload.parse().map_err(|e| format!("--workload: {e}"))?;
    let spec = RunSpec {
        device: a.device.clone(),
        engine: a.engine.options()?,
        sync: a.engine.sync,
        workload: Workload::Ycsb(which),
        records: a.records,
        operations: a.ops,
        value_size: crate::input::value_size("--value-size", &a.value_size, a.device.page_size()?)?,
        key_size: a.key_size,
        seed: a.seed,
        digest: false,
        values: a.values.parse().map_err(|e| format!("--values: {e}"))?,
        kv: a.engine.kv()?,
    };
    runner::run(&spec, progress)
}

pub fn run_mixgraph(a: &MixgraphArgs, progress: bool) -> Result<(RunResult, Timing), String> {
    let kind: MixgraphKind = a.workload.parse().map_err(|e| format!("--workload: {e}"))?;
    let spec = RunSpec {
        device: a.device.clone(),
        engine: a.engine.options()?,
        sync: a.engine.sync,
        workload: Workload::Mixgraph(kind),
        records: a.records,
        operations: a.ops,
        // Mixgraph draws its own (generalized Pareto) value sizes.
        value_size: ValueSize::Fixed(100),
        key_size: a.key_size,
        seed: a.seed,
        digest: false,
        values: a.values.parse().map_err(|e| format!("--values: {e}"))?,
        kv: a.engine.kv()?,
    };
    runner::run(&spec, progress)
}

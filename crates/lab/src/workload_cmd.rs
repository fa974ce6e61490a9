//! `flashkv ycsb` and `flashkv mixgraph`: a load (fill) phase and a measured run phase of a YCSB
//! core workload or a FAST'20 Mixgraph workload. Each command's flags make one [`RunSpec`]; the
//! engine and device flags are the run specification's own structs.

use workload::mixgraph::MixgraphKind;
use workload::{ValueData, ValueSize, YcsbWorkload};

use crate::publish::OutputArgs;
use crate::spec::named::parser;
use crate::spec::{DeviceSpec, EngineSpec, HostSpec, RunSpec, ValueSizeSpec, WorkloadKind, WorkloadSpec};

#[derive(clap::Args, Debug, Clone)]
pub struct YcsbArgs {
    /// load, a, b, c, d, e, f.
    #[arg(long, default_value = "a", value_parser = parser::<YcsbWorkload>)]
    pub workload: YcsbWorkload,
    /// Records loaded (YCSB recordcount).
    #[arg(long, default_value_t = 100_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub records: u64,
    /// Operations of the run phase (YCSB operationcount).
    #[arg(long, default_value_t = 100_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub ops: u64,
    /// Record size (bytes, or with a unit: 4KiB; one field), MIN-MAX, or a class relative to the
    /// flash page: small, uniform, uniform-kvftl, large; at most the engine's 64 MiB.
    #[arg(long, default_value = "1024", value_parser = parser::<ValueSizeSpec>)]
    pub value_size: ValueSizeSpec,
    /// Key size in bytes (YCSB's own when absent: "user" + number, about 23 B).
    #[arg(long)]
    pub key_size: Option<usize>,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// The values' bytes: generated (the workload's own) or zeros (same sizes and results; with
    /// --store compact the device keeps only keys and headers).
    #[arg(long, default_value = "generated", value_parser = parser::<ValueData>)]
    pub values: ValueData,
    #[command(flatten)]
    pub engine: EngineSpec,
    #[command(flatten)]
    pub host: HostSpec,
    #[command(flatten)]
    pub device: DeviceSpec,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl YcsbArgs {
    pub fn spec(&self) -> RunSpec {
        let workload = WorkloadSpec {
            value_size: self.value_size,
            key_size: self.key_size,
            seed: self.seed,
            values: self.values,
            ..WorkloadSpec::new(WorkloadKind::Ycsb(self.workload), self.records, self.ops)
        };
        RunSpec { host: self.host.clone(), ..RunSpec::new(self.engine.clone(), self.device.clone(), workload) }
    }
}

#[derive(clap::Args, Debug, Clone)]
pub struct MixgraphArgs {
    /// all_random, all_dist, prefix_random, prefix_dist.
    #[arg(long, default_value = "all_random", value_parser = parser::<MixgraphKind>)]
    pub workload: MixgraphKind,
    /// Key space (db_bench --num); the fill writes this many keys.
    #[arg(long, default_value_t = 200_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub records: u64,
    /// Operations of the run phase.
    #[arg(long, default_value_t = 200_000, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub ops: u64,
    /// Key size in bytes (Mixgraph's own when absent: 48 B).
    #[arg(long)]
    pub key_size: Option<usize>,
    #[arg(long, default_value_t = 1000)]
    pub seed: u64,
    /// The values' bytes: generated (the workload's own) or zeros (same sizes and results; with
    /// --store compact the device keeps only keys and headers).
    #[arg(long, default_value = "generated", value_parser = parser::<ValueData>)]
    pub values: ValueData,
    #[command(flatten)]
    pub engine: EngineSpec,
    #[command(flatten)]
    pub host: HostSpec,
    #[command(flatten)]
    pub device: DeviceSpec,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl MixgraphArgs {
    pub fn spec(&self) -> RunSpec {
        let workload = WorkloadSpec {
            // Mixgraph draws its own (generalized Pareto) value sizes; this is the estimate of
            // their mean that sizes the run's memory and disk.
            value_size: ValueSizeSpec::Bytes(ValueSize::Fixed(100)),
            key_size: self.key_size,
            seed: self.seed,
            values: self.values,
            ..WorkloadSpec::new(WorkloadKind::Mixgraph(self.workload), self.records, self.ops)
        };
        RunSpec { host: self.host.clone(), ..RunSpec::new(self.engine.clone(), self.device.clone(), workload) }
    }
}

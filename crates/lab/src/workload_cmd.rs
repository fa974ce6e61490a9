//! `flashkv ycsb` and `flashkv mixgraph`: a load (fill) phase and a measured run phase of a YCSB
//! core workload or a FAST'20 Mixgraph workload. Each command's flags make one [`RunSpec`]; the
//! engine and device flags are the run specification's own structs. `flashkv ycsb` takes YCSB's
//! property files (`-P`) and overrides (`-p name=value`) too; like `-p`, the flags `--records` and
//! `--ops` override the file's `recordcount` and `operationcount`.

use std::path::{Path, PathBuf};

use workload::mixgraph::MixgraphKind;
use workload::{ValueData, ValueSize, YcsbProperties, YcsbWorkload};

use crate::error::{LabError, Result};

use crate::publish::OutputArgs;
use crate::spec::named::parser;
use crate::spec::{DeviceSpec, EngineSpec, HostSpec, RunSpec, ValueSizeSpec, WorkloadKind, WorkloadSpec};

#[derive(clap::Args, Debug, Clone)]
pub struct YcsbArgs {
    /// load, a, b, c, d, e, f, or core (CoreWorkload's defaults alone, for a property file to
    /// complete). Default: a, or core with -P.
    #[arg(long, value_parser = parser::<YcsbWorkload>)]
    pub workload: Option<YcsbWorkload>,
    /// A YCSB property file (YCSB's -P: workloads/workloada, or your own), over the workload.
    #[arg(short = 'P', long = "property-file", value_name = "FILE")]
    pub property_file: Option<PathBuf>,
    /// A YCSB property over the file's (YCSB's -p), e.g. -p readproportion=0.9; repeatable.
    #[arg(short = 'p', long = "property", value_name = "NAME=VALUE")]
    pub property: Vec<String>,
    /// Records loaded (YCSB recordcount: over the property file's, as -p recordcount=N; default
    /// 100000, or the property file's).
    #[arg(long, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub records: Option<u64>,
    /// Operations of the run phase (YCSB operationcount: over the property file's, as -p
    /// operationcount=N; default 100000, or the property file's).
    #[arg(long, value_parser = crate::input::positive_count, allow_hyphen_values = true)]
    pub ops: Option<u64>,
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

/// `flashkv ycsb`'s record and operation counts when neither the flags nor the properties give them.
const DEFAULT_COUNT: u64 = 100_000;

impl YcsbArgs {
    pub fn spec(&self) -> Result<RunSpec> {
        let name =
            self.workload.unwrap_or(if self.property_file.is_some() { YcsbWorkload::Core } else { YcsbWorkload::A });
        let mut ycsb = YcsbProperties::default();
        for pair in &self.property {
            ycsb.set_pair(pair).map_err(|e| LabError::invalid("workload.ycsb", e.to_string()))?;
        }
        let mut workload = WorkloadSpec {
            value_size: self.value_size,
            key_size: self.key_size,
            seed: self.seed,
            values: self.values,
            ycsb,
            ycsb_file: self.property_file.clone(),
            ..WorkloadSpec::new(WorkloadKind::Ycsb(name), 0, 0)
        };
        // `--records` and `--ops` are command-line overrides like `-p recordcount=N`: over the
        // property file's values, as YCSB's -p is; only a -p that says otherwise conflicts.
        let counts =
            [("recordcount", "workload.records", self.records), ("operationcount", "workload.operations", self.ops)];
        for (property, field, flag) in counts {
            match (flag, workload.ycsb.count(property)) {
                (Some(n), Some(p)) if p != n => {
                    return Err(LabError::invalid(
                        field,
                        format!("{n} differs from -p {property}={p}: give one of them"),
                    ))
                }
                _ => {}
            }
        }
        workload.read_ycsb_file(Path::new("."))?;
        for (property, _, flag) in counts {
            if let (Some(n), Some(_)) = (flag, workload.ycsb.count(property)) {
                workload
                    .ycsb
                    .set(property, &n.to_string())
                    .map_err(|e| LabError::invalid("workload.ycsb", e.to_string()))?;
            }
        }
        // The flags, then the properties, then the default (a flag and a property agree by now).
        let (records, operations) = (workload.ycsb.count("recordcount"), workload.ycsb.count("operationcount"));
        workload.records = if records.is_some() { None } else { Some(self.records.unwrap_or(DEFAULT_COUNT)) };
        workload.operations = if operations.is_some() { 0 } else { self.ops.unwrap_or(DEFAULT_COUNT) };
        Ok(RunSpec { host: self.host.clone(), ..RunSpec::new(self.engine.clone(), self.device.clone(), workload) })
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

//! One typed run specification for every edge of the lab: what a run is (the engine or key-value
//! SSD design, the device and file system, the workload), parsed once where it enters (the
//! command line's flags, an experiment file, a repro's definition, a Python dict, the JSON a Ray
//! worker receives) into the same structs, with enums where the user picks among names.
//!
//! Contract:
//! - every named value parses and prints through one function pair ([`named::Named`]), so the
//!   command line, the TOML, the JSON and the Python dicts accept the same words;
//! - [`RunSpec::plan`] is the one place that checks a specification as a whole and resolves it
//!   (the engine's options or the design's parameters, value sizes relative to the device's page,
//!   records from a data size); an edge calls it as soon as it has parsed, so a bad field fails
//!   before any run starts, naming the field (an experiment file's path, or with
//!   `LabError::in_flags` the flag);
//! - a specification is deterministic: the same specification and program give the same result.
//!
//! The host (`host::HostSpec`: durability and the host CPU's cost model) is the fourth section.

mod describe;
pub mod device;
pub mod engine;
mod flat;
pub mod host;
pub mod named;
pub mod workload;

use serde::{Deserialize, Serialize};

pub use self::device::{DeviceSpec, FsKind, FtlName, Store, ZoneGc};
pub use self::engine::{Engine, EngineName, EngineSpec, KvDesign, MappingRam};
pub use self::host::HostSpec;
pub use self::named::{format_size, format_size_in, Bytes, BytesOrOff, Named};
pub use self::workload::{
    Addresses, BlockTraceSpec, PageWrites, Pattern, Replay, ValueSizeSpec, WorkloadKind, WorkloadSpec,
};
use ::workload::{ValueData, ValueSize};
pub use flashsim::{Preset, Timing};

use crate::error::{LabError, Result};

/// Everything that defines a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    #[serde(default)]
    pub engine: EngineSpec,
    #[serde(default)]
    pub device: DeviceSpec,
    pub workload: WorkloadSpec,
    #[serde(default)]
    pub host: HostSpec,
    /// Ends the run with a full scan into `RunResult::content_digest` (after the accounting is
    /// taken, so the scan's reads are not in it).
    #[serde(default)]
    pub digest: bool,
}

/// A checked specification, resolved.
#[derive(Clone, Debug)]
pub struct Plan {
    pub engine: Engine,
    pub records: u64,
    /// Operations of the measured phase.
    pub operations: u64,
    pub value_size: ValueSize,
}

impl RunSpec {
    pub fn new(engine: EngineSpec, device: DeviceSpec, workload: WorkloadSpec) -> RunSpec {
        RunSpec { engine, device, workload, host: HostSpec::default(), digest: false }
    }

    /// The device as the run builds it. With zero values a page holds only keys and headers
    /// beyond its zero runs, so `auto` keeps pages compact instead of spilling a paper-scale
    /// device to a temporary file (the store changes memory and speed, never a result).
    pub fn device_as_built(&self) -> DeviceSpec {
        let mut device = self.device.clone();
        if self.workload.values == ValueData::Zeros {
            device.store = device.store.for_zero_values();
        }
        device
    }

    /// Checks the specification as a whole and resolves it.
    pub fn plan(&self) -> Result<Plan> {
        if self.workload.name.is_device_only() {
            return self.plan_device_only();
        }
        if self.workload.trace.is_some() {
            return Err(LabError::invalid("workload.trace", "applies to workload block-trace only"));
        }
        let mut engine = self.engine.resolve()?;
        if let (true, Some(field)) = (self.engine.is_kv_ssd(), self.host.first_set()) {
            return Err(LabError::invalid(
                field,
                format!(
                    "engine {} is a key-value SSD: no host-side engine writes, syncs or computes",
                    self.engine.name.as_str()
                ),
            ));
        }
        self.host.validate()?;
        if let Engine::Lsm { options } = &mut engine {
            options.cpu = self.host.cpu_model()?;
        }
        if self.engine.is_kv_ssd() && self.device.fs != FsKind::Sim {
            return Err(LabError::invalid(
                "device.fs",
                format!(
                    "engine {} is a key-value SSD, with no file system below it: fs {} does not apply (leave it out)",
                    self.engine.name.as_str(),
                    self.device.fs.name()
                ),
            ));
        }
        self.device.validate()?;
        if self.engine.lsm.direct_reads || self.engine.lsm.direct_writes {
            let field = if self.engine.lsm.direct_reads { "engine.direct_reads" } else { "engine.direct_writes" };
            let on = match &self.device.fs {
                _ if self.engine.is_kv_ssd() => format!("engine {}, a key-value SSD", self.engine.name.as_str()),
                FsKind::Sim | FsKind::Zone => String::new(),
                fs => format!("fs {}", fs.name()),
            };
            if !on.is_empty() {
                return Err(LabError::invalid(
                    field,
                    format!(
                        "direct I/O bypasses the page cache of the simulated file systems (sim, zone): it does not \
                         apply to {on}"
                    ),
                ));
            }
        }
        let mut value_size = self.workload.value_size.resolve(self.device.page_size()?)?;
        let (records, operations) = self.workload.counts(value_size)?;
        if let (WorkloadKind::Ycsb(y), false) = (&self.workload.name, self.workload.ycsb.is_empty()) {
            // The properties may set the fields: the record's sizes are theirs.
            let g = self.workload.generator_spec(records, operations, value_size);
            value_size = self.workload.ycsb_config(*y, &g)?.record_sizes();
        }
        Ok(Plan { engine, records, operations, value_size })
    }

    /// Page writes and block traces drive a simulated block SSD alone: no engine, no file system.
    fn plan_device_only(&self) -> Result<Plan> {
        let what = match self.workload.name {
            WorkloadKind::PageWrites => "page writes go",
            _ => "block trace requests go",
        };
        if self.engine != EngineSpec::default() || self.host.first_set().is_some() {
            return Err(LabError::invalid("engine", format!("{what} to the device alone: no engine applies")));
        }
        if self.device.fs != FsKind::Sim {
            return Err(LabError::invalid(
                "device.fs",
                format!("{what} to a simulated block SSD (sim), not {}", self.device.fs.name()),
            ));
        }
        match (&self.workload.name, &self.workload.trace) {
            (WorkloadKind::BlockTrace, Some(t)) => t.validate()?,
            (WorkloadKind::BlockTrace, None) => {
                return Err(LabError::invalid("workload.trace", "block-trace needs a trace: { file, format }"))
            }
            (_, Some(_)) => return Err(LabError::invalid("workload.trace", "applies to workload block-trace only")),
            _ => self.workload.pages.validate()?,
        }
        self.device.validate()?;
        let page = self.device.page_size()?;
        Ok(Plan { engine: Engine::Device, records: 1, operations: 0, value_size: ValueSize::Fixed(page) })
    }

    /// The run's weight in a batch's estimate of time left: the user bytes of its load and of
    /// its operations.
    pub fn work(&self) -> f64 {
        let Ok(p) = self.plan() else { return 0.0 };
        (p.records + p.operations) as f64 * self.record_bytes(&p)
    }

    /// User data the run writes before its measured phase: every record (what a device holds
    /// live, for sizing its spill file).
    pub fn data_bytes(&self) -> u64 {
        self.plan().map_or(0, |p| (p.records as f64 * self.record_bytes(&p)) as u64)
    }

    /// Page contents the run's device keeps for its records: all their bytes, or with zero values
    /// in the compact store, about their keys and headers (two 64-byte granules per record).
    pub fn kept_bytes(&self) -> u64 {
        match self.workload.values {
            ValueData::Generated => self.data_bytes(),
            ValueData::Zeros => {
                self.plan().map_or(0, |p| p.records * (self.workload.key_size.unwrap_or(24) as u64 + 128))
            }
        }
    }

    /// A key (24 bytes when the workload keeps its own) and a mean value.
    fn record_bytes(&self, p: &Plan) -> f64 {
        p.value_size.mean() + self.workload.key_size.unwrap_or(24) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;

    /// A run sent to another process (a Ray worker) or cached is the same run: its specification
    /// survives JSON whole, in the command line's words.
    #[test]
    fn specs_survive_json() {
        let demo = Experiment::parse(include_str!("../../experiments/demo.toml")).unwrap();
        let mut runs = demo.runs();
        runs[0].1.workload.values = ValueData::Zeros;
        runs[1].1.engine = EngineSpec::from(KvDesign::DftlKv { mapping_ram: Some(4096) });
        runs[1].1.device.store = Store::File(Some("/tmp/x".into()));
        for (label, spec) in &runs {
            let json = serde_json::to_string(spec).unwrap();
            let back: RunSpec = serde_json::from_str(&json).unwrap();
            assert_eq!(&back, spec, "{label}: {json}");
        }
        let json = serde_json::to_value(&runs[1].1).unwrap();
        assert_eq!(json["engine"]["name"], "dftl-kv");
        assert_eq!(json["engine"]["mapping_ram"], "4KiB");
        assert_eq!(json["device"]["store"], "file:/tmp/x");
    }

    /// Zero values keep an `auto` device compact; generated values, and a store given
    /// explicitly, stay as they are.
    #[test]
    fn zero_values_keep_an_auto_device_compact() {
        let text = "title = \"t\"\n[workload]\nname = \"fillrandom\"\nrecords = 100\n\
                    [[variant]]\nname = \"zeros\"\nworkload = { values = \"zeros\" }\n\
                    [[variant]]\nname = \"generated\"\n\
                    [[variant]]\nname = \"zeros in memory\"\nworkload = { values = \"zeros\" }\n\
                    device = { store = \"memory\" }\n";
        let runs = Experiment::parse(text).unwrap().runs();
        let stores: Vec<Store> = runs.iter().map(|(_, spec)| spec.device_as_built().store).collect();
        assert_eq!(stores, [Store::Compact, Store::Auto, Store::Memory]);
        assert_eq!(runs[0].1.device.store, Store::Auto, "the specification itself is unchanged");
    }

    /// The command line's defaults are the specification's: clap spells them as text, the types'
    /// `Default` as values, and the two must agree.
    #[test]
    fn command_line_defaults_are_the_specifications() {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            device: DeviceSpec,
            #[command(flatten)]
            engine: EngineSpec,
            #[command(flatten)]
            host: HostSpec,
        }
        let f = <Flags as clap::Parser>::try_parse_from(["flashkv"]).unwrap();
        assert_eq!(f.device, DeviceSpec::default());
        assert_eq!(f.engine, EngineSpec::default());
        assert_eq!(f.host, HostSpec::default());
    }

    /// db_bench's option names, in our spelling, set the same fields as ours.
    #[test]
    fn db_bench_option_names_are_aliases() {
        #[derive(clap::Parser)]
        struct Flags {
            #[command(flatten)]
            engine: EngineSpec,
        }
        let parse = |args: &[&str]| <Flags as clap::Parser>::try_parse_from(args).unwrap().engine;
        let theirs = parse(&[
            "flashkv",
            "--target-file-size-base=4MiB",
            "--cache-size=16MiB",
            "--bloom-bits=12",
            "--level0-file-num-compaction-trigger=5",
            "--level0-slowdown-writes-trigger=20",
            "--level0-stop-writes-trigger=36",
        ]);
        let ours = parse(&[
            "flashkv",
            "--max-file-size=4MiB",
            "--block-cache=16MiB",
            "--bloom-bits-per-key=12",
            "--l0-compaction-trigger=5",
            "--l0-slowdown-writes-trigger=20",
            "--l0-stop-writes-trigger=36",
        ]);
        assert_eq!(theirs, ours);
        assert_ne!(ours, EngineSpec::default());
    }

    #[test]
    fn a_key_value_ssd_has_no_file_system() {
        let spec = RunSpec::new(
            EngineSpec::kv(EngineName::Plsc),
            DeviceSpec { fs: FsKind::Mem, ..DeviceSpec::default() },
            WorkloadSpec::new(WorkloadKind::Ycsb(::workload::YcsbWorkload::A), 10, 10),
        );
        let e = spec.plan().unwrap_err();
        assert!(e.to_string().starts_with("device.fs: engine plsc is a key-value SSD"), "{e}");
        assert!(e.in_flags().to_string().starts_with("--fs: "));
    }
}

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
mod names;
mod pages;
mod plan;
mod run_order;
pub mod workload;

use serde::{Deserialize, Serialize};

pub use self::device::{DeviceSpec, FsKind, Store, ZoneGc};
pub use self::engine::{Engine, EngineSpec, KvDesign, KvReadings, MappingRam};
pub use self::host::HostSpec;
pub use self::named::{format_size, format_size_in, Bytes, BytesOrOff, Named};
pub use self::names::{EngineName, FtlName};
pub use self::pages::{PageWrites, Pattern};
pub use self::plan::{BlockTracePlan, Kind, KvSsdPlan, LsmPlan, PageWritesPlan, Phases, Plan, Storage};
pub use self::run_order::RunOrder;
pub use self::workload::{Addresses, BlockTraceSpec, Replay, ValueSizeSpec, WorkloadKind, WorkloadSpec};
pub use flashsim::{Preset, Timing};

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

impl RunSpec {
    pub fn new(engine: EngineSpec, device: DeviceSpec, workload: WorkloadSpec) -> RunSpec {
        RunSpec { engine, device, workload, host: HostSpec::default(), digest: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;
    use ::workload::ValueData;

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

//! The workload of a run: which generator (a YCSB workload, a Mixgraph workload, or db_bench
//! benchmarks in order), how many records and operations, value and key sizes, the values' bytes
//! and the seed. One struct is an experiment file's `[workload]` table and the `workload` object of
//! a run's JSON; each command builds it from its own flags.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use workload::block_trace::BlockTraceFormat;
use workload::db_bench::DbBenchKind;
use workload::mixgraph::MixgraphKind;
use workload::{SizeClass, SizeProfile, ValueData, ValueSize, Workload, YcsbConfig, YcsbProperties, YcsbWorkload};

use super::named::{format_size, serde_name, serde_name_opt, Bytes, NameError, Named};
use super::pages::PageWrites;
use super::run_order::RunOrder;
use crate::error::{LabError, Result};

/// The generator and its phases: YCSB's load then the workload; Mixgraph's fill then its mix;
/// db_bench's benchmarks in order (each fill on a fresh database, as db_bench), after a
/// fillrandom when the first benchmark only reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    Ycsb(YcsbWorkload),
    Mixgraph(MixgraphKind),
    DbBench(Vec<DbBenchKind>),
    /// Single-page writes straight to a simulated block SSD, with no file system and no engine
    /// (GC and write-amplification studies): a sequential fill, then `WorkloadSpec::pages`.
    PageWrites,
    /// A recorded block trace replayed on a simulated block SSD alone (`WorkloadSpec::trace`).
    BlockTrace,
    /// A recorded key-value trace replayed on the engine or a key-value SSD
    /// (`WorkloadSpec::kv_trace`, in `workload::kv_trace`'s format or a RocksDB query trace).
    KvTrace,
}

impl WorkloadKind {
    /// Every workload name, for errors: the generators' and the lab's own.
    pub const ACCEPTED: &'static str = "load, a, b, c, d, e, f, core (YCSB); fillseq, fillrandom, overwrite, \
        readrandom, readseq, seekrandom, fillzipfian (db_bench, or several separated by commas); all_random, all_dist, \
        prefix_random, prefix_dist (Mixgraph); pages (page writes to a block SSD); block-trace, kv-trace (trace replays)";

    /// One db_bench benchmark.
    pub fn db_bench(kind: DbBenchKind) -> WorkloadKind {
        WorkloadKind::DbBench(vec![kind])
    }

    /// The name results carry: the workload's, or `db_bench` for several benchmarks.
    pub fn label(&self) -> String {
        match self {
            WorkloadKind::Ycsb(w) => w.name().to_string(),
            WorkloadKind::Mixgraph(k) => k.name().to_string(),
            WorkloadKind::DbBench(list) if list.len() == 1 => list[0].name().to_string(),
            WorkloadKind::DbBench(_) => "db_bench".to_string(),
            WorkloadKind::PageWrites => "pages".to_string(),
            WorkloadKind::BlockTrace => "block-trace".to_string(),
            WorkloadKind::KvTrace => "kv-trace".to_string(),
        }
    }

    /// A workload that drives a simulated block SSD alone, with no engine and no file system.
    pub fn is_device_only(&self) -> bool {
        matches!(self, WorkloadKind::PageWrites | WorkloadKind::BlockTrace)
    }
}

impl From<Workload> for WorkloadKind {
    fn from(w: Workload) -> WorkloadKind {
        match w {
            Workload::Ycsb(w) => WorkloadKind::Ycsb(w),
            Workload::Mixgraph(k) => WorkloadKind::Mixgraph(k),
            Workload::DbBench(k) => WorkloadKind::db_bench(k),
        }
    }
}

impl Named for WorkloadKind {
    /// Any workload name, or db_bench benchmarks separated by commas.
    fn parse_name(text: &str) -> Result<WorkloadKind, NameError> {
        match text.trim() {
            "pages" => return Ok(WorkloadKind::PageWrites),
            "block-trace" => return Ok(WorkloadKind::BlockTrace),
            "kv-trace" => return Ok(WorkloadKind::KvTrace),
            _ => {}
        }
        let items: Vec<&str> = text.split(',').map(str::trim).collect();
        if items.iter().any(|i| i.is_empty()) {
            return Err(format!("empty item in '{text}'; accepted: names separated by single commas").into());
        }
        if items.len() > 1 {
            let kinds: Vec<DbBenchKind> =
                items.iter().map(|i| i.parse::<DbBenchKind>()).collect::<Result<_, _>>().map_err(|e| e.to_string())?;
            return Ok(WorkloadKind::DbBench(kinds));
        }
        match items[0].parse::<Workload>() {
            Ok(w) => Ok(w.into()),
            // The generators' crate knows its own names only; the lab's workloads come on top.
            Err(_) => Err(format!("unknown workload '{}'; accepted: {}", items[0], WorkloadKind::ACCEPTED).into()),
        }
    }
    fn name(&self) -> String {
        match self {
            WorkloadKind::Ycsb(w) => w.name().to_string(),
            WorkloadKind::Mixgraph(k) => k.name().to_string(),
            WorkloadKind::DbBench(list) => list.iter().map(|k| k.name()).collect::<Vec<_>>().join(","),
            WorkloadKind::PageWrites => "pages".to_string(),
            WorkloadKind::BlockTrace => "block-trace".to_string(),
            WorkloadKind::KvTrace => "kv-trace".to_string(),
        }
    }
}

/// Value sizes: bytes (fixed, or uniform over an inclusive range), or a class relative to the
/// device's flash page `P` (seeds 002 and 004; our definition, see `workload::value_size`):
/// `small` ([1, P]), `uniform` ([1, 2P], seed 002's reading), `uniform-kvftl` ([1, 1 MiB], seed
/// 004's), `large` ([P + 1, 3P]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueSizeSpec {
    Bytes(ValueSize),
    Class(SizeClass, SizeProfile),
}

impl Default for ValueSizeSpec {
    fn default() -> Self {
        ValueSizeSpec::Bytes(ValueSize::Fixed(1024))
    }
}

/// The largest value the engine accepts (`lsm::Options::max_value_size`'s default).
pub fn max_value_size() -> u64 {
    lsm::Options::default().max_value_size as u64
}

impl Named for ValueSizeSpec {
    fn parse_name(text: &str) -> Result<ValueSizeSpec, NameError> {
        let class = |c, p| Ok(ValueSizeSpec::Class(c, p));
        match text.trim() {
            "small" => return class(SizeClass::Small, SizeProfile::Plsc),
            "uniform" => return class(SizeClass::Uniform, SizeProfile::Plsc),
            "uniform-kvftl" => return class(SizeClass::Uniform, SizeProfile::Kvftl),
            "large" => return class(SizeClass::Large, SizeProfile::Plsc),
            _ => {}
        }
        let max = max_value_size();
        let one = |t: &str| -> Result<u32, NameError> {
            let v = Bytes::parse_name(t)?.0;
            if v > max {
                let max = format_size(max);
                return Err(format!(
                    "{} exceeds the engine's largest value ({max}); accepted: 1 B to {max}",
                    format_size(v)
                )
                .into());
            }
            Ok(v as u32)
        };
        Ok(ValueSizeSpec::Bytes(match text.trim().split_once('-') {
            None => ValueSize::Fixed(one(text)?),
            Some(("", _)) => return Err(format!("'{text}' is negative; accepted: 1 B to 64 MiB, or MIN-MAX").into()),
            Some((a, b)) => ValueSize::uniform(one(a)?, one(b)?).map_err(|e| e.to_string())?,
        }))
    }
    fn name(&self) -> String {
        match self {
            ValueSizeSpec::Bytes(v) => v.to_string(),
            ValueSizeSpec::Class(SizeClass::Uniform, SizeProfile::Kvftl) => "uniform-kvftl".into(),
            ValueSizeSpec::Class(c, _) => c.name().into(),
        }
    }
}

impl ValueSizeSpec {
    /// The sizes on a device with `page_size`-byte pages.
    pub fn resolve(self, page_size: u32) -> Result<ValueSize> {
        match self {
            ValueSizeSpec::Bytes(v) => Ok(v),
            ValueSizeSpec::Class(c, p) => {
                ValueSize::class(c, page_size, p).map_err(|e| LabError::invalid("workload.value_size", e.to_string()))
            }
        }
    }
}

/// The seed of a workload unless given.
pub const DEFAULT_SEED: u64 = 42;

/// A run's workload (`[workload]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Any db_bench, YCSB or Mixgraph name, or db_bench benchmarks separated by commas.
    #[serde(with = "serde_name")]
    pub name: WorkloadKind,
    /// Records (the key space; what a fill writes), or `data`: the user bytes to write, records =
    /// data / (key size, 16 when absent, + mean value size).
    #[serde(default)]
    pub records: Option<u64>,
    #[serde(default, with = "serde_name_opt")]
    pub data: Option<Bytes>,
    /// Operations of the measured phase (0: the load or fill only).
    #[serde(default)]
    pub operations: u64,
    /// The measured phase's order: `mixed` (the generator's) or `puts-then-gets` (YCSB).
    #[serde(default, with = "serde_name", skip_serializing_if = "RunOrder::is_mixed")]
    pub order: RunOrder,
    #[serde(default, with = "serde_name")]
    pub value_size: ValueSizeSpec,
    /// Key size in bytes; the workload's own when absent (YCSB "user" + number, about 23 B;
    /// db_bench 16; Mixgraph 48).
    #[serde(default)]
    pub key_size: Option<usize>,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The values' bytes: the workload's own (`generated`) or `zeros` (see `workload::ValueData`).
    #[serde(default, with = "serde_name")]
    pub values: ValueData,
    /// The page writes of `name = "pages"`.
    #[serde(default)]
    pub pages: PageWrites,
    /// The trace of `name = "block-trace"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<BlockTraceSpec>,
    /// The trace of `name = "kv-trace"` (relative to the experiment file); `records` is then an
    /// estimate of its distinct keys, for the run's memory estimate (1 when absent).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "serde_name_opt")]
    pub kv_trace: Option<PathBuf>,
    /// YCSB properties over the YCSB workload's definition, by YCSB's names (`readproportion`,
    /// `requestdistribution`, `fieldlength`, ...): `ycsb_file`'s, then these. Workload `core` is
    /// `CoreWorkload`'s defaults alone, which a property file completes as YCSB's `-P` does.
    #[serde(default, skip_serializing_if = "YcsbProperties::is_empty")]
    pub ycsb: YcsbProperties,
    /// A YCSB property file (relative to the experiment file), read with the experiment: its
    /// properties go under `ycsb`'s, and a run's specification holds them, not the path.
    #[serde(default, skip_serializing)]
    pub ycsb_file: Option<PathBuf>,
}

/// How a block trace's requests are issued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replay {
    /// At the trace's own times (after the preconditioning), whatever is outstanding.
    Open,
    /// As fast as the device allows with `queue_depth` requests outstanding.
    #[default]
    Closed,
}

impl Named for Replay {
    fn parse_name(s: &str) -> Result<Replay, NameError> {
        match s.trim() {
            "open" => Ok(Replay::Open),
            "closed" => Ok(Replay::Closed),
            other => {
                Err(format!("unknown replay '{other}'; accepted: open (the trace's times), closed (a queue depth)")
                    .into())
            }
        }
    }
    fn name(&self) -> String {
        match self {
            Replay::Open => "open".into(),
            Replay::Closed => "closed".into(),
        }
    }
}

/// What a request beyond the device's user space does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Addresses {
    /// It is an error naming the request's line.
    #[default]
    Error,
    /// Its pages wrap around the user space (modulo the user pages): a large volume's trace on a
    /// smaller device, its locality kept within the device.
    Wrap,
}

impl Named for Addresses {
    fn parse_name(s: &str) -> Result<Addresses, NameError> {
        match s.trim() {
            "error" => Ok(Addresses::Error),
            "wrap" => Ok(Addresses::Wrap),
            other => Err(format!("unknown addresses '{other}'; accepted: error, wrap").into()),
        }
    }
    fn name(&self) -> String {
        match self {
            Addresses::Error => "error".into(),
            Addresses::Wrap => "wrap".into(),
        }
    }
}

/// A block trace replayed on a simulated block SSD (`name = "block-trace"`): the device is
/// written sequentially first (`precondition`, as MQSim's preconditioning does), then the
/// trace's requests are issued in file order, each over the whole flash pages its bytes touch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockTraceSpec {
    /// The trace file (relative to the experiment file).
    #[serde(with = "serde_name")]
    pub file: PathBuf,
    /// `msr` (MSR Cambridge / SNIA IOTTA CSV) or `blkparse` (blkparse's text output).
    #[serde(with = "serde_name")]
    pub format: BlockTraceFormat,
    #[serde(default, with = "serde_name")]
    pub replay: Replay,
    /// Requests outstanding in a closed-loop replay.
    #[serde(default = "default_trace_depth")]
    pub queue_depth: u32,
    /// Write every user page once before the trace (default true).
    #[serde(default = "default_true")]
    pub precondition: bool,
    #[serde(default, with = "serde_name")]
    pub addresses: Addresses,
}

/// As the page-write workload's.
fn default_trace_depth() -> u32 {
    64
}

fn default_true() -> bool {
    true
}

impl BlockTraceSpec {
    /// A closed-loop replay of `file` with the defaults.
    pub fn new(file: PathBuf, format: BlockTraceFormat) -> BlockTraceSpec {
        BlockTraceSpec {
            file,
            format,
            replay: Replay::Closed,
            queue_depth: default_trace_depth(),
            precondition: true,
            addresses: Addresses::Error,
        }
    }

    /// Checks the parameters (`workload.trace.*`).
    pub fn validate(&self) -> Result<()> {
        if self.queue_depth == 0 {
            return Err(LabError::invalid("workload.trace.queue_depth", "must be at least 1"));
        }
        if !self.file.is_file() {
            return Err(LabError::invalid("workload.trace.file", format!("{} is not a file", self.file.display())));
        }
        Ok(())
    }
}

fn default_seed() -> u64 {
    DEFAULT_SEED
}

impl WorkloadSpec {
    /// `name` over `records` records and `operations` operations, with the defaults for the rest.
    pub fn new(name: WorkloadKind, records: u64, operations: u64) -> WorkloadSpec {
        WorkloadSpec {
            name,
            records: Some(records),
            data: None,
            operations,
            order: RunOrder::Mixed,
            value_size: ValueSizeSpec::default(),
            key_size: None,
            seed: DEFAULT_SEED,
            values: ValueData::Generated,
            pages: PageWrites::default(),
            ycsb: YcsbProperties::default(),
            ycsb_file: None,
            trace: None,
            kv_trace: None,
        }
    }

    /// Makes a relative trace file relative to `dir` (the experiment file's), so that the run's
    /// specification names it wherever the run goes.
    pub fn locate_files(&mut self, dir: &Path) -> Result<()> {
        self.read_ycsb_file(dir)?;
        if let Some(t) = &mut self.trace {
            if t.file.is_relative() {
                t.file = dir.join(&t.file);
            }
        }
        if let Some(f) = &mut self.kv_trace {
            if f.is_relative() {
                *f = dir.join(&*f);
            }
        }
        Ok(())
    }

    /// Reads `ycsb_file` (relative to `dir`) into `ycsb`, under the properties given there.
    pub fn read_ycsb_file(&mut self, dir: &Path) -> Result<()> {
        let Some(file) = self.ycsb_file.take() else { return Ok(()) };
        let path = dir.join(&file);
        let text = std::fs::read_to_string(&path).map_err(LabError::io(&path, "read the YCSB property file"))?;
        let mut props = YcsbProperties::parse(&text, &file.display().to_string())
            .map_err(|e| LabError::invalid("workload.ycsb_file", e.to_string()))?;
        props.extend(&self.ycsb);
        self.ycsb = props;
        Ok(())
    }

    /// The generators' parameters for `records`, `operations` and `value_size` (the plan's).
    pub fn generator_spec(&self, records: u64, operations: u64, value_size: ValueSize) -> workload::WorkloadSpec {
        workload::WorkloadSpec {
            records,
            operations: operations.max(1),
            value_size,
            key_size: self.key_size,
            values: self.values,
        }
    }

    /// YCSB workload `w` for `g`, with the YCSB properties applied.
    pub fn ycsb_config(&self, w: YcsbWorkload, g: &workload::WorkloadSpec) -> Result<YcsbConfig> {
        let mut c = g.ycsb_config(w)?;
        self.ycsb.apply(&mut c).map_err(|e| LabError::invalid("workload.ycsb", e.to_string()))?;
        Ok(c)
    }

    /// The records and run-phase operations, from `records` or `data` and `operations`, or from
    /// the YCSB properties `recordcount` and `operationcount`; given both ways, they must agree.
    pub fn counts(&self, value_size: ValueSize) -> Result<(u64, u64)> {
        if !self.ycsb.is_empty() && !matches!(self.name, WorkloadKind::Ycsb(_)) {
            return Err(LabError::invalid(
                "workload.ycsb",
                format!("YCSB properties apply to YCSB workloads, not {}", self.name.name()),
            ));
        }
        match (&self.name, &self.kv_trace) {
            (WorkloadKind::KvTrace, Some(f)) if f.is_file() => return Ok((self.records.unwrap_or(1).max(1), 0)),
            (WorkloadKind::KvTrace, Some(f)) => {
                return Err(LabError::invalid("workload.kv_trace", format!("{} is not a file", f.display())))
            }
            (WorkloadKind::KvTrace, None) => {
                return Err(LabError::invalid("workload.kv_trace", "kv-trace needs a trace file (kv_trace = \"FILE\")"))
            }
            (_, Some(_)) => return Err(LabError::invalid("workload.kv_trace", "applies to workload kv-trace only")),
            _ => {}
        }
        let records = match (self.ycsb.count("recordcount"), self.records, self.data) {
            (Some(n), None, None) => n,
            (Some(n), Some(r), None) if r == n => n,
            (Some(n), _, _) => {
                return Err(LabError::invalid(
                    "workload.records",
                    format!("the YCSB property recordcount={n} gives the records too: give one of them"),
                ))
            }
            (None, ..) => self.record_count(value_size)?,
        };
        let operations = match self.ycsb.count("operationcount") {
            Some(n) if self.operations == 0 || self.operations == n => n,
            Some(n) => {
                return Err(LabError::invalid(
                    "workload.operations",
                    format!("{} differs from the YCSB property operationcount={n}: give one of them", self.operations),
                ))
            }
            None => self.operations,
        };
        Ok((records, operations))
    }

    /// The same with fixed value sizes.
    pub fn with_values(mut self, value_size: ValueSize, values: ValueData) -> WorkloadSpec {
        self.value_size = ValueSizeSpec::Bytes(value_size);
        self.values = values;
        self
    }

    /// The record count, from `records` or from `data` (`value_size` the resolved sizes).
    pub fn record_count(&self, value_size: ValueSize) -> Result<u64> {
        match (self.records, self.data) {
            (Some(r), None) if r > 0 => Ok(r),
            (None, Some(d)) => {
                let key = self.key_size.unwrap_or(16) as u64;
                Ok((d.0 / (key + value_size.mean() as u64).max(1)).max(1))
            }
            (Some(_), None) => Err(LabError::invalid("workload.records", "must be at least 1")),
            (Some(_), Some(_)) => Err(LabError::invalid("workload", "give records or data, not both")),
            (None, None) => Err(LabError::invalid("workload", "records or data is required")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value_size(text: &str, page: u32) -> Result<ValueSize, NameError> {
        let spec = ValueSizeSpec::parse_name(text)?;
        spec.resolve(page).map_err(|e| NameError(e.to_string()))
    }

    #[test]
    fn value_sizes_take_units_and_stay_within_the_engine() {
        assert_eq!(value_size("4KiB", 4096).unwrap(), ValueSize::Fixed(4096));
        assert_eq!(value_size("100-1KiB", 4096).unwrap(), ValueSize::uniform(100, 1024).unwrap());
        assert!(value_size("0", 4096).unwrap_err().0.contains("positive"));
        assert!(value_size("1GiB", 4096).unwrap_err().0.contains("exceeds the engine's largest value (64 MiB)"));
        assert!(value_size("10GiB", 4096).unwrap_err().0.contains("exceeds"));
        assert!(value_size("-5", 4096).unwrap_err().0.contains("negative"));
        assert!(value_size("2KiB-1KiB", 4096).is_err());
        assert_eq!(value_size("64MiB", 4096).unwrap(), ValueSize::Fixed(64 << 20));
        let p = 16 << 10;
        assert_eq!(value_size("small", p).unwrap(), ValueSize::uniform(1, p).unwrap());
        assert_eq!(value_size("uniform", p).unwrap(), ValueSize::uniform(1, 2 * p).unwrap());
        assert_eq!(value_size("uniform-kvftl", p).unwrap(), ValueSize::uniform(1, 1 << 20).unwrap());
        assert_eq!(value_size("large", p).unwrap(), ValueSize::uniform(p + 1, 3 * p).unwrap());
        for text in ["small", "uniform", "uniform-kvftl", "large", "100-1024", "4096"] {
            let spec = ValueSizeSpec::parse_name(text).unwrap();
            assert_eq!(ValueSizeSpec::parse_name(&spec.name()).unwrap(), spec, "{text}");
        }
    }

    #[test]
    fn benchmark_lists_refuse_empty_items() {
        let list = WorkloadKind::parse_name("fillseq, readrandom").unwrap();
        assert_eq!(list, WorkloadKind::DbBench(vec![DbBenchKind::FillSeq, DbBenchKind::ReadRandom]));
        assert_eq!(list.name(), "fillseq,readrandom");
        assert!(WorkloadKind::parse_name("fillseq,,readrandom").unwrap_err().0.contains("empty item"));
        assert!(WorkloadKind::parse_name("").is_err());
        // The error lists every workload, the lab's own too, and each name it lists parses.
        let e = WorkloadKind::parse_name("nope").unwrap_err().0;
        assert!(e.starts_with("unknown workload 'nope'; accepted: "), "{e}");
        for name in ["load", "core", "fillzipfian", "prefix_dist", "pages", "block-trace", "kv-trace"] {
            assert!(e.contains(name) && WorkloadKind::parse_name(name).is_ok(), "{name}: {e}");
        }
        assert_eq!(WorkloadKind::parse_name("a").unwrap(), WorkloadKind::Ycsb(YcsbWorkload::A));
    }
}

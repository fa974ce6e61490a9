//! YCSB workload parameters: the core workloads' property files and CoreWorkload's defaults.

use crate::error::WorkloadError;
use crate::value_data::ValueData;
use crate::value_size::ValueSize;
use std::fmt;
use std::str::FromStr;

/// The YCSB phase the generator plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Phase {
    /// `ycsb load`: `insert_count` inserts of consecutive key numbers.
    Load,
    /// `ycsb run`: `operation_count` operations drawn from the proportions.
    Run,
}

/// The load phase and the six core workloads of YCSB's `workloads/` directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum YcsbWorkload {
    /// The load phase (the same for every core workload).
    Load,
    /// Update heavy: 50 % read, 50 % update, zipfian.
    A,
    /// Read mostly: 95 % read, 5 % update, zipfian.
    B,
    /// Read only, zipfian.
    C,
    /// Read latest: 95 % read, 5 % insert, latest.
    D,
    /// Short ranges: 95 % scan (uniform length 1..=100), 5 % insert, zipfian.
    E,
    /// Read-modify-write: 50 % read, 50 % read-modify-write, zipfian.
    F,
    /// `CoreWorkload` with its defaults alone (95 % read, 5 % update, uniform, scans up to 1000):
    /// the base a property file (`YcsbProperties`) completes, as YCSB's `-P` does.
    Core,
}

impl YcsbWorkload {
    /// The load phase and the six core workloads, load first (not [`YcsbWorkload::Core`], which
    /// a property file completes).
    pub const ALL: [YcsbWorkload; 7] = [
        YcsbWorkload::Load,
        YcsbWorkload::A,
        YcsbWorkload::B,
        YcsbWorkload::C,
        YcsbWorkload::D,
        YcsbWorkload::E,
        YcsbWorkload::F,
    ];

    /// Accepted names.
    pub const NAMES: &'static str = "load, a, b, c, d, e, f, core";

    /// Lower-case name (`load`, `a`..`f`).
    pub fn name(self) -> &'static str {
        match self {
            YcsbWorkload::Load => "load",
            YcsbWorkload::A => "a",
            YcsbWorkload::B => "b",
            YcsbWorkload::C => "c",
            YcsbWorkload::D => "d",
            YcsbWorkload::E => "e",
            YcsbWorkload::F => "f",
            YcsbWorkload::Core => "core",
        }
    }
}

impl fmt::Display for YcsbWorkload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for YcsbWorkload {
    type Err = WorkloadError;

    /// `load`, `a`..`f`, also written `workloada` or `ycsb-a` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let t = t
            .strip_prefix("ycsb-")
            .or_else(|| t.strip_prefix("ycsb_"))
            .or_else(|| t.strip_prefix("workload"))
            .unwrap_or(&t);
        YcsbWorkload::ALL.into_iter().chain([YcsbWorkload::Core]).find(|w| w.name() == t).ok_or_else(|| {
            WorkloadError::UnknownName {
                kind: "YCSB workload",
                name: s.to_string(),
                accepted: YcsbWorkload::NAMES.to_string(),
            }
        })
    }
}

/// Operation proportions, as YCSB's `*proportion` properties (need not sum to 1; YCSB normalises).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proportions {
    /// `readproportion`.
    pub read: f64,
    /// `updateproportion`.
    pub update: f64,
    /// `insertproportion`.
    pub insert: f64,
    /// `scanproportion`.
    pub scan: f64,
    /// `readmodifywriteproportion`.
    pub read_modify_write: f64,
}

impl Proportions {
    /// The proportions in YCSB's chooser order: read, update, insert, scan, read-modify-write.
    pub fn in_ycsb_order(&self) -> [f64; 5] {
        [self.read, self.update, self.insert, self.scan, self.read_modify_write]
    }
}

/// `requestdistribution`: how reads, updates, scans and read-modify-writes pick a record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RequestDistribution {
    /// Uniform over the loaded records.
    Uniform,
    /// Scrambled Zipfian (theta 0.99) over the loaded records plus the expected new ones.
    Zipfian,
    /// Skewed toward the most recently inserted records.
    Latest,
    /// A hot set of `hot_data_fraction` of the records gets `hot_op_fraction` of the requests.
    Hotspot {
        /// `hotspotdatafraction` (YCSB default 0.2).
        hot_data_fraction: f64,
        /// `hotspotopnfraction` (YCSB default 0.8).
        hot_op_fraction: f64,
    },
}

/// `scanlengthdistribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLengthDistribution {
    /// Uniform in `min_scan_length..=max_scan_length`.
    Uniform,
    /// Zipfian (theta 0.99) over `min_scan_length..=max_scan_length`, shortest most popular.
    Zipfian,
}

/// `fieldlengthdistribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldLengthDistribution {
    /// Every field `field_length` bytes.
    Constant,
    /// Uniform in `min_field_length..=field_length`.
    Uniform,
    /// Zipfian (theta 0.99) over `min_field_length..=field_length`, shortest most popular.
    Zipfian,
}

/// `insertorder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InsertOrder {
    /// Key numbers hashed with fnvhash64 (YCSB's default): inserts land all over the key space.
    Hashed,
    /// Key numbers used as they are.
    Ordered,
}

/// The parameters of a YCSB core workload. Field names follow YCSB's properties.
#[derive(Debug, Clone, PartialEq)]
pub struct YcsbConfig {
    /// Load or run.
    pub phase: Phase,
    /// `recordcount`: records loaded before the run phase.
    pub record_count: u64,
    /// `operationcount`: operations in the run phase.
    pub operation_count: u64,
    /// `insertstart`: first key number of the load phase.
    pub insert_start: u64,
    /// `insertcount`; `None` means `record_count - insert_start`.
    pub insert_count: Option<u64>,
    /// `fieldcount` (default 10).
    pub field_count: u32,
    /// `fieldlength` (default 100).
    pub field_length: u32,
    /// `minfieldlength` (default 1), for the uniform and zipfian field lengths.
    pub min_field_length: u32,
    /// `fieldlengthdistribution` (default constant).
    pub field_length_distribution: FieldLengthDistribution,
    /// `writeallfields` (default false): updates write every field instead of one.
    pub write_all_fields: bool,
    /// `insertorder` (default hashed).
    pub insert_order: InsertOrder,
    /// `zeropadding` (default 1).
    pub zero_padding: u32,
    /// The operation mix.
    pub proportions: Proportions,
    /// `requestdistribution`.
    pub request_distribution: RequestDistribution,
    /// `minscanlength` (default 1).
    pub min_scan_length: u64,
    /// `maxscanlength` (default 1000; workload E sets 100).
    pub max_scan_length: u64,
    /// `scanlengthdistribution` (default uniform).
    pub scan_length_distribution: ScanLengthDistribution,
    /// The values' bytes (not a YCSB property): YCSB's random printable ones, or zeros drawn all
    /// the same, so that keys and lengths are the ones generated values give.
    pub values: ValueData,
}

impl YcsbConfig {
    /// The core workload's property file on top of CoreWorkload's defaults, for `record_count` records and
    /// `operation_count` run-phase operations. `YcsbWorkload::Load` gives the load phase.
    pub fn core(workload: YcsbWorkload, record_count: u64, operation_count: u64) -> YcsbConfig {
        let p = |read, update, insert, scan, read_modify_write| Proportions {
            read,
            update,
            insert,
            scan,
            read_modify_write,
        };
        let (proportions, request_distribution) = match workload {
            // The load phase uses CoreWorkload's defaults (0.95 read / 0.05 update); they do not matter for loading.
            YcsbWorkload::Load | YcsbWorkload::Core => (p(0.95, 0.05, 0.0, 0.0, 0.0), RequestDistribution::Uniform),
            YcsbWorkload::A => (p(0.5, 0.5, 0.0, 0.0, 0.0), RequestDistribution::Zipfian),
            YcsbWorkload::B => (p(0.95, 0.05, 0.0, 0.0, 0.0), RequestDistribution::Zipfian),
            YcsbWorkload::C => (p(1.0, 0.0, 0.0, 0.0, 0.0), RequestDistribution::Zipfian),
            YcsbWorkload::D => (p(0.95, 0.0, 0.05, 0.0, 0.0), RequestDistribution::Latest),
            YcsbWorkload::E => (p(0.0, 0.0, 0.05, 0.95, 0.0), RequestDistribution::Zipfian),
            YcsbWorkload::F => (p(0.5, 0.0, 0.0, 0.0, 0.5), RequestDistribution::Zipfian),
        };
        YcsbConfig {
            phase: if workload == YcsbWorkload::Load { Phase::Load } else { Phase::Run },
            record_count,
            operation_count,
            insert_start: 0,
            insert_count: None,
            field_count: 10,
            field_length: 100,
            min_field_length: 1,
            field_length_distribution: FieldLengthDistribution::Constant,
            write_all_fields: false,
            insert_order: InsertOrder::Hashed,
            zero_padding: 1,
            proportions,
            request_distribution,
            min_scan_length: 1,
            max_scan_length: if workload == YcsbWorkload::E { 100 } else { 1000 },
            scan_length_distribution: ScanLengthDistribution::Uniform,
            values: ValueData::Generated,
        }
    }

    /// One field of `bytes` bytes per record (constant length): the record, and every update, is `bytes` long.
    pub fn with_record_size(mut self, bytes: u32) -> YcsbConfig {
        self.field_count = 1;
        self.field_length = bytes;
        self.min_field_length = bytes.min(1);
        self.field_length_distribution = FieldLengthDistribution::Constant;
        self
    }

    /// The same parameters in the load phase.
    pub fn load_phase(mut self) -> YcsbConfig {
        self.phase = Phase::Load;
        self
    }

    /// `insertcount`, defaulted.
    pub fn effective_insert_count(&self) -> u64 {
        self.insert_count.unwrap_or(self.record_count.saturating_sub(self.insert_start))
    }

    /// The sizes of a fully written record: `field_count` fields of `field_length` bytes, or of
    /// `min_field_length..=field_length` when the lengths vary.
    pub fn record_sizes(&self) -> ValueSize {
        let n = self.field_count.max(1);
        match self.field_length_distribution {
            FieldLengthDistribution::Constant => ValueSize::Fixed(n.saturating_mul(self.field_length)),
            _ => {
                ValueSize::uniform(n.saturating_mul(self.min_field_length.max(1)), n.saturating_mul(self.field_length))
                    .unwrap_or(ValueSize::Fixed(n.saturating_mul(self.field_length)))
            }
        }
    }

    /// Bytes of one fully written record when the field length is constant.
    pub fn record_bytes(&self) -> u64 {
        self.field_count as u64 * self.field_length as u64
    }

    /// Check every parameter; the error names the field and what it accepts.
    pub fn validate(&self) -> Result<(), WorkloadError> {
        if self.record_count == 0 {
            return Err(WorkloadError::invalid(
                "record_count",
                0,
                "a record count >= 1 (YCSB's 0 meaning 2^31 - 1 is not supported)",
            ));
        }
        if self.insert_start >= self.record_count {
            return Err(WorkloadError::invalid(
                "insert_start",
                self.insert_start,
                "a first key number below record_count",
            ));
        }
        let insert_count = self.effective_insert_count();
        // insert_start < record_count was checked above, so the subtraction cannot underflow.
        if insert_count == 0 || insert_count > self.record_count - self.insert_start {
            return Err(WorkloadError::invalid("insert_count", insert_count, "1..=record_count - insert_start"));
        }
        if self.field_count == 0 {
            return Err(WorkloadError::invalid("field_count", 0, "a field count >= 1"));
        }
        if self.field_length_distribution != FieldLengthDistribution::Constant
            && self.min_field_length > self.field_length
        {
            return Err(WorkloadError::invalid(
                "min_field_length",
                self.min_field_length,
                "a minimum field length <= field_length",
            ));
        }
        if self.zero_padding > 1024 {
            return Err(WorkloadError::invalid("zero_padding", self.zero_padding, "0..=1024 digits"));
        }
        let props = self.proportions.in_ycsb_order();
        if props.iter().any(|p| !p.is_finite() || *p < 0.0) {
            return Err(WorkloadError::invalid(
                "proportions",
                format!("{:?}", self.proportions),
                "finite, non-negative proportions",
            ));
        }
        if self.phase == Phase::Run && props.iter().sum::<f64>() <= 0.0 {
            return Err(WorkloadError::invalid(
                "proportions",
                format!("{:?}", self.proportions),
                "at least one positive proportion",
            ));
        }
        if let RequestDistribution::Hotspot { hot_data_fraction, hot_op_fraction } = self.request_distribution {
            // YCSB silently replaces out-of-range fractions with 0; we refuse them instead.
            if !(0.0..=1.0).contains(&hot_data_fraction) {
                return Err(WorkloadError::invalid("hot_data_fraction", hot_data_fraction, "a fraction in [0, 1]"));
            }
            if !(0.0..=1.0).contains(&hot_op_fraction) {
                return Err(WorkloadError::invalid("hot_op_fraction", hot_op_fraction, "a fraction in [0, 1]"));
            }
        }
        if self.request_distribution == RequestDistribution::Latest && self.record_count < 2 {
            return Err(WorkloadError::invalid(
                "record_count",
                self.record_count,
                "at least 2 records for the latest distribution (it draws from 1..=record_count - 1)",
            ));
        }
        if self.phase == Phase::Run
            && self.proportions.scan > 0.0
            && (self.min_scan_length == 0 || self.max_scan_length < self.min_scan_length)
        {
            return Err(WorkloadError::invalid(
                "max_scan_length",
                self.max_scan_length,
                "1 <= min_scan_length <= max_scan_length",
            ));
        }
        Ok(())
    }
}

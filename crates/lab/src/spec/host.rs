//! The host the engine runs in: what it asks of durability, and its CPU: the cost model that
//! charges the engine's work to its lanes in simulated time (`lsm::cpu`) and how many cores the
//! lanes share. A key-value SSD has no host-side engine, so nothing here applies to one; on a
//! wall-clock file system (posix, mem, xfs-loop) the CPU is the real one and the model is unused.
//!
//! `cpu` is `"calibrated"` (the default: the built-in calibration, [`Calibration::builtin`], dated
//! and stated in every report), `"off"` (simulated time is the flash's alone, as before the model
//! existed), or the coefficients themselves (`cpu = { insert = 1200.0, ... }`, nanoseconds per
//! unit, as `flashkv calibrate` writes them). On the command line `--cpu` takes the two names or
//! the path of a file `flashkv calibrate` wrote.

use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use lsm::cpu::CpuModel;

use crate::error::{LabError, Result};
use crate::spec::named::{NameError, Named};

/// The host of a run (`[host]`; the command line's `--sync`, `--cpu`, `--host-cores`).
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostSpec {
    /// Sync every write (the write-ahead log is on the device before a put returns).
    #[arg(long)]
    pub sync: bool,
    /// The host CPU cost model in simulated time: calibrated (the built-in calibration), off
    /// (simulated time is the flash's alone), or a file written by `flashkv calibrate`.
    #[arg(long, default_value = "calibrated", value_parser = crate::spec::named::parser::<HostCpu>)]
    pub cpu: HostCpu,
    /// Host cores the engine's lanes (the caller's operations, the background jobs) share; without
    /// it each lane has a core of its own.
    #[arg(long = "host-cores")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
}

/// The host CPU cost model a run uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum HostCpu {
    /// The built-in calibration.
    #[default]
    Calibrated,
    /// No CPU time: simulated time is the device's alone.
    Off,
    /// These coefficients.
    Model(CpuModel),
}

impl HostSpec {
    /// The model the engine charges with (`None`: off), checked.
    pub fn cpu_model(&self) -> Result<Option<CpuModel>> {
        let model = match &self.cpu {
            HostCpu::Off => return Ok(None),
            HostCpu::Calibrated => Calibration::builtin().model(),
            HostCpu::Model(m) => *m,
        };
        if let Some(t) = model.first_invalid() {
            return Err(LabError::invalid(
                format!("host.cpu.{}", t.name()),
                format!("{} is not a cost: give a non-negative number of nanoseconds", model.get(t)),
            ));
        }
        Ok(Some(model))
    }

    /// Checks the section on its own.
    pub fn validate(&self) -> Result<()> {
        if self.cores == Some(0) {
            return Err(LabError::invalid("host.cores", "at least 1 (leave it out for a core per lane)"));
        }
        self.cpu_model().map(drop)
    }

    /// The first field set away from its default (what a key-value SSD cannot take).
    pub fn first_set(&self) -> Option<&'static str> {
        let d = HostSpec::default();
        if self.sync != d.sync {
            Some("host.sync")
        } else if self.cpu != d.cpu {
            Some("host.cpu")
        } else if self.cores != d.cores {
            Some("host.cores")
        } else {
            None
        }
    }

    /// The model and cores in words, for reports ("host CPU: ..." follows it).
    pub fn describe_cpu(&self) -> String {
        let cores = match self.cores {
            Some(n) => format!("{n} host core(s) shared by the engine's lanes"),
            None => "a host core per lane".into(),
        };
        match &self.cpu {
            HostCpu::Off => "not modelled (cpu = off)".into(),
            HostCpu::Calibrated => format!("{}; {cores}", Calibration::builtin().describe()),
            HostCpu::Model(_) => format!("the run's own cost model; {cores}"),
        }
    }
}

impl Named for HostCpu {
    fn parse_name(text: &str) -> std::result::Result<HostCpu, NameError> {
        match text.trim() {
            "calibrated" => Ok(HostCpu::Calibrated),
            "off" => Ok(HostCpu::Off),
            path => {
                let body = std::fs::read_to_string(path)
                    .map_err(|e| format!("'{path}' is neither calibrated, off, nor a calibration file ({e})"))?;
                let c = Calibration::parse(&body).map_err(|e| format!("{path}: {e}"))?;
                Ok(HostCpu::Model(c.model()))
            }
        }
    }

    fn name(&self) -> String {
        match self {
            HostCpu::Calibrated => "calibrated".into(),
            HostCpu::Off => "off".into(),
            HostCpu::Model(_) => "(a cost model)".into(),
        }
    }
}

impl Serialize for HostCpu {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            HostCpu::Model(m) => m.serialize(s),
            named => s.serialize_str(&named.name()),
        }
    }
}

impl<'de> Deserialize<'de> for HostCpu {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<HostCpu, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Name(String),
            Model(CpuModel),
        }
        match Repr::deserialize(d)? {
            Repr::Name(n) if n == "calibrated" => Ok(HostCpu::Calibrated),
            Repr::Name(n) if n == "off" => Ok(HostCpu::Off),
            Repr::Name(n) => Err(serde::de::Error::custom(format!(
                "unknown '{n}'; accepted: calibrated, off, or a table of costs in ns ({{ insert = 1200.0, ... }})"
            ))),
            Repr::Model(m) => Ok(HostCpu::Model(m)),
        }
    }
}

/// A calibration: the coefficients `flashkv calibrate` fitted, where and how well. Its file is
/// TOML an experiment file can take its `[host]` section from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibration {
    pub calibration: FitInfo,
    pub host: CalibratedHost,
}

/// What a calibration was fitted on and how well it predicts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitInfo {
    /// The day it was fitted (YYYY-MM-DD).
    pub date: String,
    /// The machine: CPU model and cores.
    pub machine: String,
    /// In-memory runs fitted, and held out to test the fit.
    pub runs: usize,
    pub held_out: usize,
    /// R squared of the fit on the fitted runs' lanes.
    pub r_squared: f64,
    /// |predicted - measured| / measured CPU time over the held-out runs: mean and largest.
    pub held_out_error_mean: f64,
    pub held_out_error_max: f64,
    /// The same over the held-out runs' lanes apart (foreground, background), which is what
    /// simulation charges; 0 in a file made before lanes were measured apart.
    #[serde(default)]
    pub held_out_lane_error_mean: f64,
    #[serde(default)]
    pub held_out_lane_error_max: f64,
}

/// The `[host]` section of a calibration file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CalibratedHost {
    pub cpu: CpuModel,
}

/// A calibration file that is not one (the caller names the file).
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// Not TOML, or not a calibration's fields.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A cost term that is not a cost: negative, infinite or not a number.
    #[error("host.cpu.{term} = {value}: not a cost in ns")]
    NotACost { term: &'static str, value: f64 },
}

/// flashkv's built-in calibration (see docs/host-cpu.md for how it was made).
const BUILTIN: &str = include_str!("../../calibration.toml");

impl Calibration {
    pub fn new(info: FitInfo, model: CpuModel) -> Calibration {
        Calibration { calibration: info, host: CalibratedHost { cpu: model } }
    }

    pub fn model(&self) -> CpuModel {
        self.host.cpu
    }

    /// Parses a calibration file.
    pub fn parse(text: &str) -> std::result::Result<Calibration, CalibrationError> {
        let c: Calibration = toml::from_str(text)?;
        if let Some(t) = c.host.cpu.first_invalid() {
            return Err(CalibrationError::NotACost { term: t.name(), value: c.host.cpu.get(t) });
        }
        Ok(c)
    }

    /// The built-in calibration.
    pub fn builtin() -> &'static Calibration {
        static BUILT_IN: OnceLock<Calibration> = OnceLock::new();
        BUILT_IN
            .get_or_init(|| Calibration::parse(BUILTIN).expect("the built-in calibration parses (checked by a test)"))
    }

    /// The file `flashkv calibrate` writes.
    pub fn to_toml(&self) -> String {
        let body = toml::to_string(self).expect("a calibration serializes");
        format!(
            "# A host CPU cost model fitted by `flashkv calibrate`: nanoseconds of CPU per unit of each\n\
             # cost term (see lsm::cpu). Use it with `--cpu THIS_FILE`, or copy the [host] section into\n\
             # an experiment file.\n\n{body}"
        )
    }

    /// One line for reports.
    pub fn describe(&self) -> String {
        let f = &self.calibration;
        let lanes = if f.held_out_lane_error_max > 0.0 {
            format!(
                "; per lane {:.1} % mean, {:.1} % max",
                100.0 * f.held_out_lane_error_mean,
                100.0 * f.held_out_lane_error_max
            )
        } else {
            String::new()
        };
        format!(
            "the cost model calibrated on {} ({}; R² {:.3}, held-out error {:.1} % mean, {:.1} % max per run{lanes})",
            f.date,
            f.machine,
            f.r_squared,
            100.0 * f.held_out_error_mean,
            100.0 * f.held_out_error_max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_calibration_parses_and_round_trips() {
        let c = Calibration::builtin();
        assert!(lsm::cpu::Term::ALL.iter().any(|&t| c.model().get(t) > 0.0), "{c:?}");
        assert!(c.calibration.date.starts_with("20") && c.calibration.runs > 0, "{c:?}");
        assert_eq!(&Calibration::parse(&c.to_toml()).unwrap(), c);
    }

    #[test]
    fn cpu_is_a_name_or_a_table() {
        let parse = |t: &str| toml::from_str::<HostSpec>(t);
        assert_eq!(parse("").unwrap().cpu, HostCpu::Calibrated);
        assert_eq!(parse("cpu = \"off\"").unwrap().cpu, HostCpu::Off);
        let m = parse("cpu = { insert = 900.0, read_byte = 0.25 }").unwrap();
        let HostCpu::Model(model) = m.cpu else { panic!("a model") };
        assert_eq!((model.insert, model.read_byte, model.get), (900.0, 0.25, 0.0));
        assert!(parse("cpu = \"fast\"").unwrap_err().to_string().contains("accepted: calibrated, off"));
        assert!(parse("cpu = { inserts = 1.0 }").is_err());
        let neg = HostSpec { cpu: HostCpu::Model(CpuModel { get: -1.0, ..model }), ..HostSpec::default() };
        assert!(neg.validate().unwrap_err().to_string().contains("host.cpu.get"));
        let none = HostSpec { cores: Some(0), ..HostSpec::default() };
        assert!(none.validate().unwrap_err().to_string().contains("host.cores"));
        // JSON (a Ray worker's spec) carries the same words and tables.
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<HostSpec>(&json).unwrap(), m);
    }
}

//! YCSB properties: what YCSB's client reads from a property file (`-P workloads/workloada`) and
//! from `-p name=value` overrides, applied over a core workload's definition.
//!
//! Contract:
//! - Names and values are YCSB's (`readproportion=0.5`, `requestdistribution=zipfian`); the ones
//!   [`KNOWN`] lists are modelled, any other name is an error that lists them (YCSB ignores names
//!   it does not know; a misspelt proportion would then change nothing, silently).
//! - A property is checked when it is set: an unknown name or a value that does not parse is an
//!   error naming the property (and, from a file, the file and line). [`YcsbProperties::apply`]
//!   then cannot fail on a value, only on a combination ([`YcsbConfig::validate`]).
//! - Properties apply in [`KNOWN`]'s order, whatever order they were given in: a distribution
//!   before its parameters (`requestdistribution` before `hotspotdatafraction`).
//! - Later settings of a name win, as in YCSB (a `-p` over the file's value).

use std::collections::BTreeMap;
use std::fmt;

use super::config::{FieldLengthDistribution, InsertOrder, RequestDistribution, ScanLengthDistribution, YcsbConfig};
use crate::error::WorkloadError;

/// The modelled properties, in the order they apply, with what each accepts.
pub const KNOWN: [(&str, &str); 23] = [
    ("workload", "site.ycsb.workloads.CoreWorkload (or com.yahoo.ycsb.workloads.CoreWorkload)"),
    ("recordcount", "a record count >= 1"),
    ("operationcount", "an operation count"),
    ("insertstart", "a first key number"),
    ("insertcount", "a number of records to load"),
    ("fieldcount", "a field count >= 1"),
    ("fieldlength", "a field length in bytes"),
    ("minfieldlength", "a field length in bytes"),
    ("fieldlengthdistribution", "constant, uniform, zipfian"),
    ("readallfields", "true (a record is one value, read whole)"),
    ("writeallfields", "true, false"),
    ("insertorder", "hashed, ordered"),
    ("zeropadding", "a number of digits"),
    ("readproportion", "a proportion >= 0"),
    ("updateproportion", "a proportion >= 0"),
    ("insertproportion", "a proportion >= 0"),
    ("scanproportion", "a proportion >= 0"),
    ("readmodifywriteproportion", "a proportion >= 0"),
    ("requestdistribution", "uniform, zipfian, latest, hotspot"),
    ("hotspotdatafraction", "a fraction in [0, 1], with requestdistribution=hotspot"),
    ("hotspotopnfraction", "a fraction in [0, 1], with requestdistribution=hotspot"),
    ("minscanlength", "a scan length >= 1"),
    ("maxscanlength", "a scan length >= 1"),
];

/// `scanlengthdistribution` is applied with the scan lengths; kept apart so that [`KNOWN`]'s
/// order reads as YCSB's documentation lists the properties.
const SCAN_LENGTH_DISTRIBUTION: (&str, &str) = ("scanlengthdistribution", "uniform, zipfian");

/// What `key` accepts, or `None` for a name that is not modelled.
fn accepted(key: &str) -> Option<&'static str> {
    KNOWN.iter().chain([&SCAN_LENGTH_DISTRIBUTION]).find(|(k, _)| *k == key).map(|(_, a)| *a)
}

/// Every modelled name, comma separated.
fn names() -> String {
    KNOWN.iter().chain([&SCAN_LENGTH_DISTRIBUTION]).map(|(k, _)| *k).collect::<Vec<_>>().join(", ")
}

/// YCSB properties by name (values as given, checked).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct YcsbProperties(BTreeMap<String, String>);

impl YcsbProperties {
    /// A property file's text (Java's `key=value`, `key: value` or `key value` lines; `#` and `!`
    /// start comments); `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<YcsbProperties, WorkloadError> {
        let mut props = YcsbProperties::default();
        for (i, line) in text.lines().enumerate() {
            let at = |error: WorkloadError| WorkloadError::PropertyLine {
                file: file.to_string(),
                line: i + 1,
                error: Box::new(error),
            };
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            if line.ends_with('\\') {
                return Err(at(WorkloadError::Property {
                    key: line.to_string(),
                    message: "continued lines (a trailing backslash) are not supported: write the value on one line"
                        .into(),
                }));
            }
            let split = line.find(['=', ':', ' ', '\t']).unwrap_or(line.len());
            let key = line[..split].trim();
            let rest = line[split..].trim_start();
            let value = rest.strip_prefix(['=', ':']).unwrap_or(rest).trim();
            props.set(key, value).map_err(at)?;
        }
        Ok(props)
    }

    /// Sets `key` to `value` after checking both (`name=value` of YCSB's `-p`).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), WorkloadError> {
        let key = key.trim();
        let value = value.trim();
        if accepted(key).is_none() {
            return Err(WorkloadError::UnknownName { kind: "YCSB property", name: key.to_string(), accepted: names() });
        }
        // A scratch configuration checks the value (the combination is checked when applied).
        let mut scratch = YcsbConfig::core(super::YcsbWorkload::Core, 1, 1);
        scratch.request_distribution = RequestDistribution::Hotspot { hot_data_fraction: 0.2, hot_op_fraction: 0.8 };
        apply_one(&mut scratch, key, value)?;
        self.0.insert(key.to_string(), value.to_string());
        Ok(())
    }

    /// `name=value`, as YCSB's `-p` takes it.
    pub fn set_pair(&mut self, pair: &str) -> Result<(), WorkloadError> {
        let (key, value) = pair.split_once('=').ok_or_else(|| WorkloadError::Property {
            key: pair.to_string(),
            message: "expected name=value, e.g. readproportion=0.5".into(),
        })?;
        self.set(key, value)
    }

    /// `other`'s properties over these (`other` wins).
    pub fn extend(&mut self, other: &YcsbProperties) {
        self.0.extend(other.0.iter().map(|(k, v)| (k.clone(), v.clone())));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// A count property (`recordcount`, `operationcount`), parsed.
    pub fn count(&self, key: &str) -> Option<u64> {
        self.get(key).and_then(|v| v.parse().ok())
    }

    /// The properties by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Applies every property to `config`, in [`KNOWN`]'s order, and checks the result.
    pub fn apply(&self, config: &mut YcsbConfig) -> Result<(), WorkloadError> {
        for (key, _) in KNOWN.iter().chain([&SCAN_LENGTH_DISTRIBUTION]) {
            if let Some(value) = self.0.get(*key) {
                apply_one(config, key, value)?;
            }
        }
        config.validate()
    }
}

impl fmt::Display for YcsbProperties {
    /// `name=value` lines.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, v) in &self.0 {
            writeln!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// Sets one property on `c`; the error names the property and what it accepts.
fn apply_one(c: &mut YcsbConfig, key: &str, value: &str) -> Result<(), WorkloadError> {
    let bad = || WorkloadError::Property {
        key: format!("{key}={value}"),
        message: format!("accepted: {}", accepted(key).unwrap_or("nothing (not a YCSB property)")),
    };
    let num = || value.parse::<u64>().map_err(|_| bad());
    let small = || value.parse::<u32>().map_err(|_| bad());
    let real = || value.parse::<f64>().ok().filter(|p| p.is_finite() && *p >= 0.0).ok_or_else(bad);
    let lower = value.to_ascii_lowercase();
    match key {
        "workload" => {
            if !matches!(value, "site.ycsb.workloads.CoreWorkload" | "com.yahoo.ycsb.workloads.CoreWorkload") {
                return Err(bad());
            }
        }
        "recordcount" => c.record_count = num()?,
        "operationcount" => c.operation_count = num()?,
        "insertstart" => c.insert_start = num()?,
        "insertcount" => c.insert_count = Some(num()?),
        "fieldcount" => c.field_count = small()?,
        "fieldlength" => c.field_length = small()?,
        "minfieldlength" => c.min_field_length = small()?,
        "fieldlengthdistribution" => {
            c.field_length_distribution = match lower.as_str() {
                "constant" => FieldLengthDistribution::Constant,
                "uniform" => FieldLengthDistribution::Uniform,
                "zipfian" => FieldLengthDistribution::Zipfian,
                _ => return Err(bad()),
            }
        }
        "readallfields" => {
            if lower != "true" {
                return Err(bad());
            }
        }
        "writeallfields" => c.write_all_fields = lower.parse::<bool>().map_err(|_| bad())?,
        "insertorder" => {
            c.insert_order = match lower.as_str() {
                "hashed" => InsertOrder::Hashed,
                "ordered" => InsertOrder::Ordered,
                _ => return Err(bad()),
            }
        }
        "zeropadding" => c.zero_padding = small()?,
        "readproportion" => c.proportions.read = real()?,
        "updateproportion" => c.proportions.update = real()?,
        "insertproportion" => c.proportions.insert = real()?,
        "scanproportion" => c.proportions.scan = real()?,
        "readmodifywriteproportion" => c.proportions.read_modify_write = real()?,
        "requestdistribution" => {
            c.request_distribution = match lower.as_str() {
                "uniform" => RequestDistribution::Uniform,
                "zipfian" => RequestDistribution::Zipfian,
                "latest" => RequestDistribution::Latest,
                // YCSB's defaults for the fractions; their properties apply after this one.
                "hotspot" => RequestDistribution::Hotspot { hot_data_fraction: 0.2, hot_op_fraction: 0.8 },
                _ => return Err(bad()),
            }
        }
        "hotspotdatafraction" | "hotspotopnfraction" => {
            let fraction = real().ok().filter(|f| *f <= 1.0).ok_or_else(bad)?;
            let RequestDistribution::Hotspot { hot_data_fraction, hot_op_fraction } = &mut c.request_distribution
            else {
                return Err(bad());
            };
            *(if key == "hotspotdatafraction" { hot_data_fraction } else { hot_op_fraction }) = fraction;
        }
        "minscanlength" => c.min_scan_length = num()?,
        "maxscanlength" => c.max_scan_length = num()?,
        "scanlengthdistribution" => {
            c.scan_length_distribution = match lower.as_str() {
                "uniform" => ScanLengthDistribution::Uniform,
                "zipfian" => ScanLengthDistribution::Zipfian,
                _ => return Err(bad()),
            }
        }
        _ => return Err(bad()),
    }
    Ok(())
}

impl serde::Serialize for YcsbProperties {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for YcsbProperties {
    /// A map of names to strings, numbers or booleans, each checked as [`YcsbProperties::set`] does.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Scalar {
            Text(String),
            Whole(u64),
            Real(f64),
            Flag(bool),
        }
        let map = BTreeMap::<String, Scalar>::deserialize(d)?;
        let mut props = YcsbProperties::default();
        for (key, value) in map {
            let value = match value {
                Scalar::Text(s) => s,
                Scalar::Whole(n) => n.to_string(),
                Scalar::Real(x) => x.to_string(),
                Scalar::Flag(b) => b.to_string(),
            };
            props.set(&key, &value).map_err(serde::de::Error::custom)?;
        }
        Ok(props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::YcsbWorkload;

    /// YCSB's `workloads/workloada` as shipped (its comments shortened).
    const WORKLOAD_A: &str = "# Yahoo! Cloud System Benchmark\n# Workload A: Update heavy workload\n\
        recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\n\n\
        readallfields=true\n\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\n\
        insertproportion=0\n\nrequestdistribution=zipfian\n";

    #[test]
    fn workload_a_over_core_workload_is_workload_a() {
        let props = YcsbProperties::parse(WORKLOAD_A, "workloada").unwrap();
        let mut c = YcsbConfig::core(YcsbWorkload::Core, 5, 5);
        props.apply(&mut c).unwrap();
        assert_eq!(c, YcsbConfig::core(YcsbWorkload::A, 1000, 1000));
    }

    #[test]
    fn separators_comments_and_later_values() {
        let text = "! a comment\nreadproportion: 0.25\nupdateproportion 0.75\nreadproportion = 0.5\n";
        let props = YcsbProperties::parse(text, "f").unwrap();
        assert_eq!(props.get("readproportion"), Some("0.5"));
        assert_eq!(props.get("updateproportion"), Some("0.75"));
    }

    #[test]
    fn errors_name_the_file_line_property_and_accepted_values() {
        let e = YcsbProperties::parse("recordcount=10\nreadproportoin=0.5\n", "mine").unwrap_err().to_string();
        assert!(e.contains("mine, line 2") && e.contains("readproportoin") && e.contains("readproportion"), "{e}");
        let e = YcsbProperties::parse("requestdistribution=exponential", "f").unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("uniform, zipfian, latest, hotspot"), "{e}");
        let e = YcsbProperties::parse("readallfields=false", "f").unwrap_err().to_string();
        assert!(e.contains("read whole"), "{e}");
        let e = YcsbProperties::parse("readproportion=-1", "f").unwrap_err().to_string();
        assert!(e.contains("readproportion=-1"), "{e}");
        let e = YcsbProperties::parse("fieldlength=10 \\", "f").unwrap_err().to_string();
        assert!(e.contains("continued lines"), "{e}");
        assert!(YcsbProperties::default().set_pair("recordcount").unwrap_err().to_string().contains("name=value"));
    }

    #[test]
    fn a_distribution_applies_before_its_parameters() {
        let mut props = YcsbProperties::default();
        props.set("hotspotopnfraction", "0.9").unwrap();
        props.set("requestdistribution", "hotspot").unwrap();
        let mut c = YcsbConfig::core(YcsbWorkload::Core, 10, 10);
        props.apply(&mut c).unwrap();
        assert_eq!(
            c.request_distribution,
            RequestDistribution::Hotspot { hot_data_fraction: 0.2, hot_op_fraction: 0.9 }
        );
        // Without hotspot the fractions would change nothing: refused.
        props.set("requestdistribution", "zipfian").unwrap();
        let e = props.apply(&mut YcsbConfig::core(YcsbWorkload::Core, 10, 10)).unwrap_err().to_string();
        assert!(e.contains("hotspotopnfraction") && e.contains("requestdistribution=hotspot"), "{e}");
    }

    #[test]
    fn combinations_are_checked_when_applied() {
        let mut props = YcsbProperties::default();
        for p in ["readproportion=0", "updateproportion=0"] {
            props.set_pair(p).unwrap();
        }
        let e = props.apply(&mut YcsbConfig::core(YcsbWorkload::Core, 10, 10)).unwrap_err().to_string();
        assert!(e.contains("at least one positive proportion"), "{e}");
    }
}

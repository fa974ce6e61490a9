//! Values the user names with text (`femu`, `per-level`, `4KiB`, `20us/200us/1.5ms/25ns`): each
//! type parses its text in one place ([`Named::parse_name`]) and prints it back
//! ([`Named::name`]), and every edge uses that pair: clap's value parsers ([`parser`]), experiment
//! files and Python dicts (serde, through [`serde_name`] and [`serde_name_opt`]) and the JSON a run
//! specification travels as. A run's JSON therefore speaks the words of its command line.
//!
//! Sizes, and the reading of a number or a boolean as text, are the `units` crate's (the engine's
//! and the simulator's override structs read them too); they are re-exported here.

use std::path::PathBuf;

use flashsim::{GcDestination, GcPolicy, Preset, Timing};
use serde::{Deserializer, Serializer};
use storage::AllocPolicy;
pub use units::{format_size, format_size_in, ByteCount, Bytes, BytesOrOff};

/// Why a text names no value: what is wrong and what is accepted, in one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NameError(pub String);

impl From<String> for NameError {
    fn from(s: String) -> NameError {
        NameError(s)
    }
}

impl From<crate::plugins::PluginError> for NameError {
    fn from(e: crate::plugins::PluginError) -> NameError {
        NameError(e.to_string())
    }
}

impl From<&str> for NameError {
    fn from(s: &str) -> NameError {
        NameError(s.to_string())
    }
}

/// A value with a textual name.
pub trait Named: Sized {
    /// The value `text` names, or why it names none (what is accepted).
    fn parse_name(text: &str) -> Result<Self, NameError>;
    /// The text that names the value (parsing it gives the value back).
    fn name(&self) -> String;
}

/// A clap value parser for any named value.
pub fn parser<T: Named>(text: &str) -> Result<T, NameError> {
    T::parse_name(text)
}

/// Serde by name: `#[serde(with = "serde_name")]`. A number where text is expected (a size or a
/// count written without quotes in TOML) is taken as its text.
pub mod serde_name {
    use super::*;

    pub fn serialize<T: Named, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.name())
    }

    pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<T, D::Error> {
        let text = units::text::deserialize(d)?;
        T::parse_name(&text).map_err(serde::de::Error::custom)
    }
}

/// Serde by name for an optional value: `#[serde(default, with = "serde_name_opt")]`.
pub mod serde_name_opt {
    use super::*;

    pub fn serialize<T: Named, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_some(&v.name()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, T: Named, D: Deserializer<'de>>(d: D) -> Result<Option<T>, D::Error> {
        match units::text::deserialize_opt(d)? {
            Some(t) => T::parse_name(&t).map(Some).map_err(serde::de::Error::custom),
            None => Ok(None),
        }
    }
}

/// Sizes name themselves ([`units::size`]: `4KiB`, `16 GiB`; `0` or `off` where allowed).
macro_rules! named_size {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn parse_name(text: &str) -> Result<$t, NameError> {
                text.parse().map_err(|e: units::SizeError| NameError(e.0))
            }
            fn name(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

named_size!(Bytes, ByteCount, BytesOrOff);

impl Named for Preset {
    fn parse_name(text: &str) -> Result<Preset, NameError> {
        Preset::parse(text.trim()).map_err(|e| NameError(reason(&e.to_string())))
    }
    fn name(&self) -> String {
        Preset::name(*self).to_string()
    }
}

impl Named for Timing {
    fn parse_name(text: &str) -> Result<Timing, NameError> {
        Timing::parse(text).map_err(|e| NameError(reason(&e.to_string())))
    }
    fn name(&self) -> String {
        self.label()
    }
}

impl Named for lsm::CompactionStyle {
    /// A built-in strategy, or one a plug-in registered (`crate::plugins`).
    fn parse_name(text: &str) -> Result<lsm::CompactionStyle, NameError> {
        crate::plugins::registry().compaction(text.trim()).map_err(NameError::from)
    }
    fn name(&self) -> String {
        lsm::CompactionStyle::name(self).to_string()
    }
}

impl Named for GcPolicy {
    /// A built-in policy, or one a plug-in registered (`crate::plugins`).
    fn parse_name(text: &str) -> Result<GcPolicy, NameError> {
        crate::plugins::registry().gc(text.trim()).map_err(NameError::from)
    }
    fn name(&self) -> String {
        GcPolicy::name(self).to_string()
    }
}

impl Named for GcDestination {
    fn parse_name(text: &str) -> Result<GcDestination, NameError> {
        GcDestination::parse(text.trim()).map_err(|e| NameError(reason(&e.to_string())))
    }
    fn name(&self) -> String {
        GcDestination::name(*self).to_string()
    }
}

impl Named for AllocPolicy {
    /// A built-in placement, or one a plug-in registered (`crate::plugins`).
    fn parse_name(text: &str) -> Result<AllocPolicy, NameError> {
        crate::plugins::registry().zone_policy(text.trim()).map_err(NameError::from)
    }
    fn name(&self) -> String {
        AllocPolicy::name(self).to_string()
    }
}

/// Types of the engine and workload crates that already parse and print their names.
macro_rules! named_by_str {
    ($($t:ty),*) => {$(
        impl Named for $t {
            fn parse_name(text: &str) -> Result<$t, NameError> {
                text.trim().parse::<$t>().map_err(|e| NameError(e.to_string()))
            }
            fn name(&self) -> String {
                self.to_string()
            }
        }
    )*};
}

named_by_str!(
    lsm::RemapMode,
    lsm::FilterLayout,
    lsm::Profile,
    workload::YcsbWorkload,
    workload::mixgraph::MixgraphKind,
    workload::db_bench::DbBenchKind,
    workload::block_trace::BlockTraceFormat
);

impl Named for workload::ValueData {
    fn parse_name(text: &str) -> Result<Self, NameError> {
        text.trim().parse().map_err(|e: workload::WorkloadError| NameError(e.to_string()))
    }
    fn name(&self) -> String {
        match self {
            workload::ValueData::Generated => "generated",
            workload::ValueData::Zeros => "zeros",
        }
        .to_string()
    }
}

impl Named for PathBuf {
    fn parse_name(text: &str) -> Result<PathBuf, NameError> {
        Ok(PathBuf::from(text))
    }
    fn name(&self) -> String {
        self.display().to_string()
    }
}

/// A lower layer's message without its own field prefix (`preset: unknown ...` becomes `unknown
/// ...`): the edge names the field in the user's terms.
fn reason(message: &str) -> String {
    let m = message.strip_prefix("invalid configuration: ").unwrap_or(message);
    match m.split_once(": ") {
        Some((field, rest)) if !field.contains(' ') => rest.to_string(),
        _ => m.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print_back() {
        for (text, bytes) in [
            ("4096", 4096),
            ("4096B", 4096),
            ("4KiB", 4096),
            ("64 MiB", 64 << 20),
            ("16GiB", 16 << 30),
            ("1TiB", 1 << 40),
            ("1kB", 1000),
            ("4GB", 4_000_000_000),
            ("4 GB", 4_000_000_000),
            ("2MB", 2_000_000),
            ("1TB", 1_000_000_000_000),
        ] {
            let b = Bytes::parse_name(text).unwrap();
            assert_eq!(b, Bytes(bytes), "{text}");
            assert_eq!(Bytes::parse_name(&b.name()).unwrap(), b, "{text}");
            assert_eq!(Bytes::parse_name(&format_size(bytes)).unwrap(), b, "{text}: a table's size parses back");
        }
        assert_eq!(format_size(16 << 30), "16 GiB");
        assert_eq!(format_size(4_000_000_000), "4 GB");
        assert_eq!(format_size(1536), "1536 B");
        assert_eq!(format_size(1024 * 1000), "1000 KiB");
        assert_eq!(format_size_in(4 << 20, 1 << 10, "KiB"), "4096 KiB");
        assert_eq!(format_size_in(512, 1 << 10, "KiB"), "512 B");
        assert_eq!(format_size_in(3_000_000, 1 << 20, "MiB"), "3 MB");
        for bad in ["", "-1", "4XB", "0", "0GB", "99999999999999999999", "GiB", "1.5GiB", "20000000TB"] {
            assert!(Bytes::parse_name(bad).is_err(), "{bad}");
        }
    }

    /// Spellings that could mean either family are refused, the error naming both families and
    /// the two sizes the text may have meant.
    #[test]
    fn ambiguous_units_are_refused_naming_both_families() {
        for bad in ["4G", "4g", "4gib", "4Gi", "4gb", "4KB", "4K", "4kb", "4kib", "4M", "4mb", "4T", "4 G", "4 gib"] {
            let e = Bytes::parse_name(bad).unwrap_err().0;
            assert!(e.contains("decimal kB, MB, GB, TB") && e.contains("binary KiB, MiB, GiB, TiB"), "{bad}: {e}");
        }
        let e = Bytes::parse_name("4G").unwrap_err().0;
        assert!(e.contains("4GB = 4000000000 B or 4GiB = 4294967296 B"), "{e}");
        let e = Bytes::parse_name("3XB").unwrap_err().0;
        assert!(e.starts_with("unknown unit 'XB' in '3XB'; accepted"), "{e}");
    }

    #[test]
    fn foreign_names_round_trip_without_their_field_prefix() {
        let t = Timing::parse_name("ssdsim").unwrap();
        assert_eq!(Timing::parse_name(&t.name()).unwrap(), t);
        let e = Preset::parse_name("nope").unwrap_err().0;
        assert!(e.starts_with("unknown preset") && e.contains("femu, plsc, kvftl"), "{e}");
        assert_eq!(AllocPolicy::parse_name("per-level").unwrap().name(), "per-level");
        assert_eq!(GcPolicy::parse_name("cost-benefit").unwrap().name(), "cost-benefit");
    }
}

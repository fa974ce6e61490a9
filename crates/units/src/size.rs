//! Byte sizes as text: a whole number with an optional unit, the space between them optional
//! (`4096`, `4KiB`, `16 GiB`, `4GB`). Units, case-sensitive:
//! - `B`: bytes;
//! - decimal `kB`, `MB`, `GB`, `TB`: powers of 1000 (SI, as drive makers state capacities);
//! - binary `KiB`, `MiB`, `GiB`, `TiB`: powers of 1024 (IEC).
//!
//! Any other spelling (`4G`, `4K`, `4KB`, `4gib`) is refused, naming both families: `4G` may
//! mean 4 GB or 4 GiB, 7.4 % apart, the size of the spare factors a GC study sweeps, and a guess
//! either way would change a result without a word. A size prints back in the largest unit that
//! divides it ([`format_size`] without the space: `4MiB`, `1536B`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Why a text is not a size: what is wrong and what is accepted, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizeError(pub String);

impl fmt::Display for SizeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SizeError {}

/// A byte count, never zero.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

/// A byte count that may be zero (a readahead window of 0 reads block by block): `0`, or a
/// [`Bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteCount(pub u64);

/// A byte count that may be zero, written `0` or `off` (a cache that is off), or a [`Bytes`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BytesOrOff(pub u64);

impl BytesOrOff {
    pub fn is_off(&self) -> bool {
        self.0 == 0
    }
}

/// Every unit a size may carry, with its multiple.
const SIZE_UNITS: [(&str, u64); 9] = [
    ("B", 1),
    ("kB", 1_000),
    ("MB", 1_000_000),
    ("GB", 1_000_000_000),
    ("TB", 1_000_000_000_000),
    ("KiB", 1 << 10),
    ("MiB", 1 << 20),
    ("GiB", 1 << 30),
    ("TiB", 1 << 40),
];

/// What a size may be, for errors.
const SIZE_ACCEPTED: &str = "a whole number of bytes with an optional unit: B; decimal kB, MB, GB, TB (powers of \
                             1000); binary KiB, MiB, GiB, TiB (powers of 1024)";

impl FromStr for Bytes {
    type Err = SizeError;

    fn from_str(text: &str) -> Result<Bytes, SizeError> {
        let t = text.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let unit = unit.trim_start();
        if digits.is_empty() {
            return Err(SizeError(format!("'{text}' is not a size; accepted: {SIZE_ACCEPTED}")));
        }
        let Some(&(_, multiple)) = SIZE_UNITS.iter().find(|(u, _)| *u == unit || (unit.is_empty() && *u == "B")) else {
            return Err(SizeError(format!(
                "unknown unit '{unit}' in '{text}'{}; accepted: {SIZE_ACCEPTED}",
                unit_hint(digits, unit)
            )));
        };
        let too_large = || SizeError(format!("'{text}' is too large"));
        let n: u64 = digits.parse().map_err(|_| too_large())?;
        let v = n.checked_mul(multiple).ok_or_else(too_large)?;
        if v == 0 {
            return Err(SizeError(format!("size must be positive, got '{text}'")));
        }
        Ok(Bytes(v))
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_size(self.0).replace(' ', ""))
    }
}

/// The two sizes an ambiguous unit (`G`, `gb`, `Gi`, `KB`) may have meant, when its first letter
/// is a prefix: ` (4GB = 4000000000 B or 4GiB = 4294967296 B?)`.
fn unit_hint(digits: &str, unit: &str) -> String {
    let Some(prefix) = unit.chars().next().map(|c| c.to_ascii_uppercase()) else { return String::new() };
    let Some(power) = "KMGT".find(prefix).map(|i| i as u32 + 1) else { return String::new() };
    let (decimal, binary) =
        (["kB", "MB", "GB", "TB"][power as usize - 1], ["KiB", "MiB", "GiB", "TiB"][power as usize - 1]);
    let n: Option<u64> = digits.parse().ok();
    let bytes =
        |base: u64| n.and_then(|n| n.checked_mul(base.pow(power))).map_or(String::new(), |b| format!(" = {b} B"));
    format!(" ({digits}{decimal}{} or {digits}{binary}{}?)", bytes(1000), bytes(1024))
}

impl FromStr for ByteCount {
    type Err = SizeError;

    fn from_str(text: &str) -> Result<ByteCount, SizeError> {
        match text.trim() {
            "0" => Ok(ByteCount(0)),
            t => t.parse().map(|b: Bytes| ByteCount(b.0)),
        }
    }
}

impl fmt::Display for ByteCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("0"),
            b => Bytes(b).fmt(f),
        }
    }
}

impl FromStr for BytesOrOff {
    type Err = SizeError;

    fn from_str(text: &str) -> Result<BytesOrOff, SizeError> {
        match text.trim() {
            "0" | "off" => Ok(BytesOrOff(0)),
            t => t.parse().map(|b: Bytes| BytesOrOff(b.0)),
        }
    }
}

impl fmt::Display for BytesOrOff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        ByteCount(self.0).fmt(f)
    }
}

/// Serde as the text: written as it prints, read from text or a bare number.
macro_rules! serde_as_text {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.to_string())
            }
        }

        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
                crate::text::deserialize(d)?.parse().map_err(serde::de::Error::custom)
            }
        }
    )*};
}

serde_as_text!(Bytes, ByteCount, BytesOrOff);

/// A size in the largest unit that divides it evenly, for tables (`16 GiB`, `4 GB`, `1536 B`):
/// of a binary and a decimal unit that both divide it, the one with the smaller number (`1000
/// KiB`, not `1024 kB`; `4 GB`, not `3906250 KiB`), binary on a tie. [`Bytes`] parses it back.
pub fn format_size(bytes: u64) -> String {
    let binary = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    let decimal = [(1_000_000_000_000, "TB"), (1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "kB")];
    let largest = |units: [(u64, &'static str); 4]| units.into_iter().find(|(m, _)| bytes >= *m && bytes % m == 0);
    let unit = match (largest(binary), largest(decimal)) {
        (Some(b), Some(d)) if bytes / d.0 < bytes / b.0 => Some(d),
        (b, d) => b.or(d),
    };
    match unit {
        Some((multiple, unit)) => format!("{} {unit}", bytes / multiple),
        None => format!("{bytes} B"),
    }
}

/// `bytes` in `unit` (`multiple` bytes) when it is a whole number of them (`4 KiB pages`, as
/// descriptions have always read), else in the unit [`format_size`] picks: never a truncated
/// count such as `0 KiB` for 512 B.
pub fn format_size_in(bytes: u64, multiple: u64, unit: &str) -> String {
    if bytes > 0 && bytes % multiple == 0 {
        format!("{} {unit}", bytes / multiple)
    } else {
        format_size(bytes)
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
            ("1536MiB", 1536 << 20),
        ] {
            let b: Bytes = text.parse().unwrap();
            assert_eq!(b, Bytes(bytes), "{text}");
            assert_eq!(b.to_string().parse::<Bytes>().unwrap(), b, "{text}");
            assert_eq!(format_size(bytes).parse::<Bytes>().unwrap(), b, "{text}: a table's size parses back");
        }
        assert_eq!(Bytes(4 << 20).to_string(), "4MiB");
        assert_eq!(Bytes(1536 << 20).to_string(), "1536MiB");
        assert_eq!(Bytes(1536).to_string(), "1536B");
        assert_eq!(format_size(16 << 30), "16 GiB");
        assert_eq!(format_size(4_000_000_000), "4 GB");
        assert_eq!(format_size(1536), "1536 B");
        assert_eq!(format_size(1024 * 1000), "1000 KiB");
        assert_eq!(format_size_in(4 << 20, 1 << 10, "KiB"), "4096 KiB");
        assert_eq!(format_size_in(512, 1 << 10, "KiB"), "512 B");
        assert_eq!(format_size_in(3_000_000, 1 << 20, "MiB"), "3 MB");
        for bad in ["", "-1", "4XB", "0", "0GB", "99999999999999999999", "GiB", "1.5GiB", "20000000TB"] {
            assert!(bad.parse::<Bytes>().is_err(), "{bad}");
        }
    }

    /// Spellings that could mean either family are refused, the error naming both families and
    /// the two sizes the text may have meant.
    #[test]
    fn ambiguous_units_are_refused_naming_both_families() {
        for bad in ["4G", "4g", "4gib", "4Gi", "4gb", "4KB", "4K", "4kb", "4kib", "4M", "4mb", "4T", "4 G", "4 gib"] {
            let e = bad.parse::<Bytes>().unwrap_err().0;
            assert!(e.contains("decimal kB, MB, GB, TB") && e.contains("binary KiB, MiB, GiB, TiB"), "{bad}: {e}");
        }
        let e = "4G".parse::<Bytes>().unwrap_err().0;
        assert!(e.contains("4GB = 4000000000 B or 4GiB = 4294967296 B"), "{e}");
        let e = "3XB".parse::<Bytes>().unwrap_err().0;
        assert!(e.starts_with("unknown unit 'XB' in '3XB'; accepted"), "{e}");
    }

    #[test]
    fn zero_is_a_count_or_off_but_never_a_size() {
        assert_eq!("0".parse::<ByteCount>(), Ok(ByteCount(0)));
        assert_eq!(ByteCount(0).to_string(), "0");
        assert_eq!(ByteCount(128 << 10).to_string(), "128KiB");
        assert_eq!("off".parse::<BytesOrOff>(), Ok(BytesOrOff(0)));
        assert_eq!(" 0 ".parse::<BytesOrOff>(), Ok(BytesOrOff(0)));
        assert_eq!(BytesOrOff(0).to_string(), "0");
        assert!("off".parse::<ByteCount>().is_err());
        assert_eq!("64MiB".parse::<BytesOrOff>(), Ok(BytesOrOff(64 << 20)));
    }

    #[test]
    fn serde_writes_the_text_and_reads_text_or_numbers() {
        assert_eq!(serde_json::to_string(&Bytes(4 << 20)).unwrap(), r#""4MiB""#);
        assert_eq!(serde_json::from_str::<Bytes>("4096").unwrap(), Bytes(4096));
        assert_eq!(serde_json::from_str::<Bytes>(r#""16 GiB""#).unwrap(), Bytes(16 << 30));
        assert_eq!(serde_json::from_str::<ByteCount>("0").unwrap(), ByteCount(0));
        assert_eq!(serde_json::from_str::<Option<Bytes>>("null").unwrap(), None);
        let e = serde_json::from_str::<Bytes>(r#""4G""#).unwrap_err().to_string();
        assert!(e.starts_with("unknown unit 'G' in '4G'"), "{e}");
    }
}

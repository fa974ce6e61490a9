//! Input checked where it enters, the same way for every command and experiment file: counts,
//! fractions, value sizes and comma-separated lists. Each error is one line that names the flag
//! (or field) and what is accepted.

use workload::{SizeClass, SizeProfile, ValueSize};

use crate::size::parse_size;

/// The largest value the engine accepts (`lsm::Options::max_value_size`'s default).
pub fn max_value_size() -> u64 {
    lsm::Options::default().max_value_size as u64
}

/// A count of at least `min` (`--num`, `--records`, `--ops`), for clap's value parsers: a negative
/// or fractional number is named as such, not taken for a flag.
fn count(text: &str, min: u64) -> Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') && t[1..].parse::<f64>().is_ok() {
        return Err(format!("{t} is negative; accepted: a whole number from {min}"));
    }
    match t.parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        Ok(n) => Err(format!("{n} is below {min}; accepted: a whole number from {min}")),
        Err(_) => Err(format!("'{t}' is not a whole number; accepted: a whole number from {min}")),
    }
}

/// A count of at least 1.
pub fn positive_count(text: &str) -> Result<u64, String> {
    count(text, 1)
}

/// A fraction in [0, 1) (`--spare-factor`).
pub fn fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err(format!("'{}' is outside [0, 1); accepted: a fraction like 0.07", text.trim())),
    }
}

/// A value size: bytes with an optional unit (`1024`, `4KiB`), an inclusive range `MIN-MAX`, each
/// from 1 byte to the engine's largest value, or a class relative to the device's flash page `P`
/// (seeds 002 and 004; our definition, see `workload::value_size`): `small` ([1, P]), `uniform`
/// ([1, 2P], seed 002's reading), `uniform-kvftl` ([1, 1 MiB], seed 004's), `large` ([P + 1, 3P]).
pub fn value_size(field: &str, text: &str, page_size: u32) -> Result<ValueSize, String> {
    let class = |c: SizeClass, p: SizeProfile| ValueSize::class(c, page_size, p).map_err(|e| format!("{field}: {e}"));
    match text.trim() {
        "small" => return class(SizeClass::Small, SizeProfile::Plsc),
        "uniform" => return class(SizeClass::Uniform, SizeProfile::Plsc),
        "uniform-kvftl" => return class(SizeClass::Uniform, SizeProfile::Kvftl),
        "large" => return class(SizeClass::Large, SizeProfile::Plsc),
        _ => {}
    }
    let max = max_value_size();
    let one = |t: &str| -> Result<u32, String> {
        let v = parse_size(field, t)?;
        if v > max {
            return Err(format!(
                "{field}: {} exceeds the engine's largest value ({}); accepted: 1 B to {}",
                crate::size::format_size(v),
                crate::size::format_size(max),
                crate::size::format_size(max)
            ));
        }
        Ok(v as u32)
    };
    let vs = match text.trim().split_once('-') {
        None => ValueSize::Fixed(one(text)?),
        Some(("", _)) => return Err(format!("{field}: '{text}' is negative; accepted: 1 B to 64 MiB, or MIN-MAX")),
        Some((a, b)) => ValueSize::uniform(one(a)?, one(b)?).map_err(|e| format!("{field}: {e}"))?,
    };
    Ok(vs)
}

/// A comma-separated list with no empty item (`--benchmarks a,,b` is refused, not skipped).
pub fn list<'a>(field: &str, text: &'a str) -> Result<Vec<&'a str>, String> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(format!("{field}: empty item in '{text}'; accepted: names separated by single commas"));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_what_is_wrong() {
        assert_eq!(positive_count("5"), Ok(5));
        assert!(positive_count("-5").unwrap_err().contains("negative"));
        assert!(positive_count("0").unwrap_err().contains("below 1"));
        assert!(positive_count("1.5").unwrap_err().contains("not a whole number"));
    }

    #[test]
    fn value_sizes_take_units_and_stay_within_the_engine() {
        assert_eq!(value_size("v", "4KiB", 4096).unwrap(), ValueSize::Fixed(4096));
        assert_eq!(value_size("v", "100-1KiB", 4096).unwrap(), ValueSize::uniform(100, 1024).unwrap());
        assert!(value_size("v", "0", 4096).unwrap_err().contains("positive"));
        assert!(value_size("v", "1GiB", 4096).unwrap_err().contains("exceeds the engine's largest value (64 MiB)"));
        assert!(value_size("v", "10GiB", 4096).unwrap_err().contains("exceeds"));
        assert!(value_size("v", "-5", 4096).unwrap_err().contains("negative"));
        assert!(value_size("v", "2KiB-1KiB", 4096).is_err());
        assert_eq!(value_size("v", "64MiB", 4096).unwrap(), ValueSize::Fixed(64 << 20));
        let p = 16 << 10;
        assert_eq!(value_size("v", "small", p).unwrap(), ValueSize::uniform(1, p).unwrap());
        assert_eq!(value_size("v", "uniform", p).unwrap(), ValueSize::uniform(1, 2 * p).unwrap());
        assert_eq!(value_size("v", "uniform-kvftl", p).unwrap(), ValueSize::uniform(1, 1 << 20).unwrap());
        assert_eq!(value_size("v", "large", p).unwrap(), ValueSize::uniform(p + 1, 3 * p).unwrap());
    }

    #[test]
    fn lists_refuse_empty_items() {
        assert_eq!(list("b", "a, b").unwrap(), vec!["a", "b"]);
        assert!(list("--benchmarks", "fillseq,,readrandom").unwrap_err().contains("empty item"));
        assert!(list("b", "").is_err());
    }

    #[test]
    fn fractions_stay_in_range() {
        assert_eq!(fraction("0.07"), Ok(0.07));
        assert!(fraction("-0.1").is_err() && fraction("1").is_err() && fraction("x").is_err());
    }
}

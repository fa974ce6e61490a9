//! Input checked where it enters, the same way for every command and experiment file: counts,
//! fractions, value sizes and comma-separated lists. Each error is one line that names the flag
//! (or field) and what is accepted.

use workload::ValueSize;

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

/// A value size: bytes with an optional unit (`1024`, `4KiB`), or an inclusive range `MIN-MAX`,
/// each from 1 byte to the engine's largest value.
pub fn value_size(field: &str, text: &str) -> Result<ValueSize, String> {
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
        assert_eq!(value_size("v", "4KiB").unwrap(), ValueSize::Fixed(4096));
        assert_eq!(value_size("v", "100-1KiB").unwrap(), ValueSize::uniform(100, 1024).unwrap());
        assert!(value_size("v", "0").unwrap_err().contains("positive"));
        assert!(value_size("v", "1GiB").unwrap_err().contains("exceeds the engine's largest value (64 MiB)"));
        assert!(value_size("v", "10GiB").unwrap_err().contains("exceeds"));
        assert!(value_size("v", "-5").unwrap_err().contains("negative"));
        assert!(value_size("v", "2KiB-1KiB").is_err());
        assert_eq!(value_size("v", "64MiB").unwrap(), ValueSize::Fixed(64 << 20));
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

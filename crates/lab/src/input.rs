//! Counts and fractions checked where they enter, as clap's value parsers (named values, sizes and
//! value sizes parse through `spec::Named`). Each error is one line that says what is wrong and
//! what is accepted; clap names the flag.

use crate::spec::named::NameError;

/// A count of at least `min` (`--num`, `--records`, `--ops`): a negative or fractional number is
/// named as such, not taken for a flag.
fn count(text: &str, min: u64) -> Result<u64, NameError> {
    let t = text.trim();
    if t.starts_with('-') && t[1..].parse::<f64>().is_ok() {
        return Err(format!("{t} is negative; accepted: a whole number from {min}").into());
    }
    match t.parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        Ok(n) => Err(format!("{n} is below {min}; accepted: a whole number from {min}").into()),
        Err(_) => Err(format!("'{t}' is not a whole number; accepted: a whole number from {min}").into()),
    }
}

/// A count of at least 1.
pub fn positive_count(text: &str) -> Result<u64, NameError> {
    count(text, 1)
}

/// A fraction in [0, 1) (`--spare-factor`).
pub fn fraction(text: &str) -> Result<f64, NameError> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..1.0).contains(&f) => Ok(f),
        _ => Err(format!("'{}' is outside [0, 1); accepted: a fraction like 0.07", text.trim()).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_name_what_is_wrong() {
        assert_eq!(positive_count("5"), Ok(5));
        assert!(positive_count("-5").unwrap_err().0.contains("negative"));
        assert!(positive_count("0").unwrap_err().0.contains("below 1"));
        assert!(positive_count("1.5").unwrap_err().0.contains("not a whole number"));
    }

    #[test]
    fn fractions_stay_in_range() {
        assert_eq!(fraction("0.07"), Ok(0.07));
        assert!(fraction("-0.1").is_err() && fraction("1").is_err() && fraction("x").is_err());
    }
}

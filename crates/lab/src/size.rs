//! Byte sizes on the command line and in experiment files: `4096`, `4KiB`, `64MiB`, `16GiB`, `1TiB`
//! (also `K`, `M`, `G`, `T` and `KB`-style spellings, all binary multiples).

/// Parses a size; the error names the flag and what is accepted.
pub fn parse_size(field: &str, text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let accepted = "a whole number of bytes with an optional suffix B, KiB, MiB, GiB, TiB";
    if digits.is_empty() {
        return Err(format!("{field}: '{text}' is not a size; expected {accepted}"));
    }
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return Err(format!("{field}: unknown unit '{unit}' in '{text}'; expected {accepted}")),
    };
    let n: u64 = digits.parse().map_err(|_| format!("{field}: '{text}' is too large"))?;
    let v = n.checked_mul(1u64 << shift).ok_or_else(|| format!("{field}: '{text}' is too large"))?;
    if v == 0 {
        return Err(format!("{field}: size must be positive, got '{text}'"));
    }
    Ok(v)
}

/// A size in the largest binary unit that divides it evenly, for tables.
pub fn format_size(bytes: u64) -> String {
    for (shift, unit) in [(40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes % (1 << shift) == 0 {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    format!("{bytes} B")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_binary_suffixes() {
        assert_eq!(parse_size("x", "4096"), Ok(4096));
        assert_eq!(parse_size("x", "4KiB"), Ok(4096));
        assert_eq!(parse_size("x", "64 MiB"), Ok(64 << 20));
        assert_eq!(parse_size("x", "16G"), Ok(16 << 30));
        assert_eq!(format_size(16 << 30), "16 GiB");
        assert_eq!(format_size(1536), "1536 B");
    }

    #[test]
    fn rejects_bad_sizes_naming_the_field() {
        for bad in ["", "-1", "4XB", "0", "99999999999999999999", "GiB"] {
            let e = parse_size("--capacity", bad).unwrap_err();
            assert!(e.starts_with("--capacity"), "{bad}: {e}");
        }
    }
}

//! Numbers for people: table cells with 3-4 significant digits, tick positions on nice steps, and
//! tick labels that say each tick once and briefly. (CSV and JSON keep full precision.)

/// The text of a non-finite number, as tables and CSV show it.
pub fn non_finite(v: f64) -> &'static str {
    if v.is_nan() {
        "NaN"
    } else if v > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// A table number: integers below 10^9 in full (counts stay exact), other numbers below 1000 with
/// four significant digits, larger ones rounded to an integer, and very small or very large ones in
/// scientific notation. Trailing zeros are dropped.
pub fn cell_number(v: f64) -> String {
    if !v.is_finite() {
        return non_finite(v).to_string();
    }
    let a = v.abs();
    if a == 0.0 {
        return "0".to_string();
    }
    if !(1e-3..1e9).contains(&a) {
        return scientific(v, 3);
    }
    if v.fract() == 0.0 || a >= 1000.0 {
        return format!("{v:.0}");
    }
    // Four significant digits: 123.4, 12.34, 1.234, 0.1234, 0.01234, 0.001234.
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 6) as usize;
    trim_zeros(&format!("{v:.decimals$}"))
}

/// Scientific notation with at most `digits` decimals in the mantissa: 1.5e9, -2.25e-5.
fn scientific(v: f64, digits: usize) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let s = format!("{v:.digits$e}");
    match s.split_once('e') {
        Some((mantissa, exp)) => format!("{}e{exp}", trim_zeros(mantissa)),
        None => s,
    }
}

/// "1.500" -> "1.5", "2.000" -> "2", "-0.000" -> "0"; integers are left alone.
fn trim_zeros(s: &str) -> String {
    let t = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s };
    if t == "-0" {
        "0".to_string()
    } else {
        t.to_string()
    }
}

/// Ticks for the data range `lo..=hi` (finite, lo <= hi): about `target` ticks on a step of 1, 2,
/// 2.5 or 5 times a power of ten, the first at or below `lo` and the last at or above `hi`, so the
/// axis can span exactly from the first tick to the last. Wide ranges (several decades) still get
/// round steps; a zero-width range is widened around its value.
pub fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (-1.0, 1.0)
    } else {
        (lo - lo.abs() * 0.5, hi + hi.abs() * 0.5)
    };
    let raw = (hi - lo) / target.max(1) as f64;
    if !raw.is_finite() || raw <= 0.0 {
        return vec![lo, hi];
    }
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).floor();
    let last = (hi / step).ceil();
    let count = last - first;
    if !step.is_finite() || !(0.0..=1000.0).contains(&count) {
        return vec![lo, hi];
    }
    // Multiply rather than accumulate so ticks stay on the grid (no 0.30000000000000004 drift),
    // and snap the one that should be zero to exactly zero.
    (0..=count as i64)
        .map(|i| {
            let t = (first + i as f64) * step;
            if t.abs() < step * 1e-9 {
                0.0
            } else {
                t
            }
        })
        .collect()
}

/// Labels for a set of ticks on one axis, all in one style so the axis reads evenly: plain decimals
/// with just enough places for the step, or scientific notation when the numbers are huge or tiny.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let step = ticks.windows(2).map(|w| (w[1] - w[0]).abs()).fold(f64::INFINITY, f64::min);
    let biggest = ticks.iter().fold(0.0f64, |m, t| m.max(t.abs()));
    if biggest >= 1e6 || (biggest > 0.0 && biggest < 1e-3) {
        return ticks.iter().map(|&t| scientific(t, 3)).collect();
    }
    let decimals = if step.is_finite() && step > 0.0 {
        // Enough places to tell neighbours apart: step 0.25 needs 2, step 5 needs 0.
        (0..=6)
            .find(|&d| {
                let scale = 10f64.powi(d);
                ((step * scale).round() - step * scale).abs() < 1e-6 * scale.max(1.0)
            })
            .unwrap_or(6) as usize
    } else {
        3
    };
    ticks.iter().map(|&t| trim_zeros(&format!("{t:.decimals$}"))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_have_three_to_four_significant_digits() {
        assert_eq!(cell_number(0.0), "0");
        assert_eq!(cell_number(4096.0), "4096");
        assert_eq!(cell_number(123456789.0), "123456789");
        assert_eq!(cell_number(1.23456), "1.235");
        assert_eq!(cell_number(-35.714), "-35.71");
        assert_eq!(cell_number(0.012345), "0.01235");
        assert_eq!(cell_number(12345.678), "12346");
        assert_eq!(cell_number(1.5), "1.5");
        assert_eq!(cell_number(2.5e9), "2.5e9");
        assert_eq!(cell_number(0.00001234), "1.234e-5");
        assert_eq!(cell_number(f64::NAN), "NaN");
        assert_eq!(cell_number(-0.0), "0");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(nice_ticks(0.0, 10.0, 5), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let t = nice_ticks(256.0, 4096.0, 6);
        assert!(t[0] <= 256.0 && *t.last().unwrap() >= 4096.0);
        assert_eq!(tick_labels(&t)[1], "1000");
        let t = nice_ticks(0.1, 0.7, 6);
        assert_eq!(tick_labels(&t), vec!["0.1", "0.2", "0.3", "0.4", "0.5", "0.6", "0.7"]);
        let t = nice_ticks(-3.0, 7.0, 4);
        assert!(t.contains(&0.0));
        // Several decades: still a handful of round ticks.
        let t = nice_ticks(0.01, 123456.0, 6);
        assert!(t.len() <= 8, "{t:?}");
        assert!(nice_ticks(5.0, 5.0, 4).len() >= 2);
        assert_eq!(tick_labels(&[0.0, 2.5e6, 5e6]), vec!["0", "2.5e6", "5e6"]);
        assert_eq!(tick_labels(&[0.0, 0.25, 0.5]), vec!["0", "0.25", "0.5"]);
    }
}

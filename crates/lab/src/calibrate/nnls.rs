//! Non-negative least squares (Lawson and Hanson's active-set method, 1974): the `x >= 0` that
//! minimises `|A x - b|`. A calibration's coefficients are costs, so none may be negative; an
//! unconstrained fit would trade a negative cost on one term against another's.
//!
//! Columns are scaled to unit length before solving (the terms' counts differ by orders of
//! magnitude: bytes against operations), and each subproblem is solved by its normal equations
//! with partial pivoting: the problems here are small (a dozen columns, a hundred rows).

/// The non-negative `x` minimising `|a x - b|`; `a` is row-major, every row as long as the first.
/// A column that is all zeros gets 0.
pub fn nnls(a: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = a.first().map_or(0, Vec::len);
    let norms: Vec<f64> = (0..n).map(|j| a.iter().map(|r| r[j] * r[j]).sum::<f64>().sqrt()).collect();
    let scaled: Vec<Vec<f64>> =
        a.iter().map(|r| r.iter().zip(&norms).map(|(v, s)| if *s > 0.0 { v / s } else { 0.0 }).collect()).collect();
    let x = solve(&scaled, b, &norms);
    x.iter().zip(&norms).map(|(v, s)| if *s > 0.0 { v / s } else { 0.0 }).collect()
}

const TOL: f64 = 1e-12;

fn solve(a: &[Vec<f64>], b: &[f64], norms: &[f64]) -> Vec<f64> {
    let n = norms.len();
    let mut x = vec![0.0; n];
    let mut passive = vec![false; n];
    let scale = b.iter().map(|v| v.abs()).fold(0.0, f64::max).max(1.0);
    for _ in 0..3 * n.max(1) {
        let w = gradient(a, b, &x);
        let candidate = (0..n)
            .filter(|&j| !passive[j] && norms[j] > 0.0 && w[j] > TOL * scale)
            .max_by(|&i, &j| w[i].total_cmp(&w[j]));
        let Some(j) = candidate else { break };
        passive[j] = true;
        loop {
            let z = least_squares(a, b, &passive);
            if (0..n).all(|k| !passive[k] || z[k] > 0.0) {
                x = z;
                break;
            }
            // Step from x towards z as far as keeps every passive coefficient non-negative.
            let alpha = (0..n)
                .filter(|&k| passive[k] && z[k] <= 0.0)
                .map(|k| x[k] / (x[k] - z[k]))
                .fold(f64::INFINITY, f64::min);
            for k in 0..n {
                x[k] += alpha * (z[k] - x[k]);
                if passive[k] && x[k] <= TOL {
                    passive[k] = false;
                    x[k] = 0.0;
                }
            }
            if !passive.iter().any(|&p| p) {
                break;
            }
        }
    }
    x
}

/// `A^T (b - A x)`: how much each coefficient would lower the residual if raised.
fn gradient(a: &[Vec<f64>], b: &[f64], x: &[f64]) -> Vec<f64> {
    let mut w = vec![0.0; x.len()];
    for (row, bi) in a.iter().zip(b) {
        let r = bi - row.iter().zip(x).map(|(v, xi)| v * xi).sum::<f64>();
        for (wj, v) in w.iter_mut().zip(row) {
            *wj += v * r;
        }
    }
    w
}

/// The unconstrained least-squares solution over the columns `active` marks (the others 0).
fn least_squares(a: &[Vec<f64>], b: &[f64], active: &[bool]) -> Vec<f64> {
    let cols: Vec<usize> = (0..active.len()).filter(|&j| active[j]).collect();
    let k = cols.len();
    // Normal equations [A_P^T A_P | A_P^T b].
    let mut m = vec![vec![0.0; k + 1]; k];
    for (row, bi) in a.iter().zip(b) {
        for (p, &i) in cols.iter().enumerate() {
            for (q, &j) in cols.iter().enumerate() {
                m[p][q] += row[i] * row[j];
            }
            m[p][k] += row[i] * bi;
        }
    }
    let z = gauss(m);
    let mut x = vec![0.0; active.len()];
    for (p, &j) in cols.iter().enumerate() {
        x[j] = z[p];
    }
    x
}

/// Solves the augmented system `m` by Gaussian elimination with partial pivoting; a singular
/// direction gets 0.
fn gauss(mut m: Vec<Vec<f64>>) -> Vec<f64> {
    let k = m.len();
    for c in 0..k {
        let p = (c..k).max_by(|&i, &j| m[i][c].abs().total_cmp(&m[j][c].abs())).unwrap_or(c);
        m.swap(c, p);
        if m[c][c].abs() < TOL {
            continue;
        }
        let pivot = m[c].clone();
        for (r, row) in m.iter_mut().enumerate() {
            let f = row[c] / pivot[c];
            if r != c && f != 0.0 {
                for (x, p) in row[c..].iter_mut().zip(&pivot[c..]) {
                    *x -= f * p;
                }
            }
        }
    }
    (0..k).map(|i| if m[i][i].abs() < TOL { 0.0 } else { m[i][k] / m[i][i] }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovers_non_negative_coefficients_of_very_different_scales() {
        // y = 2 a + 0.001 b + 0 c + 50 d, with b in the millions (bytes) and a in the tens (ops).
        let truth = [2.0, 0.001, 0.0, 50.0];
        let rows: Vec<Vec<f64>> = (0..30)
            .map(|i| {
                let f = i as f64;
                vec![10.0 + f, 1e6 * (1.0 + (f * 0.7).sin().abs()), (f * 1.3).cos().abs(), 1.0 + (i % 4) as f64]
            })
            .collect();
        let b: Vec<f64> = rows.iter().map(|r| r.iter().zip(truth).map(|(v, t)| v * t).sum()).collect();
        let x = nnls(&rows, &b);
        for (got, want) in x.iter().zip(truth) {
            assert!((got - want).abs() <= 1e-6 * want.max(1.0), "{x:?}");
        }
    }

    #[test]
    fn a_coefficient_least_squares_would_make_negative_is_zero() {
        // b = 3 a1 - 1 a2 fits exactly unconstrained; with x >= 0 the second must be 0 and the
        // first the best fit alone.
        let rows: Vec<Vec<f64>> = (1..=6).map(|i| vec![i as f64, (i * i) as f64 / 4.0]).collect();
        let b: Vec<f64> = rows.iter().map(|r| 3.0 * r[0] - r[1]).collect();
        let x = nnls(&rows, &b);
        assert_eq!(x[1], 0.0, "{x:?}");
        let best =
            rows.iter().zip(&b).map(|(r, bi)| r[0] * bi).sum::<f64>() / rows.iter().map(|r| r[0] * r[0]).sum::<f64>();
        assert!((x[0] - best).abs() < 1e-9, "{x:?} vs {best}");
        assert!(x.iter().all(|v| *v >= 0.0));
        // An all-zero column gets 0.
        let with_zero: Vec<Vec<f64>> = rows.iter().map(|r| vec![r[0], 0.0]).collect();
        assert_eq!(nnls(&with_zero, &b)[1], 0.0);
    }
}

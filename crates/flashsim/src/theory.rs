//! Closed-form write amplification of greedy GC, used to validate the simulator.
//!
//! Under uniform random single-page overwrites with T physical and U user pages (alpha = T/U,
//! spare factor S_f = 1 - 1/alpha), greedy GC with large blocks tends to
//! WA = alpha / (alpha + W0(-alpha e^-alpha)) (Xiang & Kurkoski, 2012), W0 the principal branch of
//! the Lambert W function.

/// The large-block limit of greedy GC's write amplification at spare factor `spare_factor`.
pub fn greedy_wa_limit(spare_factor: f64) -> f64 {
    let alpha = 1.0 / (1.0 - spare_factor);
    alpha / (alpha + lambert_w0(-alpha * (-alpha).exp()))
}

/// Principal branch of Lambert W on [-1/e, inf), by Halley iteration.
pub fn lambert_w0(x: f64) -> f64 {
    let branch_point = -1.0 / std::f64::consts::E;
    if x <= branch_point {
        return -1.0;
    }
    // Start near the branch point with its series, elsewhere with log1p.
    let mut w = if x < -0.25 { -1.0 + (2.0 * (1.0 + std::f64::consts::E * x)).sqrt() } else { x.ln_1p() };
    for _ in 0..64 {
        let ew = w.exp();
        let f = w * ew - x;
        let denom = ew * (w + 1.0) - (w + 2.0) * f / (2.0 * w + 2.0);
        let next = w - f / denom;
        if (next - w).abs() <= 1e-15 * (1.0 + next.abs()) {
            return next;
        }
        w = next;
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_table() {
        for (sf, wa) in [(0.07, 7.32), (0.10, 5.18), (0.20, 2.69), (0.28, 1.99)] {
            let got = greedy_wa_limit(sf);
            assert!((got - wa).abs() < 0.01, "S_f {sf}: {got} vs {wa}");
        }
    }

    #[test]
    fn lambert_w_inverts_w_exp_w() {
        for x in [-0.35, -0.2, 0.0, 0.5, 1.0, 10.0] {
            let w = lambert_w0(x);
            assert!((w * w.exp() - x).abs() < 1e-12, "x {x}: w {w}");
        }
    }
}

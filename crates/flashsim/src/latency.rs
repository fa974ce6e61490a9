//! Latency histograms of host operations, in simulated time.
//!
//! A host operation's latency is its completion time minus its issue time: queueing behind busy
//! dies and channels, GC it had to wait for, and mapping-cache misses are all included.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::timing::Nanos;

/// Kinds of host operation with a histogram each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostOp {
    Read,
    Write,
    Trim,
    Remap,
}

/// One histogram per host operation kind.
#[derive(Clone, Debug)]
pub struct Latencies {
    hists: [Histogram<u64>; 4],
}

/// Percentiles of one histogram, in microseconds of simulated time.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl Default for Latencies {
    fn default() -> Self {
        Self::new()
    }
}

impl Latencies {
    pub fn new() -> Self {
        // 3 significant digits, auto-resizing: any simulated latency fits.
        let h = || {
            let mut h = Histogram::new(3).expect("3 significant figures is a valid histogram precision");
            h.auto(true);
            h
        };
        Latencies { hists: [h(), h(), h(), h()] }
    }

    pub fn record(&mut self, op: HostOp, latency: Nanos) {
        // Auto-resizing histograms accept every u64; the error case cannot occur.
        let _ = self.hists[op as usize].record(latency.max(1));
    }

    pub fn histogram(&self, op: HostOp) -> &Histogram<u64> {
        &self.hists[op as usize]
    }

    pub fn summary(&self, op: HostOp) -> LatencySummary {
        summarize(self.histogram(op))
    }

    pub fn clear(&mut self) {
        for h in &mut self.hists {
            h.reset();
        }
    }
}

/// Percentiles of a nanosecond histogram, in microseconds.
pub fn summarize(h: &Histogram<u64>) -> LatencySummary {
    let us = |ns: u64| ns as f64 / 1000.0;
    if h.is_empty() {
        return LatencySummary { count: 0, mean_us: 0.0, p50_us: 0.0, p99_us: 0.0, p999_us: 0.0, max_us: 0.0 };
    }
    LatencySummary {
        count: h.len(),
        mean_us: h.mean() / 1000.0,
        p50_us: us(h.value_at_quantile(0.5)),
        p99_us: us(h.value_at_quantile(0.99)),
        p999_us: us(h.value_at_quantile(0.999)),
        max_us: us(h.max()),
    }
}

//! The parameters of the page-write workload (`name = "pages"`, `[workload.pages]`): single-page
//! writes straight to a simulated block SSD, where they go and how many.

use serde::{Deserialize, Serialize};

use super::named::{serde_name, NameError, Named};
use crate::error::{LabError, Result};

/// Where the overwrites of a page-write workload go.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Pattern {
    Seq,
    #[default]
    Uniform,
    /// YCSB's zipfian over the user pages, with this exponent.
    Zipf(f64),
}

impl Named for Pattern {
    fn parse_name(s: &str) -> Result<Pattern, NameError> {
        let accepted = "accepted: seq, uniform, zipf:THETA (0 < THETA, THETA != 1)";
        match s.trim() {
            "seq" => Ok(Pattern::Seq),
            "uniform" => Ok(Pattern::Uniform),
            t => match t.strip_prefix("zipf:") {
                Some(x) => match x.parse::<f64>() {
                    Ok(theta) if theta > 0.0 && theta != 1.0 && theta.is_finite() => Ok(Pattern::Zipf(theta)),
                    _ => Err(format!("bad zipf exponent '{x}'; {accepted}").into()),
                },
                None => Err(format!("unknown pattern '{t}'; {accepted}").into()),
            },
        }
    }
    fn name(&self) -> String {
        match self {
            Pattern::Seq => "seq".into(),
            Pattern::Uniform => "uniform".into(),
            Pattern::Zipf(t) => format!("zipf:{t}"),
        }
    }
}

/// A page-write workload: the device filled sequentially, then `writes` capacity-writes of
/// single-page writes in `pattern`, `queue_depth` outstanding; write amplification is measured
/// over the overwrites after the first `warmup` of them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PageWrites {
    #[serde(with = "serde_name")]
    pub pattern: Pattern,
    pub writes: f64,
    pub warmup: f64,
    pub queue_depth: u32,
}

impl Default for PageWrites {
    fn default() -> Self {
        PageWrites { pattern: Pattern::Uniform, writes: 12.0, warmup: 0.5, queue_depth: 64 }
    }
}

impl PageWrites {
    /// Checks the parameters (`workload.pages.*`).
    pub fn validate(&self) -> Result<()> {
        let bad = |f: &str, why: String| Err(LabError::invalid(format!("workload.pages.{f}"), why));
        if !(self.writes > 0.0 && self.writes.is_finite()) {
            return bad("writes", format!("{} must be a positive number of capacity-writes", self.writes));
        }
        if !(0.0..1.0).contains(&self.warmup) {
            return bad("warmup", format!("{} is not in [0, 1)", self.warmup));
        }
        if self.queue_depth == 0 {
            return bad("queue_depth", "must be at least 1".into());
        }
        Ok(())
    }
}

//! What the bytes of the values written are.
//!
//! Contract: the two choices give the same op stream but for the values' bytes: the same keys, in
//! the same order, with values of the same lengths. Every count and simulated time in flashkv
//! depends on the sizes only (no engine or device compresses), so they give identical results but
//! for content digests; zeros let a compact page store keep only keys and headers, which is what
//! makes the paper-scale key-value SSD and RemapCom runs fit in memory.

use std::str::FromStr;

use crate::error::WorkloadError;

use crate::op::Op;

/// The values' bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ValueData {
    /// The workload's own bytes (YCSB's random printable ones, db_bench's compressible ones, ...).
    #[default]
    Generated,
    /// Zeros.
    Zeros,
}

impl ValueData {
    /// `ops` with their values zeroed when these are zeros: for generators that slice their values
    /// from a buffer made once (db_bench, Mixgraph), where zeroing each one costs little. YCSB,
    /// which draws every value byte, skips the draws instead (`YcsbConfig::values`).
    pub fn apply(self, ops: Box<dyn Iterator<Item = Op> + Send>) -> Box<dyn Iterator<Item = Op> + Send> {
        match self {
            ValueData::Generated => ops,
            ValueData::Zeros => Box::new(ops.map(Op::zero_value)),
        }
    }
}

impl FromStr for ValueData {
    type Err = WorkloadError;
    fn from_str(s: &str) -> Result<ValueData, WorkloadError> {
        match s {
            "generated" => Ok(ValueData::Generated),
            "zeros" => Ok(ValueData::Zeros),
            other => Err(WorkloadError::UnknownName {
                kind: "value data",
                name: other.to_string(),
                accepted: "generated, zeros".to_string(),
            }),
        }
    }
}

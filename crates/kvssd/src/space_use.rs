//! Space utilisation of a key-value FTL (seed 004's Fig. 8): value bytes over the bytes of the
//! storage units holding them (partitions for KVFTL, whole flash pages for DFTL-KV), now and
//! cumulated over every put.

use serde::{Deserialize, Serialize};

/// Value bytes and the bytes of the units allocated to them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpaceUse {
    /// Bytes of the values stored now.
    pub live_value_bytes: u64,
    /// Bytes of the units (partitions, pages) holding them.
    pub live_alloc_bytes: u64,
    /// Bytes of every value ever put.
    pub put_value_bytes: u64,
    /// Bytes of the units allocated to them.
    pub put_alloc_bytes: u64,
}

impl SpaceUse {
    /// Live value bytes / bytes of the units holding them (1 when nothing is stored).
    pub fn utilisation(&self) -> f64 {
        ratio(self.live_value_bytes, self.live_alloc_bytes)
    }

    /// The same over every put so far.
    pub fn cumulative_utilisation(&self) -> f64 {
        ratio(self.put_value_bytes, self.put_alloc_bytes)
    }

    pub(crate) fn put(&mut self, value: u64, alloc: u64) {
        self.live_value_bytes += value;
        self.live_alloc_bytes += alloc;
        self.put_value_bytes += value;
        self.put_alloc_bytes += alloc;
    }

    pub(crate) fn removed(&mut self, value: u64, alloc: u64) {
        self.live_value_bytes -= value;
        self.live_alloc_bytes -= alloc;
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        1.0
    } else {
        a as f64 / b as f64
    }
}

/// Counts per number of units (partitions or pages) a value got: `counts[k]` values got `k`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnitsPerValue {
    pub counts: Vec<u64>,
}

impl UnitsPerValue {
    pub(crate) fn add(&mut self, units: usize) {
        if self.counts.len() <= units {
            self.counts.resize(units + 1, 0);
        }
        self.counts[units] += 1;
    }

    /// Values counted.
    pub fn values(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Mean units per value (0 with no value).
    pub fn mean(&self) -> f64 {
        let n = self.values();
        if n == 0 {
            return 0.0;
        }
        self.counts.iter().enumerate().map(|(k, c)| k as u64 * c).sum::<u64>() as f64 / n as f64
    }
}

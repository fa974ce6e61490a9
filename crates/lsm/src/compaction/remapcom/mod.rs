//! RemapCom (seeds 000 and 001): compaction that finds the input data blocks that come out of the
//! merge unchanged (UDBs) and places them into the output by remapping (`Fs::clone_range`: a device
//! remap on SimFs, a reflink on XFS/Btrfs) instead of writing them again.
//!
//! - [`state_machine`]: the per-input-SST block state machine (Begin, InProgress, Changed,
//!   Unchanged) and its pure transition function.
//! - [`observer`]: [`RemapCom`], the compaction observer that drives one machine per input from the
//!   merge, buffers the kept entries of the undecided block (lazy write-back), and clones UDBs.
//!
//! Modes ([`RemapMode`], `Options::remap`; all need `Options::align_blocks`):
//! - `off`: plain LevelDB compaction (the engine uses its pass-through observer).
//! - `base`: state machine + lazy write-back + remap, no UDB retention: a UDB is cloned only when the
//!   output is at a block boundary where the UDB starts, i.e. its current data block is empty or the
//!   UDB's first entry would not fit in it (the builder would have started a new block there anyway).
//!   Otherwise its entries are written as usual and may be split across output blocks.
//! - `full`: base + UDB retention: when the output's open block could still take the UDB's first entry,
//!   that block is closed early (its page is padded: the cost of retention, counted in
//!   `padding_bytes`) so the UDB stays whole and is cloned.
//!
//! Metrics ([`UdbStats`], accumulated per output level in `DbStats::levels`):
//! - UDB ratio (inputs) = UDBs found / data blocks of the compaction inputs;
//! - UDB ratio (outputs) = UDBs cloned / data blocks of the compaction outputs.

pub mod observer;
pub mod state_machine;

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

pub use observer::{RemapCom, UdbTrace};
pub use state_machine::{transition, BlockState, Event};

/// Which parts of RemapCom a compaction uses; see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RemapMode {
    #[default]
    Off,
    Base,
    Full,
}

impl RemapMode {
    pub const NAMES: [&'static str; 3] = ["off", "base", "full"];

    pub fn name(self) -> &'static str {
        match self {
            RemapMode::Off => "off",
            RemapMode::Base => "base",
            RemapMode::Full => "full",
        }
    }
}

impl fmt::Display for RemapMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RemapMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "off" => Ok(RemapMode::Off),
            "base" => Ok(RemapMode::Base),
            "full" => Ok(RemapMode::Full),
            other => Err(Error::UnknownName { option: "remap", name: other.to_string(), accepted: &RemapMode::NAMES }),
        }
    }
}

/// What RemapCom did in one compaction (or, summed, in many).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UdbStats {
    /// Input data blocks the state machine ended in `Unchanged`.
    pub udbs_found: u64,
    /// UDBs placed whole by `add_cloned_block` (remapped, or copied where the file system cannot
    /// share extents: the bytes are split in `JobStats::cloned_bytes` / `copied_bytes`).
    pub udbs_cloned: u64,
    /// Output blocks closed early to keep a UDB whole (full mode only).
    pub udb_retentions: u64,
    /// UDBs whose entries were written with `add` (base mode off a boundary, or an input SST that is
    /// not aligned).
    pub udbs_written: u64,
}

impl UdbStats {
    pub fn add(&mut self, o: &UdbStats) {
        self.udbs_found += o.udbs_found;
        self.udbs_cloned += o.udbs_cloned;
        self.udb_retentions += o.udb_retentions;
        self.udbs_written += o.udbs_written;
    }
}

/// `part / whole`, 0 when `whole` is 0 (a ratio of block counts).
pub fn ratio(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names_round_trip() {
        for name in RemapMode::NAMES {
            let m: RemapMode = name.parse().unwrap();
            assert_eq!(m.to_string(), name);
        }
        assert_eq!(RemapMode::default(), RemapMode::Off);
        let err = "fast".parse::<RemapMode>().unwrap_err().to_string();
        assert!(err.contains("remap") && err.contains("off, base, full"), "{err}");
    }
}

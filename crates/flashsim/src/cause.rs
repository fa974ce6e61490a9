//! Why a flash operation happened: every read, program and erase the media layer performs carries
//! a [`Cause`], so that results can say where the flash's pages and busy time went ("compaction
//! cost N s of flash time", "mapping loads and stores took N % of the time").
//!
//! Causes are a small closed set with a dense index, so that counting per cause is an array
//! increment on the hot path. Levels above [`MAX_LEVELS`]` - 1` are counted at the last level.

use std::fmt;

/// Levels that get a cause of their own (host compaction outputs, a KV-SSD's compaction).
pub const MAX_LEVELS: usize = 16;

/// The label a host gives its I/O (a file system knows what a file is for).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HostLabel {
    /// No label: a plain block or key-value request.
    #[default]
    Unlabelled,
    /// A write-ahead log.
    Wal,
    /// An SST written by a memtable flush.
    Flush,
    /// An SST written by a compaction into `level`.
    Compaction { level: u8 },
    /// The engine's manifest and other small metadata files.
    Manifest,
    /// The file system's own metadata (its journal and checkpoints).
    FsMetadata,
    /// An SST copied unchanged into its new level's zone (lifetime-leveling's "move": a rewrite
    /// without a merge, where a block device would only relink it).
    Move,
    /// A short-lived SST written to the T-zone (lifetime-leveling).
    TZone,
    /// Live data a zoned file system copies out of a zone before resetting it (host zone GC).
    ZoneGc,
}

/// Why the flash did something.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// Data the host asked to read or write, with the host's own label.
    Host(HostLabel),
    /// Garbage collection: relocation of valid pages and the erase of their victim block.
    Gc,
    /// Mapping (translation) pages: loads and stores of an FTL's map kept on flash (DFTL, KV FTLs).
    Mapping,
    /// A device's own work on the host's data: a key-value SSD's compaction into `level`.
    DeviceCompaction { level: u8 },
}

const HOST_FIXED: usize = 8; // Unlabelled, Wal, Flush, Manifest, FsMetadata, Move, TZone, ZoneGc
const HOST_COMPACTION: usize = HOST_FIXED;
const GC: usize = HOST_COMPACTION + MAX_LEVELS;
const MAPPING: usize = GC + 1;
const DEVICE_COMPACTION: usize = MAPPING + 1;

impl Cause {
    /// Number of distinct causes (the length of a per-cause table).
    pub const COUNT: usize = DEVICE_COMPACTION + MAX_LEVELS;

    /// Host data without a label.
    pub const HOST: Cause = Cause::Host(HostLabel::Unlabelled);

    /// The dense index of this cause in `0..Cause::COUNT`.
    pub fn index(self) -> usize {
        let level = |l: u8| (l as usize).min(MAX_LEVELS - 1);
        match self {
            Cause::Host(HostLabel::Unlabelled) => 0,
            Cause::Host(HostLabel::Wal) => 1,
            Cause::Host(HostLabel::Flush) => 2,
            Cause::Host(HostLabel::Manifest) => 3,
            Cause::Host(HostLabel::FsMetadata) => 4,
            Cause::Host(HostLabel::Move) => 5,
            Cause::Host(HostLabel::TZone) => 6,
            Cause::Host(HostLabel::ZoneGc) => 7,
            Cause::Host(HostLabel::Compaction { level: l }) => HOST_COMPACTION + level(l),
            Cause::Gc => GC,
            Cause::Mapping => MAPPING,
            Cause::DeviceCompaction { level: l } => DEVICE_COMPACTION + level(l),
        }
    }

    /// The cause with index `i` (the inverse of [`Cause::index`]).
    pub fn from_index(i: usize) -> Option<Cause> {
        Some(match i {
            0 => Cause::Host(HostLabel::Unlabelled),
            1 => Cause::Host(HostLabel::Wal),
            2 => Cause::Host(HostLabel::Flush),
            3 => Cause::Host(HostLabel::Manifest),
            4 => Cause::Host(HostLabel::FsMetadata),
            5 => Cause::Host(HostLabel::Move),
            6 => Cause::Host(HostLabel::TZone),
            7 => Cause::Host(HostLabel::ZoneGc),
            i if i < GC => Cause::Host(HostLabel::Compaction { level: (i - HOST_COMPACTION) as u8 }),
            GC => Cause::Gc,
            MAPPING => Cause::Mapping,
            i if i < Cause::COUNT => Cause::DeviceCompaction { level: (i - DEVICE_COMPACTION) as u8 },
            _ => return None,
        })
    }

    /// Whether the host asked for this (as opposed to the device's own work).
    pub fn is_host(self) -> bool {
        matches!(self, Cause::Host(_))
    }
}

/// Names used in results: `host`, `host.wal`, `host.flush`, `host.manifest`, `host.fs-metadata`,
/// `host.move`, `host.t-zone`, `host.zone-gc`, `host.compaction.L2`, `gc`, `mapping`, `device.compaction.L1`.
impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Host(HostLabel::Unlabelled) => f.write_str("host"),
            Cause::Host(HostLabel::Wal) => f.write_str("host.wal"),
            Cause::Host(HostLabel::Flush) => f.write_str("host.flush"),
            Cause::Host(HostLabel::Manifest) => f.write_str("host.manifest"),
            Cause::Host(HostLabel::FsMetadata) => f.write_str("host.fs-metadata"),
            Cause::Host(HostLabel::Move) => f.write_str("host.move"),
            Cause::Host(HostLabel::TZone) => f.write_str("host.t-zone"),
            Cause::Host(HostLabel::ZoneGc) => f.write_str("host.zone-gc"),
            Cause::Host(HostLabel::Compaction { level }) => write!(f, "host.compaction.L{level}"),
            Cause::Gc => f.write_str("gc"),
            Cause::Mapping => f.write_str("mapping"),
            Cause::DeviceCompaction { level } => write!(f, "device.compaction.L{level}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_are_dense_and_invert() {
        for i in 0..Cause::COUNT {
            let c = Cause::from_index(i).unwrap();
            assert_eq!(c.index(), i, "{c}");
        }
        assert_eq!(Cause::from_index(Cause::COUNT), None);
        let names: std::collections::BTreeSet<String> =
            (0..Cause::COUNT).map(|i| Cause::from_index(i).unwrap().to_string()).collect();
        assert_eq!(names.len(), Cause::COUNT, "every cause has its own name");
    }

    #[test]
    fn deep_levels_share_the_last_slot() {
        let deep = Cause::Host(HostLabel::Compaction { level: 40 });
        assert_eq!(deep.index(), Cause::Host(HostLabel::Compaction { level: MAX_LEVELS as u8 - 1 }).index());
        assert_eq!(Cause::DeviceCompaction { level: 1 }.to_string(), "device.compaction.L1");
        assert!(Cause::HOST.is_host() && !Cause::Gc.is_host());
    }
}

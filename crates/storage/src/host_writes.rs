//! What a simulated file system (SimFs, ZoneFs) wrote to its device, by cause: the
//! `host_write_bytes` breakdown of DESIGN.md.
//!
//! Device writes are whole pages, so these are page-granular bytes: a WAL sync that programs a
//! partly filled page counts the whole page. Clones are counted apart: they write nothing.

use crate::fs::WriteHint;

/// Bytes written to the device (whole pages) and bytes placed by remapping, by cause.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostWriteStats {
    pub wal_bytes: u64,
    pub manifest_bytes: u64,
    pub flush_bytes: u64,
    /// Compaction output by output level (index = level).
    pub compaction_bytes: Vec<u64>,
    /// The file system's own metadata (checkpoints and log of the file table).
    pub fs_metadata_bytes: u64,
    /// Files written without a hint.
    pub other_bytes: u64,
    /// SSTs rewritten unchanged into their level's zone (lifetime-leveling's moves).
    pub move_bytes: u64,
    /// Short-lived SSTs written to the T-zone (lifetime-leveling).
    pub t_zone_bytes: u64,
    /// Live data copied by host zone GC (ZoneFs).
    pub zone_gc_bytes: u64,
    /// Bytes placed by `clone_range` (device remap), by output level for compaction outputs.
    pub cloned_bytes: u64,
    pub cloned_bytes_by_level: Vec<u64>,
    /// Bytes read from the device (whole pages).
    pub read_bytes: u64,
    /// Pages trimmed because no file (and no durable state) holds them any more.
    pub trimmed_pages: u64,
}

impl HostWriteStats {
    /// Every byte written to the device.
    pub fn host_write_bytes(&self) -> u64 {
        self.wal_bytes
            + self.manifest_bytes
            + self.flush_bytes
            + self.compaction_bytes.iter().sum::<u64>()
            + self.fs_metadata_bytes
            + self.other_bytes
            + self.move_bytes
            + self.t_zone_bytes
            + self.zone_gc_bytes
    }

    /// Counts `bytes` written for a file with `hint`.
    pub(crate) fn add_write(&mut self, hint: WriteHint, bytes: u64) {
        match hint {
            WriteHint::Wal => self.wal_bytes += bytes,
            WriteHint::Manifest => self.manifest_bytes += bytes,
            WriteHint::Flush => self.flush_bytes += bytes,
            WriteHint::Compaction { output_level } | WriteHint::Window { output_level, .. } => {
                *slot(&mut self.compaction_bytes, output_level) += bytes
            }
            WriteHint::Move { .. } => self.move_bytes += bytes,
            WriteHint::ShortLived { .. } => self.t_zone_bytes += bytes,
            WriteHint::None => self.other_bytes += bytes,
        }
    }

    /// Counts `bytes` placed by cloning into a file with `hint`.
    pub(crate) fn add_clone(&mut self, hint: WriteHint, bytes: u64) {
        self.cloned_bytes += bytes;
        if let WriteHint::Compaction { output_level } | WriteHint::Window { output_level, .. } = hint {
            *slot(&mut self.cloned_bytes_by_level, output_level) += bytes;
        }
    }
}

fn slot(v: &mut Vec<u64>, level: u8) -> &mut u64 {
    let i = level as usize;
    if v.len() <= i {
        v.resize(i + 1, 0);
    }
    &mut v[i]
}

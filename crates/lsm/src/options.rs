//! Options of the engine, with LevelDB's defaults.

pub use crate::compaction::remapcom::RemapMode;
pub use crate::compaction::strategy::CompactionStyle;
pub use crate::db::WalRecoveryMode;
use crate::error::{Error, Result};
use crate::key::SequenceNumber;

/// How a database is opened and tuned.
/// Serializable so that a run can be sent to another process (a Ray worker); time and scheduling
/// are not options but the `Env` the database is opened with.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Options {
    pub create_if_missing: bool,
    pub error_if_exists: bool,
    /// Verify every block checksum read (SSTs); corruption is an error. WAL damage at open is
    /// `wal_recovery_mode`'s.
    pub paranoid_checks: bool,
    /// What WAL replay at open does with damage (`point_in_time`); what it dropped is reported
    /// either way ([`crate::db::RecoveryReport`]).
    pub wal_recovery_mode: WalRecoveryMode,
    /// Memtable size that triggers a switch to a new memtable and a flush (4 MiB).
    pub write_buffer_size: usize,
    /// Open SST readers kept (1000).
    pub max_open_files: usize,
    /// Bytes of uncompressed data blocks cached (8 MiB).
    pub block_cache_bytes: usize,
    /// Target size of a data block (4 KiB).
    pub block_size: usize,
    /// Keys between restart points in a block (16).
    pub block_restart_interval: usize,
    /// Bloom filter bits per key; `None` for no filter (10).
    pub bloom_bits_per_key: Option<u32>,
    /// Target size of an SST (2 MiB).
    pub max_file_size: u64,
    /// Bytes a compaction reads ahead in each input table (128 KiB: Linux's default readahead,
    /// which LevelDB's sequential reads of its inputs get from the page cache; 0 reads block by
    /// block).
    pub compaction_readahead: usize,
    /// Compact a table after it has absorbed its allowance of lookups that read it and then had to
    /// look further (LevelDB's seek-triggered compaction, one seek per 16 KiB of the table, at
    /// least 100; on by default, as in LevelDB). Read-heavy workloads rewrite tables for reads alone.
    pub seek_compaction: bool,
    /// Start every data block at a multiple of the file system's block size and pad it there
    /// (RemapCom needs it to clone unchanged blocks; off by default).
    pub align_blocks: bool,
    /// RemapCom: how compactions find and remap unchanged data blocks (`off`; `base` and `full`
    /// need `align_blocks`). See [`crate::compaction::remapcom`].
    pub remap: RemapMode,
    /// The compaction strategy (`leveled`, LevelDB's; `gear`, GearDB's; `ll`, lifetime-leveling for
    /// zoned SSDs). See
    /// [`crate::compaction::strategy`].
    pub compaction: CompactionStyle,
    /// L0 files that trigger a compaction (4), slow writes (8) and stop writes (12).
    pub l0_compaction_trigger: usize,
    pub l0_slowdown_writes_trigger: usize,
    pub l0_stop_writes_trigger: usize,
    /// Target bytes of level 1 (10 MiB); each deeper level is `level_size_multiplier` times larger.
    pub max_bytes_for_level_base: u64,
    pub level_size_multiplier: u64,
    pub num_levels: usize,
    /// Largest key and value accepted.
    pub max_key_size: usize,
    pub max_value_size: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: false,
            error_if_exists: false,
            paranoid_checks: false,
            wal_recovery_mode: WalRecoveryMode::default(),
            write_buffer_size: 4 << 20,
            max_open_files: 1000,
            block_cache_bytes: 8 << 20,
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: Some(10),
            max_file_size: 2 << 20,
            compaction_readahead: 128 << 10,
            seek_compaction: true,
            align_blocks: false,
            remap: RemapMode::Off,
            compaction: CompactionStyle::Leveled,
            l0_compaction_trigger: 4,
            l0_slowdown_writes_trigger: 8,
            l0_stop_writes_trigger: 12,
            max_bytes_for_level_base: 10 << 20,
            level_size_multiplier: 10,
            num_levels: 7,
            max_key_size: 64 << 10,
            max_value_size: 64 << 20,
        }
    }
}

impl Options {
    /// Checks that the options make sense together; the error names the field.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &str, why: String| Err(Error::InvalidArgument(format!("{field}: {why}")));
        if self.num_levels < 2 {
            return bad("num_levels", format!("{} is fewer than 2", self.num_levels));
        }
        if self.write_buffer_size < 4 << 10 {
            return bad("write_buffer_size", format!("{} is below 4 KiB", self.write_buffer_size));
        }
        if self.block_size < 64 {
            return bad("block_size", format!("{} is below 64 bytes", self.block_size));
        }
        if self.block_restart_interval == 0 {
            return bad("block_restart_interval", "must be at least 1".into());
        }
        if self.max_file_size < 4 << 10 {
            return bad("max_file_size", format!("{} is below 4 KiB", self.max_file_size));
        }
        if self.l0_compaction_trigger == 0
            || self.l0_slowdown_writes_trigger < self.l0_compaction_trigger
            || self.l0_stop_writes_trigger < self.l0_slowdown_writes_trigger
        {
            return bad(
                "l0 triggers",
                format!(
                    "need 0 < compaction ({}) <= slowdown ({}) <= stop ({})",
                    self.l0_compaction_trigger, self.l0_slowdown_writes_trigger, self.l0_stop_writes_trigger
                ),
            );
        }
        if self.level_size_multiplier < 2 {
            return bad("level_size_multiplier", format!("{} is below 2", self.level_size_multiplier));
        }
        if self.remap != RemapMode::Off && !self.align_blocks {
            return bad("remap", format!("mode '{}' needs align_blocks (UDBs are cloned page by page)", self.remap));
        }
        if self.remap != RemapMode::Off && self.compaction == CompactionStyle::Gear {
            return bad(
                "remap",
                format!(
                    "mode '{}' needs leveled or ll compaction (gear writes one merge into several levels)",
                    self.remap
                ),
            );
        }
        if self.max_open_files < 1 {
            return bad("max_open_files", "must be at least 1".into());
        }
        Ok(())
    }
}

/// Per-write options.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// Sync the WAL before acknowledging: the write then survives any crash.
    pub sync: bool,
}

/// Per-read options.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Verify block checksums on this read even without `paranoid_checks`.
    pub verify_checksums: bool,
    /// Keep the blocks this read loads out of the block cache (scans).
    pub fill_cache_disabled: bool,
    /// Read as of this snapshot (`Db::snapshot().sequence()`) instead of now.
    pub snapshot: Option<SequenceNumber>,
    /// Bytes a table iterator reads ahead of the block it needs (0: block by block).
    pub readahead: usize,
}

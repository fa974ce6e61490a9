//! Options of the engine. The defaults are LevelDB's, except for the level-0 write triggers and
//! the flush lane, which are RocksDB's, the closed WAL left unsynced at a memtable switch, as in both,
//! and one Bloom filter per table, as RocksDB's full filters ([`Profile::Flashkv`]);
//! [`Profile::LevelDb`] is LevelDB 1.23's, which the seeds' reproductions pin.

pub use crate::compaction::remapcom::RemapMode;
pub use crate::compaction::strategy::CompactionStyle;
use crate::compaction::strategy::TreeShape;
pub use crate::db::WalRecoveryMode;
use crate::error::{Accepted, Error, Result};
use crate::key::SequenceNumber;
pub use crate::sst::filter::FilterLayout;
use std::fmt;
use std::str::FromStr;
use storage::{Fs, RandomAccessFile, WritableFile, WriteHint};

/// A named set of defaults for [`Options`].
///
/// A database written under one opens under the other: each reads both filter layouts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Profile {
    /// LevelDB's defaults, but writes slow down at 20 level-0 files and stop at 36 (RocksDB's
    /// triggers) instead of 8 and 12, and flushes run on a lane of their own
    /// ([`Options::flush_lane`], as RocksDB's flush thread). LevelDB's triggers stall writes
    /// whenever flushes outrun the level-0 compaction: about half of a 1 KiB-value fill's time on
    /// real files; its one background thread makes a flush wait for a compaction's syncs
    /// (docs/performance.md). An SST's Bloom filter covers the whole table
    /// ([`Options::filter_layout`]): LevelDB's per-block filters let most absent keys through
    /// when a block holds one large value.
    #[default]
    Flashkv,
    /// LevelDB 1.23's defaults: slow down at 8 level-0 files, stop at 12. The seeds ran LevelDB,
    /// so their reproductions use this profile; its per-level writes are LevelDB's. One rule is
    /// flashkv's, not LevelDB's: a memtable switch syncs the closed WAL
    /// ([`Options::sync_closed_wal`]), as when the reproductions were measured.
    LevelDb,
}

impl Profile {
    pub const NAMES: [&'static str; 2] = ["flashkv", "leveldb"];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Flashkv => "flashkv",
            Profile::LevelDb => "leveldb",
        }
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Profile {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s {
            "flashkv" => Ok(Profile::Flashkv),
            "leveldb" => Ok(Profile::LevelDb),
            other => Err(Error::UnknownName { option: "profile", name: other.to_string(), accepted: &Profile::NAMES }),
        }
    }
}

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
    /// Open a database whose MANIFEST lost edits (SSTs it does not name, and the writes before
    /// them in no WAL): the open sets those SSTs aside in `lost/` and opens the MANIFEST's state,
    /// saying so in the recovery report. Off: such an open fails naming the MANIFEST and the SSTs.
    #[serde(default)]
    pub salvage: bool,
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
    /// How an SST's filter is laid out: one blocked filter per table, asked before the index
    /// ([`FilterLayout::PerTable`], [`Profile::Flashkv`]), or LevelDB's filter per 2 KiB of
    /// data blocks ([`FilterLayout::PerBlock`], [`Profile::LevelDb`], and options saved before
    /// this one existed). Tables of either layout are read whatever this says.
    #[serde(default)]
    pub filter_layout: FilterLayout,
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
    /// Open SSTs for reading with direct I/O (RocksDB's `use_direct_reads`): their reads bypass
    /// the host's page cache, where the file system models one (off).
    #[serde(default)]
    pub direct_reads: bool,
    /// Write the WAL, SSTs and MANIFEST with direct I/O (as on ZenFS, which writes every file
    /// directly; RocksDB's `use_direct_io_for_flush_and_compaction` covers the SSTs): their
    /// writes bypass the host's page cache, where the file system models one (off).
    #[serde(default)]
    pub direct_writes: bool,
    /// The compaction strategy (`leveled`, LevelDB's; `gear`, GearDB's; `ll`, lifetime-leveling for
    /// zoned SSDs). See
    /// [`crate::compaction::strategy`].
    pub compaction: CompactionStyle,
    /// L0 files that trigger a compaction (4), slow writes (20; LevelDB's 8) and stop writes (36;
    /// LevelDB's 12). See [`Profile`].
    pub l0_compaction_trigger: usize,
    pub l0_slowdown_writes_trigger: usize,
    pub l0_stop_writes_trigger: usize,
    /// While level 0 is at the slowdown trigger, writes are paced to this many bytes per second
    /// (RocksDB's `delayed_write_rate`, whose default is 16 MiB/s). `None` (both profiles):
    /// LevelDB's 1 ms sleep per write, whatever its size.
    #[serde(default)]
    pub delayed_write_rate: Option<u64>,
    /// Flushes run on a background lane of their own, beside the one compactions run on (as
    /// RocksDB's flush thread does): a flush never waits for a compaction's syncs or its install.
    /// Off (LevelDB, [`Profile::LevelDb`]): one background thread runs both, and a memtable that
    /// fills during a compaction is flushed from inside it, between merged entries.
    #[serde(default)]
    pub flush_lane: bool,
    /// Whether a memtable switch syncs the WAL it closes. Off ([`Profile::Flashkv`]): the closed
    /// WAL is left to the OS, as LevelDB and RocksDB leave it, so the write that fills a memtable
    /// does not wait for megabytes to reach the disk; a synced write syncs it first, and a crash
    /// that loses its tail stops replay there, so what survives is a prefix of the writes. On
    /// ([`Profile::LevelDb`]): flashkv's earlier rule, which the seeds' reproductions were
    /// measured with (LevelDB 1.23 itself does not sync it). Under a recovery mode that refuses a
    /// break in the WAL chain (`tolerate_corrupted_tail`, `absolute_consistency`) the switch
    /// syncs it whatever this says, so that an ordinary crash does not stop the open.
    #[serde(default)]
    pub sync_closed_wal: bool,
    /// Target bytes of level 1 (10 MiB); each deeper level is `level_size_multiplier` times larger.
    pub max_bytes_for_level_base: u64,
    pub level_size_multiplier: u64,
    pub num_levels: usize,
    /// Largest key and value accepted.
    pub max_key_size: usize,
    pub max_value_size: usize,
    /// The host's CPU cost model (see [`crate::cpu`]): on a simulated Env the engine's work is
    /// charged to its lanes at these rates. `None` (the default): simulated time is the device's
    /// alone. A wall-clock Env ignores it (its CPU time is real).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<crate::cpu::CpuModel>,
}

impl Default for Options {
    /// [`Profile::Flashkv`]'s options.
    fn default() -> Self {
        Options::profile(Profile::Flashkv)
    }
}

impl Options {
    /// The options of `profile`.
    pub fn profile(profile: Profile) -> Options {
        let (l0_slowdown_writes_trigger, l0_stop_writes_trigger, flush_lane, sync_closed_wal, filter_layout) =
            match profile {
                Profile::Flashkv => (20, 36, true, false, FilterLayout::PerTable),
                Profile::LevelDb => (8, 12, false, true, FilterLayout::PerBlock),
            };
        Options {
            create_if_missing: false,
            error_if_exists: false,
            paranoid_checks: false,
            wal_recovery_mode: WalRecoveryMode::default(),
            salvage: false,
            write_buffer_size: 4 << 20,
            max_open_files: 1000,
            block_cache_bytes: 8 << 20,
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits_per_key: Some(10),
            filter_layout,
            max_file_size: 2 << 20,
            compaction_readahead: 128 << 10,
            seek_compaction: true,
            align_blocks: false,
            remap: RemapMode::Off,
            direct_reads: false,
            direct_writes: false,
            compaction: CompactionStyle::Leveled,
            l0_compaction_trigger: 4,
            l0_slowdown_writes_trigger,
            l0_stop_writes_trigger,
            // RocksDB's pacing was tried in the flashkv profile and left out: it trades the read
            // after a fill for the fill (docs/performance.md).
            delayed_write_rate: None,
            flush_lane,
            sync_closed_wal,
            max_bytes_for_level_base: 10 << 20,
            level_size_multiplier: 10,
            num_levels: 7,
            max_key_size: 64 << 10,
            max_value_size: 64 << 20,
            cpu: None,
        }
    }

    /// What a compaction strategy reads of the options.
    pub fn tree_shape(&self) -> TreeShape {
        TreeShape {
            num_levels: self.num_levels,
            l0_compaction_trigger: self.l0_compaction_trigger,
            max_bytes_for_level_base: self.max_bytes_for_level_base,
            level_size_multiplier: self.level_size_multiplier,
            max_file_size: self.max_file_size,
        }
    }

    /// Creates one of the engine's files (a WAL, an SST, a MANIFEST): for direct I/O under
    /// `direct_writes`.
    pub(crate) fn create_file(&self, fs: &dyn Fs, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        Ok(if self.direct_writes { fs.create_direct(path, hint)? } else { fs.create_with_hint(path, hint)? })
    }

    /// Opens an SST for reading: for direct I/O under `direct_reads`.
    pub(crate) fn open_table(&self, fs: &dyn Fs, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        Ok(if self.direct_reads { fs.open_direct(path)? } else { fs.open_immutable(path)? })
    }

    /// Checks that the options make sense together: the first option that does not is an
    /// [`Error::InvalidOption`] naming it, its value and what is accepted.
    pub fn validate(&self) -> Result<()> {
        self.check().map_err(|Invalid { option, value, accepted }| Error::InvalidOption { option, value, accepted })
    }

    /// [`Options::validate`]'s check: the first option that does not make sense with the others.
    pub(crate) fn check(&self) -> std::result::Result<(), Invalid> {
        let at_least = |option: &'static str, value: u64, min: u64| -> std::result::Result<(), Invalid> {
            if value < min {
                return Err(Invalid { option, value: value.to_string(), accepted: Accepted::AtLeast(min) });
            }
            Ok(())
        };
        at_least("num_levels", self.num_levels as u64, 2)?;
        at_least("write_buffer_size", self.write_buffer_size as u64, 4 << 10)?;
        at_least("block_size", self.block_size as u64, 64)?;
        at_least("block_restart_interval", self.block_restart_interval as u64, 1)?;
        at_least("max_file_size", self.max_file_size, 4 << 10)?;
        // The L0 triggers act in this order as L0 fills: compact, then slow writes, then stop them.
        at_least("l0_compaction_trigger", self.l0_compaction_trigger as u64, 1)?;
        let after = |option: &'static str, value: usize, before: &'static str, min: usize| {
            if value < min {
                let accepted = Accepted::AtLeastOption { option: before, value: min as u64 };
                return Err(Invalid { option, value: value.to_string(), accepted });
            }
            Ok(())
        };
        after(
            "l0_slowdown_writes_trigger",
            self.l0_slowdown_writes_trigger,
            "l0_compaction_trigger",
            self.l0_compaction_trigger,
        )?;
        after(
            "l0_stop_writes_trigger",
            self.l0_stop_writes_trigger,
            "l0_slowdown_writes_trigger",
            self.l0_slowdown_writes_trigger,
        )?;
        at_least("level_size_multiplier", self.level_size_multiplier, 2)?;
        let remap_only_off = |option: &'static str, is: &'static str| Invalid {
            option: "remap",
            value: self.remap.to_string(),
            accepted: Accepted::OnlyWhile { value: RemapMode::Off.name(), option, is },
        };
        // UDBs are cloned page by page, so every data block must start on a page.
        if self.remap != RemapMode::Off && !self.align_blocks {
            return Err(remap_only_off("align_blocks", "false"));
        }
        // Gear writes one merge into several levels, which RemapCom does not support.
        if self.remap != RemapMode::Off && self.compaction == CompactionStyle::Gear {
            return Err(remap_only_off("compaction", self.compaction.name()));
        }
        at_least("max_open_files", self.max_open_files as u64, 1)?;
        if let Some((m, t)) = self.cpu.as_ref().and_then(|m| Some((m, m.first_invalid()?))) {
            return Err(Invalid {
                option: "cpu",
                value: format!("{} = {}", t.name(), m.get(t)),
                accepted: Accepted::AtLeast(0),
            });
        }
        Ok(())
    }
}

/// An option that does not make sense with the others: its field name in [`Options`], the value
/// given, what is accepted ([`Error::InvalidOption`] as data).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub option: &'static str,
    pub value: String,
    pub accepted: Accepted,
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
    /// Verify block checksums on this read even without `paranoid_checks`. Off (the default),
    /// only data blocks read around the block cache go unverified (`fill_cache_disabled`): a cache
    /// fill, an SST's open and a compaction always verify. See [`crate::DbIterator`].
    pub verify_checksums: bool,
    /// Keep the blocks this read loads out of the block cache (scans).
    pub fill_cache_disabled: bool,
    /// Read as of this snapshot (`Db::snapshot().sequence()`) instead of now.
    pub snapshot: Option<SequenceNumber>,
    /// Bytes a table iterator reads ahead of the block it needs (0: block by block).
    pub readahead: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The error `validate` gives for the default options changed by `change`.
    fn refused(change: impl FnOnce(&mut Options)) -> Error {
        let mut o = Options::default();
        change(&mut o);
        o.validate().unwrap_err()
    }

    /// Asserts `e` is an `InvalidOption` for `option` with `value` and `accepted`.
    fn assert_invalid(e: Error, option: &str, value: &str, accepted: Accepted) {
        match e {
            Error::InvalidOption { option: o, value: v, accepted: a } => {
                assert_eq!((o, v.as_str(), a), (option, value, accepted));
            }
            other => panic!("{option}: expected InvalidOption, got {other:?}"),
        }
    }

    #[test]
    fn defaults_are_valid() {
        Options::default().validate().unwrap();
        Options::profile(Profile::LevelDb).validate().unwrap();
    }

    #[test]
    fn the_profiles_differ_in_the_level0_write_triggers_the_flush_lane_the_closed_wal_sync_and_the_filters_alone() {
        let leveldb = Options::profile(Profile::LevelDb);
        assert_eq!(
            (leveldb.l0_compaction_trigger, leveldb.l0_slowdown_writes_trigger, leveldb.l0_stop_writes_trigger),
            (4, 8, 12)
        );
        assert_eq!(leveldb.delayed_write_rate, None);
        let flashkv = Options::default();
        assert_eq!(
            (flashkv.l0_compaction_trigger, flashkv.l0_slowdown_writes_trigger, flashkv.l0_stop_writes_trigger),
            (4, 20, 36)
        );
        assert_eq!(flashkv.delayed_write_rate, None);
        assert!(flashkv.flush_lane && !leveldb.flush_lane);
        assert!(!flashkv.sync_closed_wal && leveldb.sync_closed_wal);
        assert_eq!((flashkv.filter_layout, leveldb.filter_layout), (FilterLayout::PerTable, FilterLayout::PerBlock));
        let as_leveldb = Options {
            l0_slowdown_writes_trigger: 8,
            l0_stop_writes_trigger: 12,
            flush_lane: false,
            sync_closed_wal: true,
            filter_layout: FilterLayout::PerBlock,
            ..flashkv
        };
        assert_eq!(serde_json::to_string(&as_leveldb).unwrap(), serde_json::to_string(&leveldb).unwrap());
        for p in [Profile::Flashkv, Profile::LevelDb] {
            assert_eq!(p.name().parse::<Profile>().unwrap(), p);
        }
        assert!(matches!("rocksdb".parse::<Profile>(), Err(Error::UnknownName { option: "profile", .. })));
    }

    #[test]
    fn each_bound_names_its_option_value_and_minimum() {
        assert_invalid(refused(|o| o.num_levels = 1), "num_levels", "1", Accepted::AtLeast(2));
        assert_invalid(refused(|o| o.write_buffer_size = 4095), "write_buffer_size", "4095", Accepted::AtLeast(4096));
        assert_invalid(refused(|o| o.block_size = 63), "block_size", "63", Accepted::AtLeast(64));
        assert_invalid(refused(|o| o.block_restart_interval = 0), "block_restart_interval", "0", Accepted::AtLeast(1));
        assert_invalid(refused(|o| o.max_file_size = 4095), "max_file_size", "4095", Accepted::AtLeast(4096));
        assert_invalid(refused(|o| o.l0_compaction_trigger = 0), "l0_compaction_trigger", "0", Accepted::AtLeast(1));
        assert_invalid(refused(|o| o.level_size_multiplier = 1), "level_size_multiplier", "1", Accepted::AtLeast(2));
        assert_invalid(refused(|o| o.max_open_files = 0), "max_open_files", "0", Accepted::AtLeast(1));
    }

    #[test]
    fn l0_triggers_must_ascend() {
        let slowdown = Accepted::AtLeastOption { option: "l0_compaction_trigger", value: 4 };
        assert_invalid(refused(|o| o.l0_slowdown_writes_trigger = 3), "l0_slowdown_writes_trigger", "3", slowdown);
        let stop = Accepted::AtLeastOption { option: "l0_slowdown_writes_trigger", value: 20 };
        assert_invalid(refused(|o| o.l0_stop_writes_trigger = 19), "l0_stop_writes_trigger", "19", stop);
        // Equal triggers are accepted.
        let o = Options { l0_slowdown_writes_trigger: 4, l0_stop_writes_trigger: 4, ..Options::default() };
        o.validate().unwrap();
    }

    #[test]
    fn remap_needs_align_blocks_and_a_single_level_strategy() {
        let unaligned = Accepted::OnlyWhile { value: "off", option: "align_blocks", is: "false" };
        assert_invalid(refused(|o| o.remap = RemapMode::Base), "remap", "base", unaligned);
        let gear = Accepted::OnlyWhile { value: "off", option: "compaction", is: "gear" };
        let e = refused(|o| (o.remap, o.align_blocks, o.compaction) = (RemapMode::Full, true, CompactionStyle::Gear));
        assert_invalid(e, "remap", "full", gear);
        for compaction in [CompactionStyle::Leveled, CompactionStyle::LifetimeLeveling] {
            let o = Options { remap: RemapMode::Full, align_blocks: true, compaction, ..Options::default() };
            o.validate().unwrap();
        }
    }

    #[test]
    fn unknown_names_list_the_accepted_ones() {
        let check = |e: Error, option: &str, name: &str, accepted: &[&str]| match e {
            Error::UnknownName { option: o, name: n, accepted: a } => {
                assert_eq!((o, n.as_str(), a), (option, name, accepted))
            }
            other => panic!("{option}: expected UnknownName, got {other:?}"),
        };
        check("fast".parse::<RemapMode>().unwrap_err(), "remap", "fast", &RemapMode::NAMES);
        check("tiered".parse::<CompactionStyle>().unwrap_err(), "compaction", "tiered", &CompactionStyle::NAMES);
        check("strict".parse::<WalRecoveryMode>().unwrap_err(), "wal_recovery_mode", "strict", &WalRecoveryMode::NAMES);
    }

    #[test]
    fn messages_are_one_line_naming_option_value_and_accepted() {
        let e = refused(|o| o.l0_stop_writes_trigger = 19).to_string();
        assert_eq!(e, "l0_stop_writes_trigger: 19 is invalid; accepted: at least l0_slowdown_writes_trigger (20)");
        let e = refused(|o| o.remap = RemapMode::Base).to_string();
        assert_eq!(e, "remap: base is invalid; accepted: only off while align_blocks is false");
        let e = "fast".parse::<RemapMode>().unwrap_err().to_string();
        assert_eq!(e, "remap: unknown name 'fast'; accepted: off, base, full");
    }
}

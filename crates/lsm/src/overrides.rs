//! Option overrides: the options a user sets by name (a command-line flag, a key of an experiment
//! file's `[engine]` table, a field of a run's JSON), each one optional, applied over a profile's
//! [`Options`] by [`OptionOverrides::apply`].
//!
//! Contract:
//! - Every field may be left out: an absent size, count or switch keeps the base options' value.
//!   `align_blocks`, `remap`, `direct_reads`, `direct_writes` and `compaction` are plain values
//!   whose defaults (off, `off`, off, off, `leveled`) are what both profiles have; `apply` sets
//!   them. `bloom_bits_per_key = 0` means no filter and `delayed_write_rate = 0` no pacing.
//! - Sizes are written as text with units (`4MiB`, see [`units::size`]) or as numbers; names
//!   (`remap`, `filter_layout`, `compaction`) as the types print them. The struct serializes to
//!   the same words; unknown fields are refused.
//! - [`OptionOverrides::apply`] is the one place that copies overrides into [`Options`], and it
//!   validates the result: an error names the override's field (`block_cache`, where the
//!   options say `block_cache_bytes`), so a caller names it in its own terms without reading the
//!   message.
//! - With the `clap` feature the struct is a set of command-line flags (`--write-buffer-size`,
//!   with db_bench's spellings as aliases). `compaction` parses the built-in strategies' names;
//!   a caller that knows strategies of its own (plug-ins) replaces its value parser.

use std::fmt;

#[cfg(feature = "clap")]
use units::text::parse;
use units::text::{by_name, by_name_opt};
use units::{ByteCount, Bytes};

use crate::error::Accepted;
use crate::options::{CompactionStyle, FilterLayout, Invalid, Options, RemapMode};

/// The engine's options a user may set, each optional; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct OptionOverrides {
    /// Align SST data blocks to the file system's block size (RemapCom needs it).
    #[cfg_attr(feature = "clap", arg(long))]
    pub align_blocks: bool,
    /// RemapCom: off (LevelDB), base (UDB detection + remap), full (+ UDB retention). base and
    /// full align blocks too.
    #[cfg_attr(feature = "clap", arg(long, default_value = "off", value_parser = parse::<RemapMode>))]
    #[serde(with = "by_name")]
    pub remap: RemapMode,
    /// Open SSTs for reading with direct I/O (RocksDB's use_direct_reads): their reads bypass
    /// --page-cache.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub direct_reads: bool,
    /// Write the WAL, SSTs and MANIFEST with direct I/O (as ZenFS writes every file): their
    /// writes bypass --page-cache.
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub direct_writes: bool,
    /// Compaction strategy: leveled (LevelDB's), gear (GearDB's), ll (lifetime-leveling, seed 003),
    /// or a plug-in's name.
    #[cfg_attr(feature = "clap", arg(long, default_value = "leveled", value_parser = parse::<CompactionStyle>))]
    #[serde(with = "by_name")]
    pub compaction: CompactionStyle,
    /// Memtable size that triggers a flush (LevelDB: 4MiB).
    #[cfg_attr(feature = "clap", arg(long, value_parser = str::parse::<Bytes>))]
    pub write_buffer_size: Option<Bytes>,
    /// Target size of an SST (LevelDB: 2MiB; db_bench's --target-file-size-base).
    #[cfg_attr(feature = "clap", arg(long, visible_alias = "target-file-size-base", value_parser = str::parse::<Bytes>))]
    pub max_file_size: Option<Bytes>,
    /// Target size of an SST's data block (LevelDB: 4KiB).
    #[cfg_attr(feature = "clap", arg(long = "table-block-size", value_parser = str::parse::<Bytes>))]
    pub block_size: Option<Bytes>,
    /// Bytes of data blocks cached (8MiB; db_bench's --cache-size).
    #[cfg_attr(feature = "clap", arg(long, visible_alias = "cache-size", value_parser = str::parse::<Bytes>))]
    pub block_cache: Option<Bytes>,
    /// Bytes a compaction reads ahead in each input table (128KiB; 0 reads block by block).
    #[cfg_attr(feature = "clap", arg(long, value_parser = str::parse::<ByteCount>))]
    pub compaction_readahead: Option<ByteCount>,
    /// LevelDB's seek-triggered compaction (true by default).
    #[cfg_attr(feature = "clap", arg(long))]
    pub seek_compaction: Option<bool>,
    /// Flushes on a background lane of their own, beside the compactions' (flashkv: true, as
    /// RocksDB's flush thread; leveldb: false, one background thread for both).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flush_lane: Option<bool>,
    /// A memtable switch syncs the WAL it closes (flashkv: false, as LevelDB and RocksDB; leveldb:
    /// true, the rule the seeds' repros were measured with).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync_closed_wal: Option<bool>,
    /// Target bytes of level 1 (LevelDB: 10MiB).
    #[cfg_attr(feature = "clap", arg(long, value_parser = str::parse::<Bytes>))]
    pub max_bytes_for_level_base: Option<Bytes>,
    /// Bloom filter bits per key (10; 0 for no filter; db_bench's --bloom-bits).
    #[cfg_attr(feature = "clap", arg(long, visible_alias = "bloom-bits"))]
    pub bloom_bits_per_key: Option<u32>,
    /// How an SST's Bloom filter is laid out: per_table (flashkv: one cache-line-blocked filter
    /// per table, asked before the index, as RocksDB's full filters) or per_block (leveldb:
    /// LevelDB's filter per 2 KiB of data blocks).
    #[cfg_attr(feature = "clap", arg(long, value_parser = parse::<FilterLayout>))]
    #[serde(with = "by_name_opt", default, skip_serializing_if = "Option::is_none")]
    pub filter_layout: Option<FilterLayout>,
    /// L0 files that trigger a compaction (4), slow writes (20; leveldb: 8) and stop writes (36;
    /// leveldb: 12) (db_bench's
    /// --level0-file-num-compaction-trigger, --level0-slowdown-writes-trigger,
    /// --level0-stop-writes-trigger).
    #[cfg_attr(feature = "clap", arg(long, visible_alias = "level0-file-num-compaction-trigger"))]
    pub l0_compaction_trigger: Option<usize>,
    #[cfg_attr(feature = "clap", arg(long, visible_alias = "level0-slowdown-writes-trigger"))]
    pub l0_slowdown_writes_trigger: Option<usize>,
    #[cfg_attr(feature = "clap", arg(long, visible_alias = "level0-stop-writes-trigger"))]
    pub l0_stop_writes_trigger: Option<usize>,
    /// Bytes per second that writes are held to while level 0 is at the slowdown trigger
    /// (RocksDB's delayed_write_rate, e.g. its 16MiB); 0 or absent: LevelDB's 1 ms per write.
    #[cfg_attr(feature = "clap", arg(long, value_parser = str::parse::<ByteCount>))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delayed_write_rate: Option<ByteCount>,
}

/// Options the overrides call by another name: (the name in [`Options`], the override's).
const RENAMED: [(&str, &str); 1] = [("block_cache_bytes", "block_cache")];

/// Overrides that leave options that do not go together: the override's field (for an option no
/// override sets, the option's own name in [`Options`]), the value, and what is accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverrideError {
    pub field: &'static str,
    pub value: String,
    pub accepted: Accepted,
}

impl OverrideError {
    /// What is wrong, without the field: `8 is invalid; accepted: at least l0_compaction_trigger (9)`.
    pub fn reason(&self) -> String {
        format!("{} is invalid; accepted: {}", self.value, self.accepted)
    }
}

impl fmt::Display for OverrideError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.reason())
    }
}

impl std::error::Error for OverrideError {}

impl OptionOverrides {
    /// `base` (a profile's options) with these overrides applied, checked as a whole
    /// ([`Options::validate`]). RemapCom clones whole data blocks, which only aligned blocks are,
    /// so a `remap` other than off aligns them.
    pub fn apply(&self, base: Options) -> Result<Options, OverrideError> {
        let mut o = base;
        let usize_of = |b: u64| b as usize;
        if let Some(b) = self.write_buffer_size {
            o.write_buffer_size = usize_of(b.0);
        }
        if let Some(b) = self.max_file_size {
            o.max_file_size = b.0;
        }
        if let Some(b) = self.block_size {
            o.block_size = usize_of(b.0);
        }
        if let Some(b) = self.block_cache {
            o.block_cache_bytes = usize_of(b.0);
        }
        if let Some(b) = self.compaction_readahead {
            o.compaction_readahead = usize_of(b.0);
        }
        o.seek_compaction = self.seek_compaction.unwrap_or(o.seek_compaction);
        o.flush_lane = self.flush_lane.unwrap_or(o.flush_lane);
        o.sync_closed_wal = self.sync_closed_wal.unwrap_or(o.sync_closed_wal);
        if let Some(b) = self.max_bytes_for_level_base {
            o.max_bytes_for_level_base = b.0;
        }
        if let Some(bits) = self.bloom_bits_per_key {
            o.bloom_bits_per_key = (bits > 0).then_some(bits);
        }
        o.filter_layout = self.filter_layout.unwrap_or(o.filter_layout);
        o.l0_compaction_trigger = self.l0_compaction_trigger.unwrap_or(o.l0_compaction_trigger);
        o.l0_slowdown_writes_trigger = self.l0_slowdown_writes_trigger.unwrap_or(o.l0_slowdown_writes_trigger);
        o.l0_stop_writes_trigger = self.l0_stop_writes_trigger.unwrap_or(o.l0_stop_writes_trigger);
        if let Some(rate) = self.delayed_write_rate {
            o.delayed_write_rate = (rate.0 > 0).then_some(rate.0);
        }
        o.remap = self.remap;
        o.align_blocks = self.align_blocks || self.remap != RemapMode::Off;
        o.compaction = self.compaction.clone();
        (o.direct_reads, o.direct_writes) = (self.direct_reads, self.direct_writes);
        o.check().map_err(|Invalid { option, value, accepted }| {
            let field = RENAMED.iter().find(|(name, _)| *name == option).map_or(option, |(_, field)| field);
            OverrideError { field, value, accepted }
        })?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::Profile;

    fn leveldb() -> Options {
        Options::profile(Profile::LevelDb)
    }

    #[test]
    fn nothing_given_keeps_the_profile() {
        let o = OptionOverrides::default().apply(leveldb()).unwrap();
        assert_eq!(serde_json::to_value(&o).unwrap(), serde_json::to_value(leveldb()).unwrap());
        let o = OptionOverrides::default().apply(Options::default()).unwrap();
        assert_eq!(serde_json::to_value(&o).unwrap(), serde_json::to_value(Options::default()).unwrap());
    }

    #[test]
    fn given_options_override_the_profile() {
        let given = OptionOverrides {
            write_buffer_size: Some(Bytes(8 << 20)),
            block_cache: Some(Bytes(1 << 30)),
            compaction_readahead: Some(ByteCount(0)),
            flush_lane: Some(true),
            l0_stop_writes_trigger: Some(16),
            bloom_bits_per_key: Some(0),
            delayed_write_rate: Some(ByteCount(16 << 20)),
            remap: RemapMode::Full,
            ..OptionOverrides::default()
        };
        let o = given.apply(leveldb()).unwrap();
        assert_eq!((o.write_buffer_size, o.block_cache_bytes, o.compaction_readahead), (8 << 20, 1 << 30, 0));
        assert!(o.flush_lane && o.sync_closed_wal, "given and kept");
        assert_eq!((o.l0_slowdown_writes_trigger, o.l0_stop_writes_trigger), (8, 16));
        assert_eq!((o.bloom_bits_per_key, o.delayed_write_rate), (None, Some(16 << 20)));
        assert!(o.align_blocks, "remapping aligns blocks");
        let off = OptionOverrides { delayed_write_rate: Some(ByteCount(0)), ..OptionOverrides::default() };
        assert_eq!(off.apply(leveldb()).unwrap().delayed_write_rate, None);
    }

    #[test]
    fn errors_name_the_overrides_field() {
        let given = OptionOverrides {
            l0_compaction_trigger: Some(9),
            l0_slowdown_writes_trigger: Some(8),
            ..OptionOverrides::default()
        };
        let e = given.apply(Options::default()).unwrap_err();
        assert_eq!(e.field, "l0_slowdown_writes_trigger");
        assert_eq!(
            e.to_string(),
            "l0_slowdown_writes_trigger: 8 is invalid; accepted: at least l0_compaction_trigger (9)"
        );
        assert_eq!(e.reason(), "8 is invalid; accepted: at least l0_compaction_trigger (9)");
        let gear =
            OptionOverrides { compaction: CompactionStyle::Gear, remap: RemapMode::Base, ..OptionOverrides::default() };
        assert_eq!(
            gear.apply(Options::default()).unwrap_err().to_string(),
            "remap: base is invalid; accepted: only off while compaction is gear"
        );
        // An option the overrides call otherwise is named as the override.
        let o = OptionOverrides { block_size: Some(Bytes(32)), ..OptionOverrides::default() };
        assert_eq!(o.apply(Options::default()).unwrap_err().field, "block_size");
        assert_eq!(RENAMED.iter().find(|(n, _)| *n == "block_cache_bytes").map(|r| r.1), Some("block_cache"));
    }

    #[test]
    fn the_text_form_reads_back_and_refuses_unknown_fields() {
        let given = OptionOverrides {
            max_file_size: Some(Bytes(4 << 20)),
            filter_layout: Some(FilterLayout::PerBlock),
            compaction: CompactionStyle::LifetimeLeveling,
            ..OptionOverrides::default()
        };
        let json = serde_json::to_string(&given).unwrap();
        assert!(json.contains(r#""max_file_size":"4MiB""#) && json.contains(r#""compaction":"ll""#), "{json}");
        assert!(json.contains(r#""filter_layout":"per_block""#) && !json.contains("flush_lane"), "{json}");
        assert_eq!(serde_json::from_str::<OptionOverrides>(&json).unwrap(), given);
        let sizes: OptionOverrides =
            serde_json::from_str(r#"{"write_buffer_size": 4096, "block_cache": "8 MiB"}"#).unwrap();
        assert_eq!((sizes.write_buffer_size, sizes.block_cache), (Some(Bytes(4096)), Some(Bytes(8 << 20))));
        let e = serde_json::from_str::<OptionOverrides>(r#"{"write_bufer_size": 1}"#).unwrap_err().to_string();
        assert!(e.starts_with("unknown field `write_bufer_size`"), "{e}");
        let e = serde_json::from_str::<OptionOverrides>(r#"{"remap": "fast"}"#).unwrap_err().to_string();
        assert!(e.starts_with("remap: unknown name 'fast'; accepted: off, base, full"), "{e}");
    }
}

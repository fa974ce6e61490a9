//! `LsmConfig`: the NAND array under the LSM-in-device baseline and LevelDB's sizes.
//!
//! Defaults are the paper's ("8 MB, 10 MB, 100 MB, etc.", 7 levels, 2 MB SSTs) with LevelDB's
//! meaning of them: L0 is compacted when it holds `l0_compaction_trigger` = 4 SSTs (4 x 2 MB =
//! 8 MB), level 1 may hold `l1_max_bytes` = 10 MiB, each level after it `level_size_multiplier` =
//! 10 times more; the last level has no limit. LevelDB's "MB" are MiB (10 x 1048576 bytes), and so
//! are ours. The memtable (write buffer) holds `write_buffer_bytes` = one SST (2 MiB) of records.
//!
//! Ours, where the seed is silent (labelled):
//! - `stripe` = true: an SST's pages go round-robin over all planes, as SSDSim's dynamic
//!   allocation (its recommended setting, which the seed kept) places consecutive pages; false
//!   programs them one after another in one plane (our reading before issue 28; see the `lsm_in_device`
//!   module docs);
//! - `filters` = true with `bloom_bits_per_key` = 10: a bloom filter per SST in DRAM, LevelDB's
//!   recommended filter policy, so a get reads only the SSTs whose range covers the key and whose
//!   filter says it may be there (false: every covering SST is read, our reading before issue 28);
//! - `gc_threshold_pages` = 3/10 of the raw pages and `copyback` = true, as PLSC's (SSDSim's
//!   defaults, which the paper kept);
//! - `max_key_size` = 255 bytes, as PLSC's.
//!
//! The largest value is what fits one SST and the memtable beside the record header and the
//! largest key (an SST never splits a record).

use flashsim::cause::MAX_LEVELS;
use flashsim::{MediaConfig, Preset};

use crate::error::{KvError, Result};
use crate::flash::{record, space::RESERVE_BLOCKS};

const MIB: u64 = 1 << 20;

/// Everything that defines an LSM-in-device baseline.
#[derive(Clone, Debug)]
pub struct LsmConfig {
    pub media: MediaConfig,
    /// Largest key in bytes.
    pub max_key_size: usize,
    /// Levels L0..L(levels - 1); 7 in LevelDB.
    pub levels: u8,
    /// Largest SST a compaction writes, in bytes of records (2 MiB).
    pub sst_bytes: u64,
    /// Bytes of records the memtable holds before it is flushed as one L0 SST (2 MiB).
    pub write_buffer_bytes: u64,
    /// L0 is compacted when it holds this many SSTs (4).
    pub l0_compaction_trigger: u32,
    /// Bytes level 1 may hold (10 MiB).
    pub l1_max_bytes: u64,
    /// Each level after L1 may hold this many times the bytes of the one before (10).
    pub level_size_multiplier: u64,
    /// Stripe an SST's pages over all planes (PLSC's layout) instead of one plane at a time.
    pub stripe: bool,
    /// Keep a bloom filter per SST in DRAM and read an SST only when its filter says the key may
    /// be in it (LevelDB's filter policy); false: every SST whose range covers the key is read.
    pub filters: bool,
    /// Bits per key of those filters (10, LevelDB's recommended setting).
    pub bloom_bits_per_key: u32,
    /// GC runs while fewer pages than this are free (erased, or unwritten in open blocks).
    pub gc_threshold_pages: u64,
    /// GC moves pages by copyback (inside their plane, no channel transfer).
    pub copyback: bool,
}

impl LsmConfig {
    /// The baseline on `media` with the paper's sizes and our other defaults (module docs).
    pub fn new(media: MediaConfig) -> LsmConfig {
        let pages = media.geometry.total_pages();
        LsmConfig {
            media,
            max_key_size: 255,
            levels: 7,
            sst_bytes: 2 * MIB,
            write_buffer_bytes: 2 * MIB,
            l0_compaction_trigger: 4,
            l1_max_bytes: 10 * MIB,
            level_size_multiplier: 10,
            stripe: true,
            filters: true,
            bloom_bits_per_key: 10,
            gc_threshold_pages: pages * 3 / 10,
            copyback: true,
        }
    }

    /// The seed's device (the `plsc` preset, 32 planes of 16 KiB pages), resized to `capacity`
    /// bytes of raw NAND when given, page contents in memory.
    pub fn preset(capacity: Option<u64>) -> Result<LsmConfig> {
        let geometry = match capacity {
            Some(c) => Preset::Plsc.geometry_with_capacity(c)?,
            None => Preset::Plsc.geometry(),
        };
        Ok(LsmConfig::new(MediaConfig::new(geometry, Preset::Plsc.timing())))
    }

    /// Bytes level `level` (1 or more) may hold; the last level has no limit.
    pub fn max_bytes(&self, level: u8) -> u64 {
        if level + 1 >= self.levels {
            return u64::MAX;
        }
        (1..level).fold(self.l1_max_bytes, |b, _| b.saturating_mul(self.level_size_multiplier))
    }

    /// Largest value accepted: a record with the largest key fills an SST (or the memtable).
    pub fn max_value_size(&self) -> usize {
        let room = self.sst_bytes.min(self.write_buffer_bytes) as usize;
        room.saturating_sub(record::HEADER + self.max_key_size)
    }

    /// Checks every parameter; the error names the field and the limit.
    pub fn validate(&self) -> Result<()> {
        record::check_config("the LSM", &self.media, self.max_key_size)?;
        let invalid = |field, reason: String| Err(KvError::InvalidConfig { field, reason });
        if !(2..=MAX_LEVELS as u8).contains(&self.levels) {
            return invalid(
                "levels",
                format!("{} is outside 2..={MAX_LEVELS} (flash counters keep {MAX_LEVELS} levels)", self.levels),
            );
        }
        let largest_record = (record::HEADER + self.max_key_size) as u64;
        for (field, bytes) in [("sst_bytes", self.sst_bytes), ("write_buffer_bytes", self.write_buffer_bytes)] {
            if bytes <= largest_record || bytes > u32::MAX as u64 {
                return invalid(
                    field,
                    format!(
                        "{bytes} bytes must hold a record with the largest key ({largest_record} bytes) and \
                         stay below 4 GiB"
                    ),
                );
            }
        }
        if self.filters && !(1..=64).contains(&self.bloom_bits_per_key) {
            return invalid("bloom_bits_per_key", format!("{} is outside 1..=64", self.bloom_bits_per_key));
        }
        if self.l0_compaction_trigger == 0 {
            return invalid("l0_compaction_trigger", "0 SSTs: level 0 would never hold a flush".into());
        }
        if self.l1_max_bytes == 0 {
            return invalid("l1_max_bytes", "0 bytes: level 1 would never hold a compaction's output".into());
        }
        if self.level_size_multiplier == 0 {
            return invalid("level_size_multiplier", "0: level 2 and the ones after would hold nothing".into());
        }
        let g = &self.media.geometry;
        let reserve = g.total_planes() as u64 * g.pages_per_block as u64 * RESERVE_BLOCKS as u64;
        if self.gc_threshold_pages + reserve >= g.total_pages() {
            return invalid(
                "gc_threshold_pages",
                format!(
                    "{} pages and the GC reserve of {reserve} pages leave nothing of the device's {} pages for data",
                    self.gc_threshold_pages,
                    g.total_pages()
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_has_the_papers_sizes_and_bad_fields_are_named() {
        let c = LsmConfig::preset(None).unwrap();
        c.validate().unwrap();
        assert_eq!((c.levels, c.l0_compaction_trigger, c.sst_bytes), (7, 4, 2 * MIB));
        assert_eq!((c.max_bytes(1), c.max_bytes(2), c.max_bytes(5)), (10 * MIB, 100 * MIB, 100_000 * MIB));
        assert_eq!(c.max_bytes(6), u64::MAX, "the last level has no limit");
        assert_eq!(c.max_value_size(), 2 * MIB as usize - 6 - 255);
        for (field, bad) in [
            ("levels", LsmConfig { levels: 1, ..c.clone() }),
            ("levels", LsmConfig { levels: 17, ..c.clone() }),
            ("sst_bytes", LsmConfig { sst_bytes: 100, ..c.clone() }),
            ("write_buffer_bytes", LsmConfig { write_buffer_bytes: 0, ..c.clone() }),
            ("l0_compaction_trigger", LsmConfig { l0_compaction_trigger: 0, ..c.clone() }),
            ("l1_max_bytes", LsmConfig { l1_max_bytes: 0, ..c.clone() }),
            ("bloom_bits_per_key", LsmConfig { bloom_bits_per_key: 0, ..c.clone() }),
            ("level_size_multiplier", LsmConfig { level_size_multiplier: 0, ..c.clone() }),
            ("max_key_size", LsmConfig { max_key_size: 0, ..c.clone() }),
            ("gc_threshold_pages", LsmConfig { gc_threshold_pages: c.media.geometry.total_pages(), ..c.clone() }),
        ] {
            let e = bad.validate().unwrap_err();
            assert!(matches!(e, KvError::InvalidConfig { field: f, .. } if f == field), "{field}: {e}");
        }
    }
}

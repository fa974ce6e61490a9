//! `KvftlConfig`: the NAND array under a KVFTL device and KVFTL's own parameters.
//!
//! Defaults (paper = seed 004; ours = the paper is silent):
//! - `min_p` = 0, `max_p` = 20: partitions of 2^0 to 2^20 bytes (paper; 2^20 = 1 MiB, the Kinetic
//!   maximum value). The largest value accepted is 2^max_p bytes: Alg. 1 starts cutting at
//!   2^MaxPartitionPower, "the maximal value size".
//! - `variant` = [`Variant::Pure`] (KVFTL); the paper's evaluated variants are [`Variant::SP`]
//!   (2^12), [`Variant::NP`] (3) and [`Variant::WS`] (2^11).
//! - `ram_budget` = `None`: every mapping table in RAM, no mapping I/O (paper, Figs 8-13). With
//!   `Some(bytes)`, the PartitionPtrTables (the "dynamic part") are cached in `bytes` of RAM,
//!   [`PTR_ENTRY_BYTES`] per entry (ours: pre and next, 4-byte pointers as in the paper's
//!   KVHeadTable; pid is the entry's position); the KVHeadTable is the "static part", always in RAM
//!   (paper, §V-B4), and the page buffers are not part of the budget (ours).
//! - `gc_threshold_blocks`: GC runs while fewer blocks than this are free (paper: "a predefined
//!   threshold", no value). Ours: 1 % of the blocks, and at least two per partition size plus
//!   the GC reserve, so that a put never waits for more than one collection round.
//! - `max_key_size` = 255 bytes (ours; keys only live in the device's key dictionary).
//! - `buffer_reads` = true: a get of a partition still in a page buffer reads it from the buffer,
//!   with no flash read (the paper: the buffers collect partitions until the page is full; reading
//!   them from RAM is ours, as the paper does not say). false is an experiment, not a reading:
//!   each such partition is charged a page read (`Cause::HOST`, counted as a page read) as if it
//!   were on flash, and its bytes still come from the buffer.

use flashsim::{DataMode, MediaConfig, Preset};

use super::partition::{Partitioner, Variant};
use crate::error::{KvError, Result};

/// Bytes of one PartitionPtrTable entry in RAM and in a table page (ours: pre + next, 4 B each).
pub const PTR_ENTRY_BYTES: u64 = 8;

/// Bytes of one KVHeadTable entry (paper, Table II: a 16-bit key identifier and a 4-byte pointer).
pub const HEAD_ENTRY_BYTES: u64 = 6;

/// Erased blocks that host writes leave to GC (its running block and a mapping block).
pub const GC_RESERVE_BLOCKS: usize = 2;

/// Largest partition exponent accepted (partitions of 1 GiB).
pub const MAX_P_LIMIT: u8 = 30;

/// Everything that defines a KVFTL device.
#[derive(Clone, Debug)]
pub struct KvftlConfig {
    pub media: MediaConfig,
    /// Largest key in bytes.
    pub max_key_size: usize,
    /// Smallest partition: 2^min_p bytes.
    pub min_p: u8,
    /// Largest partition, and largest value: 2^max_p bytes.
    pub max_p: u8,
    /// The value partitioner's rule: KVFTL or one of its revised variants.
    pub variant: Variant,
    /// GC runs while fewer blocks than this are erased and unused.
    pub gc_threshold_blocks: u32,
    /// RAM for cached PartitionPtrTable entries, in bytes; `None` = all tables in RAM.
    pub ram_budget: Option<u64>,
    /// Gets read partitions still in a page buffer from the buffer (false: each costs a page read).
    pub buffer_reads: bool,
}

impl KvftlConfig {
    /// KVFTL (pure) on `media` with the paper's partition range and our other defaults.
    pub fn new(media: MediaConfig) -> KvftlConfig {
        let (min_p, max_p) = (0, 20);
        let gc_threshold_blocks = default_gc_threshold(media.geometry.total_blocks(), min_p, max_p);
        KvftlConfig {
            media,
            max_key_size: 255,
            min_p,
            max_p,
            variant: Variant::Pure,
            gc_threshold_blocks,
            ram_budget: None,
            buffer_reads: true,
        }
    }

    /// The seed's device (the `kvftl` preset: one chip of 16 KiB pages, 256 pages per block, 64
    /// GiB), resized to `capacity` bytes of raw NAND when given, page contents in memory.
    pub fn preset(capacity: Option<u64>) -> Result<KvftlConfig> {
        let geometry = match capacity {
            Some(c) => Preset::Kvftl.geometry_with_capacity(c)?,
            None => Preset::Kvftl.geometry(),
        };
        Ok(KvftlConfig::new(MediaConfig::new(geometry, Preset::Kvftl.timing())))
    }

    /// This configuration with `variant`.
    pub fn with_variant(mut self, variant: Variant) -> KvftlConfig {
        self.variant = variant;
        self
    }

    /// Largest value accepted: 2^max_p bytes.
    pub fn max_value_size(&self) -> usize {
        1usize << self.max_p.min(MAX_P_LIMIT)
    }

    /// Partition sizes the device offers (max_p - min_p + 1).
    pub fn sizes(&self) -> usize {
        (self.max_p.saturating_sub(self.min_p)) as usize + 1
    }

    pub(crate) fn partitioner(&self) -> Partitioner {
        Partitioner::new(self.min_p, self.max_p, self.variant)
    }

    /// Checks every parameter; the error names the field and what is accepted.
    pub fn validate(&self) -> Result<()> {
        crate::error::media_config(&self.media)?;
        let invalid = |field, reason: String| Err(KvError::InvalidConfig { field, reason });
        if self.media.store == DataMode::MetadataOnly {
            return invalid(
                "media.store",
                "KVFTL returns values from its flash pages; metadata-only mode keeps none".into(),
            );
        }
        if self.max_key_size == 0 || self.max_key_size > u16::MAX as usize {
            return invalid("max_key_size", format!("{} is outside 1..={}", self.max_key_size, u16::MAX));
        }
        let g = &self.media.geometry;
        let block_bytes = g.pages_per_block as u64 * g.page_size as u64;
        if self.max_p > MAX_P_LIMIT {
            return invalid("max_p", format!("{} is outside 0..={MAX_P_LIMIT}", self.max_p));
        }
        if self.min_p > self.max_p {
            return invalid(
                "min_p",
                format!("the partition range 2^{}..2^{} is empty: min_p must be at most max_p", self.min_p, self.max_p),
            );
        }
        if (1u64 << self.max_p) > block_bytes {
            return invalid(
                "max_p",
                format!(
                    "a partition of 2^{} bytes does not fit a block of {block_bytes} bytes: max_p must be at most {}",
                    self.max_p,
                    block_bytes.trailing_zeros()
                ),
            );
        }
        match self.variant {
            Variant::Pure => {}
            Variant::SmallestPartition { min_p } => {
                if min_p < self.min_p || min_p > self.max_p {
                    return invalid(
                        "variant.min_p",
                        format!(
                            "SP's smallest partition 2^{min_p} is outside the range 2^{}..2^{}",
                            self.min_p, self.max_p
                        ),
                    );
                }
            }
            Variant::MaxPartitions { n } => {
                if n == 0 || n as usize > self.sizes() {
                    return invalid(
                        "variant.n",
                        format!(
                            "NP's maximum of {n} partitions is outside 1..={} (one per partition size)",
                            self.sizes()
                        ),
                    );
                }
            }
            Variant::MaxWaste { bytes } => {
                if bytes == 0 || bytes > 1 << self.max_p {
                    return invalid(
                        "variant.bytes",
                        format!("WS's maximum waste of {bytes} bytes is outside 1..=2^{}", self.max_p),
                    );
                }
            }
        }
        if self.gc_threshold_blocks as usize <= GC_RESERVE_BLOCKS {
            return invalid(
                "gc_threshold_blocks",
                format!(
                    "{} leaves GC no room beyond its reserve of {GC_RESERVE_BLOCKS} blocks",
                    self.gc_threshold_blocks
                ),
            );
        }
        // Two running blocks per size (new data and GC data), a mapping block, and the threshold.
        let needed = self.gc_threshold_blocks as u64 + 2 * self.sizes() as u64 + 1;
        if needed > g.total_blocks() {
            return invalid(
                "gc_threshold_blocks",
                format!(
                    "{} free blocks, two running blocks for each of the {} partition sizes and a mapping block \
                     need {needed} blocks; the device has {}",
                    self.gc_threshold_blocks,
                    self.sizes(),
                    g.total_blocks()
                ),
            );
        }
        if let Some(budget) = self.ram_budget {
            if budget < PTR_ENTRY_BYTES {
                return invalid(
                    "ram_budget",
                    format!("{budget} bytes hold no {PTR_ENTRY_BYTES}-byte table entry (None = unlimited)"),
                );
            }
        }
        Ok(())
    }
}

/// Our default GC threshold: 1 % of the blocks, at least two per partition size plus the reserve.
pub fn default_gc_threshold(total_blocks: u64, min_p: u8, max_p: u8) -> u32 {
    let sizes = max_p.saturating_sub(min_p) as u64 + 1;
    (total_blocks / 100).max(2 * sizes + GC_RESERVE_BLOCKS as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_is_valid_and_bad_fields_are_named() {
        let c = KvftlConfig::preset(None).unwrap();
        c.validate().unwrap();
        assert_eq!(c.max_value_size(), 1 << 20);
        assert_eq!(c.gc_threshold_blocks, 163);
        let named = |c: &KvftlConfig, field: &str| {
            let e = c.validate().unwrap_err();
            assert!(matches!(e, KvError::InvalidConfig { .. }) && e.to_string().contains(field), "{e}");
        };
        let mut bad = c.clone();
        bad.min_p = 21;
        named(&bad, "min_p");
        let mut bad = c.clone();
        bad.max_p = 31;
        named(&bad, "max_p");
        let mut bad = c.clone();
        bad.max_p = 23; // 8 MiB partitions in 4 MiB blocks
        named(&bad, "max_p");
        named(&c.clone().with_variant(Variant::SmallestPartition { min_p: 21 }), "variant.min_p");
        named(&c.clone().with_variant(Variant::MaxPartitions { n: 0 }), "variant.n");
        named(&c.clone().with_variant(Variant::MaxWaste { bytes: 0 }), "variant.bytes");
        let mut bad = c.clone();
        bad.gc_threshold_blocks = 2;
        named(&bad, "gc_threshold_blocks");
        let mut bad = c.clone();
        bad.ram_budget = Some(4);
        named(&bad, "ram_budget");
        let mut bad = c.clone();
        bad.media.store = DataMode::MetadataOnly;
        named(&bad, "media.store");
        let mut bad = c;
        bad.media.geometry.page_size = 3000;
        named(&bad, "page_size");
    }
}

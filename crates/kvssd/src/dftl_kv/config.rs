//! `DftlKvConfig`: the NAND array under a DFTL-KV device and its own parameters.
//!
//! Defaults (paper = seed 004; ours = the paper is silent):
//! - `max_value_size` = 1 MiB (paper: the Kinetic maximum, as KVFTL's 2^20).
//! - `ram_budget` = `None`: the whole page map in RAM, no translation I/O (paper, Figs 8-13). With
//!   `Some(bytes)`, the cached mapping table (CMT) holds what `cache` says in `bytes`; KGTD and GTD
//!   are the "static part", always in RAM, outside the budget.
//! - `cache` = [`DftlCache::Entries`] (the seed's reading: "each entry of CMT is modified to include
//!   the fields of value size and key identifier"): `bytes / CMT_ENTRY_BYTES` single entries, least
//!   recently used out, a dirty one written back by a read-modify-write of its translation page
//!   together with every cached dirty entry of that page (DFTL's batch update; `cmt.rs`).
//!   [`DftlCache::Pages`] is issue 28's reading: `bytes / page` whole translation pages (LRU,
//!   dirty write-back; flashsim's `MappingCache` keyed by page), at least one.
//! - `gtd_entries` = `Some(PAPER_GTD_ENTRIES)` (paper, Table II: a GTD of 832 B, 208 entries of
//!   4 B; "about 1 KB" in the text): the logical space is spread evenly over that many translation
//!   pages, `ceil(LPAs / 208)` entries each (1,261 on the repro's 4 GiB device, 12.6 KB of a 16 KiB
//!   page: what full pages of 13-byte entries would give), or over more where full pages need more
//!   (a device above 208 x 1,638 pages, 5.2 GiB at 16 KiB). The paper's device size is not stated;
//!   its GTD is. On a device far smaller than the paper's, 208 translation pages are mostly empty
//!   and take room from the values (set fewer, or `None`). `None` fills every translation page (`page / TRANSLATION_ENTRY_BYTES` entries,
//!   1,638; issue 28's layout, and a GTD that counts only the translation pages holding a live
//!   entry).
//! - `lpa_allocation` = [`LpaAllocation::Sequential`] (ours: the paper does not say how its DFTL
//!   picks a value's LPAs): fresh LPAs per put after the last ones taken, over the whole logical
//!   space, as a page-mapped FTL writes its log; [`LpaAllocation::LowestFree`] is the alternative
//!   (and DFTL-KV's reading before issue 28).
//! - Entry sizes (ours; the paper gives only the KGTD's 26 B): a translation-page entry holds the
//!   PPN, the value size and the key identifier (4 + 4 + 2 = [`TRANSLATION_ENTRY_BYTES`]); a GTD
//!   entry is a PPN ([`GTD_ENTRY_BYTES`]).
//! - `gc_threshold_blocks`: GC runs while fewer free pages than this many blocks' worth are left
//!   (the same default as KVFTL's: 1 % of the blocks, and at least one per plane more than the
//!   reserve). Victims: greedy (most invalid pages), DFTL's default, as the reference file reads.
//! - `copyback` = false: GC moves pages by reading and programming them (ours, as KVFTL's GC).
//! - `max_key_size` = 255 bytes.

use flashsim::{DataMode, MediaConfig, Preset};

use crate::error::{media_config, KvError, Result};
use crate::flash::space::RESERVE_BLOCKS;

/// Bytes of one entry of a translation page on flash: PPN, value size, key id.
pub const TRANSLATION_ENTRY_BYTES: u64 = 10;
/// Bytes of one KGTD entry (paper, Table II): key id and the bitmap of its translation pages.
pub const KGTD_ENTRY_BYTES: u64 = 26;
/// Bytes of one GTD entry: the PPN of a translation page.
pub const GTD_ENTRY_BYTES: u64 = 4;
/// Bytes of one entry of the CMT of single entries: the LPA it caches, the PPN, the value size and
/// the key id (4 + 4 + 4 + 2; ours: the paper names the fields, not their widths).
pub const CMT_ENTRY_BYTES: u64 = 14;
/// The GTD's entries in the paper's evaluation: Table II's 832 B of GTD over 4-byte entries. (Its
/// 26-byte KGTD entry is a bitmap of 208 bits, one per GTD entry, with the key id as the entry's
/// index: the two numbers agree; our inference.)
pub const PAPER_GTD_ENTRIES: u32 = 208;

/// What DFTL-KV's cached mapping table (CMT) holds under a RAM budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DftlCache {
    /// Single map entries (PPN, value size and key id, tagged by their LPA), least recently used
    /// out; a dirty one is written back by a read-modify-write of its translation page, which
    /// cleans every cached dirty entry of that page (DFTL's batch update). The seed's reading.
    #[default]
    Entries,
    /// Whole translation pages, least recently used out, a dirty one programmed whole (issue 28's
    /// reading).
    Pages,
}

impl DftlCache {
    pub const NAMES: [&'static str; 2] = ["entries", "pages"];

    pub fn name(self) -> &'static str {
        match self {
            DftlCache::Entries => "entries",
            DftlCache::Pages => "pages",
        }
    }

    pub fn from_name(name: &str) -> Option<DftlCache> {
        match name {
            "entries" => Some(DftlCache::Entries),
            "pages" => Some(DftlCache::Pages),
            _ => None,
        }
    }
}

/// How a put picks the logical pages (LPAs) of its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LpaAllocation {
    /// The next free LPAs after the last ones taken, wrapping around the logical space (ours, the
    /// default): every put takes fresh LPAs, the old value's are freed, and the live LPAs spread
    /// over the space.
    #[default]
    Sequential,
    /// The lowest free LPAs: the live LPAs stay packed at the bottom of the space.
    LowestFree,
}

/// Everything that defines a DFTL-KV device.
#[derive(Clone, Debug)]
pub struct DftlKvConfig {
    pub media: MediaConfig,
    /// Largest key in bytes.
    pub max_key_size: usize,
    /// Largest value in bytes.
    pub max_value_size: usize,
    /// GC runs while fewer than this many blocks' worth of pages are free.
    pub gc_threshold_blocks: u32,
    /// RAM for the cached mapping table, in bytes (a whole number of entries or pages is used);
    /// `None` = the whole map in RAM.
    pub ram_budget: Option<u64>,
    /// What the cached mapping table holds.
    pub cache: DftlCache,
    /// Translation pages the logical space is spread over (the GTD's entries); `None`: as many as
    /// full translation pages need.
    pub gtd_entries: Option<u32>,
    /// How a put picks its LPAs.
    pub lpa_allocation: LpaAllocation,
    /// GC moves pages by copyback inside their plane.
    pub copyback: bool,
}

impl DftlKvConfig {
    /// DFTL-KV on `media` with our defaults.
    pub fn new(media: MediaConfig) -> DftlKvConfig {
        let g = &media.geometry;
        let gc_threshold_blocks =
            (g.total_blocks() / 100).max(g.total_planes() as u64 * (RESERVE_BLOCKS as u64 + 1) + 1) as u32;
        DftlKvConfig {
            media,
            max_key_size: 255,
            max_value_size: 1 << 20,
            gc_threshold_blocks,
            ram_budget: None,
            cache: DftlCache::Entries,
            gtd_entries: Some(PAPER_GTD_ENTRIES),
            lpa_allocation: LpaAllocation::Sequential,
            copyback: false,
        }
    }

    /// The seed's device (the `kvftl` preset), resized to `capacity` bytes when given.
    pub fn preset(capacity: Option<u64>) -> Result<DftlKvConfig> {
        let geometry = match capacity {
            Some(c) => Preset::Kvftl.geometry_with_capacity(c)?,
            None => Preset::Kvftl.geometry(),
        };
        Ok(DftlKvConfig::new(MediaConfig::new(geometry, Preset::Kvftl.timing())))
    }

    /// Logical pages (LPAs) for values: one per physical page (the flash fills first).
    pub fn lpas(&self) -> u64 {
        self.media.geometry.total_pages()
    }

    /// Entries a translation page can hold.
    pub fn translation_page_capacity(&self) -> u64 {
        (self.media.geometry.page_size as u64 / TRANSLATION_ENTRY_BYTES).max(1)
    }

    /// Translation-page entries per page: the LPAs spread over the GTD's entries (or over more
    /// translation pages where full ones need more), or a full page.
    pub fn entries_per_translation_page(&self) -> u64 {
        let full = self.translation_page_capacity();
        match self.gtd_entries {
            Some(n) => {
                let pages = (n.max(1) as u64).max(self.lpas().div_ceil(full));
                self.lpas().div_ceil(pages).max(1)
            }
            None => full,
        }
    }

    /// Translation pages the CMT holds under the RAM budget (`None` without one, or when it caches
    /// entries).
    pub fn cached_translation_pages(&self) -> Option<u64> {
        match self.cache {
            DftlCache::Pages => self.ram_budget.map(|b| b / self.media.geometry.page_size as u64),
            DftlCache::Entries => None,
        }
    }

    /// Map entries the CMT holds under the RAM budget (`None` without one, or when it caches
    /// whole pages).
    pub fn cached_entries(&self) -> Option<u64> {
        match self.cache {
            DftlCache::Entries => self.ram_budget.map(|b| b / CMT_ENTRY_BYTES),
            DftlCache::Pages => None,
        }
    }

    /// Translation pages covering every LPA.
    pub fn translation_pages(&self) -> u64 {
        self.lpas().div_ceil(self.entries_per_translation_page())
    }

    /// Checks every parameter; the error names the field and what is accepted.
    pub fn validate(&self) -> Result<()> {
        media_config(&self.media)?;
        let invalid = |field, reason: String| Err(KvError::InvalidConfig { field, reason });
        if self.media.store == DataMode::MetadataOnly {
            return invalid(
                "media.store",
                "DFTL-KV returns values from its flash pages; metadata-only mode keeps none".into(),
            );
        }
        if self.max_key_size == 0 || self.max_key_size > u16::MAX as usize {
            return invalid("max_key_size", format!("{} is outside 1..={}", self.max_key_size, u16::MAX));
        }
        if self.max_value_size == 0 || self.max_value_size > 1 << 30 {
            return invalid("max_value_size", format!("{} is outside 1..=2^30", self.max_value_size));
        }
        if self.lpas() + self.translation_pages() >= u32::MAX as u64 {
            return invalid("media.geometry", "too many pages for 32-bit logical page numbers".into());
        }
        let g = &self.media.geometry;
        let reserve = g.total_planes() as u64 * RESERVE_BLOCKS as u64;
        let threshold = self.gc_threshold_blocks as u64;
        if threshold <= reserve || threshold * 2 > g.total_blocks() {
            return invalid(
                "gc_threshold_blocks",
                format!(
                    "{threshold} is outside {}..={} (more than the GC reserve of one block per plane, at most half \
                     the device)",
                    reserve + 1,
                    g.total_blocks() / 2
                ),
            );
        }
        if self.gtd_entries == Some(0) {
            return invalid("gtd_entries", "0 translation pages map nothing: at least 1 (None = full pages)".into());
        }
        match (self.ram_budget, self.cache) {
            (Some(budget), DftlCache::Pages) if budget < g.page_size as u64 => invalid(
                "ram_budget",
                format!(
                    "{budget} bytes hold no translation page of {} bytes (the CMT caches whole pages; None = \
                     unlimited)",
                    g.page_size
                ),
            ),
            (Some(budget), DftlCache::Entries) if budget < CMT_ENTRY_BYTES => invalid(
                "ram_budget",
                format!("{budget} bytes hold no {CMT_ENTRY_BYTES}-byte CMT entry (None = unlimited)"),
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preset_is_valid_and_bad_fields_are_named() {
        let c = DftlKvConfig::preset(Some(4 << 30)).unwrap();
        c.validate().unwrap();
        assert_eq!((c.gc_threshold_blocks, c.entries_per_translation_page()), (10, 1261));
        assert_eq!((c.translation_pages(), c.translation_page_capacity()), (208, 1638));
        let full = DftlKvConfig { gtd_entries: None, ..c.clone() };
        assert_eq!((full.entries_per_translation_page(), full.translation_pages()), (1638, 161));
        let named = |c: &DftlKvConfig, field: &str| {
            let e = c.validate().unwrap_err();
            assert!(matches!(e, KvError::InvalidConfig { .. }) && e.to_string().contains(field), "{e}");
        };
        let mut bad = c.clone();
        bad.max_value_size = 0;
        named(&bad, "max_value_size");
        let mut bad = c.clone();
        bad.gc_threshold_blocks = 1;
        named(&bad, "gc_threshold_blocks");
        let mut bad = c.clone();
        bad.ram_budget = Some(13);
        named(&bad, "ram_budget");
        bad.ram_budget = Some(16383);
        assert_eq!(
            (bad.validate().is_ok(), bad.cached_entries(), bad.cached_translation_pages()),
            (true, Some(1170), None)
        );
        bad.cache = DftlCache::Pages;
        named(&bad, "ram_budget");
        bad.ram_budget = Some(3 * 16384 + 1);
        assert_eq!((bad.validate().is_ok(), bad.cached_translation_pages()), (true, Some(3)));
        let mut bad = c.clone();
        bad.gtd_entries = Some(0);
        named(&bad, "gtd_entries");
        // 64 GiB: 208 translation pages cannot map 4 Mi LPAs, full pages are used.
        let big = DftlKvConfig::preset(None).unwrap();
        assert_eq!((big.entries_per_translation_page(), big.translation_pages()), (1638, 2561));
        assert_eq!(big.gc_threshold_blocks, 163);
        let mut bad = c;
        bad.media.geometry.page_size = 3000;
        named(&bad, "page_size");
    }
}

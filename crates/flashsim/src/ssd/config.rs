//! Configuration of a block-interface SSD: its NAND array, over-provisioning, GC and mapping.

use serde::Serialize;

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::media::MediaConfig;
use crate::preset::Preset;
use crate::timing::Timing;

/// How GC picks its victim block inside a plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Fewest valid pages.
    Greedy,
    /// Highest age x (1 - u) / 2u (Rosenblum & Ousterhout), age = programs since the block closed.
    CostBenefit,
    /// Oldest closed block first.
    Fifo,
}

impl GcPolicy {
    pub const NAMES: [&'static str; 3] = ["greedy", "cost-benefit", "fifo"];

    pub fn parse(s: &str) -> Result<GcPolicy> {
        match s {
            "greedy" => Ok(GcPolicy::Greedy),
            "cost-benefit" => Ok(GcPolicy::CostBenefit),
            "fifo" => Ok(GcPolicy::Fifo),
            other => Err(FlashError::InvalidConfig {
                field: "gc",
                reason: format!("unknown GC policy '{other}'; accepted: {}", GcPolicy::NAMES.join(", ")),
            }),
        }
    }
}

/// Where the logical-to-physical map lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MappingMode {
    /// The whole page map in controller DRAM.
    PageMapped,
    /// DFTL (Gupta et al., ASPLOS'09): a cached mapping table (CMT) of `cmt_entries` entries; the
    /// rest of the map lives in translation pages on flash, read on a miss and rewritten when a
    /// dirty entry is evicted.
    Dftl { cmt_entries: u32 },
}

/// Everything that defines a simulated block SSD.
#[derive(Clone, Debug)]
pub struct SsdConfig {
    /// The NAND array: geometry, timing, multi-plane commands, where page contents live.
    pub media: MediaConfig,
    /// S_f = 1 - user pages / physical pages.
    pub spare_factor: f64,
    pub gc_policy: GcPolicy,
    /// Free blocks kept for GC over the whole device (not per plane): host writes never take the
    /// last ones, so that a relocation always finds room (see `space`).
    pub gc_reserve_blocks: u32,
    /// Relocate GC pages with copyback (no channel transfer) when they stay in their plane.
    pub copyback: bool,
    pub mapping: MappingMode,
    /// Entries per NVRAM segment of the remap log (segments are allocated whole, per block).
    pub remap_segment_entries: u32,
}

impl SsdConfig {
    /// A preset's device at `capacity` raw bytes (or the preset's own size), with defaults for the rest.
    pub fn from_preset(preset: Preset, capacity: Option<u64>) -> Result<SsdConfig> {
        let geometry = match capacity {
            Some(c) => preset.geometry_with_capacity(c)?,
            None => preset.geometry(),
        };
        Ok(SsdConfig::new(geometry, preset.timing()))
    }

    /// Defaults: 7 % spare, greedy GC, one block of GC reserve for the device, copyback and
    /// multi-plane on, data in memory, page-mapped.
    pub fn new(geometry: Geometry, timing: Timing) -> SsdConfig {
        SsdConfig {
            media: MediaConfig::new(geometry, timing),
            spare_factor: 0.07,
            gc_policy: GcPolicy::Greedy,
            gc_reserve_blocks: 1,
            copyback: true,
            mapping: MappingMode::PageMapped,
            remap_segment_entries: 32,
        }
    }

    pub fn geometry(&self) -> &Geometry {
        &self.media.geometry
    }

    /// Pages the host can address, before any internal (translation) pages.
    pub fn user_pages(&self) -> u64 {
        ((self.geometry().total_pages() as f64) * (1.0 - self.spare_factor)).floor() as u64
    }

    pub fn user_bytes(&self) -> u64 {
        self.user_pages() * self.geometry().page_size as u64
    }

    /// Translation pages DFTL needs for the whole map (4-byte entries).
    pub fn translation_pages(&self) -> u64 {
        match self.mapping {
            MappingMode::PageMapped => 0,
            MappingMode::Dftl { .. } => self.user_pages().div_ceil(self.entries_per_translation_page()),
        }
    }

    pub fn entries_per_translation_page(&self) -> u64 {
        self.geometry().page_size as u64 / 4
    }

    /// Pages that hold no data in steady state by the FTL's own design: the GC reserve, and on
    /// average half of each plane's open write frontier (see `space`; under uniform overwrites the
    /// measured mean, `BlockSsd::measured_spare_factor`, agrees to the third decimal).
    pub fn idle_pages(&self) -> f64 {
        let g = self.geometry();
        (self.gc_reserve_blocks as f64 + g.total_planes() as f64 / 2.0) * g.pages_per_block as f64
    }

    /// The spare factor GC actually works with: 1 - (user + translation pages) / (physical pages
    /// that can hold data), the idle pages of [`SsdConfig::idle_pages`] taken out.
    pub fn effective_spare_factor(&self) -> f64 {
        let held = (self.user_pages() + self.translation_pages()) as f64;
        1.0 - held / (self.geometry().total_pages() as f64 - self.idle_pages())
    }

    pub fn validate(&self) -> Result<()> {
        self.media.validate()?;
        let invalid = |field, reason: String| Err(FlashError::InvalidConfig { field, reason });
        if !(0.0..1.0).contains(&self.spare_factor) {
            return invalid("spare_factor", format!("{} is not in [0, 1)", self.spare_factor));
        }
        if self.gc_reserve_blocks == 0 {
            return invalid("gc_reserve_blocks", "GC needs at least one reserved free block".into());
        }
        if self.remap_segment_entries == 0 {
            return invalid("remap_segment_entries", "must be at least 1".into());
        }
        if let MappingMode::Dftl { cmt_entries } = self.mapping {
            if cmt_entries == 0 {
                return invalid("cmt_entries", "the DFTL mapping cache needs at least one entry".into());
            }
        }
        // GC must always find a block with an invalid page: the spare area has to exceed what the
        // write frontiers (one per plane) and the reserved blocks can hold, by a block.
        let g = self.geometry();
        let needed = (g.total_planes() as u64 + self.gc_reserve_blocks as u64 + 1) * g.pages_per_block as u64;
        let spare = g.total_pages().saturating_sub(self.user_pages() + self.translation_pages());
        if spare < needed {
            let min_sf = needed as f64 / g.total_pages() as f64;
            return invalid(
                "spare_factor",
                format!(
                    "{} leaves {spare} spare pages; this geometry needs at least {needed} (spare factor >= {min_sf:.4}) for write frontiers and GC reserve",
                    self.spare_factor
                ),
            );
        }
        Ok(())
    }
}

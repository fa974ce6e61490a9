//! Configuration of a block-interface SSD: geometry, timing, over-provisioning, GC and mapping.

use serde::Serialize;

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::preset::Preset;
use crate::store::DataMode;
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
    pub geometry: Geometry,
    pub timing: Timing,
    /// S_f = 1 - user pages / physical pages.
    pub spare_factor: f64,
    pub gc_policy: GcPolicy,
    /// Free blocks per plane kept for GC; host writes wait for foreground GC below this.
    pub gc_reserve_blocks: u32,
    /// Background GC runs (one victim after a host write) while a plane has fewer free blocks than
    /// this. Set it to `gc_reserve_blocks` to disable background GC.
    pub gc_background_blocks: u32,
    /// Relocate GC pages with copyback (no channel transfer) where possible.
    pub copyback: bool,
    /// Group pages on distinct planes of one die into multi-plane commands.
    pub multi_plane: bool,
    pub data: DataMode,
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

    /// Defaults: 7 % spare, greedy GC, 2 reserved blocks per plane, background GC from 3 free blocks,
    /// copyback and multi-plane on, data in memory, page-mapped.
    pub fn new(geometry: Geometry, timing: Timing) -> SsdConfig {
        let multi_plane = geometry.planes_per_die > 1;
        SsdConfig {
            geometry,
            timing,
            spare_factor: 0.07,
            gc_policy: GcPolicy::Greedy,
            gc_reserve_blocks: 2,
            gc_background_blocks: 3,
            copyback: true,
            multi_plane,
            data: DataMode::Memory,
            mapping: MappingMode::PageMapped,
            remap_segment_entries: 32,
        }
    }

    /// Pages the host can address, before any internal (translation) pages.
    pub fn user_pages(&self) -> u64 {
        ((self.geometry.total_pages() as f64) * (1.0 - self.spare_factor)).floor() as u64
    }

    pub fn user_bytes(&self) -> u64 {
        self.user_pages() * self.geometry.page_size as u64
    }

    /// Translation pages DFTL needs for the whole map (4-byte entries).
    pub fn translation_pages(&self) -> u64 {
        match self.mapping {
            MappingMode::PageMapped => 0,
            MappingMode::Dftl { .. } => self.user_pages().div_ceil(self.entries_per_translation_page()),
        }
    }

    pub fn entries_per_translation_page(&self) -> u64 {
        self.geometry.page_size as u64 / 4
    }

    pub fn validate(&self) -> Result<()> {
        self.geometry.validate()?;
        self.timing.validate()?;
        let invalid = |field, reason: String| Err(FlashError::InvalidConfig { field, reason });
        if !(0.0..1.0).contains(&self.spare_factor) {
            return invalid("spare_factor", format!("{} is not in [0, 1)", self.spare_factor));
        }
        if self.gc_reserve_blocks == 0 {
            return invalid("gc_reserve_blocks", "GC needs at least one reserved free block per plane".into());
        }
        if self.gc_background_blocks < self.gc_reserve_blocks {
            return invalid(
                "gc_background_blocks",
                format!("{} is below gc_reserve_blocks {}", self.gc_background_blocks, self.gc_reserve_blocks),
            );
        }
        if self.gc_background_blocks + 2 > self.geometry.blocks_per_plane {
            return invalid(
                "gc_background_blocks",
                format!(
                    "{} leaves no blocks to write in a plane of {}",
                    self.gc_background_blocks, self.geometry.blocks_per_plane
                ),
            );
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
        // write frontiers and reserved blocks of every plane can hold.
        let g = &self.geometry;
        let needed = g.total_planes() as u64 * (self.gc_reserve_blocks as u64 + 2) * g.pages_per_block as u64;
        let spare = g.total_pages() - self.user_pages() - self.translation_pages();
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

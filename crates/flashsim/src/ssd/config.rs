//! Configuration of a block-interface SSD: its NAND array, over-provisioning, GC and mapping.

use serde::Serialize;

use std::sync::Arc;

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::media::MediaConfig;
use crate::ssd::victim::{CostBenefit, VictimPolicy};
use crate::timing::Timing;

/// How GC picks its victim block inside a plane.
#[derive(Clone, Debug)]
pub enum GcPolicy {
    /// Fewest valid pages.
    Greedy,
    /// Oldest closed block first.
    Fifo,
    /// The highest score of a [`VictimPolicy`]: cost-benefit ([`GcPolicy::cost_benefit`]), or a
    /// policy of one's own.
    Scored(Arc<dyn VictimPolicy>),
}

impl GcPolicy {
    /// The built-in policies' names.
    pub const NAMES: [&'static str; 3] = ["greedy", "cost-benefit", "fifo"];

    /// Highest age x (1 - u) / 2u (Rosenblum & Ousterhout), age = programs since the block closed.
    pub fn cost_benefit() -> GcPolicy {
        GcPolicy::Scored(Arc::new(CostBenefit))
    }

    pub fn parse(s: &str) -> Result<GcPolicy> {
        match s {
            "greedy" => Ok(GcPolicy::Greedy),
            "cost-benefit" => Ok(GcPolicy::cost_benefit()),
            "fifo" => Ok(GcPolicy::Fifo),
            other => Err(FlashError::InvalidConfig {
                field: "gc",
                reason: format!("unknown GC policy '{other}'; accepted: {}", GcPolicy::NAMES.join(", ")),
            }),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::Fifo => "fifo",
            GcPolicy::Scored(p) => p.name(),
        }
    }
}

/// Policies are the same when their names are.
impl PartialEq for GcPolicy {
    fn eq(&self, other: &GcPolicy) -> bool {
        self.name() == other.name()
    }
}

impl Serialize for GcPolicy {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// Where GC puts the valid pages of a victim (see `space`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcDestination {
    /// The frontiers of the other planes in turn, over the channels, as a superblock FTL's GC
    /// writes through its one write pointer (FEMU's). A plane is collected when its frontier is
    /// full, so its own frontier has no room: copyback never happens.
    Spread,
    /// The victim's own plane: a plane that will need GC for its next block is collected while its
    /// frontier still has room for the victim's valid pages, which move there by copyback (when
    /// `copyback` is on; else read out and programmed over the channel). SSDSim's GC, which seed
    /// 002's tables count in copybacks. Pages that do not fit go to the other planes.
    InPlane,
}

impl GcDestination {
    pub const NAMES: [&'static str; 2] = ["spread", "in-plane"];

    pub fn parse(s: &str) -> Result<GcDestination> {
        match s {
            "spread" => Ok(GcDestination::Spread),
            "in-plane" => Ok(GcDestination::InPlane),
            other => Err(FlashError::InvalidConfig {
                field: "gc_destination",
                reason: format!("unknown GC destination '{other}'; accepted: {}", GcDestination::NAMES.join(", ")),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            GcDestination::Spread => "spread",
            GcDestination::InPlane => "in-plane",
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
    /// Where GC relocates a victim's valid pages.
    pub gc_destination: GcDestination,
    /// Relocate GC pages with copyback (no channel transfer) when they stay in their plane (which
    /// they do under [`GcDestination::InPlane`]).
    pub copyback: bool,
    pub mapping: MappingMode,
    /// Entries per NVRAM segment of the remap log (segments are allocated whole, per block).
    pub remap_segment_entries: u32,
}

impl SsdConfig {
    /// Defaults: 7 % spare, greedy GC spread over the planes, one block of GC reserve for the
    /// device, copyback and multi-plane on, data in memory, page-mapped.
    pub fn new(geometry: Geometry, timing: Timing) -> SsdConfig {
        SsdConfig {
            media: MediaConfig::new(geometry, timing),
            spare_factor: 0.07,
            gc_policy: GcPolicy::Greedy,
            gc_reserve_blocks: 1,
            gc_destination: GcDestination::Spread,
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

    /// Pages that hold no data in steady state by the FTL's own design: the GC reserve, and each
    /// plane's open write frontier: half of it on average when GC spreads, (1 + u) / 2 of it in
    /// plane (its room falls from a block to the victim's valid pages, u of a block, before the
    /// copies fill the rest; see `space`). Under uniform overwrites the measured mean
    /// (`BlockSsd::measured_spare_factor`) agrees to the third decimal when GC spreads.
    pub fn idle_pages(&self) -> f64 {
        let frontier = match self.gc_destination {
            GcDestination::Spread => 0.5,
            GcDestination::InPlane => (1.0 + self.in_plane_victim_utilisation()) / 2.0,
        };
        self.idle_pages_with(frontier)
    }

    fn idle_pages_with(&self, frontier_share: f64) -> f64 {
        let g = self.geometry();
        (self.gc_reserve_blocks as f64 + g.total_planes() as f64 * frontier_share) * g.pages_per_block as f64
    }

    /// Greedy GC's victim utilisation under uniform overwrites with in-plane GC: u = 1 - 1 / WA at
    /// the effective spare factor, which itself depends on u (the idle room u leaves); solved by
    /// iteration from u = 0.
    fn in_plane_victim_utilisation(&self) -> f64 {
        let mut u: f64 = 0.0;
        for _ in 0..64 {
            let sf = self.effective_spare_factor_with(self.idle_pages_with((1.0 + u) / 2.0));
            let next = if sf <= 0.0 { 1.0 } else { 1.0 - 1.0 / crate::theory::greedy_wa_limit(sf) };
            if (next - u).abs() < 1e-9 {
                return next;
            }
            u = next;
        }
        u
    }

    /// The spare factor GC actually works with: 1 - (user + translation pages) / (physical pages
    /// that can hold data), the idle pages of [`SsdConfig::idle_pages`] taken out.
    pub fn effective_spare_factor(&self) -> f64 {
        self.effective_spare_factor_with(self.idle_pages())
    }

    fn effective_spare_factor_with(&self, idle_pages: f64) -> f64 {
        let held = (self.user_pages() + self.translation_pages()) as f64;
        1.0 - held / (self.geometry().total_pages() as f64 - idle_pages)
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

//! Configuration of a zoned (NVMe ZNS) SSD: its NAND array, the zone size and writable capacity,
//! and the limits on open and active zones.
//!
//! `validate` refuses, with a one-line error naming the field, every configuration the device
//! could not honour: a zone that is not a whole number of erase blocks (a reset erases whole
//! blocks), a capacity larger than the zone or not a whole number of pages, a zone whose blocks do
//! not stripe evenly over the planes (see `layout`), an open limit above the active limit, and a
//! zone larger than the device (no zone at all).

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::media::MediaConfig;
use crate::preset::Preset;
use crate::timing::Timing;
use crate::zoned::layout::{bytes, Layout};

/// Everything that defines a simulated ZNS SSD.
#[derive(Clone, Debug)]
pub struct ZonedConfig {
    /// The NAND array: geometry, timing, multi-plane commands, where page contents live.
    pub media: MediaConfig,
    /// Bytes of logical address space per zone (ZSZE); a whole number of erase blocks.
    pub zone_size: u64,
    /// Writable bytes of each zone (ZCAP), at most `zone_size`; a whole number of pages.
    pub zone_capacity: u64,
    /// Most zones in an opened state at once (MOR + 1); `None` = no limit.
    pub max_open_zones: Option<u32>,
    /// Most zones in an opened or closed state at once (MAR + 1); `None` = no limit.
    pub max_active_zones: Option<u32>,
}

impl ZonedConfig {
    /// Zones of `zone_size` bytes with the whole zone writable, no open or active limit, multi-plane
    /// commands where the die has more than one plane, data in memory.
    pub fn new(geometry: Geometry, timing: Timing, zone_size: u64) -> ZonedConfig {
        ZonedConfig {
            media: MediaConfig::new(geometry, timing),
            zone_size,
            zone_capacity: zone_size,
            max_open_zones: None,
            max_active_zones: None,
        }
    }

    /// A preset's device at `capacity` raw bytes (or the preset's own size), with zones of one
    /// erase block in every plane: the widest zone whose sequential write runs on every die at
    /// once (femu: 64 planes x 1 MiB blocks = 64 MiB zones, the zone size of seed 003).
    pub fn from_preset(preset: Preset, capacity: Option<u64>) -> Result<ZonedConfig> {
        let geometry = match capacity {
            Some(c) => preset.geometry_with_capacity(c)?,
            None => preset.geometry(),
        };
        let zone = geometry.total_planes() as u64 * geometry.block_bytes();
        Ok(ZonedConfig::new(geometry, preset.timing(), zone))
    }

    pub fn geometry(&self) -> &Geometry {
        &self.media.geometry
    }

    /// Erase blocks per zone.
    pub fn blocks_per_zone(&self) -> u64 {
        self.zone_size / self.geometry().block_bytes().max(1)
    }

    pub fn validate(&self) -> Result<()> {
        self.media.validate()?;
        let g = self.geometry();
        let invalid = |field, reason: String| Err(FlashError::InvalidConfig { field, reason });
        let block = g.block_bytes();
        let page = g.page_size as u64;
        if self.zone_size == 0 || self.zone_size % block != 0 {
            return invalid(
                "zone_size",
                format!("{} is not a multiple of the {} erase block", bytes(self.zone_size), bytes(block)),
            );
        }
        if self.zone_capacity > self.zone_size {
            return invalid(
                "zone_capacity",
                format!("{} exceeds the zone_size of {}", bytes(self.zone_capacity), bytes(self.zone_size)),
            );
        }
        if self.zone_capacity == 0 || self.zone_capacity % page != 0 {
            return invalid(
                "zone_capacity",
                format!("{} is not a positive multiple of the {} page", bytes(self.zone_capacity), bytes(page)),
            );
        }
        for (field, limit) in [("max_open_zones", self.max_open_zones), ("max_active_zones", self.max_active_zones)] {
            if limit == Some(0) {
                return invalid(field, "must be at least 1 (or unset for no limit)".into());
            }
        }
        if let (Some(open), Some(active)) = (self.max_open_zones, self.max_active_zones) {
            if open > active {
                return invalid(
                    "max_open_zones",
                    format!("{open} exceeds max_active_zones {active} (an open zone is also active)"),
                );
            }
        }
        let zones = Layout::new(g, self.blocks_per_zone())?.num_zones();
        for (field, limit) in [("max_open_zones", self.max_open_zones), ("max_active_zones", self.max_active_zones)] {
            if let Some(l) = limit.filter(|&l| l > zones) {
                return invalid(field, format!("{l} exceeds the device's {zones} zones"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn femu() -> ZonedConfig {
        ZonedConfig::from_preset(Preset::Femu, None).unwrap()
    }

    #[test]
    fn the_femu_preset_gives_the_seeds_64_mib_zones() {
        let c = femu();
        c.validate().unwrap();
        assert_eq!(c.zone_size, 64 << 20);
        assert_eq!(c.blocks_per_zone(), 64);
    }

    #[test]
    fn each_bad_field_is_named_in_one_line() {
        let err = |c: ZonedConfig| c.validate().unwrap_err().to_string();
        let mut c = femu();
        c.zone_size = 21 << 19;
        c.zone_capacity = c.zone_size;
        assert_eq!(
            err(c.clone()),
            "invalid configuration: zone_size: 10.5 MiB is not a multiple of the 1.0 MiB erase block"
        );
        c.zone_size = 64 << 20;
        c.zone_capacity = 65 << 20;
        assert!(err(c.clone()).contains("zone_capacity: 65.0 MiB exceeds"), "{}", err(c.clone()));
        c.zone_capacity = (60 << 20) + 100;
        assert!(err(c.clone()).contains("zone_capacity") && err(c.clone()).contains("4.0 KiB page"));
        c.zone_capacity = 60 << 20;
        c.validate().unwrap();
        c.max_open_zones = Some(14);
        c.max_active_zones = Some(12);
        assert!(err(c.clone()).starts_with("invalid configuration: max_open_zones: 14 exceeds max_active_zones 12"));
        c.max_open_zones = Some(0);
        assert!(err(c.clone()).contains("max_open_zones"));
        // femu's 16 GiB in 64 MiB zones: 256 zones.
        c.max_open_zones = Some(257);
        c.max_active_zones = Some(300);
        assert!(err(c.clone()).contains("max_open_zones: 257 exceeds the device's 256 zones"), "{}", err(c.clone()));
        // 3 blocks cannot stripe over 64 planes; 96 blocks are not a multiple of 64.
        let mut c = femu();
        c.zone_size = 3 << 20;
        c.zone_capacity = c.zone_size;
        assert!(err(c.clone()).contains("zone_size") && err(c.clone()).contains("64 planes"), "{}", err(c.clone()));
        c.zone_size = 96 << 20;
        c.zone_capacity = c.zone_size;
        assert!(err(c.clone()).contains("zone_size"));
        // A zone larger than the device: no zone at all.
        c.zone_size = 32 << 30;
        c.zone_capacity = c.zone_size;
        assert!(err(c).contains("no zone"));
    }

    #[test]
    fn sizes_print_in_a_readable_unit() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(10 << 20), "10.0 MiB");
        assert_eq!(bytes(3 << 30), "3.0 GiB");
    }
}

//! `PlscConfig`: the NAND array under a PLSC device and PLSC's own parameters.
//!
//! The seed leaves every threshold unsaid, so the defaults are ours, as fractions of the raw pages:
//! - `l0_threshold_pages` = 1/8: the paper saw no compaction with about 7 and 14 GB written on its
//!   128 GB device and compaction with about 30 GB; a level-0 limit of 16 GiB is consistent with
//!   both;
//! - `l1_threshold_pages` = 3/8;
//! - `gc_threshold_pages` = 3/10: GC runs while fewer pages than this are free; 0.30 is SSDSim's
//!   default GC threshold, which the paper says it kept (SSDSim applies it per plane; the paper
//!   speaks of the free pages of the flash memory, and so do we);
//! - `gc_scope` = device: the threshold counts the free pages of the whole device (the paper's
//!   words, "the number of remaining free pages in the flash memory"); `plane` counts them per
//!   plane, as SSDSim's code does (a plane below 30 % of its pages free is collected);
//! - `ust_planes` = rotating: a UST's pages go to the planes after the last UST's, so every plane
//!   takes the same share; `aligned` puts page i of every UST on plane i, as the seed aligns an L0
//!   UST's pages to the planes, so the first planes take every small L1 UST's pages;
//! - `max_key_size` = 255 bytes (the seed's groups are "one per key length"; 255 fits KV-SSD keys);
//! - `copyback` = true (SSDSim's advanced commands are on by default; the paper counts GC's page
//!   moves as copybacks).
//!
//! The largest value is what fits in the write buffer (#planes x page size, one L0 UST) beside the
//! record header and the largest key: the seed leaves records larger than the buffer unsaid, and
//! a record must not straddle two USTs. With the `plsc` preset that is 512 KiB - 261 bytes.

use flashsim::{MediaConfig, Preset};

use crate::error::{KvError, Result};
use crate::flash::record;

/// Everything that defines a PLSC device.
#[derive(Clone, Debug)]
pub struct PlscConfig {
    pub media: MediaConfig,
    /// Largest key in bytes (the global index has one group per key length).
    pub max_key_size: usize,
    /// Pages that level 0 may hold; compaction runs when it holds more.
    pub l0_threshold_pages: u64,
    /// Pages that level 1 may hold; compaction runs when it holds more.
    pub l1_threshold_pages: u64,
    /// GC runs while fewer pages than this are free (erased, or unwritten in open blocks).
    pub gc_threshold_pages: u64,
    /// GC moves pages by copyback (inside their plane, no channel transfer).
    pub copyback: bool,
    /// Where `gc_threshold_pages` is counted.
    pub gc_scope: GcScope,
    /// Which planes a UST's pages take.
    pub ust_planes: UstPlanes,
}

/// Where the GC threshold is counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GcScope {
    /// Over the whole device: GC runs while fewer than `gc_threshold_pages` pages are free.
    #[default]
    Device,
    /// Per plane (SSDSim's code): a plane is collected while it has fewer than its share,
    /// `gc_threshold_pages` / #planes, of free pages.
    Plane,
}

impl GcScope {
    pub const NAMES: [&'static str; 2] = ["device", "plane"];

    pub fn name(self) -> &'static str {
        match self {
            GcScope::Device => "device",
            GcScope::Plane => "plane",
        }
    }

    pub fn from_name(name: &str) -> Option<GcScope> {
        Self::NAMES.iter().position(|&n| n == name).map(|i| [GcScope::Device, GcScope::Plane][i])
    }
}

/// Which planes a UST's pages take (an L0 UST takes one page on every plane either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UstPlanes {
    /// The planes after the previous UST's, in stripe order: every plane takes the same share.
    #[default]
    Rotating,
    /// Page i of every UST on the i-th plane of the stripe order.
    Aligned,
}

impl UstPlanes {
    pub const NAMES: [&'static str; 2] = ["rotating", "aligned"];

    pub fn name(self) -> &'static str {
        match self {
            UstPlanes::Rotating => "rotating",
            UstPlanes::Aligned => "aligned",
        }
    }

    pub fn from_name(name: &str) -> Option<UstPlanes> {
        Self::NAMES.iter().position(|&n| n == name).map(|i| [UstPlanes::Rotating, UstPlanes::Aligned][i])
    }
}

impl PlscConfig {
    /// PLSC on `media` with our default parameters (see the module docs).
    pub fn new(media: MediaConfig) -> PlscConfig {
        let pages = media.geometry.total_pages();
        PlscConfig {
            media,
            max_key_size: 255,
            l0_threshold_pages: pages / 8,
            l1_threshold_pages: pages * 3 / 8,
            gc_threshold_pages: pages * 3 / 10,
            copyback: true,
            gc_scope: GcScope::default(),
            ust_planes: UstPlanes::default(),
        }
    }

    /// The seed's device (the `plsc` preset, 32 planes of 16 KiB pages), resized to `capacity`
    /// bytes of raw NAND when given, page contents in memory.
    pub fn preset(capacity: Option<u64>) -> Result<PlscConfig> {
        let geometry = match capacity {
            Some(c) => Preset::Plsc.geometry_with_capacity(c)?,
            None => Preset::Plsc.geometry(),
        };
        Ok(PlscConfig::new(MediaConfig::new(geometry, Preset::Plsc.timing())))
    }

    /// Bytes of the write buffer: one page per plane.
    pub fn buffer_bytes(&self) -> usize {
        let g = &self.media.geometry;
        g.total_planes() as usize * g.page_size as usize
    }

    /// Largest value accepted: a record with the largest key fills the write buffer.
    pub fn max_value_size(&self) -> usize {
        self.buffer_bytes().saturating_sub(record::HEADER + self.max_key_size)
    }

    /// Checks every parameter; the error names the field and the limit.
    pub fn validate(&self) -> Result<()> {
        record::check_config("PLSC", &self.media, self.max_key_size)?;
        let invalid = |field, reason: String| Err(KvError::InvalidConfig { field, reason });
        if record::HEADER + self.max_key_size >= self.buffer_bytes() {
            return invalid(
                "max_key_size",
                format!(
                    "a record with a {}-byte key does not fit the {}-byte write buffer (#planes x page size)",
                    self.max_key_size,
                    self.buffer_bytes()
                ),
            );
        }
        let g = &self.media.geometry;
        let total = g.total_pages();
        let reserve = g.total_planes() as u64 * g.pages_per_block as u64 * crate::flash::space::RESERVE_BLOCKS as u64;
        let planned = self.l0_threshold_pages + self.l1_threshold_pages + self.gc_threshold_pages + reserve;
        if planned > total {
            return invalid(
                "l0_threshold_pages + l1_threshold_pages + gc_threshold_pages",
                format!(
                    "{} + {} + {} pages and the GC reserve of {reserve} pages exceed the device's {total} pages: \
                     GC could not keep its threshold with both levels full",
                    self.l0_threshold_pages, self.l1_threshold_pages, self.gc_threshold_pages
                ),
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashsim::DataMode;

    #[test]
    fn the_preset_is_valid_and_bad_fields_are_named() {
        let c = PlscConfig::preset(None).unwrap();
        c.validate().unwrap();
        assert_eq!(c.buffer_bytes(), 32 * 16384);
        assert_eq!(c.max_value_size(), 32 * 16384 - 6 - 255);
        let mut bad = c.clone();
        bad.max_key_size = 0;
        assert!(bad.validate().unwrap_err().to_string().contains("max_key_size"));
        let mut bad = c.clone();
        bad.gc_threshold_pages = c.media.geometry.total_pages();
        assert!(bad.validate().unwrap_err().to_string().contains("gc_threshold_pages"));
        let mut bad = c;
        bad.media.store = DataMode::MetadataOnly;
        for n in GcScope::NAMES {
            assert_eq!(GcScope::from_name(n).unwrap().name(), n);
        }
        for n in UstPlanes::NAMES {
            assert_eq!(UstPlanes::from_name(n).unwrap().name(), n);
        }
        assert_eq!((GcScope::from_name("die"), UstPlanes::from_name("first")), (None, None));
        assert!(bad.validate().unwrap_err().to_string().contains("media.store"));
    }
}

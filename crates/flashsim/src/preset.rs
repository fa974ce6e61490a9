//! Device presets from the seed papers, each scalable in capacity.
//!
//! - `femu`: FEMU's default black-box SSD as the RemapCom papers (seeds 000/001) ran it: 8 channels
//!   x 8 LUNs, 256 pages of 4 KiB per block, 40/200/2000 us read/program/erase, no modelled channel
//!   transfer time (FEMU's default channel latency is zero), 16 GiB.
//! - `plsc`: seed 002 Table I: 4 channels, 8 chips, 2 dies per chip, 2 planes per die, 1024 blocks
//!   per plane, 256 pages of 16 KiB. "Chip number 8" is read as 8 chips in total (2 per channel):
//!   that is the reading that gives the paper's 128 GB device. Seed 002 gives no latencies but says
//!   it kept SSDSim's defaults, so the preset has SSDSim's default chip ([`Timing::SSDSIM`]: 20 /
//!   200 / 1500 us, 25 ns per byte); seed 004's chip is `--timing seed004`.
//! - `kvftl`: seed 004 Table I: 16 KiB pages, 256 pages per block, read 115 us, program 1600 us,
//!   erase 3 ms, 10 ns/byte serial access. The seed simulates one chip; we default to one channel
//!   with one chip of 64 GiB.
//!
//! Where block-SSD GC puts a victim's valid pages follows the simulator each preset copies
//! ([`Preset::gc_destination`]): FEMU's GC writes through its one write pointer, spread over the
//! channels and LUNs, with no copyback; SSDSim (`plsc`) collects a plane into that plane by
//! copyback; seed 004 does not say (`kvftl`: spread, our choice).
//!
//! Scaling keeps page and block shape and the unit counts, and changes blocks per plane. When a
//! small capacity would leave fewer than [`MIN_BLOCKS_PER_PLANE`] blocks per plane, it halves chips
//! per channel, then dies, then planes, then channels, so that tiny test devices stay meaningful
//! for GC. The resulting capacity is rounded down to whole blocks per plane.

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::ssd::{GcDestination, SsdConfig};
use crate::timing::Timing;

/// Fewest blocks per plane that scaling aims to keep.
pub const MIN_BLOCKS_PER_PLANE: u32 = 64;

/// A named device configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    Femu,
    Plsc,
    Kvftl,
}

impl Preset {
    pub const NAMES: [&'static str; 3] = ["femu", "plsc", "kvftl"];

    pub fn parse(name: &str) -> Result<Preset> {
        match name {
            "femu" => Ok(Preset::Femu),
            "plsc" => Ok(Preset::Plsc),
            "kvftl" => Ok(Preset::Kvftl),
            other => Err(FlashError::InvalidConfig {
                field: "preset",
                reason: format!("unknown preset '{other}'; accepted: {}", Preset::NAMES.join(", ")),
            }),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Preset::Femu => "femu",
            Preset::Plsc => "plsc",
            Preset::Kvftl => "kvftl",
        }
    }

    /// The geometry at the preset's own capacity.
    pub fn geometry(self) -> Geometry {
        match self {
            Preset::Femu => Geometry {
                channels: 8,
                chips_per_channel: 8,
                dies_per_chip: 1,
                planes_per_die: 1,
                blocks_per_plane: 256,
                pages_per_block: 256,
                page_size: 4096,
                oob_size: 128,
            },
            Preset::Plsc => Geometry {
                channels: 4,
                chips_per_channel: 2,
                dies_per_chip: 2,
                planes_per_die: 2,
                blocks_per_plane: 1024,
                pages_per_block: 256,
                page_size: 16384,
                oob_size: 512,
            },
            Preset::Kvftl => Geometry {
                channels: 1,
                chips_per_channel: 1,
                dies_per_chip: 1,
                planes_per_die: 1,
                blocks_per_plane: 16384,
                pages_per_block: 256,
                page_size: 16384,
                oob_size: 512,
            },
        }
    }

    pub fn timing(self) -> Timing {
        match self {
            Preset::Femu => Timing::FEMU,
            Preset::Plsc => Timing::SSDSIM,
            Preset::Kvftl => Timing::SEED004,
        }
    }

    /// Where the preset's block-SSD GC puts a victim's valid pages (see the module docs).
    pub fn gc_destination(self) -> GcDestination {
        match self {
            Preset::Femu | Preset::Kvftl => GcDestination::Spread,
            Preset::Plsc => GcDestination::InPlane,
        }
    }

    /// The preset's geometry resized to `capacity` bytes of raw NAND (see the module docs).
    pub fn geometry_with_capacity(self, capacity: u64) -> Result<Geometry> {
        scale(self.geometry(), capacity)
    }
}

/// Kept with the presets, so that the configuration does not depend on them.
impl SsdConfig {
    /// A preset's device at `capacity` raw bytes (or the preset's own size), with defaults for the rest.
    pub fn from_preset(preset: Preset, capacity: Option<u64>) -> Result<SsdConfig> {
        let geometry = match capacity {
            Some(c) => preset.geometry_with_capacity(c)?,
            None => preset.geometry(),
        };
        let mut cfg = SsdConfig::new(geometry, preset.timing());
        cfg.gc_destination = preset.gc_destination();
        Ok(cfg)
    }
}

/// Resizes `g` to `capacity` raw bytes by changing blocks per plane, shrinking parallelism first
/// when the device would otherwise get too few blocks per plane.
pub fn scale(mut g: Geometry, capacity: u64) -> Result<Geometry> {
    let block = g.block_bytes();
    if capacity < block * 4 {
        return Err(FlashError::InvalidConfig {
            field: "capacity",
            reason: format!("{capacity} bytes is less than 4 blocks of {block} bytes"),
        });
    }
    loop {
        let per_plane = capacity / (block * g.total_planes() as u64);
        if per_plane >= MIN_BLOCKS_PER_PLANE as u64 || g.total_planes() == 1 {
            g.blocks_per_plane = u32::try_from(per_plane).map_err(|_| FlashError::InvalidConfig {
                field: "capacity",
                reason: format!("{capacity} bytes needs more than 2^32 blocks per plane"),
            })?;
            g.validate()?;
            return Ok(g);
        }
        if g.chips_per_channel > 1 {
            g.chips_per_channel /= 2;
        } else if g.dies_per_chip > 1 {
            g.dies_per_chip /= 2;
        } else if g.planes_per_die > 1 {
            g.planes_per_die /= 2;
        } else {
            g.channels /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_have_the_papers_capacities() {
        assert_eq!(Preset::Femu.geometry().capacity_bytes(), 16 << 30);
        assert_eq!(Preset::Plsc.geometry().capacity_bytes(), 128 << 30);
        assert_eq!(Preset::Kvftl.geometry().capacity_bytes(), 64 << 30);
        for p in [Preset::Femu, Preset::Plsc, Preset::Kvftl] {
            p.geometry().validate().unwrap();
            p.timing().validate().unwrap();
            assert_eq!(Preset::parse(p.name()).unwrap(), p);
        }
    }

    #[test]
    fn scaling_keeps_page_shape_and_shrinks_parallelism_only_when_needed() {
        let g = Preset::Femu.geometry_with_capacity(4 << 30).unwrap();
        assert_eq!((g.channels, g.chips_per_channel, g.blocks_per_plane), (8, 8, 64));
        assert_eq!(g.capacity_bytes(), 4 << 30);
        let tiny = Preset::Femu.geometry_with_capacity(64 << 20).unwrap();
        assert!(tiny.blocks_per_plane >= MIN_BLOCKS_PER_PLANE);
        assert_eq!(tiny.capacity_bytes(), 64 << 20);
        assert!(Preset::Femu.geometry_with_capacity(1 << 20).is_err());
        assert!(Preset::parse("nope").unwrap_err().to_string().contains("femu, plsc, kvftl"));
    }
}

//! Geometry overrides: the dimensions of a preset's NAND array a user replaces by name (a
//! command-line flag, a key of an experiment file's `[device]` table, a field of a run's JSON),
//! each optional, applied over the preset's [`Geometry`] by [`GeometryOverrides::apply`].
//!
//! Contract: an absent field keeps the base geometry's dimension; a given one replaces it, and
//! must be at least 1 (an error names the override's field: `chips`, where the geometry says
//! `chips_per_channel`). Unknown fields are refused. With the `clap` feature the struct is a set
//! of command-line flags (`--channels`, `--chips`, ...).

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;

/// A preset's dimensions, each replaced when given; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
#[serde(default, deny_unknown_fields)]
pub struct GeometryOverrides {
    /// The preset's channels, chips per channel, dies per chip, planes per die and pages per
    /// block, each replaced when given (before `capacity` sizes the device).
    #[cfg_attr(feature = "clap", arg(long))]
    pub channels: Option<u32>,
    #[cfg_attr(feature = "clap", arg(long))]
    pub chips: Option<u32>,
    #[cfg_attr(feature = "clap", arg(long))]
    pub dies: Option<u32>,
    #[cfg_attr(feature = "clap", arg(long))]
    pub planes: Option<u32>,
    #[cfg_attr(feature = "clap", arg(long))]
    pub pages_per_block: Option<u32>,
    /// Erase blocks per plane: the device's size from its geometry, exactly (instead of
    /// `capacity`, which may also halve the chips, dies or planes to keep enough blocks per plane).
    #[cfg_attr(feature = "clap", arg(long))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_plane: Option<u32>,
}

impl GeometryOverrides {
    /// `base` with the given dimensions replaced (not checked as a whole: a caller resizes it
    /// first, or calls [`Geometry::validate`]).
    pub fn apply(&self, base: Geometry) -> Result<Geometry> {
        let mut g = base;
        for (field, value, slot) in [
            ("channels", self.channels, &mut g.channels),
            ("chips", self.chips, &mut g.chips_per_channel),
            ("dies", self.dies, &mut g.dies_per_chip),
            ("planes", self.planes, &mut g.planes_per_die),
            ("pages_per_block", self.pages_per_block, &mut g.pages_per_block),
            ("blocks_per_plane", self.blocks_per_plane, &mut g.blocks_per_plane),
        ] {
            match value {
                Some(0) => return Err(FlashError::InvalidConfig { field, reason: "must be at least 1".into() }),
                Some(v) => *slot = v,
                None => {}
            }
        }
        Ok(g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Preset;

    #[test]
    fn given_dimensions_replace_the_presets() {
        let base = Preset::Femu.geometry();
        assert_eq!(GeometryOverrides::default().apply(base.clone()).unwrap(), base);
        let o = GeometryOverrides { chips: Some(3), blocks_per_plane: Some(16), ..GeometryOverrides::default() };
        let g = o.apply(base.clone()).unwrap();
        assert_eq!((g.chips_per_channel, g.blocks_per_plane, g.channels), (3, 16, base.channels));
        let e = GeometryOverrides { dies: Some(0), ..GeometryOverrides::default() }.apply(base).unwrap_err();
        assert!(matches!(e, FlashError::InvalidConfig { field: "dies", .. }), "{e}");
    }
}

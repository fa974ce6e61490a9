//! Where the pages of a zone live: the zone-to-block striping of a ZNS SSD.
//!
//! A zone of `k` erase blocks is striped page by page over the planes it spans, so that
//! consecutive pages of the zone go to different planes (and so different dies and channels):
//! page `i` of the zone goes to the zone's plane `i mod s`, where `s` is the number of planes the
//! zone spans. A sequential zone write therefore runs on all of the zone's dies at once, as a
//! real ZNS SSD stripes a zone over its flash channels.
//!
//! - `k >= P` (planes): `k` must be a multiple of `P`; every zone spans all `P` planes and takes
//!   `k / P` blocks in each (filled one after the other: pages `0..P*ppb` fill the first block of
//!   every plane, and so on).
//! - `k < P`: `P` must be a multiple of `k`; the planes are cut into `P / k` groups of `k` and
//!   consecutive zones rotate over the groups (zone `z` is in group `z mod (P / k)`), so that zones
//!   written at the same time tend to use different dies. Each zone takes one block in each plane
//!   of its group.
//!
//! Planes are taken in the geometry's stripe order (channel first, then chip, die, plane), so a
//! group of planes spreads over as many channels as it can. Every zone has the same shape, and a
//! zone's blocks are fixed for the life of the device: no remapping of zones to blocks, hence no
//! wear-leveling between zones (out of scope: a reset zone wears its own blocks). Blocks that do
//! not make a whole zone (when blocks per plane is not a multiple of the zone's blocks per plane)
//! are never used.
//!
//! Compared with the emulators: FEMU's ZNS mode (and its ConfZNS fork) interleaves a zone's pages
//! over channels and then ways, optionally confining a zone to a subset of them; NVMeVirt's ZNS
//! FTL spreads a zone over `dies_per_zone` dies. Both are this scheme at die rather than plane
//! granularity; here a multi-plane die gets one page per plane, which the media layer groups into
//! multi-plane programs.

use crate::error::{FlashError, Result};
use crate::geometry::Geometry;

/// The fixed map from (zone, page in zone) to physical pages.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    /// Planes a zone spans (`s`).
    planes_per_zone: u32,
    /// Blocks a zone takes in each of its planes (`m`).
    blocks_per_zone_plane: u32,
    /// Plane groups (`P / s`).
    groups: u32,
    /// Zones per group (`blocks_per_plane / m`).
    rows: u32,
    /// Planes in stripe order; group `g` is `order[g*s..(g+1)*s]`.
    order: Vec<u32>,
    blocks_per_plane: u32,
    pages_per_block: u32,
    /// Pages of a zone (its size).
    zone_pages: u64,
}

impl Layout {
    /// The layout of zones of `zone_blocks` erase blocks; an error names `zone_size` when they do
    /// not stripe evenly or no zone fits.
    pub fn new(geo: &Geometry, zone_blocks: u64) -> Result<Layout> {
        let planes = geo.total_planes() as u64;
        let invalid = |reason: String| Err(FlashError::InvalidConfig { field: "zone_size", reason });
        let block = bytes(geo.block_bytes());
        if zone_blocks == 0 {
            return invalid(format!("a zone needs at least one {block} erase block"));
        }
        let (s, m) = if zone_blocks >= planes {
            if zone_blocks % planes != 0 {
                return invalid(format!(
                    "{zone_blocks} blocks of {block} do not stripe over the {planes} planes: a zone of at least as many blocks as planes needs a multiple of them"
                ));
            }
            (planes, zone_blocks / planes)
        } else {
            if planes % zone_blocks != 0 {
                return invalid(format!(
                    "{zone_blocks} blocks of {block} do not stripe over the {planes} planes: a zone of fewer blocks than planes needs a divisor of them"
                ));
            }
            (zone_blocks, 1)
        };
        let rows = geo.blocks_per_plane as u64 / m;
        if rows == 0 {
            return invalid(format!(
                "{zone_blocks} blocks per zone need {m} blocks in each plane, the device has {}: no zone fits",
                geo.blocks_per_plane
            ));
        }
        Ok(Layout {
            planes_per_zone: s as u32,
            blocks_per_zone_plane: m as u32,
            groups: (planes / s) as u32,
            rows: rows as u32,
            order: geo.stripe_order(),
            blocks_per_plane: geo.blocks_per_plane,
            pages_per_block: geo.pages_per_block,
            zone_pages: zone_blocks * geo.pages_per_block as u64,
        })
    }

    pub fn num_zones(&self) -> u32 {
        self.groups * self.rows
    }

    /// Pages of a zone (its size).
    pub fn zone_pages(&self) -> u64 {
        self.zone_pages
    }

    /// Planes a zone spans.
    pub fn planes_per_zone(&self) -> u32 {
        self.planes_per_zone
    }

    /// The physical page of page `page` of `zone` (both in range).
    pub fn ppn(&self, zone: u32, page: u64) -> u32 {
        let s = self.planes_per_zone as u64;
        let ppb = self.pages_per_block as u64;
        let (group, row) = (zone % self.groups, zone / self.groups);
        let plane = self.order[(group as u64 * s + page % s) as usize];
        let j = page / s; // page index inside the zone's part of that plane
        let block_in_plane = row as u64 * self.blocks_per_zone_plane as u64 + j / ppb;
        let block = plane as u64 * self.blocks_per_plane as u64 + block_in_plane;
        (block * ppb + j % ppb) as u32
    }

    /// The global block numbers of `zone`'s blocks.
    pub fn blocks(&self, zone: u32) -> impl Iterator<Item = u32> + '_ {
        let s = self.planes_per_zone as usize;
        let group = (zone % self.groups) as usize;
        let first = (zone / self.groups) * self.blocks_per_zone_plane;
        self.order[group * s..(group + 1) * s].iter().flat_map(move |&plane| {
            (first..first + self.blocks_per_zone_plane).map(move |b| plane * self.blocks_per_plane + b)
        })
    }

    /// The zone's logical page number on the device, written to each page's OOB as its owner.
    pub fn lba(&self, zone: u32, page: u64) -> u32 {
        (zone as u64 * self.zone_pages + page) as u32
    }
}

/// `10.0 MiB`: a size in the unit that keeps it readable.
pub(crate) fn bytes(b: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = b as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(planes_per_die: u32, blocks_per_plane: u32) -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 1,
            planes_per_die,
            blocks_per_plane,
            pages_per_block: 4,
            page_size: 512,
            oob_size: 16,
        }
    }

    /// Every physical page belongs to at most one (zone, page), and a zone's pages are in its blocks.
    fn check_bijective(l: &Layout, g: &Geometry) {
        let mut seen = vec![false; g.total_pages() as usize];
        for z in 0..l.num_zones() {
            let blocks: Vec<u32> = l.blocks(z).collect();
            assert_eq!(blocks.len() as u64 * g.pages_per_block as u64, l.zone_pages());
            for p in 0..l.zone_pages() {
                let ppn = l.ppn(z, p);
                assert!(!seen[ppn as usize], "zone {z} page {p} reuses PPN {ppn}");
                seen[ppn as usize] = true;
                assert!(blocks.contains(&g.block_of(ppn)), "zone {z} page {p} outside its blocks");
            }
        }
    }

    #[test]
    fn wide_zones_take_blocks_in_every_plane_and_stripe_page_by_page() {
        let g = geo(2, 8); // 8 planes
        let l = Layout::new(&g, 16).unwrap(); // 2 blocks per plane
        assert_eq!((l.num_zones(), l.planes_per_zone()), (4, 8));
        check_bijective(&l, &g);
        let planes: Vec<u32> = (0..8).map(|p| g.addr(l.ppn(1, p)).plane).collect();
        let mut sorted = planes.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>(), "8 consecutive pages on 8 planes");
        // Page 8 goes back to the first plane, next page of the same block.
        let (a, b) = (g.addr(l.ppn(1, 0)), g.addr(l.ppn(1, 8)));
        assert_eq!((a.block, a.page + 1), (b.block, b.page));
    }

    #[test]
    fn narrow_zones_rotate_over_plane_groups() {
        let g = geo(1, 8); // 4 planes
        let l = Layout::new(&g, 2).unwrap();
        assert_eq!((l.num_zones(), l.planes_per_zone()), (16, 2));
        check_bijective(&l, &g);
        let planes = |z| {
            let mut v: Vec<u32> = l.blocks(z).map(|b| g.plane_of_block(b)).collect();
            v.sort_unstable();
            v
        };
        assert_ne!(planes(0), planes(1), "neighbouring zones use different planes");
        assert_eq!(planes(0), planes(2));
    }

    #[test]
    fn uneven_stripes_and_oversized_zones_are_refused() {
        let g = geo(1, 8);
        assert!(Layout::new(&g, 3).is_err());
        assert!(Layout::new(&g, 6).is_err());
        assert!(Layout::new(&g, 4 * 16).unwrap_err().to_string().contains("no zone fits"));
        assert!(Layout::new(&g, 0).is_err());
    }
}

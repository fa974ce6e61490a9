//! NAND geometry: how channels, chips, dies, planes, blocks and pages nest, and the physical page
//! numbering (PPN) that the rest of the simulator uses.
//!
//! PPNs are dense: `ppn = block * pages_per_block + page` where `block` is a global block index and
//! blocks are numbered plane by plane (`block = plane * blocks_per_plane + block_in_plane`); planes are
//! numbered die by die, dies chip by chip, chips channel by channel. Each plane is also the unit of
//! garbage collection; each die is the unit that is busy while a NAND operation runs (planes of one
//! die share its command interface and only work together through multi-plane commands).

use serde::Serialize;

use crate::error::{FlashError, Result};

/// The shape of a NAND array.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Geometry {
    pub channels: u32,
    pub chips_per_channel: u32,
    pub dies_per_chip: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    /// Bytes of data per page.
    pub page_size: u32,
    /// Bytes of out-of-band area per page (holds the reverse mapping; not user-visible).
    pub oob_size: u32,
}

/// Where a physical page lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageAddr {
    pub channel: u32,
    /// Global die index (0..total_dies).
    pub die: u32,
    /// Global plane index (0..total_planes).
    pub plane: u32,
    /// Global block index (0..total_blocks).
    pub block: u32,
    /// Page index inside its block.
    pub page: u32,
}

impl Geometry {
    /// Checks that every dimension is usable and that page numbers fit the simulator's 32-bit
    /// mapping entries.
    pub fn validate(&self) -> Result<()> {
        let dims: [(&'static str, u32); 7] = [
            ("channels", self.channels),
            ("chips_per_channel", self.chips_per_channel),
            ("dies_per_chip", self.dies_per_chip),
            ("planes_per_die", self.planes_per_die),
            ("blocks_per_plane", self.blocks_per_plane),
            ("pages_per_block", self.pages_per_block),
            ("page_size", self.page_size),
        ];
        for (field, v) in dims {
            if v == 0 {
                return Err(FlashError::InvalidConfig { field, reason: "must be at least 1".into() });
            }
        }
        if self.page_size < 512 || !self.page_size.is_power_of_two() {
            return Err(FlashError::InvalidConfig {
                field: "page_size",
                reason: format!("{} is not a power of two of at least 512 bytes", self.page_size),
            });
        }
        if self.pages_per_block > u16::MAX as u32 + 1 {
            return Err(FlashError::InvalidConfig {
                field: "pages_per_block",
                reason: format!("{} exceeds 65536", self.pages_per_block),
            });
        }
        if self.blocks_per_plane < 4 {
            return Err(FlashError::InvalidConfig {
                field: "blocks_per_plane",
                reason: format!(
                    "{} leaves no room for a write frontier and GC reserve (need at least 4)",
                    self.blocks_per_plane
                ),
            });
        }
        // u32::MAX is the "unmapped" marker of the mapping tables.
        if self.total_pages() >= u32::MAX as u64 {
            return Err(FlashError::InvalidConfig {
                field: "capacity",
                reason: format!("{} pages exceed the 2^32-1 pages a mapping entry can address", self.total_pages()),
            });
        }
        Ok(())
    }

    pub fn total_dies(&self) -> u32 {
        self.channels * self.chips_per_channel * self.dies_per_chip
    }

    pub fn total_planes(&self) -> u32 {
        self.total_dies() * self.planes_per_die
    }

    pub fn total_blocks(&self) -> u64 {
        self.total_planes() as u64 * self.blocks_per_plane as u64
    }

    pub fn total_pages(&self) -> u64 {
        self.total_blocks() * self.pages_per_block as u64
    }

    /// Raw NAND capacity in bytes (data area only).
    pub fn capacity_bytes(&self) -> u64 {
        self.total_pages() * self.page_size as u64
    }

    pub fn block_bytes(&self) -> u64 {
        self.pages_per_block as u64 * self.page_size as u64
    }

    pub fn block_of(&self, ppn: u32) -> u32 {
        ppn / self.pages_per_block
    }

    pub fn plane_of_block(&self, block: u32) -> u32 {
        block / self.blocks_per_plane
    }

    pub fn die_of_plane(&self, plane: u32) -> u32 {
        plane / self.planes_per_die
    }

    pub fn channel_of_die(&self, die: u32) -> u32 {
        die / (self.chips_per_channel * self.dies_per_chip)
    }

    pub fn first_ppn_of_block(&self, block: u32) -> u32 {
        block * self.pages_per_block
    }

    /// Decomposes a PPN.
    pub fn addr(&self, ppn: u32) -> PageAddr {
        let block = self.block_of(ppn);
        let plane = self.plane_of_block(block);
        let die = self.die_of_plane(plane);
        PageAddr { channel: self.channel_of_die(die), die, plane, block, page: ppn % self.pages_per_block }
    }

    /// Planes in the order consecutive writes are striped over them: channel first, then chip, die,
    /// plane, so that a run of pages spreads over as many independent units as possible.
    pub fn stripe_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.total_planes() as usize);
        for plane in 0..self.planes_per_die {
            for die in 0..self.dies_per_chip {
                for chip in 0..self.chips_per_channel {
                    for ch in 0..self.channels {
                        let die_global = (ch * self.chips_per_channel + chip) * self.dies_per_chip + die;
                        order.push(die_global * self.planes_per_die + plane);
                    }
                }
            }
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Geometry {
        Geometry {
            channels: 2,
            chips_per_channel: 2,
            dies_per_chip: 2,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size: 4096,
            oob_size: 64,
        }
    }

    #[test]
    fn addressing_round_trips_and_stripes_every_plane_once() {
        let g = small();
        g.validate().unwrap();
        assert_eq!(g.total_planes(), 16);
        assert_eq!(g.total_pages(), 16 * 8 * 4);
        let a = g.addr(g.first_ppn_of_block(8 * 5 + 3) + 2);
        assert_eq!((a.plane, a.block, a.page, a.die, a.channel), (5, 43, 2, 2, 0));
        let mut order = g.stripe_order();
        // Channel first: the first two planes are on different channels.
        let ch = |p: u32| g.channel_of_die(g.die_of_plane(p));
        assert_ne!(ch(order[0]), ch(order[1]));
        order.sort_unstable();
        assert_eq!(order, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn invalid_geometries_are_named() {
        let mut g = small();
        g.page_size = 3000;
        let e = g.validate().unwrap_err().to_string();
        assert!(e.contains("page_size"), "{e}");
        let mut g = small();
        g.channels = 0;
        assert!(g.validate().unwrap_err().to_string().contains("channels"));
        let mut g = small();
        g.blocks_per_plane = 2;
        assert!(g.validate().unwrap_err().to_string().contains("blocks_per_plane"));
    }
}

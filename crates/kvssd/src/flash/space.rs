//! Where a device's pages go: per plane, a list of erased blocks and one open block (the frontier)
//! whose pages are handed out in order. The device's data (PLSC's USTs, the LSM's SSTs) and GC's
//! copies all write into their plane's frontier; a block is closed (a GC candidate) once its last
//! page is handed out, which is also when it is programmed (a device programs what it takes at
//! once, before it takes more: GC may write into the same frontier in between).
//!
//! Each plane keeps one erased block back from data writes: GC of the plane may open it. A victim
//! has at most pages-per-block - 1 valid pages, so its copies always fit in the frontier's room
//! plus that block, and its erase gives the plane its reserve back. GC copies stay in their plane
//! (copyback needs that).

use std::collections::VecDeque;

use flashsim::{Geometry, Media};

/// Erased blocks per plane that data writes leave to GC.
pub const RESERVE_BLOCKS: usize = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    Free,
    Frontier,
    Closed,
}

struct PlaneSpace {
    /// Erased blocks, least recently erased first (a little wear levelling for free).
    free: VecDeque<u32>,
    /// The open block and its next page.
    frontier: Option<(u32, u32)>,
}

pub struct Space {
    ppb: u32,
    blocks_per_plane: u32,
    planes: Vec<PlaneSpace>,
    uses: Vec<Use>,
    free_pages: u64,
}

impl Space {
    pub fn new(geo: &Geometry) -> Space {
        let bpp = geo.blocks_per_plane;
        Space {
            ppb: geo.pages_per_block,
            blocks_per_plane: bpp,
            planes: (0..geo.total_planes())
                .map(|p| PlaneSpace { free: (p * bpp..(p + 1) * bpp).collect(), frontier: None })
                .collect(),
            uses: vec![Use::Free; geo.total_blocks() as usize],
            free_pages: geo.total_pages(),
        }
    }

    /// Pages not programmed: the pages of erased blocks and the rest of each frontier.
    pub fn free_pages(&self) -> u64 {
        self.free_pages
    }

    /// Pages of `plane` not programmed: its erased blocks' and the rest of its frontier.
    pub fn free_in(&self, plane: usize) -> u64 {
        self.planes[plane].free.len() as u64 * self.ppb as u64 + self.room(plane) as u64
    }

    /// Planes of the device.
    pub fn planes(&self) -> usize {
        self.planes.len()
    }

    fn room(&self, plane: usize) -> u32 {
        self.planes[plane].frontier.map_or(0, |(_, next)| self.ppb - next)
    }

    /// Whether data may take a page on `plane` without GC.
    pub fn has_room(&self, plane: usize) -> bool {
        self.room(plane) > 0 || self.planes[plane].free.len() > RESERVE_BLOCKS
    }

    /// The next page of `plane`: from its frontier, else from a newly opened erased block (GC may
    /// open the reserve, data writes may not). `None` when there is none.
    pub fn take(&mut self, plane: usize, for_gc: bool) -> Option<u32> {
        if self.room(plane) == 0 {
            let keep = if for_gc { 0 } else { RESERVE_BLOCKS };
            let p = &mut self.planes[plane];
            if p.free.len() <= keep {
                return None;
            }
            let b = p.free.pop_front()?;
            p.frontier = Some((b, 0));
            self.uses[b as usize] = Use::Frontier;
        }
        let (block, next) = self.planes[plane].frontier.as_mut()?;
        let ppn = *block * self.ppb + *next;
        *next += 1;
        let (block, full) = (*block, *next == self.ppb);
        if full {
            self.planes[plane].frontier = None;
            self.uses[block as usize] = Use::Closed;
        }
        self.free_pages -= 1;
        Some(ppn)
    }

    /// The closed block with the most invalid pages, on `plane` or anywhere (`None`); the lowest
    /// block number among equals. `None` when no closed block has an invalid page.
    pub fn victim(&self, media: &Media, plane: Option<usize>) -> Option<u32> {
        let blocks = match plane {
            Some(p) => p as u32 * self.blocks_per_plane..(p as u32 + 1) * self.blocks_per_plane,
            None => 0..self.uses.len() as u32,
        };
        let mut best: Option<(u32, u32)> = None;
        for b in blocks {
            if self.uses[b as usize] != Use::Closed {
                continue;
            }
            let invalid = media.write_pointer(b) - media.valid_pages(b);
            if invalid > 0 && best.is_none_or(|(most, _)| invalid > most) {
                best = Some((invalid, b));
            }
        }
        best.map(|(_, b)| b)
    }

    pub fn plane_of(&self, block: u32) -> usize {
        (block / self.blocks_per_plane) as usize
    }

    /// A collected victim was erased: it is its plane's newest erased block.
    pub fn erased(&mut self, block: u32) {
        let plane = self.plane_of(block);
        self.uses[block as usize] = Use::Free;
        self.planes[plane].free.push_back(block);
        self.free_pages += self.ppb as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashsim::{MediaConfig, Preset};

    fn geo() -> Geometry {
        Geometry { blocks_per_plane: 4, pages_per_block: 2, ..Preset::Plsc.geometry() }
    }

    #[test]
    fn data_writes_leave_the_reserve_block_to_gc() {
        let g = geo();
        let mut s = Space::new(&g);
        // Plane 0: three of its four blocks for data writes.
        let pages: Vec<u32> = (0..6).map(|_| s.take(0, false).unwrap()).collect();
        assert_eq!(pages, vec![0, 1, 2, 3, 4, 5]);
        assert!(!s.has_room(0) && s.take(0, false).is_none());
        assert_eq!(s.take(0, true), Some(6), "GC opens the reserve");
        assert_eq!(s.free_pages(), g.total_pages() - 7);
        let media = Media::new(&MediaConfig::new(g.clone(), Preset::Plsc.timing())).unwrap();
        assert_eq!(s.victim(&media, Some(0)), None, "nothing programmed, nothing invalid");
        s.erased(0);
        assert!(s.has_room(0));
    }
}

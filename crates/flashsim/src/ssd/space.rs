//! Where the block SSD's FTL puts pages: per-plane free blocks and write frontiers, a device-wide GC
//! reserve, and per-plane indexes of closed blocks for victim selection.
//!
//! Why this design. Host writes are striped page by page over the planes (channel first), so each
//! plane has an open block, its write frontier. Every page that holds no data at steady state is
//! spare area GC cannot use, and GC's write amplification is steep in the spare factor (at
//! S_f = 0.07, 0.1 % of the capacity idle costs ~1.3 % more). The previous design kept two free
//! blocks per plane for GC and started background GC below three, in each of 64 planes on the
//! `femu` preset: at 2 GiB that left 3.75 % of a 10 % spare area, and greedy GC wrote 75 % more
//! than the large-block limit. Here:
//!
//! - the GC reserve is one pool for the device: host writes never open the last
//!   `gc_reserve_blocks` free blocks (one by default), wherever they are; GC may, and refills the
//!   pool at once with the best victim of the device;
//! - a plane whose frontier fills and that has no free block it may open is collected at once: its
//!   victim is chosen inside the plane (greedy / cost-benefit / FIFO), so every plane is collected
//!   as often as it is written, and the erased victim becomes the plane's frontier;
//! - relocated pages go to the victim plane's own frontier when it has room (by copyback), else to
//!   the frontiers of the other planes in turn, page by page (read out and programmed over the
//!   channels, spread over the dies as a superblock FTL's GC writes are), else to a free block
//!   anywhere (what the reserve is for). Sending them to the emptiest frontier instead idles fewer
//!   pages (measured at 2 GiB, S_f 0.10: effective spare 0.0978 instead of 0.0925, greedy WA 5.20
//!   instead of 5.48) but puts each victim's pages on one die, one program after another:
//!   simulated write throughput fell five times. Spreading is what parallel flash does.
//! - when GC starts is what decides whether the victim's own frontier has room. Under
//!   [`GcDestination::Spread`] a plane is collected once its frontier is full, so it never has:
//!   every relocation crosses planes and copyback never happens. Under
//!   [`GcDestination::InPlane`] (SSDSim's GC, which copies inside the plane) a plane that will
//!   need GC for its next block is collected as soon as its frontier's room falls to the fewest
//!   valid pages of its closed blocks: the victim's pages then fill the frontier by copyback, and
//!   its erase gives the plane its next block. The cost is spare area: the room kept for the
//!   copies idles until GC, so a frontier is (1 + u) / 2 idle on average instead of half (u the
//!   victim's utilisation), about 0.45 of a block per plane more at WA 9 (measured at 1 GiB,
//!   plsc: effective spare 0.0523 instead of 0.0590, as `SsdConfig::idle_pages` predicts, and
//!   greedy WA 9.49 instead of 8.43). Pages that do not fit (a policy victim with more valid
//!   pages, or a frontier that cross-plane relocations filled) spread.
//!
//! So the idle pages are the reserve and, on average, half of each open frontier (spread GC):
//! `SsdConfig::idle_pages`. Measured under uniform overwrites (`BlockSsd::measured_spare_factor`)
//! it agrees with that figure to the third decimal, and GC then lands on the large-block limit at the
//! effective spare factor (greedy a little below it, FIFO on it).
//!
//! A block is Free (erased), a Frontier (open for writes), Filled (a frontier written to its end,
//! waiting to be closed once its pages are on the media), Closed (a GC candidate) or a Victim
//! (being collected). Closed blocks sit in per-plane buckets by valid-page count, read from the
//! media (see `buckets`).

use std::collections::VecDeque;

use crate::error::Inconsistency;
use crate::geometry::Geometry;
use crate::media::Media;
use crate::ssd::buckets::Buckets;
use crate::ssd::config::{GcDestination, GcPolicy};
use crate::ssd::victim::{self, Candidate};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Use {
    Free,
    Frontier,
    Filled,
    Closed,
    Victim,
}

#[derive(Clone, Debug)]
struct PlaneSpace {
    /// Erased blocks, least recently erased first (a little wear levelling for free).
    free: VecDeque<u32>,
    /// The open block and the next page to hand out in it.
    frontier: Option<(u32, u32)>,
    /// Closed blocks (by index inside the plane) by valid pages.
    closed: Buckets,
    /// Closed blocks in the order they closed (FIFO victim policy).
    fifo: VecDeque<u32>,
}

pub(crate) struct Space {
    ppb: u32,
    blocks_per_plane: u32,
    policy: GcPolicy,
    destination: GcDestination,
    reserve: u64,
    free_total: u64,
    total_pages: u64,
    /// Pages handed out since their block's last erase (programmed or about to be).
    written_total: u64,
    planes: Vec<PlaneSpace>,
    uses: Vec<Use>,
    /// Media sequence number when each block closed (its age for cost-benefit GC).
    closed_at: Vec<u64>,
    stripe: Vec<u32>,
    host_cursor: usize,
    gc_cursor: usize,
    /// Frontiers written to their end, closed by [`Space::close_filled`].
    filled: Vec<u32>,
    /// Planes whose frontier filled: they may need GC to get their next block.
    pending: Vec<u32>,
}

impl Space {
    pub fn new(geo: &Geometry, policy: GcPolicy, reserve_blocks: u32, destination: GcDestination) -> Space {
        let (bpp, ppb) = (geo.blocks_per_plane, geo.pages_per_block);
        Space {
            ppb,
            blocks_per_plane: bpp,
            policy,
            destination,
            reserve: reserve_blocks as u64,
            free_total: geo.total_blocks(),
            total_pages: geo.total_pages(),
            written_total: 0,
            planes: (0..geo.total_planes())
                .map(|p| PlaneSpace {
                    free: (p * bpp..(p + 1) * bpp).collect(),
                    frontier: None,
                    closed: Buckets::new(bpp, ppb),
                    fifo: VecDeque::new(),
                })
                .collect(),
            uses: vec![Use::Free; geo.total_blocks() as usize],
            closed_at: vec![0; geo.total_blocks() as usize],
            stripe: geo.stripe_order(),
            host_cursor: 0,
            gc_cursor: 0,
            filled: Vec::new(),
            pending: Vec::new(),
        }
    }

    pub fn plane_count(&self) -> usize {
        self.planes.len()
    }

    pub fn free_blocks(&self) -> u64 {
        self.free_total
    }

    /// Pages that hold no data now: free blocks, unwritten pages of open (or cut-short) blocks.
    pub fn idle_pages(&self) -> u64 {
        self.total_pages - self.written_total
    }

    fn plane_of(&self, block: u32) -> usize {
        (block / self.blocks_per_plane) as usize
    }

    fn local(&self, block: u32) -> u32 {
        block % self.blocks_per_plane
    }

    fn room(&self, plane: usize) -> u32 {
        self.planes[plane].frontier.map_or(0, |(_, next)| self.ppb - next)
    }

    /// The next page for host data (or translation pages): the next plane in stripe order that has
    /// room in its frontier or a free block it may open. `None` when no plane has.
    pub fn host_page(&mut self) -> Option<u32> {
        for _ in 0..self.stripe.len() {
            let plane = self.stripe[self.host_cursor] as usize;
            self.host_cursor = (self.host_cursor + 1) % self.stripe.len();
            if self.room(plane) == 0 {
                if self.planes[plane].free.is_empty() || self.free_total <= self.reserve {
                    // Skipped until GC gives it a block.
                    self.mark_pending(plane);
                    continue;
                }
                self.open(plane);
            }
            let page = self.take_page(plane);
            if self.copy_ready(plane) {
                self.mark_pending(plane);
            }
            return page;
        }
        None
    }

    /// Under [`GcDestination::InPlane`]: whether `plane` should be collected now, while its
    /// frontier has just room for its emptiest closed block's valid pages, because its next block
    /// will have to come from GC (it has no free block host writes may open).
    pub fn copy_ready(&mut self, plane: usize) -> bool {
        let room = self.room(plane);
        self.destination == GcDestination::InPlane
            && room > 0
            && (self.planes[plane].free.is_empty() || self.free_total <= self.reserve)
            && self.min_valid(plane).is_some_and(|v| v >= room && v < self.ppb)
    }

    /// The next page for a page GC relocates out of `victim_plane`: its own frontier when it has
    /// room, else the next frontier with room in stripe order (so that relocations spread over the
    /// dies), else a free block (the victim's plane first). `None` only when the device has no
    /// free page at all.
    pub fn gc_page(&mut self, victim_plane: usize) -> Option<u32> {
        if self.room(victim_plane) > 0 {
            return self.take_page(victim_plane);
        }
        for _ in 0..self.stripe.len() {
            let plane = self.stripe[self.gc_cursor] as usize;
            self.gc_cursor = (self.gc_cursor + 1) % self.stripe.len();
            if self.room(plane) > 0 {
                return self.take_page(plane);
            }
        }
        let n = self.planes.len();
        let plane = (0..n).map(|i| (victim_plane + i) % n).find(|&p| !self.planes[p].free.is_empty())?;
        self.open(plane);
        self.take_page(plane)
    }

    /// Hands out the next page of `plane`'s frontier (`None`: it has no room).
    fn take_page(&mut self, plane: usize) -> Option<u32> {
        let room = self.room(plane);
        if room == 0 {
            return None;
        }
        let (block, next) = self.planes[plane].frontier.as_mut()?;
        let ppn = *block * self.ppb + *next;
        *next += 1;
        let block = *block;
        self.written_total += 1;
        if room == 1 {
            self.uses[block as usize] = Use::Filled;
            self.filled.push(block);
            self.mark_pending(plane);
        }
        Some(ppn)
    }

    /// Makes `plane`'s oldest free block its frontier (the caller checked there is one).
    fn open(&mut self, plane: usize) {
        if let Some(b) = self.planes[plane].free.pop_front() {
            self.free_total -= 1;
            self.uses[b as usize] = Use::Frontier;
            self.planes[plane].frontier = Some((b, 0));
        }
    }

    /// Whether `plane` cannot take another page without GC: its frontier is full or absent and it
    /// has no free block that host writes may open.
    pub fn needs_gc(&self, plane: usize) -> bool {
        self.room(plane) == 0 && (self.planes[plane].free.is_empty() || self.free_total <= self.reserve)
    }

    /// Whether relocations have taken free blocks out of the device-wide reserve.
    pub fn reserve_short(&self) -> bool {
        self.free_total < self.reserve
    }

    fn mark_pending(&mut self, plane: usize) {
        if !self.pending.contains(&(plane as u32)) {
            self.pending.push(plane as u32);
        }
    }

    /// A plane whose frontier filled, or that host writes skipped for want of a block, since the
    /// last call, if any.
    pub fn pop_pending(&mut self) -> Option<usize> {
        self.pending.pop().map(|p| p as usize)
    }

    /// Closes the frontiers written to their end, now that their pages are on the media.
    pub fn close_filled(&mut self, media: &Media) {
        while let Some(b) = self.filled.pop() {
            let plane = self.plane_of(b);
            if self.planes[plane].frontier.is_some_and(|(f, _)| f == b) {
                self.planes[plane].frontier = None;
            }
            self.close(b, media);
        }
    }

    fn close(&mut self, b: u32, media: &Media) {
        let (plane, local) = (self.plane_of(b), self.local(b));
        self.uses[b as usize] = Use::Closed;
        self.closed_at[b as usize] = media.next_seq();
        self.planes[plane].closed.insert(local, media.valid_pages(b));
        if matches!(self.policy, GcPolicy::Fifo) {
            self.planes[plane].fifo.push_back(b);
        }
    }

    /// Invalidates `ppn` on the media, keeping its block's place in the closed index.
    pub fn invalidate(&mut self, media: &mut Media, ppn: u32) {
        let b = ppn / self.ppb;
        if self.uses[b as usize] == Use::Closed {
            let (plane, local) = (self.plane_of(b), self.local(b));
            let valid = media.valid_pages(b);
            media.invalidate(ppn);
            let closed = &mut self.planes[plane].closed;
            closed.remove(local, valid);
            closed.insert(local, valid - 1);
        } else {
            media.invalidate(ppn);
        }
    }

    /// The fewest valid pages of a closed block of `plane`.
    pub fn min_valid(&mut self, plane: usize) -> Option<u32> {
        self.planes[plane].closed.lowest().map(|(valid, _)| valid)
    }

    /// Picks `plane`'s victim by policy and takes it out of the index. `None` when no closed block
    /// of the plane has a page that is not valid (collecting would free nothing).
    pub fn take_victim(&mut self, plane: usize, media: &Media) -> Option<u32> {
        let ppb = self.ppb;
        let first = plane as u32 * self.blocks_per_plane;
        let (min_valid, min_local) = self.planes[plane].closed.lowest()?;
        if min_valid >= ppb {
            return None;
        }
        let victim = match &self.policy {
            GcPolicy::Greedy => first + min_local,
            GcPolicy::Fifo => self.planes[plane].fifo.pop_front()?,
            GcPolicy::Scored(policy) => {
                let now = media.next_seq();
                let candidates =
                    self.planes[plane].closed.iter().filter(|&(valid, _)| valid < ppb).map(|(valid, local)| {
                        let block = first + local;
                        Candidate {
                            block,
                            valid_pages: valid,
                            pages_per_block: ppb,
                            age: now - self.closed_at[block as usize] + 1,
                            erase_count: media.erase_count(block),
                        }
                    });
                victim::best(policy.as_ref(), candidates)?
            }
        };
        let local = self.local(victim);
        self.planes[plane].closed.remove(local, media.valid_pages(victim));
        self.uses[victim as usize] = Use::Victim;
        Some(victim)
    }

    /// A collected victim, `written` pages of which were programmed, was erased: it is the plane's
    /// newest free block, and its frontier at once if the plane has none.
    pub fn erased(&mut self, block: u32, written: u32) {
        self.written_total -= written as u64;
        let plane = self.plane_of(block);
        self.uses[block as usize] = Use::Free;
        self.planes[plane].free.push_back(block);
        self.free_total += 1;
        if self.room(plane) == 0 && self.free_total > self.reserve {
            self.open(plane);
        }
    }

    /// After a power cut: frontiers are lost, and every block with a programmed page is closed as it
    /// stands (FIFO in the order the blocks closed before). Free blocks stay free, and so does a
    /// frontier nothing was written to.
    pub fn rebuild(&mut self, media: &Media) {
        for b in 0..self.uses.len() as u32 {
            if self.uses[b as usize] != Use::Free && media.write_pointer(b) == 0 {
                let plane = self.plane_of(b);
                self.uses[b as usize] = Use::Free;
                self.planes[plane].free.push_back(b);
                self.free_total += 1;
            }
        }
        self.filled.clear();
        self.pending.clear();
        for p in &mut self.planes {
            p.frontier = None;
            p.closed.clear();
            p.fifo.clear();
        }
        let mut closed: Vec<u32> = (0..self.uses.len() as u32).filter(|&b| media.write_pointer(b) > 0).collect();
        if matches!(self.policy, GcPolicy::Fifo) {
            closed.sort_by_key(|&b| self.closed_at[b as usize]);
        }
        for b in closed {
            let at = self.closed_at[b as usize];
            self.close(b, media);
            self.closed_at[b as usize] = at;
        }
    }

    /// Checks the indexes against the media: every closed block in the bucket of its valid count,
    /// frontiers where the media's write pointer is, the free and written page counts. Meant for
    /// tests.
    pub fn check(&self, media: &Media) -> Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: "BlockSsd", what };
        let mut free = 0;
        for (plane, p) in self.planes.iter().enumerate() {
            for (valid, local) in p.closed.iter() {
                let b = plane as u32 * self.blocks_per_plane + local;
                if self.uses[b as usize] != Use::Closed || media.valid_pages(b) != valid {
                    return Err(bad(format!(
                        "block {b} in bucket {valid} of plane {plane}: {:?} with {} valid pages",
                        self.uses[b as usize],
                        media.valid_pages(b)
                    )));
                }
            }
            if let Some((b, next)) = p.frontier {
                if media.write_pointer(b) != next {
                    return Err(bad(format!(
                        "frontier block {b} hands out page {next}, media at {}",
                        media.write_pointer(b)
                    )));
                }
            }
            free += p.free.len() as u64;
            if let Some(&b) = p.free.iter().find(|&&b| media.write_pointer(b) != 0) {
                return Err(bad(format!("free block {b} has programmed pages")));
            }
        }
        if free != self.free_total {
            return Err(bad(format!("{free} free blocks in the lists, {} counted", self.free_total)));
        }
        // At rest every block is free, a frontier or closed and indexed.
        let indexed: usize = self.planes.iter().map(|p| p.closed.iter().count()).sum();
        let closed = self.uses.iter().filter(|&&u| u == Use::Closed).count();
        let frontiers = self.planes.iter().filter(|p| p.frontier.is_some()).count();
        if indexed != closed || closed + frontiers + free as usize != self.uses.len() {
            return Err(bad(format!(
                "{} blocks: {closed} closed ({indexed} indexed), {frontiers} frontiers, {free} free",
                self.uses.len()
            )));
        }
        let written: u64 = (0..self.uses.len() as u32).map(|b| media.write_pointer(b) as u64).sum();
        if written != self.written_total {
            return Err(bad(format!("{written} pages written on the media, {} counted", self.written_total)));
        }
        Ok(())
    }
}

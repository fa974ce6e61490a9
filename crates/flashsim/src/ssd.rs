//! `BlockSsd`: a block-interface SSD with a page-level mapping FTL.
//!
//! The host addresses logical pages (LPNs) `0..user_pages`. Every call takes the simulated time at
//! which it is issued and returns the time at which it completes; the device never sleeps.
//!
//! Contract:
//! - `write` stores whole pages out of place; a page written with data reads back exactly.
//! - `read` of an LPN never written (or trimmed) returns zeros without touching NAND, as SSDs that
//!   report deterministic zeros after TRIM do; a mapped page whose data is not kept (metadata-only
//!   mode, `write_no_data`) is a `NoData` error, never made-up bytes.
//! - `remap(src, dst, n)`: afterwards `dst + i` reads what `src + i` held, with no NAND program;
//!   `src` keeps its data until it is overwritten or trimmed. An unmapped source page leaves its
//!   destination unmapped.
//! - `power_cut()` loses everything volatile (the DRAM map, the DFTL cache, open write frontiers)
//!   and rebuilds the map from page OOB areas and the NVRAM remap log; every completed operation
//!   survives (the model has no volatile write cache).
//!
//! Writes are striped page by page over the planes (channel first); GC works per plane; the remap
//! log (see `remap_log`) keeps the mappings that the OOB areas cannot express.

use crate::bits::BitSet;
use crate::config::{GcPolicy, MappingMode, SsdConfig};
use crate::counters::Counters;
use crate::dftl::Cmt;
use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::latency::{HostOp, Latencies};
use crate::planes::{BlockInfo, BlockState, Plane};
use crate::remap_log::{NvramUsage, RemapEntry, RemapLog};
use crate::store::PageStore;
use crate::timing::{Nanos, Timeline};

/// "No page" / "no LPN" in the mapping tables.
pub(crate) const NONE: u32 = u32::MAX;

/// A simulated block SSD.
pub struct BlockSsd {
    pub(crate) cfg: SsdConfig,
    pub(crate) geo: Geometry,
    user_pages: u64,
    pub(crate) timeline: Timeline,
    // Per LPN (user pages, then DFTL's translation pages).
    pub(crate) l2p: Vec<u32>,
    /// The LPN is mapped through a remap-log entry rather than by its page's OOB.
    pub(crate) via_log: BitSet,
    /// The LPN was trimmed while older copies of it remain on flash (a logged trim).
    pub(crate) trim_logged: BitSet,
    pub(crate) trim_entries: u64,
    /// Programmed, not yet erased pages whose OOB names the LPN.
    pub(crate) media_records: Vec<u32>,
    // Per PPN.
    pub(crate) oob_lpn: Vec<u32>,
    pub(crate) oob_seq: Vec<u64>,
    pub(crate) refs: Vec<u32>,
    pub(crate) blocks: Vec<BlockInfo>,
    pub(crate) planes: Vec<Plane>,
    pub(crate) log: RemapLog,
    stripe: Vec<u32>,
    cursor: usize,
    /// Program sequence number: stored in OOB so that recovery can tell copies of an LPN apart.
    pub(crate) seq: u64,
    pub(crate) store: PageStore,
    pub(crate) scratch: Vec<u8>,
    pub(crate) cmt: Option<Cmt>,
    /// Translation pages whose entries GC changed while uncached; written after the current operation.
    pub(crate) deferred_translation: Vec<u64>,
    pub(crate) counters: Counters,
    latencies: Latencies,
    placed: Vec<(u32, Nanos)>,
}

impl BlockSsd {
    /// Builds an erased device.
    pub fn new(cfg: SsdConfig) -> Result<BlockSsd> {
        cfg.validate()?;
        let geo = cfg.geometry.clone();
        let user_pages = cfg.user_pages();
        let lpns = user_pages + cfg.translation_pages();
        let pages = geo.total_pages();
        let blocks = geo.total_blocks();
        let planes = (0..geo.total_planes())
            .map(|p| Plane::new(p * geo.blocks_per_plane, geo.blocks_per_plane, geo.pages_per_block))
            .collect();
        // Seed 000 section 4.6: 16-bit page offset + 32-bit LPN; wider devices need 8 bytes.
        let entry_bytes = if lpns <= u32::MAX as u64 && geo.pages_per_block <= 1 << 16 { 6 } else { 8 };
        let cmt = match cfg.mapping {
            MappingMode::PageMapped => None,
            MappingMode::Dftl { cmt_entries } => Some(Cmt::new(cmt_entries, cfg.entries_per_translation_page())),
        };
        Ok(BlockSsd {
            timeline: Timeline::new(&cfg.timing, geo.total_dies(), geo.channels, geo.page_size),
            l2p: vec![NONE; lpns as usize],
            via_log: BitSet::new(lpns),
            trim_logged: BitSet::new(lpns),
            trim_entries: 0,
            media_records: vec![0; lpns as usize],
            oob_lpn: vec![NONE; pages as usize],
            oob_seq: vec![0; pages as usize],
            refs: vec![0; pages as usize],
            blocks: vec![BlockInfo::new(); blocks as usize],
            planes,
            log: RemapLog::new(blocks, cfg.remap_segment_entries, entry_bytes),
            stripe: geo.stripe_order(),
            cursor: 0,
            seq: 1,
            store: PageStore::new(&cfg.data, pages, geo.page_size)?,
            scratch: Vec::new(),
            cmt,
            deferred_translation: Vec::new(),
            counters: Counters::default(),
            latencies: Latencies::new(),
            placed: Vec::new(),
            user_pages,
            geo,
            cfg,
        })
    }

    pub fn config(&self) -> &SsdConfig {
        &self.cfg
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn page_size(&self) -> u32 {
        self.geo.page_size
    }

    /// LPNs the host can address.
    pub fn user_pages(&self) -> u64 {
        self.user_pages
    }

    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    pub fn latencies(&self) -> &Latencies {
        &self.latencies
    }

    pub fn reset_latencies(&mut self) {
        self.latencies.clear();
    }

    /// NVRAM the remap log occupies.
    pub fn nvram(&self) -> NvramUsage {
        self.log.usage()
    }

    /// Simulated time at which every die and channel is idle.
    pub fn idle_at(&self) -> Nanos {
        self.timeline.all_idle_at()
    }

    /// Whether `lpn` currently maps to a physical page.
    pub fn is_mapped(&self, lpn: u64) -> bool {
        (lpn < self.user_pages) && self.l2p[lpn as usize] != NONE
    }

    /// Free (erased) blocks over all planes.
    pub fn free_blocks(&self) -> u64 {
        self.planes.iter().map(|p| p.free.len() as u64).sum()
    }

    /// Erase counts per block (wear).
    pub fn erase_counts(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erase_count)
    }

    /// Writes whole pages of `data` starting at `lpn`.
    pub fn write(&mut self, at: Nanos, lpn: u64, data: &[u8]) -> Result<Nanos> {
        let pages = self.whole_pages(data.len(), "write")?;
        self.host_write(at, lpn, pages, Some(data))
    }

    /// Writes `pages` pages without keeping data: the accounting and timing of a write, for FTL
    /// studies and for callers that never read the pages back. Reading them is a `NoData` error.
    pub fn write_no_data(&mut self, at: Nanos, lpn: u64, pages: u64) -> Result<Nanos> {
        self.host_write(at, lpn, pages, None)
    }

    /// Reads whole pages into `buf` starting at `lpn`.
    pub fn read(&mut self, at: Nanos, lpn: u64, buf: &mut [u8]) -> Result<Nanos> {
        let pages = self.whole_pages(buf.len(), "read")?;
        self.check_range(lpn, pages)?;
        let ps = self.geo.page_size as usize;
        for i in 0..pages as usize {
            let l = lpn as usize + i;
            let out = &mut buf[i * ps..(i + 1) * ps];
            let ppn = self.l2p[l];
            if ppn == NONE {
                out.fill(0);
            } else if !self.store.get(ppn, out)? {
                return Err(FlashError::NoData { lpn: l as u64 });
            }
        }
        self.host_read_timing(at, lpn, pages)
    }

    /// The timing and accounting of a read, without data.
    pub fn read_no_data(&mut self, at: Nanos, lpn: u64, pages: u64) -> Result<Nanos> {
        self.check_range(lpn, pages)?;
        self.host_read_timing(at, lpn, pages)
    }

    /// Unmaps `pages` pages starting at `lpn`; they read as zeros afterwards.
    pub fn trim(&mut self, at: Nanos, lpn: u64, pages: u64) -> Result<Nanos> {
        self.check_range(lpn, pages)?;
        let t = self.translate_range(at, lpn, pages, true)?;
        for l in lpn as u32..(lpn + pages) as u32 {
            self.unmap(l);
            self.log_trim_if_needed(l);
        }
        self.counters.host_trim_pages += pages;
        let done = self.finish_internal_work(t)?;
        self.latencies.record(HostOp::Trim, done - at);
        Ok(done)
    }

    /// Makes `dst..dst+pages` map to the physical pages of `src..src+pages`: no NAND program.
    pub fn remap(&mut self, at: Nanos, src: u64, dst: u64, pages: u64) -> Result<Nanos> {
        self.check_range(src, pages)?;
        self.check_range(dst, pages)?;
        if src < dst + pages && dst < src + pages {
            return Err(FlashError::OverlappingRemap { src, dst, len: pages });
        }
        let t = self.translate_range(at, src, pages, false)?;
        let t = self.translate_range(t, dst, pages, true)?;
        for i in 0..pages as u32 {
            let (s, d) = (src as u32 + i, dst as u32 + i);
            let ppn = self.l2p[s as usize];
            self.unmap(d);
            if ppn == NONE {
                self.log_trim_if_needed(d);
                continue;
            }
            self.l2p[d as usize] = ppn;
            self.refs[ppn as usize] += 1;
            self.via_log.set(d, true);
            let block = self.geo.block_of(ppn);
            self.log.push(block, RemapEntry { page: ppn % self.geo.pages_per_block, lpn: d });
            self.counters.remapped_pages += 1;
        }
        let done = self.finish_internal_work(t)?;
        self.latencies.record(HostOp::Remap, done - at);
        Ok(done)
    }

    fn host_write(&mut self, at: Nanos, lpn: u64, pages: u64, data: Option<&[u8]>) -> Result<Nanos> {
        self.check_range(lpn, pages)?;
        let t = self.translate_range(at, lpn, pages, true)?;
        let done = self.write_pages(t, lpn as u32, pages as u32, data)?;
        let done = self.finish_internal_work(done)?;
        self.counters.host_write_pages += pages;
        self.latencies.record(HostOp::Write, done - at);
        Ok(done)
    }

    fn host_read_timing(&mut self, at: Nanos, lpn: u64, pages: u64) -> Result<Nanos> {
        let t = self.translate_range(at, lpn, pages, false)?;
        let mut done = t;
        self.placed.clear();
        for l in lpn..lpn + pages {
            let ppn = self.l2p[l as usize];
            if ppn != NONE {
                self.placed.push((ppn, t));
            }
        }
        let placed = std::mem::take(&mut self.placed);
        done = done.max(self.issue(&placed, Issue::Read));
        self.placed = placed;
        let done = self.finish_internal_work(done)?;
        self.counters.host_read_pages += pages;
        self.latencies.record(HostOp::Read, done - at);
        Ok(done)
    }

    /// Programs `pages` pages for LPNs `lpn..` (host data or translation pages), waiting for
    /// foreground GC where a plane has run out of free blocks; returns the completion time.
    pub(crate) fn write_pages(&mut self, at: Nanos, lpn: u32, pages: u32, data: Option<&[u8]>) -> Result<Nanos> {
        let ps = self.geo.page_size as usize;
        let mut placed = std::mem::take(&mut self.placed);
        placed.clear();
        for i in 0..pages {
            let l = lpn + i;
            let (ppn, ready) = match self.allocate_host_page(at, l) {
                Ok(x) => x,
                Err(e) => {
                    self.placed = placed;
                    return Err(e);
                }
            };
            self.unmap(l);
            let page = data.map(|d| &d[i as usize * ps..(i as usize + 1) * ps]);
            if let Err(e) = self.bind_new_page(ppn, l, page) {
                self.placed = placed;
                return Err(e);
            }
            placed.push((ppn, ready));
        }
        let done = self.issue(&placed, Issue::Program).max(at);
        // Background GC: one victim per plane written that is short of free blocks.
        for &(ppn, _) in &placed {
            let plane = self.geo.plane_of_block(self.geo.block_of(ppn)) as usize;
            if (self.planes[plane].free.len() as u32) < self.cfg.gc_background_blocks {
                self.collect(plane, done, false)?;
            }
        }
        self.placed = placed;
        Ok(done)
    }

    /// Picks the next plane in stripe order that can take a page, running foreground GC on it when
    /// it is out of free blocks. Returns the page and the time the host can program it.
    fn allocate_host_page(&mut self, at: Nanos, lpn: u32) -> Result<(u32, Nanos)> {
        for _ in 0..self.stripe.len() {
            let plane = self.stripe[self.cursor] as usize;
            self.cursor = (self.cursor + 1) % self.stripe.len();
            let mut ready = at;
            loop {
                if let Some(ppn) = self.take_page(plane, true) {
                    return Ok((ppn, ready));
                }
                match self.collect(plane, ready, true)? {
                    Some(done) => ready = done,
                    None => break, // every closed block of this plane is fully valid: try the next
                }
            }
        }
        Err(FlashError::DeviceFull { op: "write", lpn: lpn as u64 })
    }

    /// The next page of `plane`'s write frontier, opening a free block if needed. Host writes leave
    /// `gc_reserve_blocks` free blocks to GC.
    pub(crate) fn take_page(&mut self, plane: usize, host: bool) -> Option<u32> {
        let ppb = self.geo.pages_per_block;
        if let Some(b) = self.planes[plane].open {
            let info = &mut self.blocks[b as usize];
            if info.written < ppb {
                info.written += 1;
                return Some(b * ppb + info.written - 1);
            }
            self.close_block(plane, b);
        }
        let reserve = if host { self.cfg.gc_reserve_blocks as usize } else { 0 };
        if self.planes[plane].free.len() <= reserve {
            return None;
        }
        let b = self.planes[plane].free.pop_front()?;
        let info = &mut self.blocks[b as usize];
        info.state = BlockState::Open;
        info.written = 1;
        self.planes[plane].open = Some(b);
        Some(b * ppb)
    }

    pub(crate) fn close_block(&mut self, plane: usize, b: u32) {
        let info = &mut self.blocks[b as usize];
        info.state = BlockState::Closed;
        info.closed_at = self.seq;
        let p = &mut self.planes[plane];
        p.open = None;
        p.insert_closed(&mut self.blocks, b);
        if self.cfg.gc_policy == GcPolicy::Fifo {
            p.closed_order.push_back(b);
        }
    }

    /// Records a freshly programmed page as the only mapping of `lpn`.
    pub(crate) fn bind_new_page(&mut self, ppn: u32, lpn: u32, data: Option<&[u8]>) -> Result<()> {
        self.oob_lpn[ppn as usize] = lpn;
        self.oob_seq[ppn as usize] = self.seq;
        self.seq += 1;
        self.refs[ppn as usize] = 1;
        self.blocks[self.geo.block_of(ppn) as usize].valid += 1;
        self.media_records[lpn as usize] += 1;
        self.l2p[lpn as usize] = ppn;
        self.store.put(ppn, data)
    }

    /// Drops `lpn`'s mapping (and its remap or trim entry); its old page loses a reference.
    pub(crate) fn unmap(&mut self, lpn: u32) {
        let old = self.l2p[lpn as usize];
        if old != NONE {
            if self.via_log.get(lpn) {
                self.log.remove(self.geo.block_of(old), lpn);
                self.via_log.set(lpn, false);
            }
            self.deref_page(old);
            self.l2p[lpn as usize] = NONE;
        }
        if self.trim_logged.get(lpn) {
            self.trim_logged.set(lpn, false);
            self.trim_entries -= 1;
            self.log.set_trim_entries(self.trim_entries);
        }
    }

    /// A trimmed LPN with stale copies on flash needs a trim entry, or recovery would revive a copy.
    fn log_trim_if_needed(&mut self, lpn: u32) {
        if self.media_records[lpn as usize] > 0 && !self.trim_logged.get(lpn) {
            self.trim_logged.set(lpn, true);
            self.trim_entries += 1;
            self.log.set_trim_entries(self.trim_entries);
        }
    }

    pub(crate) fn deref_page(&mut self, ppn: u32) {
        let r = &mut self.refs[ppn as usize];
        *r -= 1;
        if *r > 0 {
            return;
        }
        let b = self.geo.block_of(ppn);
        if self.blocks[b as usize].state == BlockState::Closed {
            let plane = self.geo.plane_of_block(b) as usize;
            self.planes[plane].remove_closed(&mut self.blocks, b);
            self.blocks[b as usize].valid -= 1;
            self.planes[plane].insert_closed(&mut self.blocks, b);
        } else {
            self.blocks[b as usize].valid -= 1;
        }
    }

    /// Issues NAND reads or programs for `placed` (page, earliest start), grouping pages on
    /// distinct planes of one die at the same page offset into multi-plane commands when enabled.
    pub(crate) fn issue(&mut self, placed: &[(u32, Nanos)], kind: Issue) -> Nanos {
        let mut done = 0;
        if !self.cfg.multi_plane || placed.len() < 2 {
            for &(ppn, ready) in placed {
                let a = self.geo.addr(ppn);
                done = done.max(self.nand(kind, ready, a.die, a.channel, 1));
            }
            return done;
        }
        let mut order: Vec<(u32, u32, u32, Nanos)> = placed
            .iter()
            .map(|&(ppn, ready)| {
                let a = self.geo.addr(ppn);
                (a.die, a.page, a.plane, ready)
            })
            .collect();
        order.sort_unstable();
        let mut i = 0;
        while i < order.len() {
            let (die, page, plane, ready) = order[i];
            let mut j = i + 1;
            let mut last_plane = plane;
            while j < order.len()
                && j - i < self.geo.planes_per_die as usize
                && order[j].0 == die
                && order[j].1 == page
                && order[j].2 != last_plane
            {
                last_plane = order[j].2;
                j += 1;
            }
            let ready = order[i..j].iter().map(|o| o.3).max().unwrap_or(ready);
            let n = (j - i) as u32;
            if n > 1 {
                self.counters.multi_plane_ops += 1;
            }
            let channel = self.geo.channel_of_die(die);
            done = done.max(self.nand(kind, ready, die, channel, n));
            i = j;
        }
        done
    }

    fn nand(&mut self, kind: Issue, at: Nanos, die: u32, channel: u32, pages: u32) -> Nanos {
        match kind {
            Issue::Read => {
                self.counters.nand_reads += pages as u64;
                self.timeline.read(at, die, channel, pages)
            }
            Issue::Program => {
                self.counters.nand_programs += pages as u64;
                self.timeline.program(at, die, channel, pages)
            }
        }
    }

    fn whole_pages(&self, len: usize, op: &'static str) -> Result<u64> {
        let ps = self.geo.page_size;
        if len % ps as usize != 0 {
            return Err(FlashError::Misaligned { op, len, page_size: ps });
        }
        Ok((len / ps as usize) as u64)
    }

    fn check_range(&self, lpn: u64, pages: u64) -> Result<()> {
        match lpn.checked_add(pages) {
            Some(end) if end <= self.user_pages => Ok(()),
            _ => Err(FlashError::OutOfRange { lpn, len: pages, capacity: self.user_pages }),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Issue {
    Read,
    Program,
}

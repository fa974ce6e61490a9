//! `BlockSsd`: a block-interface SSD, one FTL on the media layer: page-level mapping, GC, TRIM,
//! `remap` with an NVRAM remap log, an optional DFTL mapping cache, power-cut recovery.
//!
//! The host addresses logical pages (LPNs) `0..user_pages`. Every call takes the simulated time at
//! which it is issued and the host's label for the I/O, and returns the time at which it completes;
//! the device never sleeps.
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
//! Every flash operation carries its cause: the host's label for host data, `Gc` for relocations
//! and erases, `Mapping` for DFTL's translation pages. Writes are striped page by page over the
//! planes (channel first); where pages go and how GC keeps room is `space`'s design; the remap log
//! (see `remap_log`) keeps the mappings that the OOB areas cannot express.

mod buckets;
pub(crate) mod config;
mod counters;
pub(crate) mod dftl;
mod gc;
mod map;
mod recovery;
pub(crate) mod remap_log;
mod space;
mod translation;
pub mod victim;

pub use config::{GcDestination, GcPolicy, MappingMode, SsdConfig};
pub use counters::{Counters, FlashReport, FtlCounters};
pub use victim::{Candidate, VictimPolicy};

use crate::cause::{Cause, HostLabel};
use crate::error::{FlashError, Result};
use crate::ftl::{self, Ftl};
use crate::latency::HostOp;
use crate::media::{Media, PageWrite, Wear};
use crate::timing::Nanos;
use dftl::Cmt;
use map::{PageMap, NONE};
use remap_log::NvramUsage;
use space::Space;

/// A simulated block SSD.
pub struct BlockSsd {
    cfg: SsdConfig,
    user_pages: u64,
    media: Media,
    map: PageMap,
    space: Space,
    cmt: Option<Cmt>,
    /// Translation pages whose entries GC changed while uncached; written after the current operation.
    deferred_translation: Vec<u64>,
    counters: FtlCounters,
    /// Pages placed but not yet programmed: (PPN, LPN, earliest start). Reused between writes.
    placed: Vec<(u32, u32, Nanos)>,
    /// Pages of a host read: (PPN, earliest start). Reused between reads.
    reads: Vec<(u32, Nanos)>,
    /// GC's per-page flags of its victim. Reused between collections.
    gc_scratch: Vec<bool>,
}

impl BlockSsd {
    /// Builds an erased device.
    pub fn new(cfg: SsdConfig) -> Result<BlockSsd> {
        cfg.validate()?;
        let media = Media::new(&cfg.media)?;
        let geo = media.geometry().clone();
        let user_pages = cfg.user_pages();
        let lpns = user_pages + cfg.translation_pages();
        let cmt = match cfg.mapping {
            MappingMode::PageMapped => None,
            MappingMode::Dftl { cmt_entries } => Some(Cmt::new(cmt_entries, cfg.entries_per_translation_page())),
        };
        Ok(BlockSsd {
            map: PageMap::new(
                lpns,
                geo.total_pages(),
                geo.total_blocks(),
                geo.pages_per_block,
                cfg.remap_segment_entries,
            ),
            space: Space::new(&geo, cfg.gc_policy.clone(), cfg.gc_reserve_blocks, cfg.gc_destination),
            media,
            cmt,
            deferred_translation: Vec::new(),
            counters: FtlCounters::default(),
            placed: Vec::new(),
            reads: Vec::new(),
            gc_scratch: Vec::new(),
            user_pages,
            cfg,
        })
    }

    pub fn config(&self) -> &SsdConfig {
        &self.cfg
    }

    /// Erases per block.
    pub fn wear(&self) -> Wear {
        self.media.wear()
    }

    /// Simulated time at which every die and channel is idle.
    pub fn idle_at(&self) -> Nanos {
        self.media.idle_at()
    }

    /// Free (erased) blocks over all planes.
    pub fn free_blocks(&self) -> u64 {
        self.space.free_blocks()
    }

    fn host_write(&mut self, at: Nanos, lpn: u64, pages: u64, data: Option<&[u8]>, label: HostLabel) -> Result<Nanos> {
        self.check_range(lpn, pages)?;
        self.media.arrive(at);
        let t = self.translate_range(at, lpn, pages, true)?;
        let done = self.write_pages(t, lpn as u32, pages as u32, data, Cause::Host(label))?;
        let done = self.finish_internal_work(done)?;
        self.counters.host_write_pages += pages;
        self.media.record_latency(HostOp::Write, done - at);
        Ok(done)
    }

    fn host_read_timing(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> Result<Nanos> {
        let t = self.translate_range(at, lpn, pages, false)?;
        let mut reads = std::mem::take(&mut self.reads);
        reads.clear();
        // Unmapped pages read as zeros without touching NAND.
        reads.extend((lpn..lpn + pages).map(|l| (self.map.get(l as u32), t)).filter(|&(ppn, _)| ppn != NONE));
        let r = self.media.read(&reads, Cause::Host(label));
        self.reads = reads;
        let done = r?.max(t);
        let done = self.finish_internal_work(done)?;
        self.counters.host_read_pages += pages;
        self.media.record_latency(HostOp::Read, done - at);
        Ok(done)
    }

    /// Programs `pages` pages for LPNs `lpn..` (host data or translation pages). Pages are placed
    /// by `space`; where no plane has room, what is placed is programmed and the host waits for GC
    /// (foreground). Planes whose frontier filled are collected afterwards (background GC: its
    /// relocations and erases join their dies' queues with the write that set it off, and start
    /// when their dies are free). Returns when the programs complete.
    fn write_pages(&mut self, at: Nanos, lpn: u32, pages: u32, data: Option<&[u8]>, cause: Cause) -> Result<Nanos> {
        let mut placed = std::mem::take(&mut self.placed);
        placed.clear();
        let r = self.place_and_program(at, lpn, pages, data, cause, &mut placed);
        self.placed = placed;
        let done = r?;
        self.collect_pending(at)?;
        Ok(done)
    }

    fn place_and_program(
        &mut self,
        at: Nanos,
        lpn: u32,
        pages: u32,
        data: Option<&[u8]>,
        cause: Cause,
        placed: &mut Vec<(u32, u32, Nanos)>,
    ) -> Result<Nanos> {
        let mut ready = at;
        let mut done = at;
        for i in 0..pages {
            let l = lpn + i;
            let ppn = loop {
                if let Some(ppn) = self.space.host_page() {
                    break ppn;
                }
                done = done.max(self.program_placed(placed, lpn, data, cause)?);
                ready = self.foreground_gc(ready, l)?;
            };
            self.unmap(l);
            self.map.bind(l, ppn);
            placed.push((ppn, l, ready));
            if cause.is_host() {
                self.counters.idle_page_samples += self.space.idle_pages();
            }
        }
        Ok(done.max(self.program_placed(placed, lpn, data, cause)?))
    }

    /// Programs the placed pages (their data is page `l - first` of `data`) and closes the frontiers
    /// they filled.
    fn program_placed(
        &mut self,
        placed: &mut Vec<(u32, u32, Nanos)>,
        first: u32,
        data: Option<&[u8]>,
        cause: Cause,
    ) -> Result<Nanos> {
        if placed.is_empty() {
            return Ok(0);
        }
        let ps = self.page_size() as usize;
        let writes: Vec<PageWrite> = placed
            .iter()
            .map(|&(ppn, l, ready)| {
                let i = (l - first) as usize;
                PageWrite { ppn, ready, owner: l, data: data.map(|d| &d[i * ps..(i + 1) * ps]) }
            })
            .collect();
        let done = self.media.program(&writes, cause);
        placed.clear();
        self.space.close_filled(&self.media);
        done
    }

    /// Drops `lpn`'s mapping; a page that lost its last reference is invalidated on the media.
    fn unmap(&mut self, lpn: u32) {
        if let Some(ppn) = self.map.unmap(lpn) {
            self.space.invalidate(&mut self.media, ppn);
        }
    }

    fn whole_pages(&self, len: usize, op: &'static str) -> Result<u64> {
        ftl::whole_pages(len, self.page_size(), op)
    }

    fn check_range(&self, lpn: u64, pages: u64) -> Result<()> {
        ftl::check_range(lpn, pages, self.user_pages)
    }
}

impl std::fmt::Debug for BlockSsd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockSsd").field("user_pages", &self.user_pages).field("counters", &self.counters).finish()
    }
}

impl Ftl for BlockSsd {
    fn name(&self) -> &str {
        "page"
    }

    /// LPNs the host can address.
    fn user_pages(&self) -> u64 {
        self.user_pages
    }

    /// Everything under the project's accounting names.
    fn report(&self) -> FlashReport {
        flash_report(self)
    }

    /// NVRAM the remap log occupies.
    fn nvram(&self) -> NvramUsage {
        self.map.log.usage()
    }

    /// The media layer under the FTL (read-only: block states, OOB, counters, wear).
    fn media(&self) -> &Media {
        &self.media
    }

    /// Whether `lpn` currently maps to a physical page.
    fn is_mapped(&self, lpn: u64) -> bool {
        (lpn < self.user_pages) && self.map.get(lpn as u32) != NONE
    }

    fn prefetch(&self, lpn: u64) {
        if lpn < self.user_pages {
            self.map.prefetch(lpn as u32);
        }
    }

    /// The spare factor GC worked with over the window `c` (a delta of [`Ftl::counters`]):
    /// 1 - (user + translation pages) / (physical pages - the mean idle pages as host pages were
    /// placed: free blocks and the unwritten part of open blocks). Without host writes in the
    /// window, the idle pages now. Meaningful once the host has filled the device; at steady state
    /// it is close to [`SsdConfig::effective_spare_factor`], the FTL's design figure.
    fn measured_spare_factor(&self, c: &Counters) -> f64 {
        let idle = match c.ftl.host_write_pages {
            0 => self.space.idle_pages() as f64,
            n => c.ftl.idle_page_samples as f64 / n as f64,
        };
        let held = (self.user_pages + self.cfg.translation_pages()) as f64;
        1.0 - held / (self.geometry().total_pages() as f64 - idle)
    }

    /// Writes whole pages of `data` starting at `lpn`.
    fn write(&mut self, at: Nanos, lpn: u64, data: &[u8], label: HostLabel) -> Result<Nanos> {
        let pages = self.whole_pages(data.len(), "write")?;
        self.host_write(at, lpn, pages, Some(data), label)
    }

    /// Writes `pages` pages without keeping data: the accounting and timing of a write, for FTL
    /// studies and for callers that never read the pages back. Reading them is a `NoData` error.
    fn write_no_data(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> Result<Nanos> {
        self.host_write(at, lpn, pages, None, label)
    }

    /// Reads whole pages into `buf` starting at `lpn`.
    fn read(&mut self, at: Nanos, lpn: u64, buf: &mut [u8], label: HostLabel) -> Result<Nanos> {
        let pages = self.whole_pages(buf.len(), "read")?;
        self.check_range(lpn, pages)?;
        self.media.arrive(at);
        self.contents(lpn, buf)?;
        self.host_read_timing(at, lpn, pages, label)
    }

    fn contents(&self, lpn: u64, buf: &mut [u8]) -> Result<()> {
        let pages = self.whole_pages(buf.len(), "read")?;
        self.check_range(lpn, pages)?;
        let ps = self.page_size() as usize;
        for i in 0..pages as usize {
            let l = lpn as usize + i;
            let out = &mut buf[i * ps..(i + 1) * ps];
            let ppn = self.map.get(l as u32);
            if ppn == NONE {
                out.fill(0);
            } else if !self.media.contents(ppn, out)? {
                return Err(FlashError::NoData { lpn: l as u64 });
            }
        }
        Ok(())
    }

    /// The timing and accounting of a read, without data.
    fn read_no_data(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> Result<Nanos> {
        self.check_range(lpn, pages)?;
        self.media.arrive(at);
        self.host_read_timing(at, lpn, pages, label)
    }

    /// Unmaps `pages` pages starting at `lpn`; they read as zeros afterwards.
    fn trim(&mut self, at: Nanos, lpn: u64, pages: u64) -> Result<Nanos> {
        self.check_range(lpn, pages)?;
        self.media.arrive(at);
        let t = self.translate_range(at, lpn, pages, true)?;
        for l in lpn as u32..(lpn + pages) as u32 {
            self.unmap(l);
            self.map.log_trim_if_needed(l);
        }
        self.counters.host_trim_pages += pages;
        let done = self.finish_internal_work(t)?;
        self.media.record_latency(HostOp::Trim, done - at);
        Ok(done)
    }

    /// Makes `dst..dst+pages` map to the physical pages of `src..src+pages`: no NAND program.
    fn remap(&mut self, at: Nanos, src: u64, dst: u64, pages: u64) -> Result<Nanos> {
        self.check_range(src, pages)?;
        self.check_range(dst, pages)?;
        if src < dst + pages && dst < src + pages {
            return Err(FlashError::OverlappingRemap { src, dst, len: pages });
        }
        self.media.arrive(at);
        let t = self.translate_range(at, src, pages, false)?;
        let t = self.translate_range(t, dst, pages, true)?;
        for i in 0..pages as u32 {
            let (s, d) = (src as u32 + i, dst as u32 + i);
            let ppn = self.map.get(s);
            self.unmap(d);
            if ppn == NONE {
                self.map.log_trim_if_needed(d);
                continue;
            }
            self.map.share(d, ppn);
            self.counters.remapped_pages += 1;
        }
        let done = self.finish_internal_work(t)?;
        self.media.record_latency(HostOp::Remap, done - at);
        Ok(done)
    }

    fn media_mut(&mut self) -> &mut Media {
        &mut self.media
    }

    fn power_cut(&mut self) {
        self.recover()
    }

    fn ftl_counters(&self) -> FtlCounters {
        self.counters
    }

    fn design_spare_factor(&self) -> f64 {
        self.cfg.spare_factor
    }
}

/// The report of a block SSD: its FTL's counts beside its media's.
fn flash_report(ssd: &BlockSsd) -> FlashReport {
    let ps = ssd.page_size() as u64;
    let c = ssd.counters();
    FlashReport {
        host_write_bytes: c.ftl.host_write_pages * ps,
        host_read_bytes: c.ftl.host_read_pages * ps,
        host_trim_bytes: c.ftl.host_trim_pages * ps,
        flash_program_bytes: c.flash.programs * ps,
        flash_read_bytes: c.flash.reads * ps,
        erases: c.flash.erases,
        gc_copied_pages: c.ftl.gc_copied_pages,
        copybacks: c.flash.copybacks,
        remapped_pages: c.ftl.remapped_pages,
        device_write_amplification: c.write_amplification(),
        flash_busy_s: c.flash.busy_ns as f64 / 1e9,
        flash_by_cause: c.flash.by_cause_report(),
        out_of_order: c.flash.out_of_order,
        out_of_order_ns: c.flash.out_of_order_ns,
        head_of_line_ns: c.flash.head_of_line_ns,
        wear: ssd.wear(),
        spare_factor: ssd.config().spare_factor,
        effective_spare_factor: ssd.config().effective_spare_factor(),
        nvram: ssd.nvram(),
        ftl: c.ftl,
    }
}

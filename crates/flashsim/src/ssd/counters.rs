//! Exact accounting of what the host asked of a block SSD and what its FTL and NAND did.
//!
//! [`Counters`] are raw event counts: the FTL's own ([`FtlCounters`]) beside the media's
//! ([`FlashCounters`], per cause). [`FlashReport`] puts them under the names every JSON result of the
//! project uses (DESIGN.md: `flash_program_bytes`, `flash_read_bytes`, `erases`, `gc_copied_pages`,
//! `copybacks`, `remapped_pages`, ...). GC relocations count as NAND programs; remaps program
//! nothing and only count as `remapped_pages`.

use serde::Serialize;

use crate::media::{CauseReport, FlashCounters, Wear};
use crate::ssd::remap_log::NvramUsage;

/// What the FTL did, apart from NAND operations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FtlCounters {
    /// Pages the host asked to write (including pages written without data).
    pub host_write_pages: u64,
    /// Pages the host asked to read.
    pub host_read_pages: u64,
    /// Pages the host trimmed.
    pub host_trim_pages: u64,
    /// Pages the host remapped (destination pages that now share a source page).
    pub remapped_pages: u64,
    /// Valid pages GC relocated (by copyback or by read + program).
    pub gc_copied_pages: u64,
    /// Victim blocks collected.
    pub gc_runs: u64,
    /// GC runs the host had to wait for (no plane had room).
    pub foreground_gc_runs: u64,
    /// DFTL: translation page reads on mapping-cache misses (and read-modify-write on write back).
    pub translation_reads: u64,
    /// DFTL: translation page programs when dirty cached entries are written back.
    pub translation_writes: u64,
    /// DFTL: mapping-cache lookups that hit.
    pub cmt_hits: u64,
    /// DFTL: mapping-cache lookups that missed.
    pub cmt_misses: u64,
    /// Power cuts survived (each followed by a rebuild of the mapping).
    pub power_cuts: u64,
    /// Idle pages (free, or unwritten in open blocks) summed over the host pages written, each
    /// sampled as it was placed: over a window, `/ host_write_pages` is the mean idle area.
    pub idle_page_samples: u64,
}

impl FtlCounters {
    fn delta(&self, e: &FtlCounters) -> FtlCounters {
        FtlCounters {
            host_write_pages: self.host_write_pages - e.host_write_pages,
            host_read_pages: self.host_read_pages - e.host_read_pages,
            host_trim_pages: self.host_trim_pages - e.host_trim_pages,
            remapped_pages: self.remapped_pages - e.remapped_pages,
            gc_copied_pages: self.gc_copied_pages - e.gc_copied_pages,
            gc_runs: self.gc_runs - e.gc_runs,
            foreground_gc_runs: self.foreground_gc_runs - e.foreground_gc_runs,
            translation_reads: self.translation_reads - e.translation_reads,
            translation_writes: self.translation_writes - e.translation_writes,
            cmt_hits: self.cmt_hits - e.cmt_hits,
            cmt_misses: self.cmt_misses - e.cmt_misses,
            power_cuts: self.power_cuts - e.power_cuts,
            idle_page_samples: self.idle_page_samples - e.idle_page_samples,
        }
    }
}

/// A block SSD's counts: the FTL's and the NAND's. `Copy`, so that a window of a run is
/// `later.delta(&earlier)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    pub ftl: FtlCounters,
    pub flash: FlashCounters,
}

impl Counters {
    pub(crate) fn new(ftl: FtlCounters, flash: FlashCounters) -> Counters {
        Counters { ftl, flash }
    }

    /// What happened between `earlier` and `self`.
    pub fn delta(&self, earlier: &Counters) -> Counters {
        Counters { ftl: self.ftl.delta(&earlier.ftl), flash: self.flash.delta(&earlier.flash) }
    }

    /// NAND programs per host page written; `None` before the host wrote anything.
    pub fn write_amplification(&self) -> Option<f64> {
        (self.ftl.host_write_pages > 0).then(|| self.flash.programs as f64 / self.ftl.host_write_pages as f64)
    }
}

/// A block SSD's accounting under the project's names.
#[derive(Clone, Debug, Serialize)]
pub struct FlashReport {
    pub host_write_bytes: u64,
    pub host_read_bytes: u64,
    pub host_trim_bytes: u64,
    /// NAND page programs x page size, GC relocations included, remaps excluded.
    pub flash_program_bytes: u64,
    pub flash_read_bytes: u64,
    pub erases: u64,
    pub gc_copied_pages: u64,
    pub copybacks: u64,
    pub remapped_pages: u64,
    /// NAND programs / host page writes (the device's own amplification, below any file system).
    pub device_write_amplification: Option<f64>,
    /// Die time of every flash operation, summed over dies.
    pub flash_busy_s: f64,
    /// Pages, erases and die time per cause.
    pub flash_by_cause: Vec<CauseReport>,
    /// Operations that reached the flash after one issued later in simulated time, and by how
    /// much they were late, summed (see `FlashCounters::out_of_order`).
    pub out_of_order: u64,
    pub out_of_order_ns: u64,
    /// Die time lost to operations queued before their input was ready (a program waiting for its
    /// read, an erase for its relocations; see `Timeline::arrive`).
    pub head_of_line_ns: u64,
    pub wear: Wear,
    /// The configured spare factor, and the one GC works with once the FTL's own idle pages
    /// (GC reserve, open frontiers) are taken out.
    pub spare_factor: f64,
    pub effective_spare_factor: f64,
    pub nvram: NvramUsage,
    pub ftl: FtlCounters,
}

impl FlashReport {
    /// The report of a device that is an FTL of its own on `media` (a key-value SSD): `ftl`
    /// holds its host page counts (the report's host bytes), GC's relocations are the pages
    /// programmed for `Cause::Gc`, and `spare_factor` is the share of raw pages the design keeps
    /// from the host.
    pub fn of_media(media: &crate::Media, ftl: FtlCounters, spare_factor: f64) -> FlashReport {
        let ps = media.geometry().page_size as u64;
        let c = media.counters();
        FlashReport {
            host_write_bytes: ftl.host_write_pages * ps,
            host_read_bytes: ftl.host_read_pages * ps,
            host_trim_bytes: 0,
            flash_program_bytes: c.programs * ps,
            flash_read_bytes: c.reads * ps,
            erases: c.erases,
            gc_copied_pages: c.cause(crate::Cause::Gc).programs,
            copybacks: c.copybacks,
            remapped_pages: 0,
            device_write_amplification: (ftl.host_write_pages > 0)
                .then(|| c.programs as f64 / ftl.host_write_pages as f64),
            flash_busy_s: c.busy_ns as f64 / 1e9,
            flash_by_cause: c.by_cause_report(),
            out_of_order: c.out_of_order,
            out_of_order_ns: c.out_of_order_ns,
            head_of_line_ns: c.head_of_line_ns,
            wear: media.wear(),
            spare_factor,
            effective_spare_factor: spare_factor,
            nvram: NvramUsage::default(),
            ftl,
        }
    }
}

//! `Ftl`: what a block-interface SSD offers its host, whatever its flash translation layer. The
//! built-in one is [`BlockSsd`](crate::BlockSsd) (page-level mapping, GC, remap); a researcher's
//! own FTL implements this trait on a [`Media`] of its own and runs under the same file system,
//! engine and reports (see docs/extending.md).
//!
//! Contract, for every FTL:
//! - The host addresses logical pages (LPNs) `0..user_pages()`; a range beyond is
//!   [`FlashError::OutOfRange`], a buffer that is not whole pages [`FlashError::Misaligned`], and
//!   neither changes anything.
//! - Every call takes the simulated time at which it is issued and returns the time at which it
//!   completes, never earlier; nothing sleeps.
//! - `write` stores whole pages; `read` returns what the last write of each page stored, zeros
//!   for a page never written or trimmed; a page written without data (`write_no_data`) reads as
//!   [`FlashError::NoData`], never as made-up bytes.
//! - Every NAND operation goes through the FTL's [`Media`], under its cause (the host's label
//!   for host data, [`Cause::Gc`](crate::Cause::Gc) for the FTL's own copies and erases), so that
//!   the media's counters are the device's whole accounting; the FTL's own counts are
//!   [`FtlCounters`].
//! - `power_cut` loses what the FTL keeps in volatile memory; what a completed write leaves after
//!   it is each FTL's to state (the file system's crash tests assume every completed write
//!   survives).

use std::fmt;

use crate::cause::HostLabel;
use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::latency::Latencies;
use crate::media::Media;
use crate::ssd::remap_log::NvramUsage;
use crate::ssd::{Counters, FlashReport, FtlCounters};
use crate::timing::Nanos;

/// A block-interface SSD: an FTL on a NAND array.
pub trait Ftl: Send + fmt::Debug {
    /// The FTL's name in results and errors (`page` for [`BlockSsd`](crate::BlockSsd)).
    fn name(&self) -> &str;

    /// LPNs the host can address.
    fn user_pages(&self) -> u64;

    /// The NAND array under the FTL.
    fn media(&self) -> &Media;

    fn media_mut(&mut self) -> &mut Media;

    /// Writes whole pages of `data` starting at `lpn`.
    fn write(&mut self, at: Nanos, lpn: u64, data: &[u8], label: HostLabel) -> Result<Nanos>;

    /// Writes `pages` pages without keeping data: a write's accounting and timing (FTL studies).
    fn write_no_data(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> Result<Nanos>;

    /// Reads whole pages into `buf` starting at `lpn`.
    fn read(&mut self, at: Nanos, lpn: u64, buf: &mut [u8], label: HostLabel) -> Result<Nanos>;

    /// The bytes of whole pages from `lpn` into `buf`, as [`Ftl::read`] gives them, without time
    /// or counts: what a host's cached copy of those pages holds (a page cache that keeps no
    /// bytes of its own for clean pages reads them from here).
    fn contents(&self, lpn: u64, buf: &mut [u8]) -> Result<()>;

    /// A read's accounting and timing, without data.
    fn read_no_data(&mut self, at: Nanos, lpn: u64, pages: u64, label: HostLabel) -> Result<Nanos>;

    /// Unmaps `pages` pages starting at `lpn`; they read as zeros afterwards.
    fn trim(&mut self, at: Nanos, lpn: u64, pages: u64) -> Result<Nanos>;

    /// Makes `dst..dst+pages` read what `src..src+pages` holds without programming NAND
    /// (RemapCom's device command). An FTL without it says so, and a RemapCom run on it fails
    /// with that error rather than copying behind the experiment's back.
    fn remap(&mut self, _at: Nanos, _src: u64, _dst: u64, _pages: u64) -> Result<Nanos> {
        Err(FlashError::Unsupported { ftl: self.name().to_string(), op: "remap" })
    }

    /// Whether `lpn` currently maps to a physical page.
    fn is_mapped(&self, lpn: u64) -> bool;

    /// A hint that the host will soon write or read `lpn`: the FTL may start bringing its
    /// mapping into the CPU's cache (on a large device every random page misses it). Changes
    /// nothing simulated.
    fn prefetch(&self, _lpn: u64) {}

    /// Loses the FTL's volatile state and recovers from what the flash (and any NVRAM) holds.
    fn power_cut(&mut self);

    /// The FTL's own counts: host pages written, read and trimmed (the report's host bytes and
    /// write amplification are relative to them), and whatever else of [`FtlCounters`] it keeps.
    fn ftl_counters(&self) -> FtlCounters;

    fn geometry(&self) -> &Geometry {
        self.media().geometry()
    }

    fn page_size(&self) -> u32 {
        self.geometry().page_size
    }

    /// The FTL's counters with the media's beside them.
    fn counters(&self) -> Counters {
        Counters { ftl: self.ftl_counters(), flash: *self.media().counters() }
    }

    /// Everything under the project's accounting names.
    fn report(&self) -> FlashReport {
        FlashReport::of_media(self.media(), self.ftl_counters(), self.design_spare_factor())
    }

    /// The share of raw pages kept from the host.
    fn design_spare_factor(&self) -> f64 {
        1.0 - self.user_pages() as f64 / self.geometry().total_pages() as f64
    }

    /// The spare factor GC worked with over the window `c` (a delta of [`Ftl::counters`]); an
    /// FTL that does not measure it gives its design figure.
    fn measured_spare_factor(&self, _c: &Counters) -> f64 {
        self.design_spare_factor()
    }

    /// NVRAM the FTL occupies (the remap log of [`BlockSsd`](crate::BlockSsd)).
    fn nvram(&self) -> NvramUsage {
        NvramUsage::default()
    }

    fn latencies(&self) -> &Latencies {
        self.media().latencies()
    }

    fn reset_latencies(&mut self) {
        self.media_mut().latencies_mut().clear();
    }
}

/// Checks that `lpn..lpn+pages` lies within `user_pages` (for any FTL).
pub fn check_range(lpn: u64, pages: u64, user_pages: u64) -> Result<()> {
    match lpn.checked_add(pages) {
        Some(end) if end <= user_pages => Ok(()),
        _ => Err(FlashError::OutOfRange { lpn, len: pages, capacity: user_pages }),
    }
}

/// The whole pages of a `len`-byte buffer for `op` (for any FTL).
pub fn whole_pages(len: usize, page_size: u32, op: &'static str) -> Result<u64> {
    if len % page_size as usize != 0 {
        return Err(FlashError::Misaligned { op, len, page_size });
    }
    Ok((len / page_size as usize) as u64)
}

impl<T: Ftl + 'static> From<T> for Box<dyn Ftl> {
    fn from(ftl: T) -> Box<dyn Ftl> {
        Box::new(ftl)
    }
}

//! `ZonedSsd`: a zoned-namespace (NVMe ZNS) SSD on the media layer, with no device GC.
//!
//! The host addresses zones `0..num_zones()`, and pages inside a zone by their offset from the
//! zone start. Every call takes the simulated time at which it is issued (and the host's label for
//! I/O) and returns the time at which it completes; the device never sleeps.
//!
//! Contract:
//! - Zones follow the NVMe ZNS state machine (see `state` for every transition and the edge cases
//!   chosen), with its limits on open and active zones; every refusal is a typed [`FlashError`]
//!   named after the specification's status value, naming the zone and the command. Nothing panics.
//! - `write` programs whole pages at the zone's write pointer; `append` (Zone Append) writes at the
//!   write pointer and returns the offset it wrote at. A multi-page write is one batched program, so
//!   the dies of the zone's stripe (see `layout`) work in parallel. Writing the last page of the
//!   capacity makes the zone Full.
//! - `read` returns the programmed pages; pages at or past the write pointer (or past the written
//!   part of a finished zone) read as zeros without flash work, as the specification's predefined
//!   data. A read may not cross the end of the zone (Zone Boundary Error); an Offline zone cannot
//!   be read. A page written without data (`write_no_data`) is a `NoData` error, never made-up bytes.
//! - `reset` erases the zone's blocks that hold programmed pages (erases of never-programmed
//!   blocks are skipped: a real device may do the same, and it keeps wear honest) and counts them
//!   as erases of the host's reset; the zone becomes Empty.
//! - No device GC: every NAND program is the host's (device write amplification is 1); counters per
//!   cause come from the media layer.
//! - `power_cut()` keeps what the media keeps: programmed pages and block write pointers, and the
//!   device's persistent zone-descriptor bits (a zone finished before its capacity was written, and
//!   zones the device failed to Read Only or Offline; a real controller keeps zone conditions in
//!   its own non-volatile metadata). Every zone's write pointer is rebuilt by counting the pages
//!   programmed in its blocks, not from a kept field. Opened zones come back Closed (or Empty when
//!   nothing was written), Full stays Full, Read Only and Offline stay. Data programmed before the
//!   cut reads back intact (the model has no volatile write cache). Recovery time is not modelled.

mod config;
mod layout;
mod state;
mod zone_state;

pub use config::ZonedConfig;
pub use zone_state::ZoneState;

use serde::Serialize;

use crate::cause::{Cause, HostLabel};
use crate::error::{FlashError, Inconsistency, Result};
use crate::geometry::Geometry;
use crate::latency::{HostOp, Latencies};
use crate::media::{Media, PageWrite, Wear};
use crate::ssd::{Counters, FlashReport, FtlCounters};
use crate::timing::Nanos;
use layout::Layout;
use state::Zones;

/// One zone as a zone report shows it. Positions and sizes are in pages of the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ZoneInfo {
    pub state: ZoneState,
    /// The next page a write must start at; the capacity once the zone is Full. For Read Only and
    /// Offline zones (where the specification leaves it undefined) the pages programmed.
    pub write_pointer: u64,
    /// Writable pages (ZCAP).
    pub capacity: u64,
    /// Pages of address space (ZSZE); reads may go up to it.
    pub size: u64,
}

/// A simulated ZNS SSD.
pub struct ZonedSsd {
    cfg: ZonedConfig,
    media: Media,
    layout: Layout,
    zones: Zones,
    capacity_pages: u64,
    counters: FtlCounters,
    zone_resets: u64,
}

impl ZonedSsd {
    /// Builds an erased device, every zone Empty.
    pub fn new(cfg: ZonedConfig) -> Result<ZonedSsd> {
        cfg.validate()?;
        let media = Media::new(&cfg.media)?;
        let layout = Layout::new(media.geometry(), cfg.blocks_per_zone())?;
        let capacity_pages = cfg.zone_capacity / media.geometry().page_size as u64;
        let zones = Zones::new(layout.num_zones(), capacity_pages, cfg.max_open_zones, cfg.max_active_zones);
        Ok(ZonedSsd { cfg, media, layout, zones, capacity_pages, counters: FtlCounters::default(), zone_resets: 0 })
    }

    pub fn config(&self) -> &ZonedConfig {
        &self.cfg
    }

    pub fn geometry(&self) -> &Geometry {
        self.media.geometry()
    }

    pub fn page_size(&self) -> u32 {
        self.geometry().page_size
    }

    pub fn num_zones(&self) -> u32 {
        self.zones.len()
    }

    /// Writable pages per zone (ZCAP).
    pub fn zone_capacity_pages(&self) -> u64 {
        self.capacity_pages
    }

    /// Pages of address space per zone (ZSZE).
    pub fn zone_size_pages(&self) -> u64 {
        self.layout.zone_pages()
    }

    /// Planes a zone is striped over (pages per stripe of a sequential write).
    pub fn planes_per_zone(&self) -> u32 {
        self.layout.planes_per_zone()
    }

    /// One zone's descriptor.
    pub fn zone(&self, zone: u32) -> Result<ZoneInfo> {
        let z = self.zones.get(zone)?;
        let write_pointer = self.zones.write_pointer(zone)?;
        Ok(ZoneInfo { state: z.state, write_pointer, capacity: self.capacity_pages, size: self.layout.zone_pages() })
    }

    /// Report Zones: every zone's descriptor, in zone order.
    pub fn zones(&self) -> Vec<ZoneInfo> {
        (0..self.num_zones()).filter_map(|z| self.zone(z).ok()).collect()
    }

    /// Zones now in an opened state, and in an opened or closed state (open and active resources).
    pub fn open_and_active_zones(&self) -> (u32, u32) {
        self.zones.resources()
    }

    /// Writes whole pages of `data` at page `offset` of `zone`, which must be its write pointer.
    pub fn write(&mut self, at: Nanos, zone: u32, offset: u64, data: &[u8], label: HostLabel) -> Result<Nanos> {
        let pages = self.whole_pages(data.len(), "write")?;
        let offset = self.zones.check_write(zone, Some(offset), pages, "write")?;
        self.program(at, zone, offset, pages, Some(data), label, "write")
    }

    /// Writes `pages` pages at `offset` without keeping data: the accounting and timing of a write,
    /// for callers that never read the pages back. Reading them is a `NoData` error.
    pub fn write_no_data(&mut self, at: Nanos, zone: u32, offset: u64, pages: u64, label: HostLabel) -> Result<Nanos> {
        let offset = self.zones.check_write(zone, Some(offset), pages, "write")?;
        self.program(at, zone, offset, pages, None, label, "write")
    }

    /// Zone Append: writes whole pages of `data` at the zone's write pointer; returns the page
    /// offset it wrote at and the completion time.
    pub fn append(&mut self, at: Nanos, zone: u32, data: &[u8], label: HostLabel) -> Result<(u64, Nanos)> {
        let pages = self.whole_pages(data.len(), "append")?;
        let offset = self.zones.check_write(zone, None, pages, "append")?;
        let done = self.program(at, zone, offset, pages, Some(data), label, "append")?;
        Ok((offset, done))
    }

    /// Reads whole pages into `buf` from page `offset` of `zone`.
    pub fn read(&mut self, at: Nanos, zone: u32, offset: u64, buf: &mut [u8], label: HostLabel) -> Result<Nanos> {
        let written = self.contents(zone, offset, buf)?;
        let pages = buf.len() as u64 / self.page_size() as u64;
        self.read_timing(at, zone, offset, pages, written, label)
    }

    /// The bytes of whole pages from page `offset` of `zone` into `buf`, as [`ZonedSsd::read`]
    /// gives them, without time or counts (a host's cached copy of those pages); returns the
    /// pages of the zone that hold programmed data.
    pub fn contents(&self, zone: u32, offset: u64, buf: &mut [u8]) -> Result<u64> {
        let pages = self.whole_pages(buf.len(), "read")?;
        let written = self.check_read(zone, offset, pages)?;
        let ps = self.page_size() as usize;
        for i in 0..pages {
            let out = &mut buf[i as usize * ps..(i as usize + 1) * ps];
            let page = offset + i;
            if page >= written {
                out.fill(0);
            } else if !self.media.contents(self.layout.ppn(zone, page), out)? {
                return Err(FlashError::NoData { lpn: self.layout.lba(zone, page) as u64 });
            }
        }
        Ok(written)
    }

    /// The timing and accounting of a read, without data.
    pub fn read_no_data(&mut self, at: Nanos, zone: u32, offset: u64, pages: u64, label: HostLabel) -> Result<Nanos> {
        let written = self.check_read(zone, offset, pages)?;
        self.read_timing(at, zone, offset, pages, written, label)
    }

    /// Open Zone (explicit open).
    pub fn open(&mut self, zone: u32) -> Result<()> {
        self.zones.open(zone)
    }

    /// Close Zone.
    pub fn close(&mut self, zone: u32) -> Result<()> {
        self.zones.close(zone)
    }

    /// Finish Zone: Full, with the write pointer at the end of the capacity; programs nothing.
    pub fn finish(&mut self, zone: u32) -> Result<()> {
        self.zones.finish(zone)
    }

    /// Reset Zone, counting its erases as unlabelled host work.
    pub fn reset(&mut self, at: Nanos, zone: u32) -> Result<Nanos> {
        self.reset_labelled(at, zone, HostLabel::Unlabelled)
    }

    /// Reset Zone, counting its erases under `label` (a file system resetting a zone after GC).
    pub fn reset_labelled(&mut self, at: Nanos, zone: u32, label: HostLabel) -> Result<Nanos> {
        self.zones.check_reset(zone)?;
        let was_empty = self.zones.get(zone)?.state == ZoneState::Empty;
        let blocks: Vec<u32> = self.layout.blocks(zone).filter(|&b| self.media.write_pointer(b) > 0).collect();
        let mut done = at;
        for b in blocks {
            done = done.max(self.media.erase(at, b, Cause::Host(label))?);
        }
        if !was_empty {
            self.zone_resets += 1;
        }
        self.zones.reset_done(zone);
        Ok(done)
    }

    /// Offline Zone (the host's command: Read Only -> Offline).
    pub fn offline(&mut self, zone: u32) -> Result<()> {
        self.zones.offline(zone)
    }

    /// Fault injection: the device moves `zone` to `to`, Read Only or Offline, from any state
    /// (Offline is final: it cannot go back to Read Only).
    pub fn fail_zone(&mut self, zone: u32, to: ZoneState) -> Result<()> {
        let from = self.zones.get(zone)?.state;
        match to {
            ZoneState::ReadOnly if from != ZoneState::Offline => {}
            ZoneState::Offline => {}
            _ => return Err(FlashError::InvalidZoneStateTransition { zone, from, command: "fail_zone" }),
        }
        self.zones.fail(zone, to);
        Ok(())
    }

    /// Loses all volatile state and rebuilds every zone from the media (see the module contract).
    pub fn power_cut(&mut self) {
        self.counters.power_cuts += 1;
        let media = &self.media;
        let layout = &self.layout;
        let written: Vec<u64> =
            (0..self.zones.len()).map(|z| layout.blocks(z).map(|b| media.write_pointer(b) as u64).sum()).collect();
        self.zones.rebuild(written.into_iter());
    }

    /// Zone resets that changed a zone (a reset of an Empty zone is a no-op and not counted).
    pub fn zone_resets(&self) -> u64 {
        self.zone_resets
    }

    /// The host-side counters (pages written and read, power cuts) with the media's beside them.
    pub fn counters(&self) -> Counters {
        Counters::new(self.counters, *self.media.counters())
    }

    /// Everything under the project's accounting names (the block SSD's report; GC, remap and
    /// NVRAM fields stay zero on a zoned device).
    pub fn report(&self) -> FlashReport {
        let ps = self.page_size() as u64;
        let c = self.counters();
        let exposed = self.num_zones() as u64 * self.capacity_pages;
        let spare = 1.0 - exposed as f64 / self.geometry().total_pages() as f64;
        FlashReport {
            host_write_bytes: c.ftl.host_write_pages * ps,
            host_read_bytes: c.ftl.host_read_pages * ps,
            host_trim_bytes: 0,
            flash_program_bytes: c.flash.programs * ps,
            flash_read_bytes: c.flash.reads * ps,
            erases: c.flash.erases,
            gc_copied_pages: 0,
            copybacks: c.flash.copybacks,
            remapped_pages: 0,
            device_write_amplification: c.write_amplification(),
            flash_busy_s: c.flash.busy_ns as f64 / 1e9,
            flash_by_cause: c.flash.by_cause_report(),
            out_of_order: c.flash.out_of_order,
            out_of_order_ns: c.flash.out_of_order_ns,
            head_of_line_ns: c.flash.head_of_line_ns,
            wear: self.wear(),
            spare_factor: spare,
            effective_spare_factor: spare,
            nvram: Default::default(),
            ftl: c.ftl,
        }
    }

    pub fn latencies(&self) -> &Latencies {
        self.media.latencies()
    }

    pub fn reset_latencies(&mut self) {
        self.media.latencies_mut().clear();
    }

    /// Erases per block.
    pub fn wear(&self) -> Wear {
        self.media.wear()
    }

    /// Simulated time at which every die and channel is idle.
    pub fn idle_at(&self) -> Nanos {
        self.media.idle_at()
    }

    /// The media layer under the device (read-only: block states, OOB, counters, wear).
    pub fn media(&self) -> &Media {
        &self.media
    }

    /// Checks that every zone's write pointer equals the pages programmed in its blocks, that
    /// blocks of unwritten zones are erased, and the media's busy-time identity. For tests.
    pub fn check_consistency(&self) -> std::result::Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: "ZonedSsd", what };
        for zone in 0..self.num_zones() {
            let z = self.zones.get(zone).map_err(|e| bad(e.to_string()))?;
            let on_media: u64 = self.layout.blocks(zone).map(|b| self.media.write_pointer(b) as u64).sum();
            if on_media != z.written {
                return Err(bad(format!(
                    "zone {zone}: {} pages written, {on_media} programmed on the media",
                    z.written
                )));
            }
            if z.state == ZoneState::Empty && z.written != 0 {
                return Err(bad(format!("zone {zone} is Empty with {} pages written", z.written)));
            }
        }
        let c = self.counters();
        if c.flash.busy_ns != self.media.total_die_busy() {
            return Err(bad(format!(
                "{} ns busy counted, dies busy {} ns",
                c.flash.busy_ns,
                self.media.total_die_busy()
            )));
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn program(
        &mut self,
        at: Nanos,
        zone: u32,
        offset: u64,
        pages: u64,
        data: Option<&[u8]>,
        label: HostLabel,
        op: &'static str,
    ) -> Result<Nanos> {
        if pages == 0 {
            return Ok(at);
        }
        self.zones.open_for_write(zone, op)?;
        let ps = self.page_size() as usize;
        let writes: Vec<PageWrite> = (0..pages)
            .map(|i| PageWrite {
                ppn: self.layout.ppn(zone, offset + i),
                ready: at,
                owner: self.layout.lba(zone, offset + i),
                data: data.map(|d| &d[i as usize * ps..(i as usize + 1) * ps]),
            })
            .collect();
        let done = self.media.program(&writes, Cause::Host(label))?;
        self.zones.advance(zone, pages);
        self.counters.host_write_pages += pages;
        self.media.record_latency(HostOp::Write, done - at);
        Ok(done)
    }

    /// Checks a read and returns the pages of the zone that hold programmed data.
    fn check_read(&self, zone: u32, offset: u64, pages: u64) -> Result<u64> {
        let z = self.zones.get(zone)?;
        if z.state == ZoneState::Offline {
            return Err(FlashError::ZoneIsOffline { zone, op: "read" });
        }
        let size = self.layout.zone_pages();
        if offset.checked_add(pages).is_none_or(|end| end > size) {
            return Err(FlashError::ZoneBoundaryError { zone, op: "read", offset, pages, limit: size });
        }
        Ok(z.written)
    }

    fn read_timing(
        &mut self,
        at: Nanos,
        zone: u32,
        offset: u64,
        pages: u64,
        written: u64,
        label: HostLabel,
    ) -> Result<Nanos> {
        let reads: Vec<(u32, Nanos)> =
            (offset..(offset + pages).min(written)).map(|p| (self.layout.ppn(zone, p), at)).collect();
        let done = self.media.read(&reads, Cause::Host(label))?.max(at);
        self.counters.host_read_pages += pages;
        self.media.record_latency(HostOp::Read, done - at);
        Ok(done)
    }

    fn whole_pages(&self, len: usize, op: &'static str) -> Result<u64> {
        let ps = self.page_size();
        if len % ps as usize != 0 {
            return Err(FlashError::Misaligned { op, len, page_size: ps });
        }
        Ok((len / ps as usize) as u64)
    }
}

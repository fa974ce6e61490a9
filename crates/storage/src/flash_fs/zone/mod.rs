//! The zone placement, and [`ZoneFs`]: the flash file system over the simulated ZNS SSD
//! (`flashsim::ZonedSsd`), so that the engine runs on zones unchanged.
//!
//! Files are lists of extents in zones (see `extent`). Appends are buffered in memory and written
//! a chunk of whole pages at a time at the write pointer of the zone their stream is filling; a
//! file's last partial page stays in memory until `sync`, which writes it padded to a page (a zone
//! cannot be rewritten; the padding is counted) so that later appends continue on the next page,
//! as ZenFS does. When a zone fills, the file continues in another zone of its placement class.
//! Where data goes is a pluggable policy (`alloc`: shared, per level with a T-zone, per level and
//! window, or ZenFS's lifetime rule). Device writes are asynchronous in simulated time (they
//! reserve the device but do not hold up the caller's lane); reads, `sync` and `sync_dir` move the
//! caller's lane to their completion (see [`SimClock`]). `clone_range` is `Unsupported`: a zone's
//! data cannot be shared between files, so `clone_or_copy` (and `append_cloned`) copy.
//!
//! Zones: the first `metadata_zones` zones hold the metadata journal (`regions`); the others hold
//! data. A data zone is reset as soon as no file (current or durable state) has an extent in it
//! and no stream is writing it. The file system keeps within the device's open and active zone
//! limits: before a stream opens an empty zone with every active token taken, it finishes the
//! fullest partly written zone; before writing a zone that is not open with every open token
//! taken, it closes the least recently written open zone. Host zone GC (`gc`), when enabled, runs
//! inline when a stream needs a zone and at most `free_zones_trigger` empty zones are left.
//!
//! The crash contract (the flash file system's, see [`super`]) on zones: the
//! data of an extent that the durable state references is never reset before the durable state
//! stops referencing it: deletion resets a zone only when no inode the durable namespace can reach
//! holds an extent in it, and GC makes the moved extents' new map durable (a journal commit)
//! before it resets the victim. `power_cut` remounts from the device alone: the device rebuilds
//! its zones, the journal is replayed, zones that hold no live extent are reset, and partly
//! written zones are finished (the file system does not know which stream was writing them).

mod alloc;
mod extent;
mod file;
mod gc;
mod regions;
mod report;
mod space;
mod state;

pub use alloc::{lifetime_diff, AllocPolicy, Choice, CustomAllocator, Lifetime, OpenZone, ZoneAllocator, ZoneClass};
pub use extent::Extent;
pub(crate) use regions::ZoneRegions;
pub use report::{ZoneFsCounters, ZoneReport, ZoneUsage};
pub use state::{GcStep, Inconsistency};

use std::fmt;

use flashsim::{Nanos, SimClock, Wait, ZonedSsd};

use super::journal::Journal;
use super::meta_codec::Cursor;
use super::records::{DurableInode, DurableMeta, MapItem, Record};
use super::state::State;
use super::{CloneSpan, FlashFs, Origin, Placement, Shared};
use crate::error::{FsError, Result};
use crate::fs::CloneOutcome;
pub use state::ZonePlacement;

/// A file system on a simulated ZNS SSD. Cloning shares it.
pub type ZoneFs = FlashFs<ZonePlacement>;

/// The zone placement's state behind the file system's lock.
type St = State<ZonePlacement>;

impl MapItem for Extent {
    // A remounted zoned file keeps its placement class and its I/O label.
    const HINT_IN_RECORD: bool = true;

    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.zone.to_le_bytes());
        out.extend_from_slice(&self.start.to_le_bytes());
        out.extend_from_slice(&self.bytes.to_le_bytes());
    }

    fn get(c: &mut Cursor) -> Option<Self> {
        Some(Extent { zone: c.u32()?, start: c.u32()?, bytes: c.u64()? })
    }
}

/// Host zone GC settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GcOptions {
    /// GC runs when a stream needs a zone and at most this many empty data zones are left (seed
    /// 003's reference notes: GC when one free zone is left).
    pub free_zones_trigger: u32,
}

impl Default for GcOptions {
    fn default() -> Self {
        GcOptions { free_zones_trigger: 1 }
    }
}

/// How a ZoneFs places data and manages zones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneFsOptions {
    pub policy: AllocPolicy,
    /// Host zone GC; `None` is seed 003's BL baseline: zones are reused only once nothing in them
    /// is live, and a full device is a `NoSpace` error.
    pub gc: Option<GcOptions>,
    /// Zones reserved for the metadata journal (at least 2: one is written while the other holds
    /// the previous snapshot).
    pub metadata_zones: u32,
    /// Zones the file system keeps open at once; `None` = the device's limit (or none).
    pub max_open_zones: Option<u32>,
    /// Zones the file system keeps active (open or closed) at once, metadata included; `None` =
    /// the device's limit (or none).
    pub max_active_zones: Option<u32>,
    /// Pages a file buffers before writing them; `None` = one page per plane of a zone's stripe,
    /// so that each write runs on all of the zone's dies.
    pub write_chunk_pages: Option<u32>,
}

impl Default for ZoneFsOptions {
    fn default() -> Self {
        ZoneFsOptions {
            policy: AllocPolicy::Shared,
            gc: None,
            metadata_zones: 2,
            max_open_zones: None,
            max_active_zones: None,
            write_chunk_pages: None,
        }
    }
}

impl ZoneFsOptions {
    /// Checks the options against the device; the error names the field in one line.
    pub fn validate(&self, dev: &ZonedSsd) -> Result<()> {
        let invalid = |field, reason: String| Err(FsError::InvalidOptions { field, reason });
        let cfg = dev.config();
        for (field, want, limit) in [
            ("max_open_zones", self.max_open_zones, cfg.max_open_zones),
            ("max_active_zones", self.max_active_zones, cfg.max_active_zones),
        ] {
            if let (Some(w), Some(l)) = (want, limit) {
                if w > l {
                    return invalid(field, format!("{w} exceeds the device's limit of {l}"));
                }
            }
        }
        if self.metadata_zones < 2 {
            return invalid(
                "metadata_zones",
                format!("{} is fewer than the 2 the journal rolls over", self.metadata_zones),
            );
        }
        if self.metadata_zones + 2 > dev.num_zones() {
            return invalid(
                "metadata_zones",
                format!(
                    "{} leave fewer than 2 data zones on a device of {} zones",
                    self.metadata_zones,
                    dev.num_zones()
                ),
            );
        }
        let active = self.max_active_zones.or(cfg.max_active_zones);
        if active.is_some_and(|a| a < 2) {
            return invalid("max_active_zones", "needs at least 2: a metadata zone and a data zone".into());
        }
        if self.max_open_zones.or(cfg.max_open_zones).is_some_and(|o| o < 2) {
            return invalid("max_open_zones", "needs at least 2: a metadata zone and a data zone".into());
        }
        if self.write_chunk_pages == Some(0) {
            return invalid("write_chunk_pages", "must be at least 1".into());
        }
        if let Some(gc) = self.gc {
            if gc.free_zones_trigger == 0 {
                return invalid(
                    "gc.free_zones_trigger",
                    "must be at least 1: GC needs an empty zone to copy into".into(),
                );
            }
        }
        Ok(())
    }
}

impl ZoneFs {
    /// Formats `dev` (resetting every zone) and mounts an empty file system.
    pub fn format(dev: ZonedSsd, clock: SimClock, opts: ZoneFsOptions) -> Result<ZoneFs> {
        let mut state = ZonePlacement::state(dev, opts)?;
        state.format(&clock)?;
        Ok(FlashFs::wrap(state, clock))
    }

    /// Mounts a formatted device from its metadata zones.
    pub fn mount(dev: ZonedSsd, clock: SimClock, opts: ZoneFsOptions) -> Result<ZoneFs> {
        FlashFs::mount_state(ZonePlacement::state(dev, opts)?, clock)
    }

    /// Every zone's state, write pointer, live bytes and class, with the file system's counters.
    pub fn zone_report(&self) -> ZoneReport {
        self.shared.state().report()
    }

    /// The extents of `path` (zone, first page, bytes), for placement checks.
    pub fn extents(&self, path: &str) -> Result<Vec<Extent>> {
        let st = self.shared.state();
        let ino = st.lookup("extents", path)?;
        Ok(st.inodes[&ino].extents.clone())
    }

    /// Checks the file system's invariants (extents, live bytes, write pointers); for tests.
    pub fn check_consistency(&self) -> std::result::Result<(), Inconsistency> {
        self.shared.state().check_consistency()
    }

    /// Fault injection: the next host GC stops at `step`, as a power loss there would (the write
    /// that needed the zone fails; call [`ZoneFs::power_cut`] next).
    pub fn crash_during_next_gc(&self, step: GcStep) {
        self.shared.state().place.gc_crash = Some(step);
    }
}

impl Placement for ZonePlacement {
    type Device = ZonedSsd;
    type Journal = Journal<ZoneRegions>;
    type Item = Extent;
    type Inode = extent::Inode;
    const NAME: &'static str = "ZoneFs";
    const CLONES: bool = false;

    fn power_cut(dev: &mut ZonedSsd) {
        dev.power_cut();
    }

    fn recover(st: &mut St, clock: &SimClock) -> Result<DurableMeta<Extent>> {
        st.recover_journal(clock)
    }

    fn begin_load(st: &mut St) {
        st.begin_load();
    }

    fn restore_inode(st: &mut St, _clock: &SimClock, ino: u64, d: DurableInode<Extent>) -> Result<extent::Inode> {
        st.restore_inode(ino, d)
    }

    fn end_load(st: &mut St, clock: &SimClock) -> Result<()> {
        st.end_load(clock.now())
    }

    fn write_journal(st: &mut St, at: Nanos, records: &[Record<Extent>]) -> Result<Nanos> {
        let before = (st.journal.pages_written, st.journal.resets);
        let done = st.journal.commit(&mut st.dev, at, records, &st.meta)?;
        st.stats.fs_metadata_bytes += (st.journal.pages_written - before.0) * st.page_size as u64;
        st.place.counters.metadata_resets += st.journal.resets - before.1;
        Ok(done)
    }

    /// The inode's extents die, and zones left with nothing live are reset.
    fn release_inode(st: &mut St, ino: u64, inode: extent::Inode, at: Nanos) {
        st.place.streams.remove(&state::StreamKey::File(ino));
        for e in &inode.extents {
            st.place.zones[e.zone as usize].live -= e.bytes;
        }
        let mut zones: Vec<u32> = inode.extents.iter().map(|e| e.zone).collect();
        zones.sort_unstable();
        zones.dedup();
        for z in zones {
            // A reset cannot fail for a written data zone; if the device refuses (a failed zone),
            // the zone simply stays as it is.
            let _ = st.reset_if_dead(at, z);
        }
    }

    fn append(st: &mut St, clock: &SimClock, ino: u64, path: &str, data: &[u8], from: Origin) -> Result<()> {
        file::append(st, clock, ino, path, data, from)
    }

    /// The data first, then the record, which waits for it with the file system unlocked (other
    /// lanes go on meanwhile).
    fn sync(fs: &Shared<Self>, ino: u64, path: &str, epoch: u64) -> Result<()> {
        let clock = fs.clock();
        let (len, written) = file::sync_data(&mut fs.state(), clock, ino, path)?;
        clock.wait(written, Wait::Write);
        fs.check_epoch(epoch, "sync", path)?;
        file::sync_record(&mut fs.state(), clock, ino, path, len)
    }

    fn read(st: &mut St, clock: &SimClock, ino: u64, path: &str, offset: u64, buf: &mut [u8]) -> Result<Nanos> {
        file::read(st, clock, ino, path, offset, buf)
    }

    fn read_timing(st: &mut St, clock: &SimClock, ino: u64, path: &str, offset: u64, n: u64) -> Result<Nanos> {
        file::read_timing(st, clock, ino, path, offset, n)
    }

    fn contents(st: &mut St, ino: u64, path: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        file::contents(st, ino, path, offset, buf)
    }

    fn clone_range(_st: &mut St, _clock: &SimClock, span: &CloneSpan) -> Result<()> {
        Err(FsError::Unsupported {
            op: "clone_range",
            path: span.dst.1.to_string(),
            reason: "a zoned file system cannot share extents between files (a zone is written once, in order)"
                .to_string(),
        })
    }

    /// A copy: a zone's data cannot be shared between files.
    fn append_cloned(st: &mut St, clock: &SimClock, span: &CloneSpan) -> Result<CloneOutcome> {
        file::append_copy(st, clock, span)?;
        Ok(CloneOutcome::copied(span.len))
    }

    /// Under the lifetime policy the file's stream lets go of its zone (as in ZenFS).
    fn close(st: &mut St, clock: &SimClock, ino: u64) {
        if let Some(z) = st.place.streams.remove(&state::StreamKey::File(ino)) {
            // Best effort, as every drop: a zone the device refuses to reset stays as it is.
            let _ = st.reset_if_dead(clock.now(), z);
        }
    }

    fn debug_fields(st: &St, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("policy", &st.place.alloc.name()).field("gc", &st.place.opts.gc.is_some());
    }
}

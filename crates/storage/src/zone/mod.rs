//! `ZoneFs`: a file system over the simulated ZNS SSD (`flashsim::ZonedSsd`), so that the engine
//! runs on zones unchanged.
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
//! Zones: the first `metadata_zones` zones hold the metadata journal (`journal`); the others hold
//! data. A data zone is reset as soon as no file (current or durable state) has an extent in it
//! and no stream is writing it. The file system keeps within the device's open and active zone
//! limits: before a stream opens an empty zone with every active token taken, it finishes the
//! fullest partly written zone; before writing a zone that is not open with every open token
//! taken, it closes the least recently written open zone. Host zone GC (`gc`), when enabled, runs
//! inline when a stream needs a zone and at most `free_zones_trigger` empty zones are left.
//!
//! Crash contract (the same as MemFs and SimFs, checked against MemFs by the crash-history
//! harness): after [`ZoneFs::power_cut`] every directory shows the entries of its last
//! `sync_dir`, and every file its bytes as of its last `sync`. To keep that true on zones, the
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
mod handles;
mod journal;
mod records;
mod report;
mod space;
mod state;

pub use alloc::{lifetime_diff, AllocPolicy, Choice, Lifetime, OpenZone, ZoneAllocator, ZoneClass};
pub use extent::Extent;
pub use gc::GcStep;
pub use report::{ZoneFsCounters, ZoneReport, ZoneUsage};

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flashsim::{FlashError, HostLabel, SimClock, Wait, ZonedSsd};

use crate::clone::{check_alignment, check_ranges};
use crate::env::{Env, Guard};
use crate::error::{FsError, Result};
use crate::fs::{FileLock, Fs, RandomAccessFile, WritableFile, WriteHint};
use crate::host_writes::HostWriteStats;
use crate::path;
use handles::{ZoneLock, ZoneReader, ZoneWriter};
use records::Record;
use state::State;

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A file system on a simulated ZNS SSD. Cloning shares it.
#[derive(Clone)]
pub struct ZoneFs {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    epoch: AtomicU64,
    clock: SimClock,
}

impl ZoneFs {
    /// Formats `dev` (resetting every zone) and mounts an empty file system.
    pub fn format(dev: ZonedSsd, clock: SimClock, opts: ZoneFsOptions) -> Result<ZoneFs> {
        let state = State::format(dev, &clock, opts)?;
        Ok(ZoneFs::wrap(state, clock))
    }

    /// Mounts a formatted device from its metadata zones.
    pub fn mount(dev: ZonedSsd, clock: SimClock, opts: ZoneFsOptions) -> Result<ZoneFs> {
        let state = State::mount(dev, &clock, opts)?;
        Ok(ZoneFs::wrap(state, clock))
    }

    fn wrap(state: State, clock: SimClock) -> ZoneFs {
        ZoneFs { shared: Arc::new(Shared { state: Mutex::new(state), epoch: AtomicU64::new(0), clock }) }
    }

    /// The Env an engine on this file system runs with: simulated, on this file system's clock.
    pub fn env(&self) -> Env {
        Env::new(Arc::new(self.clone()))
    }

    /// The clock whose running lane this file system charges.
    pub fn sim_clock(&self) -> &SimClock {
        &self.shared.clock
    }

    /// Power loss: the device loses its volatile state and rebuilds its zones, the file system
    /// remounts from its metadata zones, and every handle opened before fails with `Crashed`.
    pub fn power_cut(&self) -> Result<()> {
        let mut st = self.shared.state();
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        st.dev.power_cut();
        st.reload(&self.shared.clock)
    }

    /// Reads the device under the lock (zones, counters, latencies).
    pub fn with_device<R>(&self, f: impl FnOnce(&ZonedSsd) -> R) -> R {
        f(&self.shared.state().dev)
    }

    /// Host writes by cause (GC copies under `zone_gc_bytes`, padding included in each file's cause).
    pub fn stats(&self) -> HostWriteStats {
        self.shared.state().stats.clone()
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
    pub fn check_consistency(&self) -> std::result::Result<(), String> {
        self.shared.state().check_consistency()
    }

    /// Fault injection: the next host GC stops at `step`, as a power loss there would (the write
    /// that needed the zone fails; call [`ZoneFs::power_cut`] next).
    pub fn crash_during_next_gc(&self, step: GcStep) {
        self.shared.state().gc_crash = Some(step);
    }

    fn page_size(&self) -> u64 {
        self.shared.state().page_size as u64
    }

    fn epoch(&self) -> u64 {
        self.shared.epoch.load(Ordering::SeqCst)
    }
}

impl Shared {
    pub(crate) fn check_epoch(&self, epoch: u64, op: &'static str, path: &str) -> Result<()> {
        if self.epoch.load(Ordering::SeqCst) != epoch {
            return Err(FsError::Crashed { op, path: path.to_string() });
        }
        Ok(())
    }

    /// The file system's state, locked in a critical section of its clock: a lane that holds it
    /// keeps the turn, and hands it over (if its time moved) once the lock is free.
    pub(crate) fn state(&self) -> Guard<'_, State> {
        Guard::on_clock(&self.clock, &self.state)
    }

    pub(crate) fn clock(&self) -> &SimClock {
        &self.clock
    }
}

/// The device's label for I/O of a file with this hint, so that flash work is counted by cause.
pub(crate) fn label(hint: WriteHint) -> HostLabel {
    crate::sim::label(hint)
}

/// Maps a device error onto the file-system error that names the operation and path.
pub(crate) fn device_error(op: &'static str, path: &str, e: FlashError) -> FsError {
    match e {
        FlashError::DeviceFull { .. } => FsError::NoSpace { op, path: path.to_string(), detail: e.to_string() },
        other => FsError::Io { op, path: path.to_string(), source: std::io::Error::other(other.to_string()) },
    }
}

impl fmt::Debug for ZoneFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.state();
        f.debug_struct("ZoneFs")
            .field("policy", &st.alloc.policy().name())
            .field("gc", &st.opts.gc.is_some())
            .field("files", &st.inodes.len())
            .finish()
    }
}

impl Fs for ZoneFs {
    fn block_size(&self) -> u64 {
        self.page_size()
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.create_with_hint(path, WriteHint::None)
    }

    fn create_with_hint(&self, p: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        let mut st = self.shared.state();
        st.check_new_file("create", p)?;
        let ino = st.new_inode(hint);
        if let Some(old) = st.ns.insert(path::parent(p), path::file_name(p), ino) {
            let at = self.shared.clock.now();
            st.collect_inode(old, at);
        }
        Ok(Box::new(ZoneWriter::new(Arc::clone(&self.shared), ino, p, self.epoch())))
    }

    fn open_append(&self, p: &str) -> Result<Box<dyn WritableFile>> {
        let ino = self.shared.state().lookup("open_append", p)?;
        Ok(Box::new(ZoneWriter::new(Arc::clone(&self.shared), ino, p, self.epoch())))
    }

    fn open(&self, p: &str) -> Result<Box<dyn RandomAccessFile>> {
        let ino = self.shared.state().lookup("open", p)?;
        Ok(Box::new(ZoneReader::new(Arc::clone(&self.shared), ino, p, self.epoch())))
    }

    fn file_size(&self, p: &str) -> Result<u64> {
        let st = self.shared.state();
        let ino = st.lookup("file_size", p)?;
        Ok(st.inodes[&ino].len)
    }

    fn exists(&self, p: &str) -> Result<bool> {
        path::validate(p)?;
        let st = self.shared.state();
        Ok(st.ns.contains_dir(p) || st.is_file(p))
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        path::validate_dir(dir)?;
        self.shared.state().ns.list(dir)
    }

    fn create_dir_all(&self, dir: &str) -> Result<()> {
        path::validate_dir(dir)?;
        let mut st = self.shared.state();
        let records = st.ns.create_dir_all(dir)?.into_iter().map(|dir| Record::Mkdir { dir }).collect();
        // Directories are durable as soon as they exist, as in MemFs.
        let at = self.shared.clock.now();
        let done = st.commit(at, records)?;
        self.shared.clock.wait(done, Wait::Metadata);
        Ok(())
    }

    fn remove_dir(&self, dir: &str) -> Result<()> {
        path::validate(dir)?;
        let mut st = self.shared.state();
        st.ns.check_removable(dir)?;
        let held = st.ns.remove_dir(dir);
        let at = self.shared.clock.now();
        let done = st.commit(at, vec![Record::Rmdir { dir: dir.to_string() }])?;
        // The removal is durable: files only its durable entries held are garbage now.
        for ino in held {
            st.collect_inode(ino, at);
        }
        self.shared.clock.wait(done, Wait::Metadata);
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        path::validate(from)?;
        path::validate(to)?;
        let mut st = self.shared.state();
        let ino = st.lookup("rename", from)?;
        st.check_new_file("rename", to)?;
        if from == to {
            return Ok(());
        }
        st.ns.remove(path::parent(from), path::file_name(from));
        if let Some(old) = st.ns.insert(path::parent(to), path::file_name(to), ino) {
            let at = self.shared.clock.now();
            st.collect_inode(old, at);
        }
        Ok(())
    }

    fn remove(&self, p: &str) -> Result<()> {
        let mut st = self.shared.state();
        let ino = st.lookup("remove", p)?;
        st.ns.remove(path::parent(p), path::file_name(p));
        let at = self.shared.clock.now();
        st.collect_inode(ino, at);
        Ok(())
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        path::validate_dir(dir)?;
        let mut st = self.shared.state();
        if !st.ns.contains_dir(dir) {
            return Err(FsError::NotFound { op: "sync_dir", path: dir.to_string() });
        }
        let (changes, dropped) = st.ns.commit_dir(dir);
        let mut records: Vec<Record> = Vec::new();
        for c in changes {
            let r = Record::from(c);
            // A file linked durably before its first sync exists, empty.
            if let Record::Link { ino, .. } = r {
                if !st.meta.inodes.contains_key(&ino)
                    && !records.iter().any(|x| matches!(x, Record::Inode { ino: i, .. } if *i == ino))
                {
                    let hint = st.inodes.get(&ino).map_or(WriteHint::None, |i| i.hint);
                    records.insert(0, Record::Inode { ino, len: 0, hint, extents: Vec::new() });
                }
            }
            records.push(r);
        }
        let at = self.shared.clock.now();
        let done = st.commit(at, records)?;
        // Only once the new entries are durable may inodes that lost their last name go.
        for ino in dropped {
            st.collect_inode(ino, at);
        }
        self.shared.clock.wait(done, Wait::Metadata);
        Ok(())
    }

    fn lock(&self, p: &str) -> Result<Box<dyn FileLock>> {
        path::validate(p)?;
        let mut st = self.shared.state();
        if !st.is_file(p) {
            st.check_new_file("lock", p)?;
            let ino = st.new_inode(WriteHint::None);
            st.ns.insert(path::parent(p), path::file_name(p), ino);
        }
        if st.locks.contains_key(p) {
            return Err(FsError::Locked { path: p.to_string() });
        }
        let id = st.next_lock_id;
        st.next_lock_id += 1;
        st.locks.insert(p.to_string(), id);
        Ok(Box::new(ZoneLock::new(Arc::clone(&self.shared), p, id, self.epoch())))
    }

    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        path::validate(src)?;
        path::validate(dst)?;
        check_alignment("clone_range", self.page_size(), src, src_offset, dst, dst_offset, len)?;
        let st = self.shared.state();
        let s = st.lookup("clone_range", src)?;
        let d = st.lookup("clone_range", dst)?;
        let (ssize, dsize) = (st.inodes[&s].len, st.inodes[&d].len);
        check_ranges("clone_range", src, src_offset, ssize, dst, dst_offset, dsize, len)?;
        Err(FsError::Unsupported {
            op: "clone_range",
            path: dst.to_string(),
            reason: "a zoned file system cannot share extents between files (a zone is written once, in order)"
                .to_string(),
        })
    }

    fn clock(&self) -> Option<SimClock> {
        Some(self.shared.clock.clone())
    }

    fn supports_clone(&self) -> bool {
        false
    }
}

//! The flash file system: one file system over a simulated flash device, written once — its
//! namespace, inodes, journal (`journal`: records rolled over between the placement's metadata
//! regions), handles, locks and crash epochs — over a [`Placement`] that says where a file's
//! bytes live on the device:
//!
//! - [`block`]: pages (LPNs) of a block SSD (`flashsim::BlockSsd`); a clone is a device remap,
//!   freed pages are trimmed ([`SimFs`]).
//! - [`zone`]: extents in zones of a ZNS SSD (`flashsim::ZonedSsd`); shared, per-level,
//!   per-window and lifetime zone allocators, host zone GC ([`ZoneFs`]).
//!
//! Crash contract (the same as MemFs, checked against it by the crash-history harness): after a
//! power cut every directory shows the entries of its last `sync_dir`, and every file its bytes as
//! of its last `sync`. A placement keeps that true on its device (module docs of each); the
//! namespace rules are here: directories are durable as soon as they are created or removed, a
//! `sync_dir` journals the directory's changed entries (a file linked durably before its first
//! sync exists, empty), and an inode is dropped only once no current or durable entry names it —
//! after the commit that made the last entry go, so that its data outlives every durable name.
//!
//! Time: every operation runs on the file system's [`SimClock`]; the state is locked in a critical
//! section of the clock ([`crate::env::Guard::on_clock`]), so a lane that holds it keeps the turn.

pub mod block;
pub mod cache;
mod handles;
mod io;
mod journal;
mod meta_codec;
pub(crate) mod namespace;
mod page_bytes;
mod page_header;
mod records;
mod state;
pub mod zone;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flashsim::{FlashError, HostLabel, SimClock, Wait};

use crate::clone::{check_alignment, check_ranges};
use crate::env::Env;
use crate::error::{FsError, Result};
use crate::fs::{FileLock, Fs, RandomAccessFile, WritableFile, WriteHint};
use crate::host_writes::HostWriteStats;
use crate::path;
use cache::{PageCache, PageCacheConfig, PageCacheStats, WriteBack};
use handles::{FlashLock, FlashReader, FlashWriter};
use io::Mode;
use records::Record;
pub(crate) use state::{CloneSpan, FileInode, Origin, Placement};
use state::{Shared, State};

pub use block::SimFs;
pub use zone::ZoneFs;

/// A file system on a simulated flash device. Cloning shares it.
pub struct FlashFs<P: Placement> {
    shared: Arc<Shared<P>>,
}

impl<P: Placement> Clone for FlashFs<P> {
    fn clone(&self) -> Self {
        FlashFs { shared: Arc::clone(&self.shared) }
    }
}

impl<P: Placement> FlashFs<P> {
    fn wrap(state: State<P>, clock: SimClock) -> FlashFs<P> {
        FlashFs { shared: Arc::new(Shared { state: Mutex::new(state), epoch: AtomicU64::new(0), clock }) }
    }

    /// Mounts: the durable state from the device's journal.
    fn mount_state(mut state: State<P>, clock: SimClock) -> Result<FlashFs<P>> {
        let meta = P::recover(&mut state, &clock)?;
        state.load(&clock, meta)?;
        Ok(FlashFs::wrap(state, clock))
    }

    /// The Env an engine on this file system runs with: simulated, on this file system's clock.
    pub fn env(&self) -> Env {
        Env::new(Arc::new(self.clone()))
    }

    /// The clock whose running lane this file system charges.
    pub fn sim_clock(&self) -> &SimClock {
        &self.shared.clock
    }

    /// Power loss: the device loses its volatile state and recovers, the file system remounts from
    /// its journal, and every handle opened before fails with `Crashed`.
    pub fn power_cut(&self) -> Result<()> {
        let mut st = self.shared.state();
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        P::power_cut(&mut st.dev);
        let meta = P::recover(&mut st, &self.shared.clock)?;
        st.load(&self.shared.clock, meta)
    }

    /// Reads the device under the lock (counters, latencies, zones).
    pub fn with_device<R>(&self, f: impl FnOnce(&P::Device) -> R) -> R {
        f(&self.shared.state().dev)
    }

    /// Host writes by cause.
    pub fn stats(&self) -> HostWriteStats {
        self.shared.state().stats.clone()
    }

    /// Gives the file system a page cache (`PageCacheConfig::OFF`: none); the dirty bytes of the
    /// cache it had are written back first.
    pub fn set_page_cache(&self, cfg: PageCacheConfig) -> Result<()> {
        self.write_back_all()?;
        let mut st = self.shared.state();
        let ps = st.page_size as u64;
        st.cache = PageCache::new(cfg, ps);
        Ok(())
    }

    /// Writes every dirty byte of the page cache back to the placement, as an unmount does
    /// (issued at the clock's time; nothing waits for it). Nothing becomes durable: that takes a
    /// file's `sync`.
    pub fn write_back_all(&self) -> Result<()> {
        let mut st = self.shared.state();
        for ino in st.cache.dirty_files() {
            io::write_back(&mut st, &self.shared.clock, ino, WriteBack::Unmount, false)?;
        }
        Ok(())
    }

    /// What the page cache did.
    pub fn page_cache_stats(&self) -> PageCacheStats {
        self.shared.state().cache.stats().clone()
    }

    fn page_size(&self) -> u64 {
        self.shared.state().page_size as u64
    }

    fn epoch(&self) -> u64 {
        self.shared.epoch.load(Ordering::SeqCst)
    }

    fn writer(&self, ino: u64, p: &str, mode: Mode) -> Box<dyn WritableFile> {
        Box::new(FlashWriter::new(Arc::clone(&self.shared), ino, p, self.epoch(), mode))
    }

    fn reader(&self, p: &str, mode: Mode) -> Result<Box<dyn RandomAccessFile>> {
        let ino = self.shared.state().lookup("open", p)?;
        Ok(Box::new(FlashReader::new(Arc::clone(&self.shared), ino, p, self.epoch(), mode)))
    }

    fn create_file(&self, p: &str, hint: WriteHint, mode: Mode) -> Result<Box<dyn WritableFile>> {
        let mut st = self.shared.state();
        st.check_new_file("create", p)?;
        let ino = st.new_inode(hint);
        if let Some(old) = st.ns.insert(path::parent(p), path::file_name(p), ino) {
            let at = self.shared.clock.now();
            st.collect_inode(old, at);
        }
        Ok(self.writer(ino, p, mode))
    }
}

/// The device's label for I/O of a file with this hint, so that flash work is counted by cause.
pub(crate) fn label(hint: WriteHint) -> HostLabel {
    match hint {
        WriteHint::None => HostLabel::Unlabelled,
        WriteHint::Wal => HostLabel::Wal,
        WriteHint::Manifest => HostLabel::Manifest,
        WriteHint::Flush => HostLabel::Flush,
        WriteHint::Compaction { output_level } | WriteHint::Window { output_level, .. } => {
            HostLabel::Compaction { level: output_level }
        }
        WriteHint::Move { .. } => HostLabel::Move,
        WriteHint::ShortLived { .. } => HostLabel::TZone,
    }
}

/// Maps a device error onto the file-system error that names the operation and path.
pub(crate) fn device_error(op: &'static str, path: &str, e: FlashError) -> FsError {
    match e {
        FlashError::DeviceFull { .. } => FsError::NoSpace { op, path: path.to_string(), detail: e.to_string() },
        other => FsError::Io { op, path: path.to_string(), source: std::io::Error::other(other.to_string()) },
    }
}

/// A mount-time error: the device's metadata does not make sense.
pub(crate) fn corrupt(what: impl Into<String>) -> FsError {
    FsError::Io {
        op: "mount",
        path: String::new(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what.into()),
    }
}

impl<P: Placement> fmt::Debug for FlashFs<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.state();
        let mut d = f.debug_struct(P::NAME);
        P::debug_fields(&st, &mut d);
        d.field("files", &st.inodes.len()).finish()
    }
}

impl<P: Placement> Fs for FlashFs<P> {
    fn block_size(&self) -> u64 {
        self.page_size()
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.create_with_hint(path, WriteHint::None)
    }

    fn create_with_hint(&self, p: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        self.create_file(p, hint, Mode::Buffered)
    }

    fn create_direct(&self, p: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        self.create_file(p, hint, Mode::Direct)
    }

    fn open_append(&self, p: &str) -> Result<Box<dyn WritableFile>> {
        let ino = self.shared.state().lookup("open_append", p)?;
        Ok(self.writer(ino, p, Mode::Buffered))
    }

    fn open(&self, p: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.reader(p, Mode::Buffered)
    }

    fn open_direct(&self, p: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.reader(p, Mode::Direct)
    }

    fn file_size(&self, p: &str) -> Result<u64> {
        let st = self.shared.state();
        let ino = st.lookup("file_size", p)?;
        Ok(st.len_of(ino))
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
        // Removing a directory is durable at once (as in MemFs); once it is, files only its
        // durable entries held are garbage.
        let done = st.commit(at, vec![Record::Rmdir { dir: dir.to_string() }])?;
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
        let mut records: Vec<Record<P::Item>> = Vec::new();
        for c in changes {
            let r = Record::from(c);
            // A file linked durably before its first sync exists, empty.
            if let Record::Link { ino, .. } = r {
                if !st.meta.inodes.contains_key(&ino)
                    && !records.iter().any(|x| matches!(x, Record::Inode { ino: i, .. } if *i == ino))
                {
                    let hint = st.inodes.get(&ino).map_or(WriteHint::None, |i| i.hint());
                    records.insert(0, Record::Inode { ino, len: 0, hint, items: Vec::new() });
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
        Ok(Box::new(FlashLock::new(Arc::clone(&self.shared), p, id, self.epoch())))
    }

    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        path::validate(src)?;
        path::validate(dst)?;
        check_alignment("clone_range", self.page_size(), src, src_offset, dst, dst_offset, len)?;
        let mut st = self.shared.state();
        let s = st.lookup("clone_range", src)?;
        let d = st.lookup("clone_range", dst)?;
        let (ssize, dsize) = (st.len_of(s), st.len_of(d));
        check_ranges("clone_range", src, src_offset, ssize, dst, dst_offset, dsize, len)?;
        if s == d {
            return Err(FsError::InvalidPath {
                path: src.to_string(),
                reason: "clone source and destination are the same file",
            });
        }
        io::before_clone(&mut st, &self.shared.clock, [s, d])?;
        let span = CloneSpan { src: (s, src), src_offset, dst: (d, dst), dst_offset, len };
        P::clone_range(&mut st, &self.shared.clock, &span)?;
        io::after_clone(&mut st, &self.shared.clock, &span)
    }

    fn clock(&self) -> Option<SimClock> {
        Some(self.shared.clock.clone())
    }

    fn supports_clone(&self) -> bool {
        P::CLONES
    }
}

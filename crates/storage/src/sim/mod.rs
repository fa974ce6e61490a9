//! `SimFs`: a file system over the simulated block SSD (`flashsim::BlockSsd`).
//!
//! Files are lists of device pages (LPNs), allocated to stay contiguous (see `alloc`). A page is
//! written to the device when it fills; the last, partly filled page of a file is kept in memory
//! (a one-page write-back cache) and programmed at `sync`. Device writes are asynchronous in
//! simulated time (as through a page cache): they reserve the device but do not hold up the
//! caller's lane; reads, and `sync` (which waits for the file's outstanding writes and its metadata),
//! move the caller's lane to their completion (see [`SimClock`]).
//!
//! Crash contract (the same as MemFs, checked against it by the crash-history harness): after
//! [`SimFs::power_cut`] every directory shows the entries of its last `sync_dir`, and every file its
//! bytes as of its last `sync`. To keep that true on a device, pages that a durable state still
//! refers to are never overwritten in place: a clone over synced pages goes to fresh LPNs (copy on
//! write), and a page returns to the allocator, trimmed on the device, only when neither the
//! current nor the durable state holds it. The durable state lives in a journal on the device
//! (`journal`), written at `sync` and `sync_dir` and counted as "fs metadata" host writes.
//!
//! `clone_range` is getLPN + `remap` on the device: no NAND program (seed 000 section 4.5).

mod alloc;
mod handles;
mod inode;
mod journal;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use flashsim::{BlockSsd, FlashError, HostLabel, Nanos, SimClock, Wait};

use crate::host_writes::HostWriteStats;

use crate::clone::{check_alignment, check_ranges};
use crate::env::{Env, Guard};
use crate::error::{FsError, Result};
use crate::fs::{FileLock, Fs, RandomAccessFile, WritableFile, WriteHint};
use crate::namespace::Namespace;
use crate::path;
use alloc::Allocator;
use handles::{SimLock, SimReader, SimWriter};
use inode::Inode;
use journal::{DurableMeta, Journal, Record};

/// Sizes of SimFs's own structures.
#[derive(Debug, Clone, Copy)]
pub struct SimFsOptions {
    /// Pages of each of the two metadata checkpoint slots.
    pub checkpoint_slot_pages: u32,
    /// Pages of the metadata log.
    pub log_pages: u32,
    /// Pages an appending file reserves at a time to stay contiguous.
    pub alloc_window_pages: u32,
}

impl Default for SimFsOptions {
    fn default() -> Self {
        SimFsOptions { checkpoint_slot_pages: 256, log_pages: 512, alloc_window_pages: 256 }
    }
}

/// A file system on a simulated SSD. Cloning shares it.
#[derive(Clone)]
pub struct SimFs {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    state: Mutex<State>,
    epoch: AtomicU64,
    clock: SimClock,
    opts: SimFsOptions,
}

/// Per-LPN flags: held by the current state of a file, by the durable state of a file.
const VOLATILE: u8 = 1;
const DURABLE: u8 = 2;

pub(crate) struct State {
    dev: BlockSsd,
    journal: Journal,
    meta: DurableMeta,
    ns: Namespace,
    inodes: BTreeMap<u64, Inode>,
    next_ino: u64,
    /// Records waiting for the next journal commit (inodes that became garbage).
    pending: Vec<Record>,
    flags: Vec<u8>,
    alloc: Allocator,
    locks: BTreeMap<String, u64>,
    next_lock_id: u64,
    stats: HostWriteStats,
    page_size: usize,
}

impl SimFs {
    /// Formats `dev` (an empty file system) and mounts it.
    pub fn format(mut dev: BlockSsd, clock: SimClock, opts: SimFsOptions) -> Result<SimFs> {
        let region = Journal::region_pages(opts.checkpoint_slot_pages, opts.log_pages);
        if opts.checkpoint_slot_pages == 0 || opts.log_pages == 0 || region as u64 * 2 > dev.user_pages() {
            return Err(FsError::NoSpace {
                op: "format",
                path: String::new(),
                detail: format!(
                    "metadata region of {region} pages does not fit a device of {} pages",
                    dev.user_pages()
                ),
            });
        }
        let (journal, done) = Journal::format(&mut dev, clock.now(), opts.checkpoint_slot_pages, opts.log_pages)?;
        clock.wait(done, Wait::Metadata);
        let pages_written = journal.pages_written;
        let fs = SimFs::mount_with(dev, clock, opts, Some(journal))?;
        fs.shared.state().stats.fs_metadata_bytes += pages_written * fs.page_size();
        Ok(fs)
    }

    /// Mounts a formatted device, reading its metadata.
    pub fn mount(dev: BlockSsd, clock: SimClock, opts: SimFsOptions) -> Result<SimFs> {
        SimFs::mount_with(dev, clock, opts, None)
    }

    fn mount_with(dev: BlockSsd, clock: SimClock, opts: SimFsOptions, fresh: Option<Journal>) -> Result<SimFs> {
        let state = State::mount(dev, &clock, opts, fresh)?;
        Ok(SimFs { shared: Arc::new(Shared { state: Mutex::new(state), epoch: AtomicU64::new(0), clock, opts }) })
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
    /// its durable metadata, and every handle opened before fails with `Crashed`.
    pub fn power_cut(&self) -> Result<()> {
        let mut st = self.shared.state();
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        st.dev.power_cut();
        st.load(&self.shared.clock, self.shared.opts, None)
    }

    /// Reads the device under the lock (counters, latencies, NVRAM use).
    pub fn with_device<R>(&self, f: impl FnOnce(&BlockSsd) -> R) -> R {
        f(&self.shared.state().dev)
    }

    pub fn stats(&self) -> HostWriteStats {
        self.shared.state().stats.clone()
    }

    /// getLPN (seed 000 section 4.5): the device page that holds byte `offset` of `path`.
    pub fn lpn_of(&self, path: &str, offset: u64) -> Result<u64> {
        let st = self.shared.state();
        let ino = st.lookup("lpn_of", path)?;
        let inode = &st.inodes[&ino];
        let idx = (offset / st.page_size as u64) as usize;
        match inode.pages.get(idx) {
            Some(&lpn) if offset < inode.len => Ok(lpn as u64),
            _ => Err(FsError::OutOfRange { op: "lpn_of", path: path.to_string(), offset, len: 1, size: inode.len }),
        }
    }

    /// Free pages of the data region.
    pub fn free_bytes(&self) -> u64 {
        let st = self.shared.state();
        st.alloc.free_pages() * st.page_size as u64
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

impl State {
    fn mount(dev: BlockSsd, clock: &SimClock, opts: SimFsOptions, fresh: Option<Journal>) -> Result<State> {
        let page_size = dev.page_size() as usize;
        let mut st = State {
            journal: Journal::unloaded(),
            meta: DurableMeta::default(),
            ns: Namespace::default(),
            inodes: BTreeMap::new(),
            next_ino: 1,
            pending: Vec::new(),
            flags: Vec::new(),
            alloc: Allocator::new(0, 0),
            locks: BTreeMap::new(),
            next_lock_id: 0,
            stats: HostWriteStats::default(),
            page_size,
            dev,
        };
        st.load(clock, opts, fresh)?;
        Ok(st)
    }

    /// (Re)builds everything but the device and the statistics from the device's metadata (or
    /// from a freshly formatted, empty journal).
    fn load(&mut self, clock: &SimClock, opts: SimFsOptions, fresh: Option<Journal>) -> Result<()> {
        let page_size = self.page_size;
        let (journal, meta) = match fresh {
            Some(j) => (j, DurableMeta::empty()),
            None => {
                let (j, meta, done) =
                    Journal::recover(&mut self.dev, clock.now(), opts.checkpoint_slot_pages, opts.log_pages)?;
                clock.wait(done, Wait::Metadata);
                (j, meta)
            }
        };
        let region = Journal::region_pages(opts.checkpoint_slot_pages, opts.log_pages);
        let user = u32::try_from(self.dev.user_pages()).unwrap_or(u32::MAX);
        self.journal = journal;
        self.inodes.clear();
        self.next_ino = meta.next_ino.max(1);
        self.pending.clear();
        self.flags = vec![0; user as usize];
        self.alloc = Allocator::new(region, user);
        self.locks.clear();
        let st = self;
        st.ns = Namespace::from_durable(&meta.dirs);
        let reachable: Vec<u64> = meta.dirs.values().flat_map(|d| d.values().copied()).collect();
        for ino in reachable {
            if st.inodes.contains_key(&ino) {
                continue;
            }
            let d = meta.inodes.get(&ino).cloned().unwrap_or_default();
            let pages: Vec<u32> = d.runs.iter().flat_map(|&(s, n)| s..s + n).collect();
            for &lpn in &pages {
                if !st.alloc.take_exact(lpn) {
                    return Err(FsError::Io {
                        op: "mount",
                        path: format!("inode {ino}"),
                        source: std::io::Error::new(
                            std::io::ErrorKind::InvalidData,
                            format!("LPN {lpn} is used twice or outside the data region"),
                        ),
                    });
                }
                st.flags[lpn as usize] = VOLATILE | DURABLE;
            }
            let mut inode = Inode::restored(pages, d.len);
            inode.load_tail(&mut st.dev, clock, page_size, ino)?;
            st.inodes.insert(ino, inode);
        }
        // Durable state of unreachable inodes is garbage: forget it.
        let mut meta = meta;
        meta.inodes.retain(|ino, _| st.inodes.contains_key(ino));
        st.meta = meta;
        // Pages the device still maps but no file holds (freed before the cut): trim them, like fstrim.
        let at = clock.now();
        let mut run: Option<(u32, u32)> = None;
        for lpn in region..user {
            let stale = st.flags[lpn as usize] == 0 && st.dev.is_mapped(lpn as u64);
            run = match (run, stale) {
                (Some((s, n)), true) if s + n == lpn => Some((s, n + 1)),
                (r, true) => {
                    if let Some((s, n)) = r {
                        st.trim(at, s, n);
                    }
                    Some((lpn, 1))
                }
                (r, false) => {
                    if let Some((s, n)) = r {
                        st.trim(at, s, n);
                    }
                    None
                }
            };
        }
        if let Some((s, n)) = run {
            st.trim(at, s, n);
        }
        Ok(())
    }

    pub(crate) fn lookup(&self, op: &'static str, p: &str) -> Result<u64> {
        path::validate(p)?;
        if self.ns.contains_dir(p) {
            return Err(FsError::WrongKind { op, path: p.to_string(), expected: "file" });
        }
        self.ns
            .dir(path::parent(p))
            .and_then(|d| d.entries().get(path::file_name(p)))
            .copied()
            .ok_or_else(|| FsError::NotFound { op, path: p.to_string() })
    }

    /// Checks that `p` can name a new file: a valid path, not a directory, in an existing directory.
    fn check_new_file(&self, op: &'static str, p: &str) -> Result<()> {
        path::validate(p)?;
        if self.ns.contains_dir(p) {
            return Err(FsError::WrongKind { op, path: p.to_string(), expected: "file" });
        }
        let parent = path::parent(p);
        if !self.ns.contains_dir(parent) {
            return Err(if self.is_file(parent) {
                FsError::WrongKind { op, path: parent.to_string(), expected: "directory" }
            } else {
                FsError::NotFound { op, path: p.to_string() }
            });
        }
        Ok(())
    }

    fn is_file(&self, p: &str) -> bool {
        self.ns.is_file(p)
    }

    fn new_inode(&mut self, hint: WriteHint) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, Inode::new(hint));
        ino
    }

    /// Drops `ino` if no directory holds it any more, freeing its pages.
    fn collect_inode(&mut self, ino: u64, at: Nanos) {
        if self.ns.referenced(ino) {
            return;
        }
        let Some(inode) = self.inodes.remove(&ino) else {
            return;
        };
        for lpn in inode.pages.iter().chain(inode.synced_pages.iter()) {
            self.flags[*lpn as usize] = 0;
        }
        let mut all: Vec<u32> = inode.pages.iter().chain(inode.synced_pages.iter()).copied().collect();
        all.sort_unstable();
        all.dedup();
        self.release_pages(at, &all);
        if let Some((s, n)) = inode.window {
            self.alloc.release(s, n);
        }
        if self.meta.inodes.contains_key(&ino) {
            self.pending.push(Record::InodeFree { ino });
        }
    }

    /// Returns pages (sorted, unique, flags already cleared) to the allocator and trims them.
    fn release_pages(&mut self, at: Nanos, pages: &[u32]) {
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len() && pages[j] == pages[j - 1] + 1 {
                j += 1;
            }
            let (s, n) = (pages[i], (j - i) as u32);
            self.alloc.release(s, n);
            self.trim(at, s, n);
            i = j;
        }
    }

    fn trim(&mut self, at: Nanos, start: u32, n: u32) {
        // A trim cannot fail for an in-range LPN run; the data region is always in range.
        if self.dev.trim(at, start as u64, n as u64).is_ok() {
            self.stats.trimmed_pages += n as u64;
        }
    }

    /// Appends `records` (and pending ones) to the journal; returns when they are durable.
    fn commit(&mut self, at: Nanos, records: Vec<Record>) -> Result<Nanos> {
        let mut all = std::mem::take(&mut self.pending);
        all.extend(records);
        if self.next_ino > self.meta.next_ino {
            all.push(Record::NextIno { next: self.next_ino });
        }
        if all.is_empty() {
            return Ok(at);
        }
        for r in &all {
            self.meta.apply(r);
        }
        let before = self.journal.pages_written;
        let done = self.journal.commit(&mut self.dev, at, &all, &self.meta)?;
        self.stats.fs_metadata_bytes += (self.journal.pages_written - before) * self.page_size as u64;
        Ok(done)
    }
}

impl fmt::Debug for SimFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.shared.state();
        f.debug_struct("SimFs").field("page_size", &st.page_size).field("files", &st.inodes.len()).finish()
    }
}

impl Fs for SimFs {
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
        let old = st.ns.insert(path::parent(p), path::file_name(p), ino);
        if let Some(old) = old {
            let at = self.shared.clock.now();
            st.collect_inode(old, at);
        }
        Ok(Box::new(SimWriter::new(Arc::clone(&self.shared), ino, p, self.epoch())))
    }

    fn open_append(&self, p: &str) -> Result<Box<dyn WritableFile>> {
        let ino = self.shared.state().lookup("open_append", p)?;
        Ok(Box::new(SimWriter::new(Arc::clone(&self.shared), ino, p, self.epoch())))
    }

    fn open(&self, p: &str) -> Result<Box<dyn RandomAccessFile>> {
        let ino = self.shared.state().lookup("open", p)?;
        Ok(Box::new(SimReader::new(Arc::clone(&self.shared), ino, p, self.epoch())))
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
        // Removing a directory is durable at once (as in MemFs); files only its durable entries
        // still held go with it.
        let held = st.ns.remove_dir(dir);
        let at = self.shared.clock.now();
        for ino in held {
            st.collect_inode(ino, at);
        }
        let done = st.commit(at, vec![Record::Rmdir { dir: dir.to_string() }])?;
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
        let old = st.ns.insert(path::parent(to), path::file_name(to), ino);
        if let Some(old) = old {
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
        let mut records: Vec<Record> = changes.into_iter().map(Record::from).collect();
        // A file linked durably before its first sync exists, empty.
        for r in records.clone() {
            if let Record::Link { ino, .. } = r {
                if !st.meta.inodes.contains_key(&ino)
                    && !records.iter().any(|x| matches!(x, Record::Inode { ino: i, .. } if *i == ino))
                {
                    records.insert(0, Record::Inode { ino, len: 0, runs: Vec::new() });
                }
            }
        }
        // Inodes that only a durable entry kept alive may now be garbage.
        let at = self.shared.clock.now();
        let done = st.commit(at, records)?;
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
        Ok(Box::new(SimLock::new(Arc::clone(&self.shared), p, id, self.epoch())))
    }

    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        path::validate(src)?;
        path::validate(dst)?;
        check_alignment("clone_range", self.page_size(), src, src_offset, dst, dst_offset, len)?;
        let mut st = self.shared.state();
        let s = st.lookup("clone_range", src)?;
        let d = st.lookup("clone_range", dst)?;
        let (ssize, dsize) = (st.inodes[&s].len, st.inodes[&d].len);
        check_ranges("clone_range", src, src_offset, ssize, dst, dst_offset, dsize, len)?;
        if s == d {
            return Err(FsError::InvalidPath {
                path: src.to_string(),
                reason: "clone source and destination are the same file",
            });
        }
        let clock = self.shared.clock.clone();
        inode::clone_pages(&mut st, &clock, (s, src), src_offset, (d, dst), dst_offset, len)
    }

    fn clock(&self) -> Option<SimClock> {
        Some(self.shared.clock.clone())
    }

    fn supports_clone(&self) -> bool {
        true
    }
}

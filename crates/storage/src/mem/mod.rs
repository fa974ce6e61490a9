//! `MemFs`: an in-memory file system that can simulate a crash (power loss), after LevelDB's fault_injection_test
//! and Pebble's crashable `MemFS`.
//!
//! Model: files are nodes (inodes) that directory entries point to. Each node keeps its current bytes and its
//! *synced length*; each directory keeps its current entries and its *durable entries* (a copy of the entries
//! taken at its last [`Fs::sync_dir`]).
//!
//! Crash semantics ([`MemFs::crash`]), precisely:
//! - Every directory's entries become its durable entries. So a file created since the last `sync_dir` of its
//!   directory is gone; a file removed since then is back; a rename since then is undone (the old name is back, the
//!   new name gone or pointing at what it pointed to before); a `create` over an existing name (which makes a new
//!   file) reverts to the old file.
//! - `sync_dir(d)` makes `d`'s current entries durable, and a rename between two directories is atomic: making
//!   either side durable makes both durable (the file leaves its old name and takes its new one together, replacing
//!   what the new name pointed to). So a crash never loses a synced file to a half-done rename, nor shows one file
//!   under two names.
//! - Every file that survives keeps exactly its content as of its last [`WritableFile::sync`]: appended data past
//!   the synced length is dropped, and a clone into already-synced bytes is undone. Never holes, never reordering.
//! - Directories themselves are durable as soon as `create_dir_all` / `remove_dir` return (a simplification: the
//!   engine creates its directory once). `remove_dir` needs the directory empty now, and forgets its durable
//!   entries.
//! - Locks are released, and every handle opened before the crash fails with `Crashed` from then on.
//!
//! `create` of an existing path makes a new file that replaces the entry (like writing a temporary file and renaming
//! it). Readers see a file's current bytes, follow it across renames, and keep reading it after removal.
//! [`MemFs::stats`] counts bytes written, cloned and synced, for tests. An optional capacity makes appends fail with
//! `NoSpace` once the live bytes of all files would exceed it; `clone_range` copies bytes (counted as cloned) unless
//! clone support is switched off, when it answers `Unsupported` so that the copy fallback can be tested.

mod handles;
mod namespace;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use self::handles::{MemLock, MemReader, MemWriter};
use self::namespace::{Dir, Namespace, Node, NodeData};
use crate::clone::{check_alignment, check_ranges};
use crate::error::{FsError, Result};
use crate::fs::{FileLock, Fs, RandomAccessFile, WritableFile};
use crate::lock_unpoisoned as lock;
use crate::path;

/// Counters of a [`MemFs`], for tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemStats {
    /// Bytes appended (including bytes copied by the clone fallback).
    pub bytes_written: u64,
    /// Bytes placed by `clone_range` / `append_cloned` without the fallback.
    pub bytes_cloned: u64,
    /// Bytes that became durable through `sync` (growth of the synced lengths).
    pub bytes_synced: u64,
    /// File syncs.
    pub syncs: u64,
    /// Directory syncs.
    pub dir_syncs: u64,
    /// Simulated crashes.
    pub crashes: u64,
}

#[derive(Default)]
struct Counters {
    bytes_written: AtomicU64,
    bytes_cloned: AtomicU64,
    bytes_synced: AtomicU64,
    syncs: AtomicU64,
    dir_syncs: AtomicU64,
    crashes: AtomicU64,
}

/// Builds a [`MemFs`] with a block size, a capacity and clone support other than the defaults.
#[derive(Debug, Clone)]
pub struct MemFsBuilder {
    block_size: u64,
    capacity: Option<u64>,
    clone_support: bool,
}

impl MemFsBuilder {
    /// The clone alignment unit (default 4096).
    pub fn block_size(mut self, block_size: u64) -> Self {
        self.block_size = block_size;
        self
    }

    /// The most live bytes all files may hold together (default: unlimited).
    pub fn capacity(mut self, bytes: u64) -> Self {
        self.capacity = Some(bytes);
        self
    }

    /// Whether `clone_range` works (default) or answers `Unsupported`.
    pub fn clone_support(mut self, on: bool) -> Self {
        self.clone_support = on;
        self
    }

    /// The file system, empty but for its root directory.
    pub fn build(self) -> MemFs {
        let mut dirs = BTreeMap::new();
        dirs.insert(String::new(), Dir::default());
        MemFs {
            shared: Arc::new(Shared {
                block_size: self.block_size.max(1),
                capacity: self.capacity,
                clone_support: self.clone_support,
                ns: Mutex::new(Namespace { dirs, locks: BTreeMap::new(), next_lock_id: 0 }),
                epoch: AtomicU64::new(0),
                used: Arc::new(AtomicU64::new(0)),
                counters: Counters::default(),
            }),
        }
    }
}

/// An in-memory, crashable file system; cloning the handle shares the file system.
#[derive(Clone)]
pub struct MemFs {
    shared: Arc<Shared>,
}

struct Shared {
    block_size: u64,
    capacity: Option<u64>,
    clone_support: bool,
    ns: Mutex<Namespace>,
    /// Bumped by every crash; handles remember the epoch they were opened in.
    epoch: AtomicU64,
    /// Live bytes of all nodes, shared with the nodes so that a dropped node gives its bytes back.
    used: Arc<AtomicU64>,
    counters: Counters,
}

impl Default for MemFs {
    fn default() -> Self {
        MemFs::new()
    }
}

impl MemFs {
    /// An empty file system with 4096-byte blocks, no capacity limit and clone support.
    pub fn new() -> MemFs {
        MemFs::builder().build()
    }

    /// A builder with the defaults of [`MemFs::new`].
    pub fn builder() -> MemFsBuilder {
        MemFsBuilder { block_size: 4096, capacity: None, clone_support: true }
    }

    /// Simulates power loss; see the module documentation for exactly what survives.
    pub fn crash(&self) {
        let mut ns = lock(&self.shared.ns);
        self.shared.epoch.fetch_add(1, Ordering::SeqCst);
        ns.locks.clear();
        for dir in ns.dirs.values_mut() {
            dir.entries = dir.durable.clone();
            dir.changed.clear();
            for node in dir.entries.values() {
                let mut data = lock(&node.data);
                let before = data.bytes.len();
                match data.durable_override.take() {
                    Some(durable) => data.bytes = durable,
                    None => {
                        let synced = data.synced_len;
                        data.bytes.truncate(synced);
                    }
                }
                data.synced_len = data.bytes.len();
                // Reverting an override can grow a file back to its synced length.
                self.shared.used.fetch_add(data.bytes.len() as u64, Ordering::Relaxed);
                self.shared.used.fetch_sub(before as u64, Ordering::Relaxed);
            }
        }
        self.shared.counters.crashes.fetch_add(1, Ordering::Relaxed);
    }

    /// The counters so far.
    pub fn stats(&self) -> MemStats {
        let c = &self.shared.counters;
        MemStats {
            bytes_written: c.bytes_written.load(Ordering::Relaxed),
            bytes_cloned: c.bytes_cloned.load(Ordering::Relaxed),
            bytes_synced: c.bytes_synced.load(Ordering::Relaxed),
            syncs: c.syncs.load(Ordering::Relaxed),
            dir_syncs: c.dir_syncs.load(Ordering::Relaxed),
            crashes: c.crashes.load(Ordering::Relaxed),
        }
    }

    /// The synced length of file `path`: what of it would survive a crash if its entry is durable.
    pub fn synced_len(&self, path: &str) -> Result<u64> {
        let node = lock(&self.shared.ns).file("synced_len", path)?;
        let synced = lock(&node.data).synced_len;
        Ok(synced as u64)
    }

    /// The live bytes of all files, including removed files that a handle still holds (what the capacity limits).
    pub fn used_bytes(&self) -> u64 {
        self.shared.used.load(Ordering::Relaxed)
    }

    fn writer(&self, path: &str, node: Arc<Node>) -> Box<dyn WritableFile> {
        let epoch = self.shared.epoch.load(Ordering::SeqCst);
        Box::new(MemWriter { shared: Arc::clone(&self.shared), node, path: path.to_string(), epoch })
    }
}

impl fmt::Debug for MemFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemFs")
            .field("block_size", &self.shared.block_size)
            .field("capacity", &self.shared.capacity)
            .field("used", &self.used_bytes())
            .finish()
    }
}

impl Shared {
    fn check_epoch(&self, epoch: u64, op: &'static str, path: &str) -> Result<()> {
        if self.epoch.load(Ordering::SeqCst) != epoch {
            return Err(FsError::Crashed { op, path: path.to_string() });
        }
        Ok(())
    }

    /// Accounts `n` more live bytes, or fails if that would pass the capacity.
    fn reserve(&self, op: &'static str, path: &str, n: u64) -> Result<()> {
        let Some(capacity) = self.capacity else {
            self.used.fetch_add(n, Ordering::Relaxed);
            return Ok(());
        };
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(n).filter(|&total| total <= capacity)
            })
            .map(|_| ())
            .map_err(|used| FsError::NoSpace {
                op,
                path: path.to_string(),
                detail: format!("{used} of {capacity} bytes used, {n} more requested"),
            })
    }

    fn new_node(&self) -> Arc<Node> {
        Arc::new(Node { data: Mutex::new(NodeData::default()), used: Arc::clone(&self.used) })
    }

    /// Copies `len` bytes of `src` at `src_offset` into `dst` at `dst_offset` after checking the ranges.
    /// `dst_offset` of `None` means "at the end of `dst`" (append).
    fn place_range(
        &self,
        op: &'static str,
        src: (&str, &Node),
        src_offset: u64,
        dst: (&str, &Node),
        dst_offset: Option<u64>,
        len: u64,
    ) -> Result<()> {
        if std::ptr::eq(src.1, dst.1) {
            return Err(FsError::InvalidPath {
                path: src.0.to_string(),
                reason: "clone source and destination are the same file",
            });
        }
        // One lock at a time, so that clones in opposite directions cannot deadlock.
        let bytes = {
            let s = lock(&src.1.data);
            let size = s.bytes.len() as u64;
            if !matches!(src_offset.checked_add(len), Some(end) if end <= size) {
                return Err(FsError::OutOfRange { op, path: src.0.to_string(), offset: src_offset, len, size });
            }
            s.bytes[src_offset as usize..(src_offset + len) as usize].to_vec()
        };
        let mut d = lock(&dst.1.data);
        let size = d.bytes.len() as u64;
        let at = dst_offset.unwrap_or(size);
        if at > size {
            return Err(FsError::OutOfRange { op, path: dst.0.to_string(), offset: at, len, size });
        }
        let at = at as usize;
        let growth = (at + bytes.len()).saturating_sub(d.bytes.len());
        self.reserve(op, dst.0, growth as u64)?;
        d.write_at(at, &bytes);
        Ok(())
    }
}

impl Fs for MemFs {
    fn block_size(&self) -> u64 {
        self.shared.block_size
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let node = self.shared.new_node();
        let mut ns = lock(&self.shared.ns);
        ns.parent_for_new("create", path)?.put(path::file_name(path), Arc::clone(&node));
        drop(ns);
        Ok(self.writer(path, node))
    }

    fn open_append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let node = lock(&self.shared.ns).file("open_append", path)?;
        Ok(self.writer(path, node))
    }

    fn open(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        let node = lock(&self.shared.ns).file("open", path)?;
        let epoch = self.shared.epoch.load(Ordering::SeqCst);
        Ok(Box::new(MemReader { shared: Arc::clone(&self.shared), node, path: path.to_string(), epoch }))
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        let node = lock(&self.shared.ns).file("file_size", path)?;
        let len = lock(&node.data).bytes.len();
        Ok(len as u64)
    }

    fn exists(&self, path: &str) -> Result<bool> {
        path::validate(path)?;
        let ns = lock(&self.shared.ns);
        Ok(ns.dirs.contains_key(path) || ns.is_file(path))
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        path::validate_dir(dir)?;
        let ns = lock(&self.shared.ns);
        let mut names: Vec<String> = ns.dir("list", dir)?.entries.keys().cloned().collect();
        for sub in ns.dirs.keys() {
            if !sub.is_empty() && path::parent(sub) == dir {
                names.push(path::file_name(sub).to_string());
            }
        }
        names.sort();
        Ok(names)
    }

    fn create_dir_all(&self, dir: &str) -> Result<()> {
        path::validate_dir(dir)?;
        let mut ns = lock(&self.shared.ns);
        let mut end = 0;
        while end < dir.len() {
            end = dir[end..].find('/').map_or(dir.len(), |i| end + i);
            let prefix = &dir[..end];
            if ns.is_file(prefix) {
                return Err(FsError::AlreadyExists { op: "create_dir_all", path: prefix.to_string() });
            }
            ns.dirs.entry(prefix.to_string()).or_default();
            end += 1;
        }
        Ok(())
    }

    fn remove_dir(&self, dir: &str) -> Result<()> {
        path::validate(dir)?;
        let mut ns = lock(&self.shared.ns);
        let empty = ns.dir("remove_dir", dir)?.entries.is_empty();
        let has_subdirs = ns.dirs.keys().any(|d| !d.is_empty() && path::parent(d) == dir);
        if !empty || has_subdirs {
            return Err(FsError::DirNotEmpty { op: "remove_dir", path: dir.to_string() });
        }
        ns.dirs.remove(dir);
        Ok(())
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        path::validate(from)?;
        path::validate(to)?;
        let mut ns = lock(&self.shared.ns);
        let node = ns.file("rename", from)?;
        ns.parent_for_new("rename", to)?;
        if from == to {
            return Ok(());
        }
        ns.dir_mut("rename", path::parent(from))?.take(path::file_name(from));
        ns.dir_mut("rename", path::parent(to))?.put(path::file_name(to), node);
        Ok(())
    }

    fn remove(&self, path: &str) -> Result<()> {
        let mut ns = lock(&self.shared.ns);
        ns.file("remove", path)?;
        ns.dir_mut("remove", path::parent(path))?.take(path::file_name(path));
        Ok(())
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        path::validate_dir(dir)?;
        let mut ns = lock(&self.shared.ns);
        ns.dir("sync_dir", dir)?;
        ns.commit_dir(dir);
        self.shared.counters.dir_syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        path::validate(path)?;
        let mut ns = lock(&self.shared.ns);
        if !ns.is_file(path) {
            let node = self.shared.new_node();
            ns.parent_for_new("lock", path)?.put(path::file_name(path), node);
        }
        if ns.locks.contains_key(path) {
            return Err(FsError::Locked { path: path.to_string() });
        }
        let id = ns.next_lock_id;
        ns.next_lock_id += 1;
        ns.locks.insert(path.to_string(), id);
        Ok(Box::new(MemLock { shared: Arc::clone(&self.shared), path: path.to_string(), id }))
    }

    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        path::validate(src)?;
        path::validate(dst)?;
        check_alignment("clone_range", self.shared.block_size, src, src_offset, dst, dst_offset, len)?;
        let (src_node, dst_node) = {
            let ns = lock(&self.shared.ns);
            (ns.file("clone_range", src)?, ns.file("clone_range", dst)?)
        };
        let src_size = lock(&src_node.data).bytes.len() as u64;
        let dst_size = lock(&dst_node.data).bytes.len() as u64;
        check_ranges("clone_range", src, src_offset, src_size, dst, dst_offset, dst_size, len)?;
        if !self.shared.clone_support {
            return Err(FsError::Unsupported {
                op: "clone_range",
                path: dst.to_string(),
                reason: "clone support is switched off in this MemFs".to_string(),
            });
        }
        self.shared.place_range(
            "clone_range",
            (src, &src_node),
            src_offset,
            (dst, &dst_node),
            Some(dst_offset),
            len,
        )?;
        self.shared.counters.bytes_cloned.fetch_add(len, Ordering::Relaxed);
        Ok(())
    }

    fn supports_clone(&self) -> bool {
        self.shared.clone_support
    }
}

//! The state behind a flash file system's lock, whatever the placement: the device, the journal
//! and the durable state, the namespace and the inodes, the page cache, locks and host-write
//! statistics; what is written once for every placement: mounting from the durable state, the
//! namespace helpers, dropping inodes no name holds, and journal commits; and the interface a
//! placement implements over that state ([`Placement`]; sealed: the module is private, so only
//! this crate's placements implement it). The two are one file because each names the other.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use flashsim::{Nanos, SimClock};

use crate::env::Guard;

use super::cache::{PageCache, PageCacheConfig};
use super::namespace::Namespace;
use super::records::{DurableInode, DurableMeta, MapItem, Record};
use crate::error::{FsError, Result};
use crate::fs::CloneOutcome;
use crate::fs::WriteHint;
use crate::host_writes::HostWriteStats;
use crate::path;

/// What an inode of a placement keeps: its hint and length, and whatever maps its bytes.
pub trait FileInode: Send + 'static {
    fn new(hint: WriteHint) -> Self;
    fn len(&self) -> u64;
    fn hint(&self) -> WriteHint;
}

/// Where a flash file system puts a file's bytes: the device below, the journal's layout on it,
/// the map of each inode, and the operations that move bytes between files and the device.
pub trait Placement: Sized + Send + 'static {
    type Device: Send;
    type Journal: Send;
    type Item: MapItem;
    type Inode: FileInode;
    /// The file system's name (`Debug`).
    const NAME: &'static str;
    /// Whether `clone_range` shares pages rather than failing with `Unsupported`.
    const CLONES: bool;

    /// Power loss on the device: it drops its volatile state and recovers.
    fn power_cut(dev: &mut Self::Device);
    /// Reads the journal from the device: the durable state.
    fn recover(st: &mut State<Self>, clock: &SimClock) -> Result<DurableMeta<Self::Item>>;
    /// Before the durable inodes are restored: forgets what the placement knew.
    fn begin_load(st: &mut State<Self>);
    /// Takes the durable map of a reachable inode back.
    fn restore_inode(
        st: &mut State<Self>,
        clock: &SimClock,
        ino: u64,
        durable: DurableInode<Self::Item>,
    ) -> Result<Self::Inode>;
    /// After the inodes: frees what no inode holds (trims pages, resets zones).
    fn end_load(st: &mut State<Self>, clock: &SimClock) -> Result<()>;
    /// Writes `records` (already applied to `st.meta`) to the journal; returns when durable.
    fn write_journal(st: &mut State<Self>, at: Nanos, records: &[Record<Self::Item>]) -> Result<Nanos>;
    /// Frees what a dropped inode held.
    fn release_inode(st: &mut State<Self>, ino: u64, inode: Self::Inode, at: Nanos);

    fn append(st: &mut State<Self>, clock: &SimClock, ino: u64, path: &str, data: &[u8], from: Origin) -> Result<()>;
    /// Makes the file's bytes durable (the caller checked the epoch; the placement locks).
    fn sync(fs: &Shared<Self>, ino: u64, path: &str, epoch: u64) -> Result<()>;
    /// Reads `buf.len()` bytes at `offset`, all inside the file's placed bytes (the caller
    /// checked), issued at the clock's time; returns when the device completes them (the caller
    /// waits, or not for readahead).
    fn read(st: &mut State<Self>, clock: &SimClock, ino: u64, path: &str, offset: u64, buf: &mut [u8])
        -> Result<Nanos>;
    /// The time and counts of `read` of `n` bytes at `offset`, without the bytes (readahead into a
    /// cache that leaves clean pages on the device).
    fn read_timing(st: &mut State<Self>, clock: &SimClock, ino: u64, path: &str, offset: u64, n: u64) -> Result<Nanos>;
    /// The bytes `read` would give, without time or counts: where a clean page the page cache
    /// does not keep (`PageCacheConfig::clean_on_device`) is read from on a hit.
    fn contents(st: &mut State<Self>, ino: u64, path: &str, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// `clone_range` on checked arguments.
    fn clone_range(st: &mut State<Self>, clock: &SimClock, span: &CloneSpan) -> Result<()>;
    /// `append_cloned` on checked arguments (`span.dst_offset` is the end of `dst`): a clone
    /// where the placement can.
    fn append_cloned(st: &mut State<Self>, clock: &SimClock, span: &CloneSpan) -> Result<CloneOutcome> {
        Self::clone_range(st, clock, span)?;
        Ok(CloneOutcome::cloned(span.len))
    }
    /// A writer of `ino` closed.
    fn close(st: &mut State<Self>, clock: &SimClock, ino: u64);
    /// The placement's fields in `Debug` output.
    fn debug_fields(st: &State<Self>, f: &mut fmt::DebugStruct<'_, '_>);
}

/// Who hands a placement bytes to append.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A handle with no page cache in the way (none configured, or direct I/O): the placement
    /// gathers the bytes as it would on its own (a zoned file a stripe of pages at a time).
    Handle,
    /// The page cache writing back: its whole pages go to the device at once.
    WriteBack,
}

/// A clone whose arguments were checked (paths, alignment, ranges, two different files): `len`
/// bytes of `src` at `src_offset` to `dst` at `dst_offset`, each file as its inode and path.
#[derive(Debug, Clone, Copy)]
pub struct CloneSpan<'a> {
    pub src: (u64, &'a str),
    pub src_offset: u64,
    pub dst: (u64, &'a str),
    pub dst_offset: u64,
    pub len: u64,
}

pub struct State<P: Placement> {
    pub(crate) dev: P::Device,
    pub(crate) journal: P::Journal,
    /// What the placement keeps beside the device (free pages, zones, streams).
    pub(crate) place: P,
    pub(crate) meta: DurableMeta<P::Item>,
    pub(crate) ns: Namespace,
    pub(crate) inodes: BTreeMap<u64, P::Inode>,
    pub(crate) next_ino: u64,
    /// Records waiting for the next journal commit (inodes that became garbage).
    pub(crate) pending: Vec<Record<P::Item>>,
    pub(crate) locks: BTreeMap<String, u64>,
    pub(crate) next_lock_id: u64,
    pub(crate) stats: HostWriteStats,
    /// The host's page cache over the files' pages (off unless configured).
    pub(crate) cache: PageCache,
    /// The bytes of a write-back on their way from the cache's pages to the placement, kept from
    /// one write-back to the next (`flash_fs::io`).
    pub(crate) write_back_buf: Vec<u8>,
    /// The page cache's buffer for the pages a miss or a readahead reads (`io::fill`).
    pub(crate) read_buf: Vec<u8>,
    pub(crate) page_size: usize,
}

impl<P: Placement> State<P> {
    /// A state that holds nothing yet: [`State::load`] fills it.
    pub fn new(dev: P::Device, journal: P::Journal, place: P, page_size: usize) -> State<P> {
        State {
            dev,
            journal,
            place,
            meta: DurableMeta::empty(),
            ns: Namespace::default(),
            inodes: BTreeMap::new(),
            next_ino: 1,
            pending: Vec::new(),
            locks: BTreeMap::new(),
            next_lock_id: 0,
            stats: HostWriteStats::default(),
            cache: PageCache::new(PageCacheConfig::OFF, page_size as u64),
            write_back_buf: Vec::new(),
            read_buf: Vec::new(),
            page_size,
        }
    }

    /// (Re)builds everything but the device, the journal and the statistics from the durable
    /// state `meta`: the namespace, and every inode a durable entry reaches (the placement takes
    /// its map back); the durable state of unreachable inodes is forgotten.
    pub fn load(&mut self, clock: &SimClock, meta: DurableMeta<P::Item>) -> Result<()> {
        self.ns = Namespace::from_durable(&meta.dirs);
        self.inodes.clear();
        self.next_ino = meta.next_ino.max(1);
        self.pending.clear();
        self.locks.clear();
        self.cache.clear();
        P::begin_load(self);
        let reachable: Vec<u64> = meta.dirs.values().flat_map(|d| d.values().copied()).collect();
        for ino in reachable {
            if self.inodes.contains_key(&ino) {
                continue;
            }
            let d = meta.inodes.get(&ino).cloned().unwrap_or_default();
            let inode = P::restore_inode(self, clock, ino, d)?;
            self.inodes.insert(ino, inode);
        }
        let mut meta = meta;
        meta.inodes.retain(|ino, _| self.inodes.contains_key(ino));
        self.meta = meta;
        P::end_load(self, clock)
    }

    pub fn lookup(&self, op: &'static str, p: &str) -> Result<u64> {
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
    pub fn check_new_file(&self, op: &'static str, p: &str) -> Result<()> {
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

    pub fn is_file(&self, p: &str) -> bool {
        self.ns.is_file(p)
    }

    pub fn new_inode(&mut self, hint: WriteHint) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        self.inodes.insert(ino, P::Inode::new(hint));
        ino
    }

    /// The inode `ino`, or `NotFound` naming `path` (its file was removed under a handle).
    pub fn inode(&mut self, ino: u64, op: &'static str, path: &str) -> Result<&mut P::Inode> {
        self.inodes.get_mut(&ino).ok_or_else(|| FsError::NotFound { op, path: path.to_string() })
    }

    /// The length of `ino`: its placed bytes and its dirty bytes in the cache (0 for an inode
    /// removed under a handle).
    pub fn len_of(&self, ino: u64) -> u64 {
        self.placed_len(ino) + self.cache.dirty_bytes(ino)
    }

    /// The bytes of `ino` its placement holds (written back).
    pub fn placed_len(&self, ino: u64) -> u64 {
        self.inodes.get(&ino).map_or(0, |i| i.len())
    }

    /// Drops `ino` if no directory (current or durable) names it any more: the placement frees
    /// what it held, and the journal forgets its durable state at the next commit.
    pub fn collect_inode(&mut self, ino: u64, at: Nanos) {
        if self.ns.referenced(ino) {
            return;
        }
        let Some(inode) = self.inodes.remove(&ino) else {
            return;
        };
        self.cache.drop_file(ino);
        P::release_inode(self, ino, inode, at);
        if self.meta.inodes.contains_key(&ino) {
            self.pending.push(Record::InodeFree { ino });
        }
    }

    /// Appends `records` (and pending ones) to the journal; returns when they are durable.
    pub fn commit(&mut self, at: Nanos, records: Vec<Record<P::Item>>) -> Result<Nanos> {
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
        P::write_journal(self, at, &all)
    }
}

/// The file system behind its handles: the state under its lock, the crash epoch, the clock.
pub struct Shared<P: Placement> {
    pub(super) state: Mutex<State<P>>,
    pub(super) epoch: AtomicU64,
    pub(super) clock: SimClock,
}

impl<P: Placement> Shared<P> {
    pub(crate) fn check_epoch(&self, epoch: u64, op: &'static str, path: &str) -> Result<()> {
        if self.epoch.load(Ordering::SeqCst) != epoch {
            return Err(FsError::Crashed { op, path: path.to_string() });
        }
        Ok(())
    }

    /// The file system's state, locked in a critical section of its clock: a lane that holds it
    /// keeps the turn, and hands it over (if its time moved) once the lock is free.
    pub(crate) fn state(&self) -> Guard<'_, State<P>> {
        Guard::on_clock(&self.clock, &self.state)
    }

    pub(crate) fn clock(&self) -> &SimClock {
        &self.clock
    }
}

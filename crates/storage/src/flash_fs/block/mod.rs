//! The block placement, and [`SimFs`]: the flash file system over the simulated block SSD
//! (`flashsim::BlockSsd`).
//!
//! Files are lists of device pages (LPNs), allocated to stay contiguous (see `alloc`). A page is
//! written to the device when it fills; the last, partly filled page of a file is kept in memory
//! (a one-page write-back cache) and programmed at `sync`. Device writes are asynchronous in
//! simulated time (as through a page cache): they reserve the device but do not hold up the
//! caller's lane; reads, and `sync` (which waits for the file's outstanding writes and its metadata),
//! move the caller's lane to their completion (see [`SimClock`]).
//!
//! The crash contract on a block device: pages that a durable state still refers to are never
//! overwritten in place: a clone over synced pages goes to fresh LPNs (copy on write), and a page
//! returns to the allocator, trimmed on the device, only when neither the current nor the durable
//! state holds it. The journal lives in two LPN regions at the start of the device (`regions`),
//! written at `sync` and `sync_dir` and counted as "fs metadata" host writes.
//!
//! `clone_range` is getLPN + `remap` on the device: no NAND program (seed 000 section 4.5).

mod alloc;
mod file;
mod regions;

use std::fmt;

use flashsim::{Ftl, Nanos, SimClock, Wait};

use super::meta_codec::Cursor;
use super::records::{DurableInode, DurableMeta, MapItem, Record};
use super::state::State;
use super::{corrupt, CloneSpan, FlashFs, Origin, Placement, Shared};
use crate::error::{FsError, Result};
use alloc::Allocator;
use file::Inode;
pub(crate) use regions::BlockRegions;

type Journal = crate::flash_fs::journal::Journal<BlockRegions>;

/// A file system on a simulated block SSD. Cloning shares it.
pub type SimFs = FlashFs<BlockPlacement>;

/// A run of consecutive LPNs (first, count): a block file's durable map in the journal.
pub type LpnRun = (u32, u32);

impl MapItem for LpnRun {
    // A remounted block file has lost its hint: its I/O after a remount is unlabelled.
    const HINT_IN_RECORD: bool = false;

    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
        out.extend_from_slice(&self.1.to_le_bytes());
    }

    fn get(c: &mut Cursor) -> Option<Self> {
        Some((c.u32()?, c.u32()?))
    }
}

/// Sizes of SimFs's own structures.
#[derive(Debug, Clone, Copy)]
pub struct SimFsOptions {
    /// Pages of each of the journal's two regions at the start of the device (a snapshot of the
    /// metadata, then commits).
    pub journal_region_pages: u32,
    /// Pages an appending file reserves at a time to stay contiguous.
    pub alloc_window_pages: u32,
}

impl Default for SimFsOptions {
    fn default() -> Self {
        SimFsOptions { journal_region_pages: 512, alloc_window_pages: 256 }
    }
}

/// Per-LPN flags: held by the current state of a file, by the durable state of a file.
const VOLATILE: u8 = 1;
const DURABLE: u8 = 2;

/// What the block placement keeps beside the device.
pub struct BlockPlacement {
    opts: SimFsOptions,
    flags: Vec<u8>,
    alloc: Allocator,
}

impl SimFs {
    /// Formats `dev` (an empty file system) and mounts it.
    pub fn format(dev: impl Into<Box<dyn Ftl>>, clock: SimClock, opts: SimFsOptions) -> Result<SimFs> {
        let mut dev = dev.into();
        let region = BlockRegions::COUNT * opts.journal_region_pages;
        if opts.journal_region_pages < 2 || region as u64 * 2 > dev.user_pages() {
            return Err(FsError::NoSpace {
                op: "format",
                path: String::new(),
                detail: format!(
                    "metadata region of {region} pages does not fit a device of {} pages",
                    dev.user_pages()
                ),
            });
        }
        let regions = BlockRegions { pages: opts.journal_region_pages };
        let (journal, done) = Journal::format(&mut dev, clock.now(), regions)?;
        clock.wait(done, Wait::Metadata);
        let pages_written = journal.pages_written;
        let mut state = BlockPlacement::state(dev, journal, opts);
        state.load(&clock, DurableMeta::empty())?;
        state.stats.fs_metadata_bytes += pages_written * state.page_size as u64;
        Ok(FlashFs::wrap(state, clock))
    }

    /// Mounts a formatted device, reading its metadata.
    pub fn mount(dev: impl Into<Box<dyn Ftl>>, clock: SimClock, opts: SimFsOptions) -> Result<SimFs> {
        FlashFs::mount_state(
            BlockPlacement::state(
                dev.into(),
                Journal::unloaded(BlockRegions { pages: opts.journal_region_pages }),
                opts,
            ),
            clock,
        )
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
        st.place.alloc.free_pages() * st.page_size as u64
    }
}

impl BlockPlacement {
    fn state(dev: Box<dyn Ftl>, journal: Journal, opts: SimFsOptions) -> State<BlockPlacement> {
        let page_size = dev.page_size() as usize;
        let place = BlockPlacement { opts, flags: Vec::new(), alloc: Allocator::new(0, 0) };
        State::new(dev, journal, place, page_size)
    }

    fn region(&self) -> u32 {
        BlockRegions::COUNT * self.opts.journal_region_pages
    }
}

impl Placement for BlockPlacement {
    type Device = Box<dyn Ftl>;
    type Journal = Journal;
    type Item = LpnRun;
    type Inode = Inode;
    const NAME: &'static str = "SimFs";
    const CLONES: bool = true;

    fn power_cut(dev: &mut Box<dyn Ftl>) {
        dev.power_cut();
    }

    fn recover(st: &mut State<Self>, clock: &SimClock) -> Result<DurableMeta<LpnRun>> {
        let regions = BlockRegions { pages: st.place.opts.journal_region_pages };
        let (journal, meta, done) = Journal::recover(&mut st.dev, clock.now(), regions)?;
        clock.wait(done, Wait::Metadata);
        st.journal = journal;
        Ok(meta)
    }

    fn begin_load(st: &mut State<Self>) {
        let user = u32::try_from(st.dev.user_pages()).unwrap_or(u32::MAX);
        st.place.flags = vec![0; user as usize];
        st.place.alloc = Allocator::new(st.place.region(), user);
    }

    fn restore_inode(st: &mut State<Self>, clock: &SimClock, ino: u64, d: DurableInode<LpnRun>) -> Result<Inode> {
        let pages: Vec<u32> = d.items.iter().flat_map(|&(s, n)| s..s + n).collect();
        for &lpn in &pages {
            if !st.place.alloc.take_exact(lpn) {
                return Err(corrupt(format!("inode {ino}: LPN {lpn} is used twice or outside the data region")));
            }
            st.place.flags[lpn as usize] = VOLATILE | DURABLE;
        }
        let mut inode = Inode::restored(pages, d.len);
        inode.load_tail(st.dev.as_mut(), clock, st.page_size, ino)?;
        Ok(inode)
    }

    /// Pages the device still maps but no file holds (freed before the cut): trims them, like fstrim.
    fn end_load(st: &mut State<Self>, clock: &SimClock) -> Result<()> {
        let at = clock.now();
        let user = st.place.flags.len() as u32;
        let mut run: Option<(u32, u32)> = None;
        for lpn in st.place.region()..user {
            let stale = st.place.flags[lpn as usize] == 0 && st.dev.is_mapped(lpn as u64);
            run = match (run, stale) {
                (Some((s, n)), true) if s + n == lpn => Some((s, n + 1)),
                (r, stale) => {
                    if let Some((s, n)) = r {
                        st.trim(at, s, n);
                    }
                    stale.then_some((lpn, 1))
                }
            };
        }
        if let Some((s, n)) = run {
            st.trim(at, s, n);
        }
        Ok(())
    }

    fn write_journal(st: &mut State<Self>, at: Nanos, records: &[Record<LpnRun>]) -> Result<Nanos> {
        let before = st.journal.pages_written;
        let done = st.journal.commit(&mut st.dev, at, records, &st.meta)?;
        st.stats.fs_metadata_bytes += (st.journal.pages_written - before) * st.page_size as u64;
        Ok(done)
    }

    fn release_inode(st: &mut State<Self>, _ino: u64, inode: Inode, at: Nanos) {
        for lpn in inode.pages.iter().chain(inode.synced_pages.iter()) {
            st.place.flags[*lpn as usize] = 0;
        }
        let mut all: Vec<u32> = inode.pages.iter().chain(inode.synced_pages.iter()).copied().collect();
        all.sort_unstable();
        all.dedup();
        st.release_pages(at, &all);
        if let Some((s, n)) = inode.window {
            st.place.alloc.release(s, n);
        }
    }

    fn append(st: &mut State<Self>, clock: &SimClock, ino: u64, path: &str, data: &[u8], _: Origin) -> Result<()> {
        let window = st.place.opts.alloc_window_pages;
        file::append(st, clock, ino, path, data, window)
    }

    fn sync(fs: &Shared<Self>, ino: u64, path: &str, _epoch: u64) -> Result<()> {
        let mut st = fs.state();
        let window = st.place.opts.alloc_window_pages;
        file::sync(&mut st, fs.clock(), ino, path, window)
    }

    fn read(
        st: &mut State<Self>,
        clock: &SimClock,
        ino: u64,
        path: &str,
        offset: u64,
        buf: &mut [u8],
    ) -> Result<Nanos> {
        file::read(st, clock, ino, path, offset, buf)
    }

    fn read_timing(st: &mut State<Self>, clock: &SimClock, ino: u64, path: &str, offset: u64, n: u64) -> Result<Nanos> {
        file::read_timing(st, clock, ino, path, offset, n)
    }

    fn contents(st: &mut State<Self>, ino: u64, path: &str, offset: u64, buf: &mut [u8]) -> Result<()> {
        file::contents(st, ino, path, offset, buf)
    }

    fn clone_range(st: &mut State<Self>, clock: &SimClock, span: &CloneSpan) -> Result<()> {
        file::clone_pages(st, clock, span)
    }

    fn close(st: &mut State<Self>, _clock: &SimClock, ino: u64) {
        file::release_window(st, ino);
    }

    fn debug_fields(st: &State<Self>, f: &mut fmt::DebugStruct<'_, '_>) {
        f.field("page_size", &st.page_size);
    }
}

impl State<BlockPlacement> {
    /// Returns pages (sorted, unique, flags already cleared) to the allocator and trims them.
    fn release_pages(&mut self, at: Nanos, pages: &[u32]) {
        let mut i = 0;
        while i < pages.len() {
            let mut j = i + 1;
            while j < pages.len() && pages[j] == pages[j - 1] + 1 {
                j += 1;
            }
            let (s, n) = (pages[i], (j - i) as u32);
            self.place.alloc.release(s, n);
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
}

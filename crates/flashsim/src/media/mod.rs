//! The NAND media layer: one array of dies, planes, blocks and pages that every simulated device
//! (an FTL) drives. It owns what the flash itself has and does, and nothing an FTL decides:
//!
//! - geometry and the timeline (dies and channels busy in simulated time, multi-plane commands);
//! - block state: the write pointer (pages programmed since the last erase), valid pages, erase
//!   counts (wear); page state: free (at or past the write pointer), valid, or invalid;
//! - the out-of-band area of each page: the owner the FTL named when it programmed the page (an LPN,
//!   a key, a UST) and the program sequence number the media stamped;
//! - page contents ([`DataMode`]), kept only while a page is valid;
//! - counters per [`Cause`] and the host-operation latency histograms of the device.
//!
//! The NAND rules are enforced, as a real chip would refuse the command: a page is programmed only
//! at its block's write pointer (in order, once per erase), is read only once programmed, and a
//! copyback never leaves its plane. Violations are typed errors, never panics.
//!
//! Validity is the FTL's knowledge kept here so that every device shares it: a programmed page is
//! valid until its FTL calls [`Media::invalidate`] (or relocates it), and its contents are dropped
//! at that moment. Everything here survives a power cut except what the FTL rebuilds: validity,
//! which recovery resets with [`Media::set_valid`].

mod compact;
mod counters;
mod store;

use serde::{Deserialize, Serialize};

pub use counters::{CauseCounts, CauseReport, FlashCounters};
pub use store::{DataMode, SLOTS_PER_CHUNK};

use crate::bits::BitSet;
use crate::cause::Cause;
use crate::error::{FlashError, Result};
use crate::geometry::Geometry;
use crate::latency::Latencies;
use crate::timing::{Busy, Nanos, OpKind, Timeline, Timing, Traced};
use store::PageStore;

/// "No owner" in a page's OOB (an erased page).
pub const NO_OWNER: u32 = u32::MAX;

/// What defines the NAND array under a device.
#[derive(Clone, Debug)]
pub struct MediaConfig {
    pub geometry: Geometry,
    pub timing: Timing,
    /// Group pages on distinct planes of one die at the same page offset into multi-plane commands.
    pub multi_plane: bool,
    /// Where page contents are kept.
    pub store: DataMode,
    /// Keep every operation the timeline serves, in the order it was given them
    /// ([`Media::trace`]): for tests that check the order requests arrive in.
    pub trace: bool,
}

impl MediaConfig {
    /// Multi-plane commands where the die has more than one plane; contents in memory.
    pub fn new(geometry: Geometry, timing: Timing) -> MediaConfig {
        let multi_plane = geometry.planes_per_die > 1;
        MediaConfig { geometry, timing, multi_plane, store: DataMode::Memory, trace: false }
    }

    pub fn validate(&self) -> Result<()> {
        self.geometry.validate()?;
        self.timing.validate()
    }
}

/// One page to program.
#[derive(Clone, Copy, Debug)]
pub struct PageWrite<'a> {
    pub ppn: u32,
    /// Earliest time the program may start.
    pub ready: Nanos,
    /// Written to the page's OOB: whom the page belongs to, in the FTL's terms.
    pub owner: u32,
    /// The page's contents, or `None` to keep none (metadata-only accounting).
    pub data: Option<&'a [u8]>,
}

/// The wear of a device: erases per block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Wear {
    pub min_erases: u32,
    pub mean_erases: f64,
    pub max_erases: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct BlockState {
    /// Pages programmed since the last erase; the next program goes here.
    write_pointer: u32,
    valid: u32,
    erase_count: u32,
    /// Where the block is (precomputed: the hot paths would otherwise divide four times a page).
    plane: u32,
    die: u32,
    channel: u32,
}

/// A NAND array in simulated time.
pub struct Media {
    geo: Geometry,
    /// log2(pages per block) when it is a power of two: block and page of a PPN without division.
    ppb_shift: Option<u32>,
    timeline: Timeline,
    multi_plane: bool,
    blocks: Vec<BlockState>,
    valid: BitSet,
    oob_owner: Vec<u32>,
    oob_seq: Vec<u64>,
    /// Program sequence number, stamped in each page's OOB so that recovery can order copies.
    seq: u64,
    store: PageStore,
    counters: FlashCounters,
    latencies: Latencies,
    trace: Option<Vec<Traced>>,
    /// Reused buffers: the multi-plane grouping and page moves in the sparse-file store.
    order: Vec<(u32, u32, u32, Nanos)>,
    scratch: Vec<u8>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Program,
}

impl std::fmt::Debug for Media {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Media").field("geometry", &self.geo).field("counters", &self.counters).finish_non_exhaustive()
    }
}

impl Media {
    /// An erased array.
    pub fn new(cfg: &MediaConfig) -> Result<Media> {
        cfg.validate()?;
        let geo = cfg.geometry.clone();
        let pages = geo.total_pages();
        Ok(Media {
            timeline: Timeline::new(&cfg.timing, geo.total_dies(), geo.channels, geo.page_size),
            trace: cfg.trace.then(Vec::new),
            multi_plane: cfg.multi_plane,
            blocks: (0..geo.total_blocks() as u32)
                .map(|b| {
                    let plane = geo.plane_of_block(b);
                    let die = geo.die_of_plane(plane);
                    BlockState { plane, die, channel: geo.channel_of_die(die), ..BlockState::default() }
                })
                .collect(),
            ppb_shift: geo.pages_per_block.is_power_of_two().then(|| geo.pages_per_block.trailing_zeros()),
            valid: BitSet::new(pages),
            oob_owner: vec![NO_OWNER; pages as usize],
            oob_seq: vec![0; pages as usize],
            seq: 1,
            store: PageStore::new(&cfg.store, pages, geo.page_size, geo.pages_per_block)?,
            counters: FlashCounters::default(),
            latencies: Latencies::new(),
            order: Vec::new(),
            scratch: Vec::new(),
            geo,
        })
    }

    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    pub fn counters(&self) -> &FlashCounters {
        &self.counters
    }

    /// The device's host-operation latency histograms (its FTL records into them).
    pub fn latencies(&self) -> &Latencies {
        &self.latencies
    }

    pub fn latencies_mut(&mut self) -> &mut Latencies {
        &mut self.latencies
    }

    /// Simulated time at which every die and channel is idle.
    pub fn idle_at(&self) -> Nanos {
        self.timeline.all_idle_at()
    }

    /// The operations given from now on serve a request that arrived at `t` (see
    /// [`Timeline::arrive`]).
    pub fn arrive(&mut self, t: Nanos) {
        self.timeline.arrive(t);
    }

    /// Every operation served so far, in the order the timeline was given them (empty unless the
    /// configuration keeps a trace).
    pub fn trace(&self) -> &[Traced] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// The dies' own busy time, summed (equals `counters().busy_ns`: an accounting identity).
    pub fn total_die_busy(&self) -> Nanos {
        self.timeline.total_die_busy()
    }

    /// Pages programmed in `block` since its last erase (its write pointer).
    pub fn write_pointer(&self, block: u32) -> u32 {
        self.blocks[block as usize].write_pointer
    }

    /// Valid pages of `block`.
    pub fn valid_pages(&self, block: u32) -> u32 {
        self.blocks[block as usize].valid
    }

    pub fn is_valid(&self, ppn: u32) -> bool {
        self.valid.get(ppn)
    }

    pub fn erase_count(&self, block: u32) -> u32 {
        self.blocks[block as usize].erase_count
    }

    /// The owner and sequence number in `ppn`'s OOB area (`NO_OWNER` when erased).
    pub fn oob(&self, ppn: u32) -> (u32, u64) {
        (self.oob_owner[ppn as usize], self.oob_seq[ppn as usize])
    }

    /// The sequence number the next program will get.
    pub fn next_seq(&self) -> u64 {
        self.seq
    }

    /// Erases per block: min / mean / max.
    pub fn wear(&self) -> Wear {
        let n = self.blocks.len().max(1) as f64;
        let (mut min, mut max, mut sum) = (u32::MAX, 0, 0u64);
        for b in &self.blocks {
            min = min.min(b.erase_count);
            max = max.max(b.erase_count);
            sum += b.erase_count as u64;
        }
        Wear { min_erases: if self.blocks.is_empty() { 0 } else { min }, mean_erases: sum as f64 / n, max_erases: max }
    }

    /// Bytes of page contents held in memory.
    pub fn resident_bytes(&self) -> u64 {
        self.store.resident_bytes()
    }

    /// Copies the contents of programmed page `ppn` into `buf` (no time, no count: the timing of a
    /// read is [`Media::read`]). `Ok(false)` when the page keeps no contents.
    pub fn contents(&self, ppn: u32, buf: &mut [u8]) -> Result<bool> {
        self.check_programmed(ppn, "read")?;
        self.store.get(ppn, buf)
    }

    /// Programs `pages`, grouping them into multi-plane commands where allowed. Each page must be at
    /// its block's write pointer (pages of one block in order within the slice). Every page becomes
    /// valid. Returns when the last program completes. A refused page ends the command there: the
    /// pages before it are programmed but not timed (an FTL bug, not a condition to recover from).
    pub fn program(&mut self, pages: &[PageWrite], cause: Cause) -> Result<Nanos> {
        for p in pages {
            let block = self.block_of(p.ppn);
            let page = self.page_of(p.ppn);
            let b = self.blocks.get(block as usize).ok_or(FlashError::NoSuchPage { ppn: p.ppn })?;
            if page != b.write_pointer {
                return Err(FlashError::ProgramOutOfOrder { block, page, write_pointer: b.write_pointer });
            }
            if let Some(d) = p.data {
                if d.len() != self.geo.page_size as usize {
                    return Err(FlashError::Misaligned { op: "program", len: d.len(), page_size: self.geo.page_size });
                }
            }
            self.store.put(p.ppn, p.data)?;
            self.stamp(p.ppn, p.owner);
        }
        Ok(self.issue(Kind::Program, pages.iter().map(|p| (p.ppn, p.ready)), cause))
    }

    /// Reads programmed pages `(ppn, earliest start)` (timing and counts; contents through
    /// [`Media::contents`]). Returns when the last one is out of the chip.
    pub fn read(&mut self, pages: &[(u32, Nanos)], cause: Cause) -> Result<Nanos> {
        for &(ppn, _) in pages {
            self.check_programmed(ppn, "read")?;
        }
        Ok(self.issue(Kind::Read, pages.iter().copied(), cause))
    }

    /// Times and counts one page read on `block`'s die from `ready`, as [`Media::read`] would,
    /// of a page the FTL holds elsewhere (still in its write buffer, not yet programmed): for an
    /// experiment that charges such reads as if they went to the flash. Returns when it would be
    /// out of the chip.
    pub fn read_as_if_programmed(&mut self, block: u32, ready: Nanos, cause: Cause) -> Result<Nanos> {
        let b =
            *self.blocks.get(block as usize).ok_or(FlashError::NoSuchPage { ppn: block * self.geo.pages_per_block })?;
        Ok(self.nand(Kind::Read, ready, b.die, b.channel, 1, cause))
    }

    /// Moves valid page `src` to `dst` (at its block's write pointer): by copyback inside the
    /// plane when `copyback` is set and the planes match, else read out over `src`'s channel and
    /// programmed over `dst`'s. `dst` gets `owner` and `src`'s contents and becomes valid; `src`
    /// becomes invalid. Returns when the program completes.
    pub fn relocate(
        &mut self,
        at: Nanos,
        src: u32,
        dst: u32,
        owner: u32,
        copyback: bool,
        cause: Cause,
    ) -> Result<Nanos> {
        self.check_programmed(src, "relocate")?;
        let block = self.block_of(dst);
        let d = *self.blocks.get(block as usize).ok_or(FlashError::NoSuchPage { ppn: dst })?;
        if self.page_of(dst) != d.write_pointer {
            return Err(FlashError::ProgramOutOfOrder {
                block,
                page: self.page_of(dst),
                write_pointer: d.write_pointer,
            });
        }
        let s = self.blocks[self.block_of(src) as usize];
        let done = if copyback && s.plane == d.plane {
            let op = self.timeline.copyback(at, s.die);
            self.counters.copyback(cause, op);
            self.note(OpKind::Copyback, cause, at, (s.die, s.channel, 1), op);
            op.done
        } else {
            let read = self.timeline.read(at, s.die, s.channel, 1);
            self.counters.read(cause, 1, read);
            self.note(OpKind::Read, cause, at, (s.die, s.channel, 1), read);
            let program = self.timeline.program(read.done, d.die, d.channel, 1);
            self.counters.program(cause, 1, program);
            self.note(OpKind::Program, cause, read.done, (d.die, d.channel, 1), program);
            program.done
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        let moved = self.store.move_page(src, dst, &mut scratch);
        self.scratch = scratch;
        moved?;
        self.stamp(dst, owner);
        self.invalidate(src);
        Ok(done)
    }

    /// Erases `block`: every page becomes free, contents and OOB are gone, the erase count grows.
    pub fn erase(&mut self, at: Nanos, block: u32, cause: Cause) -> Result<Nanos> {
        if block as u64 >= self.geo.total_blocks() {
            return Err(FlashError::NoSuchPage { ppn: block.saturating_mul(self.geo.pages_per_block) });
        }
        let ppb = self.geo.pages_per_block;
        let first = block * ppb;
        let written = self.blocks[block as usize].write_pointer;
        for ppn in first..first + written {
            self.valid.set(ppn, false);
            self.oob_owner[ppn as usize] = NO_OWNER;
        }
        self.store.erase(first, written);
        let b = &mut self.blocks[block as usize];
        b.write_pointer = 0;
        b.valid = 0;
        b.erase_count += 1;
        let b = self.blocks[block as usize];
        let op = self.timeline.erase(at, b.die);
        self.counters.erase(cause, op);
        self.note(OpKind::Erase, cause, at, (b.die, b.channel, 1), op);
        Ok(op.done)
    }

    /// Marks valid page `ppn` invalid and drops its contents (an overwrite, trim or relocation).
    pub fn invalidate(&mut self, ppn: u32) {
        if self.valid.get(ppn) {
            self.valid.set(ppn, false);
            let b = self.block_of(ppn) as usize;
            self.blocks[b].valid -= 1;
            self.store.drop_page(ppn);
        }
    }

    /// Recovery after a power cut: the FTL states which programmed pages are valid. A page made
    /// invalid loses its contents; a page made valid keeps whatever contents it still has.
    pub fn set_valid(&mut self, ppn: u32, valid: bool) {
        if valid && !self.valid.get(ppn) {
            self.valid.set(ppn, true);
            let b = self.block_of(ppn) as usize;
            self.blocks[b].valid += 1;
        } else if !valid {
            self.invalidate(ppn);
        }
    }

    /// Records a host operation's latency in the device's histograms.
    pub fn record_latency(&mut self, op: crate::latency::HostOp, latency: Nanos) {
        self.latencies.record(op, latency);
    }

    fn block_of(&self, ppn: u32) -> u32 {
        match self.ppb_shift {
            Some(s) => ppn >> s,
            None => ppn / self.geo.pages_per_block,
        }
    }

    fn page_of(&self, ppn: u32) -> u32 {
        match self.ppb_shift {
            Some(s) => ppn & ((1 << s) - 1),
            None => ppn % self.geo.pages_per_block,
        }
    }

    fn stamp(&mut self, ppn: u32, owner: u32) {
        self.oob_owner[ppn as usize] = owner;
        self.oob_seq[ppn as usize] = self.seq;
        self.seq += 1;
        self.valid.set(ppn, true);
        let block = self.block_of(ppn) as usize;
        let b = &mut self.blocks[block];
        b.write_pointer += 1;
        b.valid += 1;
    }

    fn check_programmed(&self, ppn: u32, op: &'static str) -> Result<()> {
        let block = self.block_of(ppn);
        match self.blocks.get(block as usize) {
            None => Err(FlashError::NoSuchPage { ppn }),
            Some(b) if self.page_of(ppn) >= b.write_pointer => {
                Err(FlashError::UnwrittenPage { op, ppn, write_pointer: b.write_pointer })
            }
            Some(_) => Ok(()),
        }
    }

    /// Issues reads or programs for pages `(ppn, earliest start)`, grouping pages on distinct
    /// planes of one die at the same page offset into multi-plane commands when enabled.
    fn issue(&mut self, kind: Kind, pages: impl ExactSizeIterator<Item = (u32, Nanos)>, cause: Cause) -> Nanos {
        let mut done = 0;
        if !self.multi_plane || pages.len() < 2 {
            for (ppn, ready) in pages {
                let b = self.blocks[self.block_of(ppn) as usize];
                done = done.max(self.nand(kind, ready, b.die, b.channel, 1, cause));
            }
            return done;
        }
        let mut order = std::mem::take(&mut self.order);
        order.clear();
        order.extend(pages.map(|(ppn, ready)| {
            let b = self.blocks[self.block_of(ppn) as usize];
            (b.die, self.page_of(ppn), b.plane, ready)
        }));
        order.sort_unstable();
        let mut i = 0;
        while i < order.len() {
            let (die, page, plane, ready) = order[i];
            let mut j = i + 1;
            let mut last_plane = plane;
            while j < order.len()
                && j - i < self.geo.planes_per_die as usize
                && order[j].0 == die
                && order[j].1 == page
                && order[j].2 != last_plane
            {
                last_plane = order[j].2;
                j += 1;
            }
            let ready = order[i..j].iter().map(|o| o.3).max().unwrap_or(ready);
            let n = (j - i) as u32;
            if n > 1 {
                self.counters.multi_plane_ops += 1;
            }
            let channel = self.geo.channel_of_die(die);
            done = done.max(self.nand(kind, ready, die, channel, n, cause));
            i = j;
        }
        self.order = order;
        done
    }

    fn nand(&mut self, kind: Kind, at: Nanos, die: u32, channel: u32, pages: u32, cause: Cause) -> Nanos {
        let op: Busy = match kind {
            Kind::Read => self.timeline.read(at, die, channel, pages),
            Kind::Program => self.timeline.program(at, die, channel, pages),
        };
        let traced = match kind {
            Kind::Read => {
                self.counters.read(cause, pages as u64, op);
                OpKind::Read
            }
            Kind::Program => {
                self.counters.program(cause, pages as u64, op);
                OpKind::Program
            }
        };
        self.note(traced, cause, at, (die, channel, pages), op);
        op.done
    }

    /// Adds a served operation to the trace, if one is kept.
    fn note(&mut self, kind: OpKind, cause: Cause, at: Nanos, (die, channel, pages): (u32, u32, u32), op: Busy) {
        if let Some(t) = &mut self.trace {
            t.push(Traced { kind, cause, at, die, channel, pages, done: op.done });
        }
    }
}

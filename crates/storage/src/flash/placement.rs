//! The interface between the flash file system and a placement (sealed: the module is private,
//! so only this crate's placements implement it).

use std::fmt;

use flashsim::{Nanos, SimClock};

use super::records::{DurableInode, DurableMeta, MapItem, Record};
use super::state::{Shared, State};
use crate::clone::CloneOutcome;
use crate::error::Result;
use crate::fs::WriteHint;

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

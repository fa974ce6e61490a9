//! Errors of the flash simulator. Every failure is a typed value that names what was wrong and where;
//! the simulator never panics on bad input.

use std::path::PathBuf;

use crate::zoned::ZoneState;

/// Result alias for the simulator.
pub type Result<T> = std::result::Result<T, FlashError>;

/// What a device's consistency check (`check_consistency`, for tests) found: its map, counts,
/// indexes or zones disagree with each other or with the media. `what` names the LPN, PPN, block
/// or zone and both sides.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{device}: inconsistent state: {what}")]
pub struct Inconsistency {
    /// The device checked (`BlockSsd`, `ZonedSsd`).
    pub device: &'static str,
    pub what: String,
}

/// What can go wrong when configuring or driving a simulated flash device.
#[derive(Debug, thiserror::Error)]
pub enum FlashError {
    /// A geometry, timing or FTL parameter is out of range; `field` names it.
    #[error("invalid configuration: {field}: {reason}")]
    InvalidConfig { field: &'static str, reason: String },

    /// A logical page number (or the end of a range starting at it) lies beyond the user capacity.
    #[error("LPN out of range: {lpn} + {len} pages exceeds the {capacity} user pages")]
    OutOfRange { lpn: u64, len: u64, capacity: u64 },

    /// A buffer length that is not a whole number of pages.
    #[error("misaligned {op}: {len} bytes is not a multiple of the {page_size}-byte page")]
    Misaligned { op: &'static str, len: usize, page_size: u32 },

    /// Source and destination ranges of a remap share pages.
    #[error("overlapping remap: source [{src}, {src}+{len}) and destination [{dst}, {dst}+{len}) share pages")]
    OverlappingRemap { src: u64, dst: u64, len: u64 },

    /// Garbage collection cannot reclaim a block anywhere: every block holds only valid pages.
    #[error("device full: no plane can reclaim space for {op} of LPN {lpn}")]
    DeviceFull { op: &'static str, lpn: u64 },

    /// A read of a page whose data the device does not keep (metadata-only mode, or a page written
    /// without data). Returning made-up bytes would hide bugs, so this is an error.
    #[error("no data kept for LPN {lpn}: the device runs in metadata-only mode or the page was written without data")]
    NoData { lpn: u64 },

    /// A physical page (or block) number past the end of the array.
    #[error("no such physical page: PPN {ppn} is past the end of the NAND array")]
    NoSuchPage { ppn: u32 },

    /// NAND pages of a block are programmed once per erase, in order: the FTL asked for another page.
    #[error("program out of order: page {page} of block {block}, whose write pointer is at page {write_pointer}")]
    ProgramOutOfOrder { block: u32, page: u32, write_pointer: u32 },

    /// A read (or relocation) of a page that was not programmed since its block's last erase.
    #[error("{op} of unwritten PPN {ppn}: its block's write pointer is at page {write_pointer}")]
    UnwrittenPage { op: &'static str, ppn: u32, write_pointer: u32 },

    /// A zone number past the last zone of a zoned device.
    #[error("no such zone: zone {zone} (the device has {zones} zones)")]
    NoSuchZone { zone: u32, zones: u32 },

    /// A zoned write that does not start at the zone's write pointer (ZNS "Zone Invalid Write").
    #[error("zone invalid write: zone {zone}: write at page {offset}, the write pointer is at page {write_pointer}")]
    ZoneInvalidWrite { zone: u32, offset: u64, write_pointer: u64 },

    /// A write or append to a Full zone (ZNS "Zone Is Full").
    #[error("zone is full: {op} to zone {zone}")]
    ZoneIsFull { zone: u32, op: &'static str },

    /// An I/O that would cross the end of the zone's writable capacity (writes) or of the zone
    /// (reads) (ZNS "Zone Boundary Error").
    #[error(
        "zone boundary error: {op} of {pages} pages at page {offset} of zone {zone} crosses its limit of {limit} pages"
    )]
    ZoneBoundaryError { zone: u32, op: &'static str, offset: u64, pages: u64, limit: u64 },

    /// Opening the zone would exceed the open-zone limit and no implicitly opened zone could be
    /// closed to make room (ZNS "Too Many Open Zones").
    #[error("too many open zones: {op} to zone {zone} needs an open zone, {limit} already open")]
    TooManyOpenZones { zone: u32, op: &'static str, limit: u32 },

    /// Opening the zone would exceed the active-zone limit (ZNS "Too Many Active Zones").
    #[error("too many active zones: {op} to zone {zone} needs an active zone, {limit} already active")]
    TooManyActiveZones { zone: u32, op: &'static str, limit: u32 },

    /// A zone management command that the zone's state does not allow (ZNS "Invalid Zone State
    /// Transition").
    #[error("invalid zone state transition: {command} of zone {zone} in state {from}")]
    InvalidZoneStateTransition { zone: u32, from: ZoneState, command: &'static str },

    /// A write to a Read Only zone (ZNS "Zone Is Read Only").
    #[error("zone is read only: {op} to zone {zone}")]
    ZoneIsReadOnly { zone: u32, op: &'static str },

    /// An I/O to an Offline zone (ZNS "Zone Is Offline").
    #[error("zone is offline: {op} of zone {zone}")]
    ZoneIsOffline { zone: u32, op: &'static str },

    /// A command the device's FTL does not offer (a plug-in FTL without `remap`).
    #[error("the {ftl} FTL has no {op} command")]
    Unsupported { ftl: String, op: &'static str },

    /// The sparse backing file failed.
    #[error("backing file {path}: {op}: {source}")]
    Backing { path: PathBuf, op: &'static str, source: std::io::Error },
}

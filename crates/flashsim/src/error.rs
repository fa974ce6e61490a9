//! Errors of the flash simulator. Every failure is a typed value that names what was wrong and where;
//! the simulator never panics on bad input.

use std::path::PathBuf;

/// Result alias for the simulator.
pub type Result<T> = std::result::Result<T, FlashError>;

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

    /// The sparse backing file failed.
    #[error("backing file {path}: {op}: {source}")]
    Backing { path: PathBuf, op: &'static str, source: std::io::Error },
}

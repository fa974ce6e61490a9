//! The write-ahead log, in LevelDB's log format (see [`format`]).
//!
//! [`LogWriter`] appends records and flushes them; the caller syncs. [`LogReader`] reads them
//! back and separates a crash tail (an incomplete last write: ignored, reading stops cleanly) from
//! corruption (damage with valid data after it: an error, a skip, or a clean stop, by
//! [`ReadMode`]). The module docs of [`reader`] state the rule precisely.

pub mod format;
pub mod reader;
pub mod writer;

pub use format::{BLOCK_SIZE, HEADER_SIZE};
pub use reader::{DropReason, DropStats, LogReader, Problem, ReadMode};
pub use writer::LogWriter;

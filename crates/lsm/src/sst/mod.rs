//! SST files in LevelDB's table format, without compression (block type 0 only; any other type is
//! corruption), plus page alignment of data blocks and block cloning for RemapCom.
//!
//! - [`format`](mod@format): block handles, block trailers (type byte + masked CRC32C), the 48-byte
//!   footer, `read_block`.
//! - [`block_builder`] / [`block`]: prefix-compressed blocks with restart points; the parsed block and its
//!   iterator.
//! - [`filter`]: Bloom filters over user keys in LevelDB's filter-block layout (one filter per 2 KiB of
//!   data-block offsets).
//! - [`table_builder`]: writes a table; aligned layout and cloned blocks ([`block_keys`]: what a clone needs
//!   of a block's keys, gathered in the walk that reads it).
//! - [`table`] / [`table_iter`]: opens a table, point lookups, the two-level iterator.
//! - [`readahead`]: a sequential reader's buffer (a compaction's inputs), as the OS page cache does.
//!
//! Every failure to decode is an [`crate::Error::Corruption`] naming the file and an offset; nothing here
//! panics on bad data.

pub mod block;
pub mod block_builder;
pub mod block_keys;
pub mod filter;
pub mod format;
pub mod readahead;
pub mod table;
pub mod table_builder;
pub mod table_iter;

pub use block::{Block, BlockIter};
pub use block_keys::BlockKeys;
pub use filter::BloomPolicy;
pub use format::{read_block, BlockContents, BlockHandle, Footer};
pub use storage::CloneOutcome;
pub use table::{Table, TableStats};
pub use table_builder::{TableBuilder, TableOptions, TableProperties};
pub use table_iter::TableIterator;

//! lsm: a LevelDB-class LSM-tree key-value engine, crash-safe, over any [`storage::Fs`].
//!
//! Damaged data is an [`Error::Corruption`] naming the file and the offset, never a panic and never
//! a wrong answer where a checksum was verified. Iterators and scans stop at the first error and
//! yield nothing past it ([`DbIterator`] has the contract, what `ReadOptions::verify_checksums = false`
//! and damaged filter blocks do included).

pub mod batch;
pub mod cache;
pub mod coding;
pub mod compaction;
pub mod cpu;
pub mod crc;
pub mod db;
pub mod error;
pub mod filename;
pub mod iter;
pub mod key;
pub mod memtable;
pub mod options;
pub mod overrides;
pub mod sst;
pub mod table_cache;
pub mod version;
pub mod wal;

pub use batch::WriteBatch;
pub use db::{
    destroy, Db, DbIterator, DbStats, LevelStats, RecoveryReport, RepairReport, RepairedTable, ScanIter, Snapshot,
    Stalls, WalBreak, WalRecoveryMode,
};
pub use error::{Accepted, CloneProblem, Error, Result};
pub use options::{CompactionStyle, FilterLayout, Options, Profile, ReadOptions, RemapMode, WriteOptions};
pub use overrides::{OptionOverrides, OverrideError};

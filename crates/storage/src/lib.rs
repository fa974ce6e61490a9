//! The file-system layer of flashkv: the [`Fs`] trait the engine runs on, and its implementations.
//!
//! - [`PosixFs`]: a host directory; range clones by FICLONERANGE where the file system shares extents.
//! - [`MemFs`]: in memory, with [`MemFs::crash`] that drops everything not yet synced.
//! - [`FaultFs`]: wraps any `Fs` and injects errors per I/O class, deterministically from a seed.
//! - [`FlashFs`], one file system over a simulated flash device (`flashsim`), its namespace,
//!   inodes, journal records and handles written once over a placement: [`SimFs`] places files in
//!   pages of a block SSD (a clone is a device remap), [`ZoneFs`] in extents in zones of a ZNS SSD
//!   (shared, per-level, per-window and ZenFS's lifetime placement, host zone GC).
//!
//! [`Env`] is what an engine runs with: a file system, its clock and background scheduling (real
//! threads on the wall clock, or lanes of the simulated clock of SimFs and ZoneFs).
//!
//! [`conformance`] holds the behavioural suite every implementation must pass, [`history`] the crash-history harness.
//!
//! ```
//! use std::sync::Arc;
//! use storage::{Fs, MemFs};
//!
//! let mem = MemFs::new();
//! let fs: Arc<dyn Fs> = Arc::new(mem.clone());
//! storage::write_all(&*fs, "000001.sst", &vec![7u8; 8192], true)?;
//! let mut out = fs.create("000002.sst")?;
//! // An unchanged data block goes into the new SST by sharing, not by rewriting.
//! let outcome = out.append_cloned("000001.sst", 4096, 4096)?;
//! assert_eq!((outcome.cloned_bytes, outcome.copied_bytes), (4096, 0));
//! out.sync()?;
//! fs.sync_dir("")?;
//! mem.crash();
//! assert_eq!(fs.file_size("000002.sst")?, 4096);
//! # Ok::<(), storage::FsError>(())
//! ```

pub mod clone;
pub mod conformance;
pub mod env;
pub mod error;
pub mod fault;
pub mod flash_fs;
pub mod fs;
pub mod history;
pub mod host_writes;
pub mod io_class;
#[cfg(target_os = "linux")]
pub mod loop_xfs;
pub mod mem;
pub mod path;
#[cfg(unix)]
pub mod posix;

pub use clone::clone_or_copy;
pub use env::{Env, EnvError, Guard, Signal, Task, Worker};
pub use error::{FsError, Result};
pub use fault::{FaultFs, FaultStats};
pub use flash_fs::block::{SimFs, SimFsOptions};
pub use flash_fs::cache::{PageCacheConfig, PageCacheStats};
pub use flash_fs::zone::{self as zone, AllocPolicy, GcOptions, ZoneClass, ZoneFs, ZoneFsOptions, ZoneReport};
pub use flash_fs::FlashFs;
pub use fs::{read_all, write_all, CloneOutcome, FileLock, Fs, RandomAccessFile, WritableFile, WriteHint};
pub use host_writes::HostWriteStats;
pub use io_class::IoClass;
pub use mem::{MemFs, MemFsBuilder, MemStats};
#[cfg(unix)]
pub use posix::PosixFs;

/// Locks a mutex, ignoring poisoning: the state behind our mutexes stays consistent even if a holder panicked
/// (each critical section finishes its update or leaves it untouched), and a test that panicked should not turn
/// every later call into a second panic.
pub(crate) fn lock_unpoisoned<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

//! The file-system trait the engine runs on, in the spirit of LevelDB's `Env` and Pebble's `vfs.FS`.
//!
//! Contract (every implementation keeps it; `conformance` checks it):
//! - Paths are relative '/'-separated names validated by [`crate::path`]; directory arguments accept `""` (the
//!   root). A file's parent directory must exist ([`Fs::create_dir_all`]); otherwise `NotFound`.
//! - Files are written append-only through a [`WritableFile`] and read through a [`RandomAccessFile`] that many
//!   threads may share. Data appended is visible to readers opened after [`WritableFile::flush`] (or `sync`);
//!   it is durable after [`WritableFile::sync`]. A file's *directory entry* (its creation, rename or removal) is
//!   durable after [`Fs::sync_dir`] of its directory. Dropping a writer flushes it on a best-effort basis.
//! - A reader opened before a rename keeps reading the same file. Reading a file after it was removed, through a
//!   reader opened before, is unspecified (the engine never does it).
//! - `rename` atomically replaces an existing destination file.
//! - [`Fs::clone_range`] makes `len` bytes of `dst` at `dst_offset` share the bytes of `src` at `src_offset`,
//!   without writing them again where the file system can share extents (XFS/Btrfs reflink, a device remap).
//!   Both offsets and `len` must be multiples of [`Fs::block_size`] (`Misaligned` otherwise, checked before
//!   anything else); the source range must lie inside `src` and `dst_offset` must not be past the end of `dst`
//!   (`OutOfRange`); `src` and `dst` must be different files. `dst` grows to `dst_offset + len` if that is past its
//!   end. Afterwards `dst` reads the source's bytes, and later writes to either file do not change the other.
//!   Where extents cannot be shared it returns `Unsupported` and changes nothing; [`crate::clone_or_copy`] then
//!   copies. The clone is durable after `dst` is synced. A file that is open for writing must not be the `dst` of
//!   `clone_range` (its writer would not know its new length): use [`WritableFile::append_cloned`] on the writer.
//! - Lengths returned by `file_size` include everything flushed.

use std::fmt;

use bytes::Bytes;
use flashsim::SimClock;

use crate::error::{FsError, Result};

/// Why a file is written: lets an implementation account host writes by cause (WAL, flush, compaction per level,
/// manifest) and place data by expected lifetime (zoned devices). Implementations may ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WriteHint {
    /// No hint.
    #[default]
    None,
    /// A write-ahead log.
    Wal,
    /// The manifest, CURRENT and other small metadata files.
    Manifest,
    /// An SST written by a memtable flush.
    Flush,
    /// An SST written by a compaction into `output_level`.
    Compaction { output_level: u8 },
    /// An SST of `output_level` rewritten unchanged, without a merge (lifetime-leveling's move).
    Move { output_level: u8 },
    /// A short-lived SST of `output_level`: the next compaction of the level above rewrites it
    /// soon (lifetime-leveling's T-zone).
    ShortLived { output_level: u8 },
    /// An SST written by a compaction into `output_level` that belongs to the strategy's placement
    /// unit `window` of that level (GearDB's compaction windows): a placement that honours it gives
    /// each window zones of its own; the others treat it as [`WriteHint::Compaction`].
    Window { output_level: u8, window: u8 },
}

impl WriteHint {
    /// The LSM level the file belongs to, where the hint says (a flush counts as level 0).
    pub fn level(self) -> Option<u8> {
        match self {
            WriteHint::Flush => Some(0),
            WriteHint::Compaction { output_level }
            | WriteHint::Move { output_level }
            | WriteHint::ShortLived { output_level }
            | WriteHint::Window { output_level, .. } => Some(output_level),
            WriteHint::None | WriteHint::Wal | WriteHint::Manifest => None,
        }
    }
}

/// A file system: a tree of directories and append-only files under one root.
pub trait Fs: Send + Sync + fmt::Debug {
    /// The unit of [`Fs::clone_range`] alignment: the device page size on a simulated SSD, the file-system block
    /// size on a host file system.
    fn block_size(&self) -> u64;

    /// Creates `path` for appending, truncating it if it exists.
    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>>;

    /// [`Fs::create`] with a hint about what the file is for. The default ignores the hint.
    fn create_with_hint(&self, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        let _ = hint;
        self.create(path)
    }

    /// [`Fs::create_with_hint`] for direct I/O (Linux's `O_DIRECT`): the file's writes and reads
    /// through this handle bypass the host's page cache where the file system models one (the
    /// flash file system with `--page-cache`). The default, for file systems that model none, is
    /// [`Fs::create_with_hint`].
    fn create_direct(&self, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        self.create_with_hint(path, hint)
    }

    /// Opens an existing file for appending at its end.
    fn open_append(&self, path: &str) -> Result<Box<dyn WritableFile>>;

    /// Opens an existing file for positional reads.
    fn open(&self, path: &str) -> Result<Box<dyn RandomAccessFile>>;

    /// Opens an existing file that nobody changes while it is open (an SST) for positional reads.
    /// A file system may map it into memory, so that reads share its bytes instead of copying
    /// them ([`RandomAccessFile::read_shared`]); the default is [`Fs::open`].
    fn open_immutable(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.open(path)
    }

    /// [`Fs::open_immutable`] for direct I/O: reads bypass the host's page cache where the file
    /// system models one (see [`Fs::create_direct`]). The default is [`Fs::open_immutable`].
    fn open_direct(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.open_immutable(path)
    }

    /// The size in bytes of an existing file.
    fn file_size(&self, path: &str) -> Result<u64>;

    /// Whether a file or directory exists at `path`.
    fn exists(&self, path: &str) -> Result<bool>;

    /// The names (not paths) of the entries of directory `dir`, files and directories, sorted.
    fn list(&self, dir: &str) -> Result<Vec<String>>;

    /// Creates directory `dir` and any missing parents; succeeds if it exists.
    fn create_dir_all(&self, dir: &str) -> Result<()>;

    /// Removes the empty directory `dir`.
    fn remove_dir(&self, dir: &str) -> Result<()>;

    /// Renames file `from` to `to`, atomically replacing `to` if it exists.
    fn rename(&self, from: &str, to: &str) -> Result<()>;

    /// Removes file `path`.
    fn remove(&self, path: &str) -> Result<()>;

    /// Makes the entries of directory `dir` (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &str) -> Result<()>;

    /// Takes an exclusive lock on `path`, creating the file if it is missing; `Locked` if another holder (in this
    /// or another process) has it. The lock is released when the returned guard is dropped.
    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>>;

    /// Shares `len` bytes of `src` at `src_offset` into `dst` at `dst_offset`; see the module contract.
    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()>;

    /// Whether [`Fs::clone_range`] is expected to share extents here (a hint, for example to decide whether to
    /// align SST blocks; `clone_range` may still answer `Unsupported`).
    fn supports_clone(&self) -> bool;

    /// The simulated clock this file system charges its device time to, for a file system in simulated time;
    /// `None` (the default) for one in wall-clock time. [`crate::Env::new`] makes its Env from it.
    fn clock(&self) -> Option<SimClock> {
        None
    }
}

/// An append-only file being written. One owner at a time.
pub trait WritableFile: Send {
    /// The path the file was opened with.
    fn path(&self) -> &str;

    /// The file's length including data still buffered.
    fn len(&self) -> u64;

    /// `len() == 0`.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends `data` (possibly buffered until `flush` or `sync`).
    fn append(&mut self, data: &[u8]) -> Result<()>;

    /// Hands buffered data to the file system: visible to new readers, not yet durable.
    fn flush(&mut self) -> Result<()>;

    /// Makes everything appended so far durable (the directory entry needs [`Fs::sync_dir`]).
    fn sync(&mut self) -> Result<()>;

    /// Drops appended data not yet handed to the file system, so that no later `flush`, `sync` or
    /// drop writes it. A writer whose flush failed calls it: what it could not write whole must not
    /// land later, once space is back. Unbuffered files have nothing to drop.
    fn discard_buffered(&mut self) {}

    /// Appends `len` bytes of file `src` at `src_offset` by sharing extents where possible and copying otherwise
    /// (the outcome says how many bytes went each way). Flushes the buffer first; `len()` must then be a multiple
    /// of the block size, as must `src_offset` and `len` (`Misaligned`). Advances `len()` by `len`.
    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome>;
}

impl fmt::Debug for dyn WritableFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WritableFile").field("path", &self.path()).field("len", &self.len()).finish()
    }
}

/// A file opened for positional reads; safe to share between threads (`Arc::from(box)`).
pub trait RandomAccessFile: Send + Sync {
    /// The path the file was opened with.
    fn path(&self) -> &str;

    /// The file's current size in bytes.
    fn size(&self) -> Result<u64>;

    /// Reads from `offset` into `buf`, filling it unless the end of the file comes first, and returns the number
    /// of bytes read: short at the end of the file, 0 at or past it. Not an error.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize>;

    /// The `len` bytes at `offset`, shared without a copy, when the file is mapped into memory
    /// (short at the end of the file, as `read_at`); `None` when it is read by copying, and then
    /// the caller uses `read_at`. The default reads by copying.
    fn read_shared(&self, offset: u64, len: usize) -> Option<Bytes> {
        let _ = (offset, len);
        None
    }

    /// Reads exactly `buf.len()` bytes at `offset`, or fails with `UnexpectedEof` naming the path and offset.
    fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let got = self.read_at(offset, buf)?;
        if got < buf.len() {
            return Err(FsError::UnexpectedEof {
                op: "read_exact_at",
                path: self.path().to_string(),
                offset,
                wanted: buf.len(),
                got,
            });
        }
        Ok(())
    }
}

impl fmt::Debug for dyn RandomAccessFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RandomAccessFile").field("path", &self.path()).finish()
    }
}

/// A held lock; dropping it releases the lock.
pub trait FileLock: Send + fmt::Debug {
    /// The path of the lock file.
    fn path(&self) -> &str;
}

/// Reads a whole file.
pub fn read_all(fs: &dyn Fs, path: &str) -> Result<Vec<u8>> {
    let file = fs.open(path)?;
    let size = file.size()?;
    let len = usize::try_from(size).map_err(|_| FsError::OutOfRange {
        op: "read_all",
        path: path.to_string(),
        offset: 0,
        len: size,
        size,
    })?;
    let mut buf = vec![0u8; len];
    let got = file.read_at(0, &mut buf)?;
    buf.truncate(got);
    Ok(buf)
}

/// Creates (or truncates) `path` with `data`, syncing it when `sync` is set.
pub fn write_all(fs: &dyn Fs, path: &str, data: &[u8], sync: bool) -> Result<()> {
    let mut file = fs.create(path)?;
    file.append(data)?;
    if sync {
        file.sync()
    } else {
        file.flush()
    }
}

/// How many bytes a clone-or-copy shared (no data written) and how many it had to copy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CloneOutcome {
    /// Bytes placed by sharing extents (reflink, device remap).
    pub cloned_bytes: u64,
    /// Bytes placed by reading and writing them again.
    pub copied_bytes: u64,
}

impl CloneOutcome {
    /// All `len` bytes were shared.
    pub fn cloned(len: u64) -> CloneOutcome {
        CloneOutcome { cloned_bytes: len, copied_bytes: 0 }
    }

    /// All `len` bytes were copied.
    pub fn copied(len: u64) -> CloneOutcome {
        CloneOutcome { cloned_bytes: 0, copied_bytes: len }
    }

    /// Adds another outcome's counts to this one.
    pub fn add(&mut self, other: CloneOutcome) {
        self.cloned_bytes += other.cloned_bytes;
        self.copied_bytes += other.copied_bytes;
    }

    /// Total bytes placed.
    pub fn total(&self) -> u64 {
        self.cloned_bytes + self.copied_bytes
    }
}

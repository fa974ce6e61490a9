//! `PosixFs`: a directory on the host file system.
//!
//! Contract: paths map under the root given to [`PosixFs::new`]. Writers buffer appends (64 KiB) and write them
//! with `pwrite`, asking the kernel to start writeback every MiB (`sync_file_range` from a helper thread, a hint),
//! except for files created with [`WriteHint::Wal`] (RocksDB's `wal_bytes_per_sync` of 0; see `handles.rs`);
//! `sync` is `fdatasync`; `sync_dir` is `fsync` of the directory; `lock` is `flock(LOCK_EX | LOCK_NB)` on the
//! lock file, so it excludes other processes and other opens in this one. Readers use `pread` and are shared
//! between threads freely; `open_immutable` maps the file (`mmap`) instead, so reads of SSTs need no system call
//! and can share the mapped bytes, as LevelDB reads its tables. No direct I/O: data goes through the page cache.
//!
//! `clone_range` and `append_cloned` use `ioctl(FICLONERANGE)`, which shares extents on XFS (`mkfs.xfs -m
//! reflink=1`) and Btrfs. Support is detected at run time: a refusal (`EOPNOTSUPP`, `ENOTTY`, `EXDEV`, `EINVAL`
//! after our own checks passed) becomes `Unsupported` with the reason, and an `EOPNOTSUPP`/`ENOTTY` answer is
//! remembered so later clones skip the system call. ext4 and tmpfs answer `Unsupported`. [`Fs::block_size`] is
//! the file system's block size (`statvfs` `f_bsize`), the alignment FICLONERANGE needs.

mod ficlone;
mod handles;
mod writeback;

use std::ffi::CString;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use self::handles::{MappedReader, PosixLock, PosixReader, PosixWriter, WRITE_BUFFER};
use crate::clone::{check_alignment, check_ranges};
use crate::error::{FsError, Result};
use crate::fs::{FileLock, Fs, RandomAccessFile, WritableFile, WriteHint};
use crate::path;

const CLONE_UNKNOWN: u8 = 0;
const CLONE_YES: u8 = 1;
const CLONE_NO: u8 = 2;

/// A file system rooted at a host directory.
#[derive(Clone)]
pub struct PosixFs {
    shared: Arc<Shared>,
}

struct Shared {
    root: PathBuf,
    block_size: u64,
    /// What clones have shown so far: unknown, works, or refused for good (EOPNOTSUPP).
    clone_state: AtomicU8,
    writeback: writeback::Writeback,
}

impl PosixFs {
    /// A file system rooted at `root`, which is created if missing.
    pub fn new(root: impl AsRef<Path>) -> Result<PosixFs> {
        let root = root.as_ref().to_path_buf();
        let shown = root.display().to_string();
        std::fs::create_dir_all(&root).map_err(|e| FsError::from_io("new", &shown, e))?;
        let block_size = statvfs_block_size(&root).map_err(|e| FsError::from_io("statvfs", &shown, e))?;
        Ok(PosixFs {
            shared: Arc::new(Shared {
                root,
                block_size,
                clone_state: AtomicU8::new(CLONE_UNKNOWN),
                writeback: Default::default(),
            }),
        })
    }

    /// The host directory this file system is rooted at.
    pub fn root(&self) -> &Path {
        &self.shared.root
    }

    /// The host path of a valid relative path.
    pub fn host_path(&self, p: &str) -> Result<PathBuf> {
        path::validate(p)?;
        Ok(self.shared.root.join(p))
    }

    fn host_dir(&self, dir: &str) -> Result<PathBuf> {
        path::validate_dir(dir)?;
        Ok(if dir.is_empty() { self.shared.root.clone() } else { self.shared.root.join(dir) })
    }

    fn writer(&self, path: &str, file: File, len: u64, writeback: bool) -> Box<dyn WritableFile> {
        Box::new(PosixWriter {
            shared: Arc::clone(&self.shared),
            file: Arc::new(file),
            path: path.to_string(),
            buf: Vec::with_capacity(WRITE_BUFFER),
            flushed: len,
            writeback_from: len,
            writeback,
        })
    }

    /// Clones two tiny files in the root to learn whether this file system shares extents.
    fn probe_clone(&self) -> bool {
        let bs = self.shared.block_size;
        let name = |tag: &str| format!(".flashkv-clone-probe.{}.{tag}", std::process::id());
        let (src, dst) = (name("src"), name("dst"));
        let attempt = || -> Result<()> {
            crate::fs::write_all(self, &src, &vec![0x5a; bs as usize], false)?;
            crate::fs::write_all(self, &dst, &[], false)?;
            self.clone_range(&src, 0, &dst, 0, bs)
        };
        let ok = attempt().is_ok();
        let _ = self.remove(&src);
        let _ = self.remove(&dst);
        ok
    }
}

impl fmt::Debug for PosixFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PosixFs").field("root", &self.shared.root).field("block_size", &self.shared.block_size).finish()
    }
}

fn statvfs_block_size(p: &Path) -> std::io::Result<u64> {
    let c =
        CString::new(p.as_os_str().as_bytes()).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a NUL-terminated path and `st` a properly sized, writable statvfs.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    #[allow(clippy::unnecessary_cast)] // c_ulong is u32 on some targets
    let bsize = st.f_bsize as u64;
    Ok(bsize.max(512))
}

fn open_file(op: &'static str, path: &str, host: &Path, opts: &OpenOptions) -> Result<File> {
    let file = opts.open(host).map_err(|e| FsError::from_io(op, path, e))?;
    let meta = file.metadata().map_err(|e| FsError::from_io(op, path, e))?;
    if meta.is_dir() {
        return Err(FsError::WrongKind { op, path: path.to_string(), expected: "file" });
    }
    Ok(file)
}

fn file_len(op: &'static str, path: &str, file: &File) -> Result<u64> {
    file.metadata().map(|m| m.len()).map_err(|e| FsError::from_io(op, path, e))
}

impl Fs for PosixFs {
    fn block_size(&self) -> u64 {
        self.shared.block_size
    }

    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.create_with_hint(path, WriteHint::None)
    }

    fn create_with_hint(&self, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        let host = self.host_path(path)?;
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(host)
            .map_err(|e| FsError::from_io("create", path, e))?;
        Ok(self.writer(path, file, 0, hint != WriteHint::Wal))
    }

    fn open_append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        let host = self.host_path(path)?;
        let file = open_file("open_append", path, &host, OpenOptions::new().write(true))?;
        let len = file_len("open_append", path, &file)?;
        Ok(self.writer(path, file, len, true))
    }

    fn open(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        let host = self.host_path(path)?;
        let file = open_file("open", path, &host, OpenOptions::new().read(true))?;
        Ok(Box::new(PosixReader { file, path: path.to_string() }))
    }

    fn open_immutable(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        const OP: &str = "open_immutable";
        let host = self.host_path(path)?;
        let file = open_file(OP, path, &host, OpenOptions::new().read(true))?;
        if file_len(OP, path, &file)? == 0 {
            return Ok(Box::new(PosixReader { file, path: path.to_string() }));
        }
        // SAFETY: the mapping is read-only and the caller promises that nobody changes the file while
        // it is open (SSTs are written once, renamed into place, and only deleted; a deleted file stays
        // mapped). A file truncated behind our back would fault the reading thread (SIGBUS), which is
        // LevelDB's contract for its mapped tables too.
        match unsafe { memmap2::Mmap::map(&file) } {
            Ok(map) => Ok(Box::new(MappedReader { map: Bytes::from_owner(map), path: path.to_string() })),
            // Out of address space or over the map count: read by copying instead.
            Err(_) => Ok(Box::new(PosixReader { file, path: path.to_string() })),
        }
    }

    fn file_size(&self, path: &str) -> Result<u64> {
        let meta = std::fs::metadata(self.host_path(path)?).map_err(|e| FsError::from_io("file_size", path, e))?;
        if meta.is_dir() {
            return Err(FsError::WrongKind { op: "file_size", path: path.to_string(), expected: "file" });
        }
        Ok(meta.len())
    }

    fn exists(&self, path: &str) -> Result<bool> {
        match std::fs::symlink_metadata(self.host_path(path)?) {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(FsError::from_io("exists", path, e)),
        }
    }

    fn list(&self, dir: &str) -> Result<Vec<String>> {
        let entries = std::fs::read_dir(self.host_dir(dir)?).map_err(|e| FsError::from_io("list", dir, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| FsError::from_io("list", dir, e))?;
            let name = entry.file_name().into_string().map_err(|raw| FsError::InvalidPath {
                path: raw.to_string_lossy().into_owned(),
                reason: "a directory entry's name is not UTF-8",
            })?;
            names.push(name);
        }
        names.sort();
        Ok(names)
    }

    fn create_dir_all(&self, dir: &str) -> Result<()> {
        std::fs::create_dir_all(self.host_dir(dir)?).map_err(|e| FsError::from_io("create_dir_all", dir, e))
    }

    fn remove_dir(&self, dir: &str) -> Result<()> {
        std::fs::remove_dir(self.host_path(dir)?).map_err(|e| FsError::from_io("remove_dir", dir, e))
    }

    fn rename(&self, from: &str, to: &str) -> Result<()> {
        let (host_from, host_to) = (self.host_path(from)?, self.host_path(to)?);
        let meta = std::fs::metadata(&host_from).map_err(|e| FsError::from_io("rename", from, e))?;
        if meta.is_dir() {
            return Err(FsError::WrongKind { op: "rename", path: from.to_string(), expected: "file" });
        }
        std::fs::rename(host_from, host_to).map_err(|e| FsError::from_io("rename", to, e))
    }

    fn remove(&self, path: &str) -> Result<()> {
        std::fs::remove_file(self.host_path(path)?).map_err(|e| FsError::from_io("remove", path, e))
    }

    fn sync_dir(&self, dir: &str) -> Result<()> {
        let file = File::open(self.host_dir(dir)?).map_err(|e| FsError::from_io("sync_dir", dir, e))?;
        file.sync_all().map_err(|e| FsError::from_io("sync_dir", dir, e))
    }

    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        let host = self.host_path(path)?;
        let opts = OpenOptions::new().read(true).write(true).create(true).truncate(false).clone();
        let file = open_file("lock", path, &host, &opts)?;
        // SAFETY: the descriptor is open; flock has no memory arguments.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Err(FsError::Locked { path: path.to_string() });
            }
            return Err(FsError::from_io("lock", path, err));
        }
        Ok(Box::new(PosixLock { _file: file, path: path.to_string() }))
    }

    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        const OP: &str = "clone_range";
        let (host_src, host_dst) = (self.host_path(src)?, self.host_path(dst)?);
        check_alignment(OP, self.shared.block_size, src, src_offset, dst, dst_offset, len)?;
        let src_file = open_file(OP, src, &host_src, OpenOptions::new().read(true))?;
        let dst_file = open_file(OP, dst, &host_dst, OpenOptions::new().write(true))?;
        let (src_size, dst_size) = (file_len(OP, src, &src_file)?, file_len(OP, dst, &dst_file)?);
        check_ranges(OP, src, src_offset, src_size, dst, dst_offset, dst_size, len)?;
        if len == 0 {
            // FICLONERANGE reads a zero length as "to the end of the source".
            return Ok(());
        }
        self.shared.clone_files(OP, dst, (&src_file, src_offset), (&dst_file, dst_offset), len)
    }

    fn supports_clone(&self) -> bool {
        match self.shared.clone_state.load(Ordering::Relaxed) {
            CLONE_YES => true,
            CLONE_NO => false,
            _ => self.probe_clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appends 3 MiB in 64 KiB pieces to a file created with `hint` and returns the bytes the
    /// writer asked the kernel to write back.
    fn written_back(hint: WriteHint) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let fs = PosixFs::new(dir.path()).unwrap();
        let mut f = fs.create_with_hint("f", hint).unwrap();
        for _ in 0..48 {
            f.append(&[7u8; 64 << 10]).unwrap();
        }
        f.sync().unwrap();
        fs.shared.writeback.requested()
    }

    #[test]
    fn a_wal_is_left_to_the_kernel_while_other_files_are_written_back_every_mib() {
        assert_eq!(written_back(WriteHint::Wal), 0);
        for hint in [WriteHint::None, WriteHint::Flush, WriteHint::Compaction { output_level: 1 }] {
            let bytes = written_back(hint);
            assert!(bytes >= 2 << 20, "{hint:?}: {bytes} bytes written back of 3 MiB");
        }
    }
}

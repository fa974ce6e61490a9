//! The handles of [`super::PosixFs`]: a buffered append-only writer, a `pread` reader, a reader of a
//! mapped file, and an `flock` guard.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;

use super::{file_len, open_file, Shared};
use crate::clone::{check_alignment, check_ranges, copy_range};
use crate::error::{FsError, Result};
use crate::fs::CloneOutcome;
use crate::fs::{FileLock, RandomAccessFile, WritableFile};
use crate::path;

/// Appends smaller than this are gathered before they reach the kernel.
pub(super) const WRITE_BUFFER: usize = 64 * 1024;

/// Every this many bytes handed to the kernel, a writer asks it to start writing them back (as
/// RocksDB's `bytes_per_sync`): a later `sync` then waits for the last stretch only, not for
/// megabytes at once (an SST is synced when it is complete, on a background thread).
///
/// Not for a WAL (RocksDB's `wal_bytes_per_sync` is 0 too): a synced write syncs it whole anyway,
/// and an unsynced one is deleted once its memtable is flushed, often before the kernel would have
/// written it. Writeback every MiB sent each WAL to the disk beside the flushes and compactions,
/// whose syncs then waited for it: a 60k x 4 KiB fill ran at 40 k writes/s with it and 51 k
/// without (docs/performance.md).
const WRITEBACK_EVERY: u64 = 1 << 20;

pub(super) struct PosixWriter {
    pub(super) shared: Arc<Shared>,
    /// Shared with writeback hints still queued for it.
    pub(super) file: Arc<File>,
    pub(super) path: String,
    pub(super) buf: Vec<u8>,
    /// Bytes already handed to the kernel; the next write goes there.
    pub(super) flushed: u64,
    /// Where the bytes not yet asked to be written back start.
    pub(super) writeback_from: u64,
    /// Whether to ask for writeback every [`WRITEBACK_EVERY`] (not for a WAL).
    pub(super) writeback: bool,
}

impl PosixWriter {
    fn write_through(&mut self, op: &'static str, data: &[u8]) -> Result<()> {
        self.file.write_all_at(data, self.flushed).map_err(|e| FsError::from_io(op, &self.path, e))?;
        self.flushed += data.len() as u64;
        self.start_writeback();
        Ok(())
    }

    fn flush_buffer(&mut self, op: &'static str) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // On error the buffer is kept: how much of it reached the file is unknown, and the caller sees the error.
        self.file.write_all_at(&self.buf, self.flushed).map_err(|e| FsError::from_io(op, &self.path, e))?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        self.start_writeback();
        Ok(())
    }

    /// Starts writeback of what was handed to the kernel since the last call, once that is at
    /// least [`WRITEBACK_EVERY`] (on the file system's helper thread; see [`super::writeback`]).
    fn start_writeback(&mut self) {
        let len = self.flushed.saturating_sub(self.writeback_from);
        if self.writeback && len >= WRITEBACK_EVERY {
            self.shared.writeback.start(&self.file, self.writeback_from, len);
            self.writeback_from = self.flushed;
        }
    }
}

impl WritableFile for PosixWriter {
    fn path(&self) -> &str {
        &self.path
    }

    fn len(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.buf.len() + data.len() > WRITE_BUFFER {
            self.flush_buffer("append")?;
            if data.len() >= WRITE_BUFFER {
                return self.write_through("append", data);
            }
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.flush_buffer("flush")
    }

    fn sync(&mut self) -> Result<()> {
        self.flush_buffer("sync")?;
        self.file.sync_data().map_err(|e| FsError::from_io("sync", &self.path, e))
    }

    fn discard_buffered(&mut self) {
        self.buf.clear();
    }

    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        const OP: &str = "append_cloned";
        self.flush_buffer(OP)?;
        path::validate(src)?;
        let host_src = self.shared.root.join(src);
        check_alignment(OP, self.shared.block_size, src, src_offset, &self.path, self.flushed, len)?;
        let src_file = open_file(OP, src, &host_src, OpenOptions::new().read(true))?;
        let src_size = file_len(OP, src, &src_file)?;
        check_ranges(OP, src, src_offset, src_size, &self.path, self.flushed, self.flushed, len)?;
        if len == 0 {
            return Ok(CloneOutcome::default());
        }
        let cloned = self.shared.clone_files(OP, &self.path, (&src_file, src_offset), (&self.file, self.flushed), len);
        match cloned {
            Ok(()) => {
                self.flushed += len;
                Ok(CloneOutcome::cloned(len))
            }
            Err(err) if err.is_unsupported() => {
                let reader = PosixReader { file: src_file, path: src.to_string() };
                copy_range(&reader, src_offset, len, &mut |chunk| self.write_through(OP, chunk))?;
                Ok(CloneOutcome::copied(len))
            }
            Err(err) => Err(err),
        }
    }
}

impl Drop for PosixWriter {
    fn drop(&mut self) {
        // Best effort: callers that care about errors flush or sync before dropping.
        let _ = self.flush_buffer("drop");
    }
}

pub(super) struct PosixReader {
    pub(super) file: File,
    pub(super) path: String,
}

impl RandomAccessFile for PosixReader {
    fn path(&self) -> &str {
        &self.path
    }

    fn size(&self) -> Result<u64> {
        file_len("size", &self.path, &self.file)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            match self.file.read_at(&mut buf[done..], offset + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FsError::from_io("read_at", &self.path, e)),
            }
        }
        Ok(done)
    }
}

/// A file mapped into memory (an SST, which nobody changes while it is open): reads copy out of
/// the mapping, or share it, without a system call, as LevelDB reads its tables.
pub(super) struct MappedReader {
    pub(super) map: Bytes,
    pub(super) path: String,
}

impl MappedReader {
    fn range(&self, offset: u64, len: usize) -> std::ops::Range<usize> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX).min(self.map.len());
        start..start.saturating_add(len).min(self.map.len())
    }
}

impl RandomAccessFile for MappedReader {
    fn path(&self) -> &str {
        &self.path
    }

    fn size(&self) -> Result<u64> {
        Ok(self.map.len() as u64)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        let r = self.range(offset, buf.len());
        let n = r.len();
        buf[..n].copy_from_slice(&self.map[r]);
        Ok(n)
    }

    fn read_shared(&self, offset: u64, len: usize) -> Option<Bytes> {
        Some(self.map.slice(self.range(offset, len)))
    }
}

pub(super) struct PosixLock {
    /// Closing the descriptor releases the flock.
    pub(super) _file: File,
    pub(super) path: String,
}

impl fmt::Debug for PosixLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PosixLock").field("path", &self.path).finish()
    }
}

impl FileLock for PosixLock {
    fn path(&self) -> &str {
        &self.path
    }
}

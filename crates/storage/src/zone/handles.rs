//! ZoneFs handles: writer, reader and lock guard. Each remembers the crash epoch it was opened in
//! and fails with `Crashed` after a power cut. Dropping a writer releases its file's stream under
//! the lifetime policy (the zone it was filling becomes open to other files, as in ZenFS).

use std::fmt;
use std::sync::Arc;

use super::space::StreamKey;
use flashsim::Wait;

use super::{file, Shared};
use crate::clone::{check_alignment, check_ranges, CloneOutcome};
use crate::error::{FsError, Result};
use crate::fs::{FileLock, RandomAccessFile, WritableFile};

pub(super) struct ZoneWriter {
    shared: Arc<Shared>,
    ino: u64,
    path: String,
    epoch: u64,
}

impl ZoneWriter {
    pub fn new(shared: Arc<Shared>, ino: u64, path: &str, epoch: u64) -> Self {
        ZoneWriter { shared, ino, path: path.to_string(), epoch }
    }
}

impl WritableFile for ZoneWriter {
    fn path(&self) -> &str {
        &self.path
    }

    fn len(&self) -> u64 {
        self.shared.state().inodes.get(&self.ino).map_or(0, |i| i.len)
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.shared.check_epoch(self.epoch, "append", &self.path)?;
        let mut st = self.shared.state();
        file::append(&mut st, self.shared.clock(), self.ino, &self.path, data)
    }

    fn flush(&mut self) -> Result<()> {
        // Buffered bytes are already visible to readers (they read the buffer); nothing to hand over.
        self.shared.check_epoch(self.epoch, "flush", &self.path)
    }

    fn sync(&mut self) -> Result<()> {
        self.shared.check_epoch(self.epoch, "sync", &self.path)?;
        let clock = self.shared.clock();
        let (len, written) = file::sync_data(&mut self.shared.state(), clock, self.ino, &self.path)?;
        // The record waits for the data; other lanes run meanwhile, outside the lock.
        clock.wait(written, Wait::Write);
        self.shared.check_epoch(self.epoch, "sync", &self.path)?;
        file::sync_record(&mut self.shared.state(), clock, self.ino, &self.path, len)
    }

    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        const OP: &str = "append_cloned";
        self.shared.check_epoch(self.epoch, OP, &self.path)?;
        crate::path::validate(src)?;
        let mut st = self.shared.state();
        let ps = st.page_size as u64;
        let at = st.inodes.get(&self.ino).map_or(0, |i| i.len);
        check_alignment(OP, ps, src, src_offset, &self.path, at, len)?;
        let s = st.lookup(OP, src)?;
        let ssize = st.inodes[&s].len;
        check_ranges(OP, src, src_offset, ssize, &self.path, at, at, len)?;
        if s == self.ino {
            return Err(FsError::InvalidPath {
                path: src.to_string(),
                reason: "clone source and destination are the same file",
            });
        }
        file::append_copy(&mut st, self.shared.clock(), (s, src), src_offset, (self.ino, &self.path), len)?;
        Ok(CloneOutcome::copied(len))
    }
}

impl Drop for ZoneWriter {
    fn drop(&mut self) {
        if self.shared.check_epoch(self.epoch, "close", &self.path).is_ok() {
            let mut st = self.shared.state();
            if let Some(z) = st.streams.remove(&StreamKey::File(self.ino)) {
                // Best effort, as every drop: a zone the device refuses to reset stays as it is.
                let _ = st.reset_if_dead(self.shared.clock().now(), z);
            }
        }
    }
}

pub(super) struct ZoneReader {
    shared: Arc<Shared>,
    ino: u64,
    path: String,
    epoch: u64,
}

impl ZoneReader {
    pub fn new(shared: Arc<Shared>, ino: u64, path: &str, epoch: u64) -> Self {
        ZoneReader { shared, ino, path: path.to_string(), epoch }
    }
}

impl RandomAccessFile for ZoneReader {
    fn path(&self) -> &str {
        &self.path
    }

    fn size(&self) -> Result<u64> {
        self.shared.check_epoch(self.epoch, "size", &self.path)?;
        let st = self.shared.state();
        st.inodes.get(&self.ino).map(|i| i.len).ok_or_else(|| FsError::NotFound { op: "size", path: self.path.clone() })
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.shared.check_epoch(self.epoch, "read_at", &self.path)?;
        let mut st = self.shared.state();
        file::read(&mut st, self.shared.clock(), self.ino, &self.path, offset, buf)
    }
}

pub(super) struct ZoneLock {
    shared: Arc<Shared>,
    path: String,
    id: u64,
    epoch: u64,
}

impl ZoneLock {
    pub fn new(shared: Arc<Shared>, path: &str, id: u64, epoch: u64) -> Self {
        ZoneLock { shared, path: path.to_string(), id, epoch }
    }
}

impl FileLock for ZoneLock {
    fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Debug for ZoneLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZoneLock").field("path", &self.path).finish()
    }
}

impl Drop for ZoneLock {
    fn drop(&mut self) {
        if self.shared.check_epoch(self.epoch, "unlock", &self.path).is_err() {
            return;
        }
        let mut st = self.shared.state();
        if st.locks.get(&self.path) == Some(&self.id) {
            st.locks.remove(&self.path);
        }
    }
}

//! SimFs handles: writer, reader and lock guard. Each remembers the crash epoch it was opened in and
//! fails with `Crashed` after a power cut; a writer returns its unused allocation window on drop.

use std::fmt;
use std::sync::Arc;

use super::{inode, Shared};
use crate::clone::CloneOutcome;
use crate::error::{FsError, Result};
use crate::fs::{FileLock, RandomAccessFile, WritableFile};

pub(super) struct SimWriter {
    shared: Arc<Shared>,
    ino: u64,
    path: String,
    epoch: u64,
}

impl SimWriter {
    pub fn new(shared: Arc<Shared>, ino: u64, path: &str, epoch: u64) -> Self {
        SimWriter { shared, ino, path: path.to_string(), epoch }
    }

    fn window(&self) -> u32 {
        self.shared.opts.alloc_window_pages
    }
}

impl WritableFile for SimWriter {
    fn path(&self) -> &str {
        &self.path
    }

    fn len(&self) -> u64 {
        self.shared.state().inodes.get(&self.ino).map_or(0, |i| i.len)
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.shared.check_epoch(self.epoch, "append", &self.path)?;
        let mut st = self.shared.state();
        inode::append(&mut st, self.shared.clock(), self.ino, &self.path, data, self.window())
    }

    fn flush(&mut self) -> Result<()> {
        // Appends go straight to the file's pages; nothing is buffered in the handle.
        self.shared.check_epoch(self.epoch, "flush", &self.path)
    }

    fn sync(&mut self) -> Result<()> {
        self.shared.check_epoch(self.epoch, "sync", &self.path)?;
        let mut st = self.shared.state();
        inode::sync(&mut st, self.shared.clock(), self.ino, &self.path, self.window())
    }

    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        const OP: &str = "append_cloned";
        self.shared.check_epoch(self.epoch, OP, &self.path)?;
        crate::path::validate(src)?;
        let mut st = self.shared.state();
        let ps = st.page_size as u64;
        let at = st.inodes.get(&self.ino).map_or(0, |i| i.len);
        crate::clone::check_alignment(OP, ps, src, src_offset, &self.path, at, len)?;
        let s = st.lookup(OP, src)?;
        let ssize = st.inodes[&s].len;
        crate::clone::check_ranges(OP, src, src_offset, ssize, &self.path, at, at, len)?;
        if s == self.ino {
            return Err(FsError::InvalidPath {
                path: src.to_string(),
                reason: "clone source and destination are the same file",
            });
        }
        inode::clone_pages(&mut st, self.shared.clock(), (s, src), src_offset, (self.ino, &self.path), at, len)?;
        Ok(CloneOutcome::cloned(len))
    }
}

impl Drop for SimWriter {
    fn drop(&mut self) {
        if self.shared.check_epoch(self.epoch, "close", &self.path).is_ok() {
            inode::release_window(&mut self.shared.state(), self.ino);
        }
    }
}

pub(super) struct SimReader {
    shared: Arc<Shared>,
    ino: u64,
    path: String,
    epoch: u64,
}

impl SimReader {
    pub fn new(shared: Arc<Shared>, ino: u64, path: &str, epoch: u64) -> Self {
        SimReader { shared, ino, path: path.to_string(), epoch }
    }
}

impl RandomAccessFile for SimReader {
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
        inode::read(&mut st, self.shared.clock(), self.ino, &self.path, offset, buf)
    }
}

pub(super) struct SimLock {
    shared: Arc<Shared>,
    path: String,
    id: u64,
    epoch: u64,
}

impl SimLock {
    pub fn new(shared: Arc<Shared>, path: &str, id: u64, epoch: u64) -> Self {
        SimLock { shared, path: path.to_string(), id, epoch }
    }
}

impl FileLock for SimLock {
    fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Debug for SimLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimLock").field("path", &self.path).finish()
    }
}

impl Drop for SimLock {
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

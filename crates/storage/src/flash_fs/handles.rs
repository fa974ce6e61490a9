//! The flash file system's handles: writer, reader and lock guard. Each remembers the crash epoch
//! it was opened in and fails with `Crashed` after a power cut. Dropping a writer tells the
//! placement (a block file returns its allocation window; a zoned file's stream lets go of its
//! zone under the lifetime policy, as in ZenFS).

use std::fmt;
use std::sync::Arc;

use super::io::{self, Mode};
use super::{CloneSpan, Placement, Shared};
use crate::clone::{check_alignment, check_ranges};
use crate::error::{FsError, Result};
use crate::fs::CloneOutcome;
use crate::fs::{FileLock, RandomAccessFile, WritableFile};

pub(super) struct FlashWriter<P: Placement> {
    shared: Arc<Shared<P>>,
    ino: u64,
    path: String,
    epoch: u64,
    mode: Mode,
}

impl<P: Placement> FlashWriter<P> {
    pub fn new(shared: Arc<Shared<P>>, ino: u64, path: &str, epoch: u64, mode: Mode) -> Self {
        FlashWriter { shared, ino, path: path.to_string(), epoch, mode }
    }
}

impl<P: Placement> WritableFile for FlashWriter<P> {
    fn path(&self) -> &str {
        &self.path
    }

    fn len(&self) -> u64 {
        self.shared.state().len_of(self.ino)
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.shared.check_epoch(self.epoch, "append", &self.path)?;
        let mut st = self.shared.state();
        io::append(&mut st, self.shared.clock(), self.ino, &self.path, data, self.mode)
    }

    fn flush(&mut self) -> Result<()> {
        // Appends go to the file system at once (readers see them); nothing waits in the handle.
        self.shared.check_epoch(self.epoch, "flush", &self.path)
    }

    fn sync(&mut self) -> Result<()> {
        self.shared.check_epoch(self.epoch, "sync", &self.path)?;
        io::sync(&self.shared, self.ino, &self.path, self.epoch)
    }

    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        const OP: &str = "append_cloned";
        self.shared.check_epoch(self.epoch, OP, &self.path)?;
        crate::path::validate(src)?;
        let mut st = self.shared.state();
        let ps = st.page_size as u64;
        let at = st.len_of(self.ino);
        check_alignment(OP, ps, src, src_offset, &self.path, at, len)?;
        let s = st.lookup(OP, src)?;
        let ssize = st.len_of(s);
        check_ranges(OP, src, src_offset, ssize, &self.path, at, at, len)?;
        if s == self.ino {
            return Err(FsError::InvalidPath {
                path: src.to_string(),
                reason: "clone source and destination are the same file",
            });
        }
        io::before_clone(&mut st, self.shared.clock(), [s, self.ino])?;
        let span = CloneSpan { src: (s, src), src_offset, dst: (self.ino, &self.path), dst_offset: at, len };
        let outcome = P::append_cloned(&mut st, self.shared.clock(), &span)?;
        io::after_clone(&mut st, self.shared.clock(), &span)?;
        Ok(outcome)
    }
}

impl<P: Placement> Drop for FlashWriter<P> {
    fn drop(&mut self) {
        if self.shared.check_epoch(self.epoch, "close", &self.path).is_ok() {
            P::close(&mut self.shared.state(), self.shared.clock(), self.ino);
        }
    }
}

pub(super) struct FlashReader<P: Placement> {
    shared: Arc<Shared<P>>,
    ino: u64,
    path: String,
    epoch: u64,
    mode: Mode,
}

impl<P: Placement> FlashReader<P> {
    pub fn new(shared: Arc<Shared<P>>, ino: u64, path: &str, epoch: u64, mode: Mode) -> Self {
        FlashReader { shared, ino, path: path.to_string(), epoch, mode }
    }
}

impl<P: Placement> RandomAccessFile for FlashReader<P> {
    fn path(&self) -> &str {
        &self.path
    }

    fn size(&self) -> Result<u64> {
        self.shared.check_epoch(self.epoch, "size", &self.path)?;
        let st = self.shared.state();
        match st.inodes.get(&self.ino) {
            Some(_) => Ok(st.len_of(self.ino)),
            None => Err(FsError::NotFound { op: "size", path: self.path.clone() }),
        }
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.shared.check_epoch(self.epoch, "read_at", &self.path)?;
        let mut st = self.shared.state();
        st.inode(self.ino, "read_at", &self.path)?;
        let len = st.len_of(self.ino);
        if offset >= len || buf.is_empty() {
            return Ok(0);
        }
        let n = (buf.len() as u64).min(len - offset) as usize;
        io::read(&mut st, self.shared.clock(), self.ino, &self.path, offset, &mut buf[..n], self.mode)?;
        Ok(n)
    }
}

pub(super) struct FlashLock<P: Placement> {
    shared: Arc<Shared<P>>,
    path: String,
    id: u64,
    epoch: u64,
}

impl<P: Placement> FlashLock<P> {
    pub fn new(shared: Arc<Shared<P>>, path: &str, id: u64, epoch: u64) -> Self {
        FlashLock { shared, path: path.to_string(), id, epoch }
    }
}

impl<P: Placement> FileLock for FlashLock<P> {
    fn path(&self) -> &str {
        &self.path
    }
}

impl<P: Placement> fmt::Debug for FlashLock<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FlashLock").field("path", &self.path).finish()
    }
}

impl<P: Placement> Drop for FlashLock<P> {
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

//! The handles of a [`super::MemFs`]: writer, reader and lock guard. Each remembers the crash epoch it was opened
//! in and fails with `Crashed` once a crash has happened since.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::namespace::Node;
use super::Shared;
use crate::clone::check_alignment;
use crate::error::Result;
use crate::fs::CloneOutcome;
use crate::fs::{FileLock, RandomAccessFile, WritableFile};
use crate::lock_unpoisoned as lock;

pub(super) struct MemWriter {
    pub(super) shared: Arc<Shared>,
    pub(super) node: Arc<Node>,
    pub(super) path: String,
    pub(super) epoch: u64,
}

impl WritableFile for MemWriter {
    fn path(&self) -> &str {
        &self.path
    }

    fn len(&self) -> u64 {
        lock(&self.node.data).bytes.len() as u64
    }

    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.shared.check_epoch(self.epoch, "append", &self.path)?;
        self.shared.reserve("append", &self.path, data.len() as u64)?;
        lock(&self.node.data).bytes.extend_from_slice(data);
        self.shared.counters.bytes_written.fetch_add(data.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.shared.check_epoch(self.epoch, "flush", &self.path)
    }

    fn sync(&mut self) -> Result<()> {
        self.shared.check_epoch(self.epoch, "sync", &self.path)?;
        let mut data = lock(&self.node.data);
        let grown = data.bytes.len().saturating_sub(data.synced_len);
        data.synced_len = data.bytes.len();
        data.durable_override = None;
        drop(data);
        let c = &self.shared.counters;
        c.bytes_synced.fetch_add(grown as u64, Ordering::Relaxed);
        c.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        const OP: &str = "append_cloned";
        self.shared.check_epoch(self.epoch, OP, &self.path)?;
        let dst_offset = self.len();
        check_alignment(OP, self.shared.block_size, src, src_offset, &self.path, dst_offset, len)?;
        let src_node = lock(&self.shared.ns).file(OP, src)?;
        self.shared.place_range(OP, (src, &src_node), src_offset, (&self.path, &self.node), None, len)?;
        let c = &self.shared.counters;
        if self.shared.clone_support {
            c.bytes_cloned.fetch_add(len, Ordering::Relaxed);
            Ok(CloneOutcome::cloned(len))
        } else {
            c.bytes_written.fetch_add(len, Ordering::Relaxed);
            Ok(CloneOutcome::copied(len))
        }
    }
}

pub(super) struct MemReader {
    pub(super) shared: Arc<Shared>,
    pub(super) node: Arc<Node>,
    pub(super) path: String,
    pub(super) epoch: u64,
}

impl RandomAccessFile for MemReader {
    fn path(&self) -> &str {
        &self.path
    }

    fn size(&self) -> Result<u64> {
        self.shared.check_epoch(self.epoch, "size", &self.path)?;
        Ok(lock(&self.node.data).bytes.len() as u64)
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
        self.shared.check_epoch(self.epoch, "read_at", &self.path)?;
        let data = lock(&self.node.data);
        let len = data.bytes.len() as u64;
        if offset >= len {
            return Ok(0);
        }
        let n = buf.len().min((len - offset) as usize);
        buf[..n].copy_from_slice(&data.bytes[offset as usize..offset as usize + n]);
        Ok(n)
    }
}

pub(super) struct MemLock {
    pub(super) shared: Arc<Shared>,
    pub(super) path: String,
    pub(super) id: u64,
}

impl fmt::Debug for MemLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemLock").field("path", &self.path).finish()
    }
}

impl FileLock for MemLock {
    fn path(&self) -> &str {
        &self.path
    }
}

impl Drop for MemLock {
    fn drop(&mut self) {
        let mut ns = lock(&self.shared.ns);
        // After a crash the lock may belong to someone else now; only release our own.
        if ns.locks.get(&self.path) == Some(&self.id) {
            ns.locks.remove(&self.path);
        }
    }
}

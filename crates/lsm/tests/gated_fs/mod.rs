//! A test file system: MemFs, with the syncs of chosen files (by write hint) passing a gate that
//! a test may hold shut, and counted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use storage::{CloneOutcome, FileLock, Fs, MemFs, RandomAccessFile, Result, WritableFile, WriteHint};

/// Whether the gated files' syncs are held, how many are waiting now, and how many have come.
#[derive(Debug, Default)]
pub struct Gate {
    pub held: Mutex<bool>,
    opened: Condvar,
    pub waiting: AtomicU64,
    pub syncs: AtomicU64,
}

impl Gate {
    fn pass(&self) {
        self.syncs.fetch_add(1, Ordering::SeqCst);
        self.waiting.fetch_add(1, Ordering::SeqCst);
        let mut held = self.held.lock().unwrap();
        while *held {
            held = self.opened.wait(held).unwrap();
        }
        self.waiting.fetch_sub(1, Ordering::SeqCst);
    }

    pub fn open(&self) {
        *self.held.lock().unwrap() = false;
        self.opened.notify_all();
    }
}

/// MemFs, with the syncs of the files whose write hint `gated` picks passing the gate.
#[derive(Debug)]
pub struct GatedFs {
    pub inner: MemFs,
    pub gate: Arc<Gate>,
    pub gated: fn(&WriteHint) -> bool,
}

#[derive(Debug)]
struct GatedFile {
    inner: Box<dyn WritableFile>,
    gate: Arc<Gate>,
}

impl WritableFile for GatedFile {
    fn path(&self) -> &str {
        self.inner.path()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.gate.pass();
        self.inner.sync()
    }
    fn append_cloned(&mut self, src: &str, src_offset: u64, len: u64) -> Result<CloneOutcome> {
        self.inner.append_cloned(src, src_offset, len)
    }
}

impl Fs for GatedFs {
    fn block_size(&self) -> u64 {
        self.inner.block_size()
    }
    fn create(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.inner.create(path)
    }
    fn create_with_hint(&self, path: &str, hint: WriteHint) -> Result<Box<dyn WritableFile>> {
        let file = self.inner.create_with_hint(path, hint)?;
        Ok(if (self.gated)(&hint) { Box::new(GatedFile { inner: file, gate: Arc::clone(&self.gate) }) } else { file })
    }
    fn open_append(&self, path: &str) -> Result<Box<dyn WritableFile>> {
        self.inner.open_append(path)
    }
    fn open(&self, path: &str) -> Result<Box<dyn RandomAccessFile>> {
        self.inner.open(path)
    }
    fn file_size(&self, path: &str) -> Result<u64> {
        self.inner.file_size(path)
    }
    fn exists(&self, path: &str) -> Result<bool> {
        self.inner.exists(path)
    }
    fn list(&self, dir: &str) -> Result<Vec<String>> {
        self.inner.list(dir)
    }
    fn create_dir_all(&self, dir: &str) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn remove_dir(&self, dir: &str) -> Result<()> {
        self.inner.remove_dir(dir)
    }
    fn rename(&self, from: &str, to: &str) -> Result<()> {
        self.inner.rename(from, to)
    }
    fn remove(&self, path: &str) -> Result<()> {
        self.inner.remove(path)
    }
    fn sync_dir(&self, dir: &str) -> Result<()> {
        self.inner.sync_dir(dir)
    }
    fn lock(&self, path: &str) -> Result<Box<dyn FileLock>> {
        self.inner.lock(path)
    }
    fn clone_range(&self, src: &str, src_offset: u64, dst: &str, dst_offset: u64, len: u64) -> Result<()> {
        self.inner.clone_range(src, src_offset, dst, dst_offset, len)
    }
    fn supports_clone(&self) -> bool {
        self.inner.supports_clone()
    }
}

//! Readahead for a sequential reader of one file (a compaction's input tables): a read outside
//! the buffer fetches `window` bytes from its offset in one request, and the reads that follow
//! are served from that buffer.
//!
//! It stands for what the operating system's page cache does under LevelDB: the kernel reads ahead
//! when a file is read sequentially (Linux's default window is 128 KiB), so a compaction's block
//! reads reach the device as large requests spread over its dies, not one page at a time. A file
//! the file system maps into memory is read through the mapping, with no buffer.

use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use storage::{RandomAccessFile, Result};

/// A file read through a readahead buffer of `window` bytes.
pub struct Readahead {
    file: Arc<dyn RandomAccessFile>,
    window: usize,
    buf: Mutex<Buffer>,
}

/// The buffered bytes, the file offset they start at, and whether they reach the end of the file.
#[derive(Default)]
struct Buffer {
    start: u64,
    data: Bytes,
    eof: bool,
}

impl Readahead {
    pub fn new(file: Arc<dyn RandomAccessFile>, window: usize) -> Readahead {
        Readahead { file, window, buf: Mutex::new(Buffer::default()) }
    }

    /// The `len` bytes at `offset` (short at the end of the file), from the buffer, refilled first
    /// when they are not all in it.
    fn slice(&self, offset: u64, len: usize) -> Result<Bytes> {
        let mut b = self.buf.lock().unwrap_or_else(|e| e.into_inner());
        let end = b.start + b.data.len() as u64;
        if offset < b.start || offset > end {
            // A miss: one request of the window (or of the whole read, if larger) from `offset`.
            *b = Buffer { start: offset, data: Bytes::new(), eof: false };
        }
        if offset + len as u64 > b.start + b.data.len() as u64 && !b.eof {
            // Keep what is buffered from `offset` on and read the next window after it, so a
            // block that straddles two windows is not read twice.
            let from = (offset - b.start) as usize;
            let old = std::mem::take(&mut b.data);
            let keep = old.len() - from;
            let ask = self.window.max(len - keep);
            // The old buffer's memory is reused when no block still holds a slice of it: its
            // stale bytes are overwritten by the read, so nothing is zeroed first.
            let mut data = match old.try_into_mut() {
                Ok(mut m) => {
                    m.copy_within(from.., 0);
                    m
                }
                Err(old) => BytesMut::from(&old[from..]),
            };
            // Only bytes beyond the old length are zeroed (`resize`); within it, `truncate`.
            if data.len() >= keep + ask {
                data.truncate(keep + ask);
            } else {
                data.resize(keep + ask, 0);
            }
            let got = self.file.read_at(offset + keep as u64, &mut data[keep..])?;
            data.truncate(keep + got);
            *b = Buffer { start: offset, data: data.freeze(), eof: got < ask };
        }
        let from = (offset - b.start) as usize;
        let n = len.min(b.data.len().saturating_sub(from));
        Ok(b.data.slice(from..from + n))
    }
}

impl RandomAccessFile for Readahead {
    fn path(&self) -> &str {
        self.file.path()
    }

    fn size(&self) -> Result<u64> {
        self.file.size()
    }

    fn read_at(&self, offset: u64, out: &mut [u8]) -> Result<usize> {
        let got = self.slice(offset, out.len())?;
        out[..got.len()].copy_from_slice(&got);
        Ok(got.len())
    }

    /// The buffer's bytes without a copy (a mapped file's own mapping when it has one); `None`
    /// only when the read fails, and then `read_at` reports the error.
    fn read_shared(&self, offset: u64, len: usize) -> Option<Bytes> {
        self.file.read_shared(offset, len).or_else(|| self.slice(offset, len).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A file of `len` bytes (byte i is i mod 251) that counts its reads.
    struct Counting {
        len: usize,
        reads: AtomicUsize,
    }

    impl RandomAccessFile for Counting {
        fn path(&self) -> &str {
            "counting"
        }
        fn size(&self) -> Result<u64> {
            Ok(self.len as u64)
        }
        fn read_at(&self, offset: u64, buf: &mut [u8]) -> Result<usize> {
            self.reads.fetch_add(1, Ordering::Relaxed);
            let n = buf.len().min(self.len.saturating_sub(offset as usize));
            for (k, b) in buf[..n].iter_mut().enumerate() {
                *b = ((offset as usize + k) % 251) as u8;
            }
            Ok(n)
        }
    }

    #[test]
    fn sequential_reads_hit_the_buffer_and_every_byte_is_the_files() {
        let file = Arc::new(Counting { len: 10_000, reads: AtomicUsize::new(0) });
        let ra = Readahead::new(file.clone(), 4096);
        let mut got = Vec::new();
        let mut off = 0u64;
        loop {
            let mut buf = vec![0u8; 300];
            let n = ra.read_at(off, &mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            off += n as u64;
        }
        let want: Vec<u8> = (0..10_000).map(|i| (i % 251) as u8).collect();
        assert_eq!(got, want);
        // 10,000 bytes in 4 KiB windows: 3 requests, none of them twice, none past the end.
        assert_eq!(file.reads.load(Ordering::Relaxed), 3);
        // A read larger than the window, and a jump backwards, are read whole from the file.
        let mut big = vec![0u8; 5000];
        assert_eq!(ra.read_at(100, &mut big).unwrap(), 5000);
        assert_eq!(big[0], 100);
        let mut back = vec![0u8; 10];
        assert_eq!(ra.read_at(50, &mut back).unwrap(), 10);
        assert_eq!(back[0], 50);
        assert_eq!(file.reads.load(Ordering::Relaxed), 5);
        // Shared reads come from the same buffer, without a copy or another request.
        let shared = ra.read_shared(60, 100).unwrap();
        assert_eq!(shared.as_ref(), &want[60..160]);
        assert_eq!(file.reads.load(Ordering::Relaxed), 5);
    }
}

//! Appends logical records to a log file in the block format of [`super::format`].
//!
//! Contract: `add_record` writes the record and flushes it to the file system, so a reader opened
//! afterwards sees it; it is durable only after [`LogWriter::sync`] (the caller decides when).
//! A failed append may leave part of a record in the file (a torn write), never the whole record:
//! the writer drops what the file still buffers of it ([`WritableFile::discard_buffered`]), so
//! nothing of a write that returned an error reaches the file later and replay never applies it.
//! Records written after a torn fragment would turn a harmless crash tail into mid-log
//! corruption, so after any I/O error the writer refuses further records (the engine switches to
//! a new log). A record whose append succeeded and whose `sync` failed was handed to the file
//! system whole: it may be durable or not, and a reopen applies it if it is there (as in LevelDB
//! and RocksDB).

use storage::WritableFile;

use super::format::{encode_header, RecordType, BLOCK_SIZE, HEADER_SIZE};
use crate::error::{Error, Result};

const ZEROS: [u8; HEADER_SIZE] = [0; HEADER_SIZE];

/// Writes records to one log file.
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Offset of the write position inside the current block.
    block_offset: usize,
    /// The first I/O error met; later calls return it.
    failed: Option<Error>,
}

impl std::fmt::Debug for LogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogWriter")
            .field("path", &self.file.path())
            .field("len", &self.file.len())
            .field("failed", &self.failed)
            .finish()
    }
}

impl LogWriter {
    /// A writer for a new, empty log file.
    pub fn new(file: Box<dyn WritableFile>) -> LogWriter {
        let len = file.len();
        LogWriter::new_at(file, len)
    }

    /// A writer that continues a log whose length is `existing_len` (normally `file.len()` of a
    /// file opened with `open_append`). Only continue a log that a reader read to a clean end
    /// with no tail dropped (see [`super::LogReader::tail_dropped`]); otherwise new records would
    /// follow a torn fragment.
    pub fn new_at(file: Box<dyn WritableFile>, existing_len: u64) -> LogWriter {
        LogWriter { file, block_offset: (existing_len % BLOCK_SIZE as u64) as usize, failed: None }
    }

    /// The path of the log file.
    pub fn path(&self) -> &str {
        self.file.path()
    }

    /// Bytes written to the file so far (including any existing content).
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends one logical record (any length, including 0) and flushes it to the file system.
    pub fn add_record(&mut self, record: &[u8]) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let res = self.write_fragments(record).and_then(|()| self.flush_file());
        if let Err(e) = &res {
            self.file.discard_buffered();
            self.failed = Some(e.clone());
        }
        res
    }

    /// Makes every record added so far durable.
    pub fn sync(&mut self) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let res = self.file.sync().map_err(Error::from);
        if let Err(e) = &res {
            self.failed = Some(e.clone());
        }
        res
    }

    /// The error that stopped this writer, if any.
    pub fn failed(&self) -> Option<&Error> {
        self.failed.as_ref()
    }

    fn flush_file(&mut self) -> Result<()> {
        self.file.flush().map_err(Error::from)
    }

    fn write_fragments(&mut self, record: &[u8]) -> Result<()> {
        let mut rest = record;
        let mut first = true;
        // An empty record still emits one (empty) FULL fragment, hence the loop-and-a-half.
        loop {
            let leftover = BLOCK_SIZE - self.block_offset;
            if leftover < HEADER_SIZE {
                if leftover > 0 {
                    self.file.append(&ZEROS[..leftover])?;
                }
                self.block_offset = 0;
            }
            let avail = BLOCK_SIZE - self.block_offset - HEADER_SIZE;
            let n = rest.len().min(avail);
            let last = n == rest.len();
            let ty = match (first, last) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, true) => RecordType::Last,
                (false, false) => RecordType::Middle,
            };
            let (fragment, tail) = rest.split_at(n);
            self.file.append(&encode_header(ty, fragment))?;
            self.file.append(fragment)?;
            self.block_offset += HEADER_SIZE + n;
            rest = tail;
            first = false;
            if last {
                return Ok(());
            }
        }
    }
}

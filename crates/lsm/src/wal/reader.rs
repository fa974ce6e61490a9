//! Reads logical records back from a log file written by [`super::LogWriter`], telling a crash
//! tail apart from corruption.
//!
//! # Crash tail versus corruption
//!
//! A *problem* is any place where the next physical record is not well formed: a header cut off
//! by the end of the file, a length running past the end of the file or of its block, a checksum
//! mismatch, a zero-filled header (type 0), a record of unknown type, a MIDDLE/LAST fragment with
//! no FIRST before it, or a FIRST whose record is interrupted by a new FULL/FIRST.
//!
//! A problem is a **tail** when no checksum-valid physical record (of any type) follows it. The
//! reader looks for one at the position right after the bad record (when the bad header's length
//! stays inside its block), at the first record of every later block (every block of a
//! well-formed log starts with a header), and, when the problem is in the last block of the file,
//! at every byte position after it (so a damaged length field there cannot pass for a truncated
//! record). A tail is what a crash leaves (an incomplete last write, a zero-filled preallocated
//! end), never an acknowledged synced write, so the reader stops there cleanly in every mode:
//! `next_record` returns `Ok(None)` and the dropped bytes, from the start of the incomplete
//! logical record to the end of the file, show in [`LogReader::tail`] and
//! [`DropStats::tail_bytes`]. A tail cannot hide data: nothing valid follows it. A fragment that
//! survives after a damaged earlier fragment of the same record counts as data that follows: an
//! intact LAST says the record was written whole, so its damage is corruption, not a tail.
//!
//! A problem with valid data after it is **corruption**, handled by the [`ReadMode`]:
//! - [`ReadMode::Paranoid`]: `next_record` returns `Err(Error::Corruption { file, offset, .. })`
//!   naming the log and the offset of the bad record, and keeps returning it.
//! - [`ReadMode::Lenient`] (LevelDB's behaviour): the bad region is skipped, counted in
//!   [`DropStats::corrupt_bytes`] and listed in [`LogReader::problems`], and reading continues. A
//!   bad checksum skips to the next record if the bad header's length leads to a valid one, else
//!   to the end of the block (as LevelDB, the length of a damaged record cannot be trusted); a
//!   bad length or a zeroed header skips to the end of the block; an unknown type skips that
//!   record; a broken fragmented record is dropped whole. Records after the damage come back.
//! - [`ReadMode::PointInTime`]: the reader stops cleanly at the first corruption (recorded as a
//!   problem): what it returned is a prefix of the log, never one with holes.
//!
//! Limitation: a payload that itself contains a complete, checksum-valid log record, inside a
//! record torn in the last block, would count as data after the tear (paranoid mode would then
//! report corruption rather than a tail). A reader never *returns* such an embedded record: it
//! resumes only at block starts or right after a bad record whose successor checks out.

use std::fmt;

use storage::RandomAccessFile;

use super::format::{decode_header, record_crc, valid_record_at, RecordType, BLOCK_SIZE, HEADER_SIZE};
use crate::error::{Error, Result};

/// How the reader handles corruption (a problem with valid data after it). A crash tail is never
/// corruption and ends reading cleanly in every mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadMode {
    /// Fail with `Error::Corruption` at the first corruption.
    Paranoid,
    /// Skip corrupt regions, count them, and continue (LevelDB).
    Lenient,
    /// Stop cleanly at the first corruption: the records returned form a prefix of the log.
    PointInTime,
}

/// Why bytes were dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The file ends inside a header or a payload.
    Truncated,
    /// A fragmented record's last fragment never came (the file ended, or damage followed).
    MissingEnd,
    /// A fragment's checksum does not match.
    ChecksumMismatch,
    /// A header's length runs past the end of its block.
    BadLength(usize),
    /// A header of zeros (type 0): a preallocated or zeroed area.
    ZeroedRegion,
    /// A well-formed record of a type this reader does not know.
    UnknownType(u8),
    /// A MIDDLE or LAST fragment with no FIRST before it.
    MissingStart,
}

impl DropReason {
    /// What a crash during an append leaves (the file ends inside a record, or zeros follow), as
    /// opposed to a record written whole and damaged since (checksum, length or type wrong).
    pub fn is_incomplete_write(self) -> bool {
        matches!(self, DropReason::Truncated | DropReason::MissingEnd | DropReason::ZeroedRegion)
    }
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DropReason::Truncated => f.write_str("log truncated inside a record"),
            DropReason::MissingEnd => f.write_str("fragmented record without its end"),
            DropReason::ChecksumMismatch => f.write_str("log record checksum mismatch"),
            DropReason::BadLength(n) => write!(f, "log record length {n} runs past its block"),
            DropReason::ZeroedRegion => f.write_str("zeroed region in the log"),
            DropReason::UnknownType(t) => write!(f, "unknown log record type {t}"),
            DropReason::MissingStart => f.write_str("log fragment without the start of its record"),
        }
    }
}

/// One dropped region of a log file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub file: String,
    /// File offset of the first dropped byte (a record header).
    pub offset: u64,
    /// Bytes dropped because of it.
    pub bytes: u64,
    pub reason: DropReason,
}

impl Problem {
    /// The problem as an `Error::Corruption` naming the file and offset.
    pub fn to_error(&self) -> Error {
        Error::corruption(self.file.clone(), self.offset, format!("{} ({} bytes dropped)", self.reason, self.bytes))
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at offset {}: {} ({} bytes dropped)", self.file, self.offset, self.reason, self.bytes)
    }
}

/// Counts of what a reader dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropStats {
    /// Bytes dropped because of corruption (lenient and point-in-time modes).
    pub corrupt_bytes: u64,
    /// Corrupt regions met.
    pub corrupt_regions: u64,
    /// Bytes of the crash tail (an incomplete last write) ignored at the end.
    pub tail_bytes: u64,
}

/// One step of the physical layer.
enum Physical {
    Record {
        ty: RecordType,
        offset: u64,
        start: usize,
        end: usize,
    },
    Eof,
    Bad {
        offset: u64,
        reason: DropReason,
        /// Where a lenient reader resumes in the current block.
        resume: usize,
        /// Where the next record would start if the bad header's length is right.
        successor: Option<usize>,
    },
}

/// Reads the logical records of one log file in order.
pub struct LogReader {
    file: Box<dyn RandomAccessFile>,
    path: String,
    mode: ReadMode,
    /// The current block, as read (shorter than a block only at the end of the file).
    block: Vec<u8>,
    block_start: u64,
    pos: usize,
    /// The current block is the last one.
    eof: bool,
    /// The fragments gathered so far of a record in progress, and the offset of its FIRST.
    partial: Vec<u8>,
    partial_start: Option<u64>,
    /// A checksum-valid record is known to start at this offset (caches look-aheads).
    valid_ahead: Option<u64>,
    scan_buf: Vec<u8>,
    last_record_offset: u64,
    records: u64,
    problems: Vec<Problem>,
    tail: Option<Problem>,
    stats: DropStats,
    failed: Option<Error>,
    done: bool,
}

impl fmt::Debug for LogReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogReader")
            .field("path", &self.path)
            .field("mode", &self.mode)
            .field("offset", &(self.block_start + self.pos as u64))
            .field("records", &self.records)
            .field("stats", &self.stats)
            .finish()
    }
}

impl LogReader {
    pub fn new(file: Box<dyn RandomAccessFile>, mode: ReadMode) -> LogReader {
        let path = file.path().to_string();
        LogReader {
            file,
            path,
            mode,
            block: Vec::new(),
            block_start: 0,
            pos: 0,
            // An empty buffer that is "not the last block" makes the first call load block 0.
            eof: false,
            partial: Vec::new(),
            partial_start: None,
            valid_ahead: None,
            scan_buf: Vec::new(),
            last_record_offset: 0,
            records: 0,
            problems: Vec::new(),
            tail: None,
            stats: DropStats::default(),
            failed: None,
            done: false,
        }
    }

    /// The path of the log file.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The next logical record; `Ok(None)` at the end of the log (including a crash tail). I/O
    /// errors come back as `Error::Fs`, corruption in paranoid mode as `Error::Corruption`.
    pub fn next_record(&mut self) -> Result<Option<Vec<u8>>> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.done {
            return Ok(None);
        }
        let res = self.next_inner();
        if let Err(e) = &res {
            self.failed = Some(e.clone());
        }
        res
    }

    /// File offset of the first physical record of the record last returned.
    pub fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// Logical records returned so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// What was dropped so far.
    pub fn dropped(&self) -> DropStats {
        self.stats
    }

    /// The corrupt regions met so far (in paranoid mode, the one that failed the read).
    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }

    /// The crash tail, once reading stopped at one.
    pub fn tail(&self) -> Option<&Problem> {
        self.tail.as_ref()
    }

    /// Bytes of the crash tail (0 if none). A log may be continued with
    /// [`super::LogWriter::new_at`] only when this is 0 and no corruption was met.
    pub fn tail_dropped(&self) -> u64 {
        self.stats.tail_bytes
    }

    fn next_inner(&mut self) -> Result<Option<Vec<u8>>> {
        loop {
            match self.read_physical()? {
                Physical::Record { ty, offset, start, end } => {
                    let frag_len = (end - start + HEADER_SIZE) as u64;
                    match ty {
                        RecordType::Full | RecordType::First => {
                            if let Some(p_start) = self.partial_start {
                                let bytes = offset - p_start;
                                if !self.corruption(p_start, bytes, DropReason::MissingEnd)? {
                                    return Ok(None);
                                }
                            }
                            if ty == RecordType::Full {
                                return Ok(Some(self.emit(offset, start, end)));
                            }
                            self.partial.clear();
                            self.partial.extend_from_slice(&self.block[start..end]);
                            self.partial_start = Some(offset);
                        }
                        RecordType::Middle | RecordType::Last => {
                            let Some(p_start) = self.partial_start else {
                                if !self.corruption(offset, frag_len, DropReason::MissingStart)? {
                                    return Ok(None);
                                }
                                continue;
                            };
                            self.partial.extend_from_slice(&self.block[start..end]);
                            if ty == RecordType::Last {
                                self.partial_start = None;
                                self.last_record_offset = p_start;
                                self.records += 1;
                                return Ok(Some(std::mem::take(&mut self.partial)));
                            }
                        }
                        // read_physical reports type 0 as a problem, never as a record.
                        RecordType::Zero => {}
                    }
                }
                Physical::Eof => {
                    if let Some(p_start) = self.partial_start {
                        self.stop_at_tail(p_start, DropReason::MissingEnd)?;
                    } else {
                        self.done = true;
                    }
                    return Ok(None);
                }
                Physical::Bad { offset, reason, resume, successor } => {
                    // A well-formed record of an unknown type is data, never a crash tail.
                    let intact = matches!(reason, DropReason::UnknownType(_));
                    if !intact && !self.valid_data_after(offset, successor)? {
                        let from = self.partial_start.unwrap_or(offset);
                        self.stop_at_tail(from, reason)?;
                        return Ok(None);
                    }
                    let bytes = (resume - self.pos) as u64;
                    if !self.corruption(offset, bytes, reason)? {
                        return Ok(None);
                    }
                    if let Some(p_start) = self.partial_start {
                        let p_bytes = offset - p_start;
                        self.partial_start = None;
                        self.partial.clear();
                        self.note(p_start, p_bytes, DropReason::MissingEnd);
                    }
                    self.pos = resume;
                }
            }
        }
    }

    fn emit(&mut self, offset: u64, start: usize, end: usize) -> Vec<u8> {
        self.partial_start = None;
        self.partial.clear();
        self.last_record_offset = offset;
        self.records += 1;
        self.block[start..end].to_vec()
    }

    /// Handles corruption at `offset`: `Ok(true)` to continue (lenient), `Ok(false)` to stop
    /// (point in time), `Err` in paranoid mode.
    fn corruption(&mut self, offset: u64, bytes: u64, reason: DropReason) -> Result<bool> {
        match self.mode {
            ReadMode::Paranoid => {
                let p = self.note(offset, bytes, reason);
                Err(p.to_error())
            }
            ReadMode::Lenient => {
                if reason == DropReason::MissingEnd {
                    self.partial_start = None;
                    self.partial.clear();
                }
                self.note(offset, bytes, reason);
                Ok(true)
            }
            ReadMode::PointInTime => {
                let end = self.file.size()?;
                self.note(offset, end.saturating_sub(offset), reason);
                self.done = true;
                Ok(false)
            }
        }
    }

    fn note(&mut self, offset: u64, bytes: u64, reason: DropReason) -> Problem {
        let p = Problem { file: self.path.clone(), offset, bytes, reason };
        self.stats.corrupt_bytes += bytes;
        self.stats.corrupt_regions += 1;
        self.problems.push(p.clone());
        p
    }

    fn stop_at_tail(&mut self, from: u64, reason: DropReason) -> Result<()> {
        let end = self.file.size()?.max(self.block_start + self.block.len() as u64);
        let bytes = end.saturating_sub(from);
        self.stats.tail_bytes = bytes;
        self.tail = Some(Problem { file: self.path.clone(), offset: from, bytes, reason });
        self.partial.clear();
        self.partial_start = None;
        self.done = true;
        Ok(())
    }

    /// Loads the block after the current one.
    fn load_next_block(&mut self) -> Result<()> {
        self.block_start += self.block.len() as u64;
        self.block.resize(BLOCK_SIZE, 0);
        let n = read_full(&*self.file, self.block_start, &mut self.block)?;
        self.block.truncate(n);
        self.eof = n < BLOCK_SIZE;
        self.pos = 0;
        Ok(())
    }

    fn read_physical(&mut self) -> Result<Physical> {
        loop {
            let remaining = self.block.len() - self.pos;
            if remaining < HEADER_SIZE {
                if !self.eof {
                    // A full block: what is left is the zero trailer.
                    self.load_next_block()?;
                    continue;
                }
                if remaining == 0 {
                    return Ok(Physical::Eof);
                }
                return Ok(Physical::Bad {
                    offset: self.block_start + self.pos as u64,
                    reason: DropReason::Truncated,
                    resume: self.block.len(),
                    successor: None,
                });
            }
            let offset = self.block_start + self.pos as u64;
            let Some((crc, len, ty)) = decode_header(&self.block[self.pos..]) else {
                return Ok(Physical::Eof);
            };
            let start = self.pos + HEADER_SIZE;
            let end = start + len;
            let block_end = self.block.len();
            if end > block_end {
                let reason = if self.eof && self.pos + HEADER_SIZE + len <= BLOCK_SIZE {
                    DropReason::Truncated
                } else {
                    DropReason::BadLength(len)
                };
                return Ok(Physical::Bad { offset, reason, resume: block_end, successor: None });
            }
            if ty == RecordType::Zero as u8 {
                return Ok(Physical::Bad {
                    offset,
                    reason: DropReason::ZeroedRegion,
                    resume: block_end,
                    successor: Some(end),
                });
            }
            if record_crc(ty, &self.block[start..end]) != crc {
                // The length may be the damaged field: resume after this record only if a
                // valid record really starts there.
                let resume = if valid_record_at(&self.block, end).is_some() { end } else { block_end };
                return Ok(Physical::Bad {
                    offset,
                    reason: DropReason::ChecksumMismatch,
                    resume,
                    successor: Some(end),
                });
            }
            let Some(ty) = RecordType::from_u8(ty) else {
                return Ok(Physical::Bad {
                    offset,
                    reason: DropReason::UnknownType(ty),
                    resume: end,
                    successor: Some(end),
                });
            };
            self.pos = end;
            return Ok(Physical::Record { ty, offset, start, end });
        }
    }

    /// Whether a checksum-valid physical record starts after a problem at `offset`: at
    /// `successor` (a position in the current block) or at the start of any later block.
    fn valid_data_after(&mut self, offset: u64, successor: Option<usize>) -> Result<bool> {
        if self.valid_ahead.is_some_and(|v| v > offset) {
            return Ok(true);
        }
        if let Some(s) = successor {
            if valid_record_at(&self.block, s).is_some() {
                self.valid_ahead = Some(self.block_start + s as u64);
                return Ok(true);
            }
        }
        if self.eof {
            // The last block: a damaged length may point anywhere (even past the end of the
            // file), so try every position after the bad header.
            let from = (offset - self.block_start) as usize + 1;
            let found = (from..self.block.len()).find(|&p| valid_record_at(&self.block, p).is_some());
            if let Some(p) = found {
                self.valid_ahead = Some(self.block_start + p as u64);
            }
            return Ok(found.is_some());
        }
        let mut at = self.block_start + self.block.len() as u64;
        let mut buf = std::mem::take(&mut self.scan_buf);
        buf.resize(BLOCK_SIZE, 0);
        let found = loop {
            let n = match read_full(&*self.file, at, &mut buf) {
                Ok(n) => n,
                Err(e) => {
                    self.scan_buf = buf;
                    return Err(e);
                }
            };
            if valid_record_at(&buf[..n], 0).is_some() {
                self.valid_ahead = Some(at);
                break true;
            }
            if n < BLOCK_SIZE {
                break false;
            }
            at += BLOCK_SIZE as u64;
        };
        self.scan_buf = buf;
        Ok(found)
    }
}

/// Reads from `offset` until `buf` is full or the file ends; the bytes read.
fn read_full(file: &dyn RandomAccessFile, offset: u64, buf: &mut [u8]) -> Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        let n = file.read_at(offset + done as u64, &mut buf[done..])?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

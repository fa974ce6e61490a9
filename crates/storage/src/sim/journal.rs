//! SimFs metadata on the device: a checkpoint of the durable namespace in one of two slots, and a
//! log of changes since that checkpoint, in a reserved LPN region at the start of the device.
//!
//! Layout (in pages): slot 0 | slot 1 | log. Every page starts with a 32-byte header (magic, kind,
//! generation, sequence number, payload length, checkpoint length, CRC32C of header and payload).
//! A checkpoint of generation `g` fills a slot; the log pages that follow it carry generation `g`
//! and sequence numbers from 0. Records form one byte stream across pages. `sync` and `sync_dir`
//! append their records and write every page the append touched (the last, partly filled log page
//! is rewritten as it grows); when the log is full, a new checkpoint goes to the other slot with
//! generation `g + 1` and the log starts over, so the previous checkpoint stays valid until the
//! new one is complete. Mounting picks the newest complete checkpoint and replays log pages of its
//! generation in sequence until the first page that is missing, stale or fails its checksum.

use std::collections::BTreeMap;

use flashsim::{BlockSsd, HostLabel, Nanos};

use crate::error::{FsError, Result};
use crate::meta_codec::{put_str, Cursor};

const MAGIC: u32 = 0x464b_564d;
const HEADER: usize = 32;
const KIND_CHECKPOINT: u8 = 1;
const KIND_LOG: u8 = 2;

/// The durable state of the namespace: what a remount after a power cut sees.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct DurableMeta {
    /// Directory -> name -> inode. Every directory, including the root `""`.
    pub dirs: BTreeMap<String, BTreeMap<String, u64>>,
    /// Inodes with their last synced length and pages (as runs of LPNs).
    pub inodes: BTreeMap<u64, DurableInode>,
    pub next_ino: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct DurableInode {
    pub len: u64,
    pub runs: Vec<(u32, u32)>,
}

/// One change to the durable state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Record {
    Inode { ino: u64, len: u64, runs: Vec<(u32, u32)> },
    InodeFree { ino: u64 },
    Link { dir: String, name: String, ino: u64 },
    Unlink { dir: String, name: String },
    Mkdir { dir: String },
    Rmdir { dir: String },
    NextIno { next: u64 },
}

impl From<crate::namespace::DirChange> for Record {
    fn from(c: crate::namespace::DirChange) -> Record {
        match c {
            crate::namespace::DirChange::Link { dir, name, ino } => Record::Link { dir, name, ino },
            crate::namespace::DirChange::Unlink { dir, name } => Record::Unlink { dir, name },
        }
    }
}

impl DurableMeta {
    pub fn empty() -> DurableMeta {
        let mut m = DurableMeta { next_ino: 1, ..Default::default() };
        m.dirs.insert(String::new(), BTreeMap::new());
        m
    }

    pub fn apply(&mut self, r: &Record) {
        match r {
            Record::Inode { ino, len, runs } => {
                self.inodes.insert(*ino, DurableInode { len: *len, runs: runs.clone() });
            }
            Record::InodeFree { ino } => {
                self.inodes.remove(ino);
            }
            Record::Link { dir, name, ino } => {
                self.dirs.entry(dir.clone()).or_default().insert(name.clone(), *ino);
            }
            Record::Unlink { dir, name } => {
                if let Some(d) = self.dirs.get_mut(dir) {
                    d.remove(name);
                }
            }
            Record::Mkdir { dir } => {
                self.dirs.entry(dir.clone()).or_default();
            }
            Record::Rmdir { dir } => {
                // The root always exists; a record that would remove it (only a damaged or foreign
                // journal holds one) leaves it, so the namespace keeps its invariant.
                if !dir.is_empty() {
                    self.dirs.remove(dir);
                }
            }
            Record::NextIno { next } => self.next_ino = self.next_ino.max(*next),
        }
    }

    /// Records that rebuild this state from empty.
    fn snapshot(&self) -> Vec<Record> {
        let mut out = vec![Record::NextIno { next: self.next_ino }];
        for (ino, i) in &self.inodes {
            out.push(Record::Inode { ino: *ino, len: i.len, runs: i.runs.clone() });
        }
        for (dir, entries) in &self.dirs {
            out.push(Record::Mkdir { dir: dir.clone() });
            for (name, ino) in entries {
                out.push(Record::Link { dir: dir.clone(), name: name.clone(), ino: *ino });
            }
        }
        out
    }
}

fn encode(r: &Record, out: &mut Vec<u8>) {
    match r {
        Record::Inode { ino, len, runs } => {
            out.push(1);
            out.extend_from_slice(&ino.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(&(runs.len() as u32).to_le_bytes());
            for (s, n) in runs {
                out.extend_from_slice(&s.to_le_bytes());
                out.extend_from_slice(&n.to_le_bytes());
            }
        }
        Record::InodeFree { ino } => {
            out.push(2);
            out.extend_from_slice(&ino.to_le_bytes());
        }
        Record::Link { dir, name, ino } => {
            out.push(3);
            put_str(out, dir);
            put_str(out, name);
            out.extend_from_slice(&ino.to_le_bytes());
        }
        Record::Unlink { dir, name } => {
            out.push(4);
            put_str(out, dir);
            put_str(out, name);
        }
        Record::Mkdir { dir } => {
            out.push(5);
            put_str(out, dir);
        }
        Record::Rmdir { dir } => {
            out.push(6);
            put_str(out, dir);
        }
        Record::NextIno { next } => {
            out.push(7);
            out.extend_from_slice(&next.to_le_bytes());
        }
    }
}

fn decode_all(stream: &[u8]) -> Option<Vec<Record>> {
    let mut c = Cursor(stream);
    let mut out = Vec::new();
    while !c.0.is_empty() {
        out.push(match c.u8()? {
            1 => {
                let (ino, len, n) = (c.u64()?, c.u64()?, c.u32()?);
                let mut runs = Vec::with_capacity(n.min(1 << 16) as usize);
                for _ in 0..n {
                    runs.push((c.u32()?, c.u32()?));
                }
                Record::Inode { ino, len, runs }
            }
            2 => Record::InodeFree { ino: c.u64()? },
            3 => Record::Link { dir: c.string()?, name: c.string()?, ino: c.u64()? },
            4 => Record::Unlink { dir: c.string()?, name: c.string()? },
            5 => Record::Mkdir { dir: c.string()? },
            6 => Record::Rmdir { dir: c.string()? },
            7 => Record::NextIno { next: c.u64()? },
            _ => return None,
        });
    }
    Some(out)
}

struct Header {
    kind: u8,
    generation: u64,
    seq: u32,
    payload_len: u32,
    total_len: u32,
}

fn write_header(page: &mut [u8], h: &Header) {
    page[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    page[4] = h.kind;
    page[5..8].fill(0);
    page[8..16].copy_from_slice(&h.generation.to_le_bytes());
    page[16..20].copy_from_slice(&h.seq.to_le_bytes());
    page[20..24].copy_from_slice(&h.payload_len.to_le_bytes());
    page[24..28].copy_from_slice(&h.total_len.to_le_bytes());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&page[..28]), &page[HEADER..HEADER + h.payload_len as usize]);
    page[28..32].copy_from_slice(&crc.to_le_bytes());
}

/// Parses and checks a page header; `None` for an unwritten, foreign or damaged page.
fn read_header(page: &[u8]) -> Option<Header> {
    let u32_at = |i: usize| u32::from_le_bytes(page[i..i + 4].try_into().unwrap_or([0; 4]));
    if page.len() < HEADER || u32_at(0) != MAGIC {
        return None;
    }
    let h = Header {
        kind: page[4],
        generation: u64::from_le_bytes(page[8..16].try_into().ok()?),
        seq: u32_at(16),
        payload_len: u32_at(20),
        total_len: u32_at(24),
    };
    let end = HEADER.checked_add(h.payload_len as usize)?;
    if end > page.len() {
        return None;
    }
    let crc = crc32c::crc32c_append(crc32c::crc32c(&page[..28]), &page[HEADER..end]);
    (crc == u32_at(28)).then_some(h)
}

/// Where the metadata lives and how far the log has got.
pub(super) struct Journal {
    page_size: usize,
    slot_pages: u32,
    log_pages: u32,
    generation: u64,
    active_slot: u32,
    /// Log page being filled and the stream bytes already in it.
    log_page: u32,
    log_buf: Vec<u8>,
    /// Metadata pages written (host writes of cause "fs metadata").
    pub pages_written: u64,
}

/// The result of an I/O on the metadata region: when it completes.
pub(super) type Done = Nanos;

impl Journal {
    /// A journal that knows nothing yet (replaced by `format` or `recover`).
    pub fn unloaded() -> Journal {
        Journal {
            page_size: 512,
            slot_pages: 0,
            log_pages: 0,
            generation: 0,
            active_slot: 0,
            log_page: 0,
            log_buf: Vec::new(),
            pages_written: 0,
        }
    }

    /// Pages of the region.
    pub fn region_pages(slot_pages: u32, log_pages: u32) -> u32 {
        2 * slot_pages + log_pages
    }

    /// Writes an empty file system (generation 1 in slot 0).
    pub fn format(dev: &mut BlockSsd, at: Nanos, slot_pages: u32, log_pages: u32) -> Result<(Journal, Done)> {
        let mut j = Journal {
            page_size: dev.page_size() as usize,
            slot_pages,
            log_pages,
            generation: 0,
            active_slot: 1,
            log_page: 0,
            log_buf: Vec::new(),
            pages_written: 0,
        };
        let done = j.checkpoint(dev, at, &DurableMeta::empty())?;
        Ok((j, done))
    }

    /// Reads the newest complete checkpoint and the log after it.
    pub fn recover(
        dev: &mut BlockSsd,
        at: Nanos,
        slot_pages: u32,
        log_pages: u32,
    ) -> Result<(Journal, DurableMeta, Done)> {
        let ps = dev.page_size() as usize;
        let mut t = at;
        let mut page = vec![0u8; ps];
        let mut best: Option<(u64, u32, Vec<u8>)> = None;
        for slot in 0..2u32 {
            let base = (slot * slot_pages) as u64;
            t = read_page(dev, t, base, &mut page)?;
            let Some(h) = read_header(&page) else {
                continue;
            };
            if h.kind != KIND_CHECKPOINT || h.seq != 0 {
                continue;
            }
            let mut stream = Vec::with_capacity(h.total_len as usize);
            let mut ok = true;
            let mut i = 0u32;
            loop {
                if i > 0 {
                    t = read_page(dev, t, base + i as u64, &mut page)?;
                }
                match read_header(&page) {
                    Some(p) if p.kind == KIND_CHECKPOINT && p.generation == h.generation && p.seq == i => {
                        stream.extend_from_slice(&page[HEADER..HEADER + p.payload_len as usize]);
                    }
                    _ => {
                        ok = false;
                        break;
                    }
                }
                i += 1;
                if stream.len() >= h.total_len as usize || i >= slot_pages {
                    break;
                }
            }
            if ok && stream.len() == h.total_len as usize && best.as_ref().is_none_or(|b| h.generation > b.0) {
                best = Some((h.generation, slot, stream));
            }
        }
        let Some((generation, active_slot, stream)) = best else {
            return Err(corrupt("no complete metadata checkpoint on the device (not formatted?)"));
        };
        let mut meta = DurableMeta::empty();
        for r in decode_all(&stream).ok_or_else(|| corrupt("undecodable metadata checkpoint"))? {
            meta.apply(&r);
        }
        // Replay the log of this generation.
        let mut stream = Vec::new();
        let mut log_page = 0;
        let mut last_payload = 0;
        let log_base = (2 * slot_pages) as u64;
        while log_page < log_pages {
            t = read_page(dev, t, log_base + log_page as u64, &mut page)?;
            match read_header(&page) {
                Some(h) if h.kind == KIND_LOG && h.generation == generation && h.seq == log_page => {
                    last_payload = h.payload_len as usize;
                    stream.extend_from_slice(&page[HEADER..HEADER + last_payload]);
                    log_page += 1;
                }
                _ => break,
            }
        }
        for r in decode_all(&stream).ok_or_else(|| corrupt("undecodable metadata log"))? {
            meta.apply(&r);
        }
        // Continue in the last log page if it has room.
        let (log_page, log_buf) = if log_page == 0 {
            (0, Vec::new())
        } else {
            let tail = stream[stream.len() - last_payload..].to_vec();
            (log_page - 1, tail)
        };
        let j = Journal {
            page_size: ps,
            slot_pages,
            log_pages,
            generation,
            active_slot,
            log_page,
            log_buf,
            pages_written: 0,
        };
        Ok((j, meta, t))
    }

    fn payload(&self) -> usize {
        self.page_size - HEADER
    }

    /// Makes `records` durable; `meta` is the durable state with them already applied (written
    /// whole as a checkpoint when the log is full).
    pub fn commit(&mut self, dev: &mut BlockSsd, at: Nanos, records: &[Record], meta: &DurableMeta) -> Result<Done> {
        let mut bytes = Vec::new();
        for r in records {
            encode(r, &mut bytes);
        }
        let room = (self.log_pages - self.log_page) as usize * self.payload() - self.log_buf.len();
        if bytes.len() > room {
            return self.checkpoint(dev, at, meta);
        }
        let mut done = at;
        let mut rest = &bytes[..];
        let mut page = vec![0u8; self.page_size];
        loop {
            if self.log_buf.len() == self.payload() {
                self.log_page += 1;
                self.log_buf.clear();
            }
            let n = rest.len().min(self.payload() - self.log_buf.len());
            self.log_buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            page.fill(0);
            page[HEADER..HEADER + self.log_buf.len()].copy_from_slice(&self.log_buf);
            let h = Header {
                kind: KIND_LOG,
                generation: self.generation,
                seq: self.log_page,
                payload_len: self.log_buf.len() as u32,
                total_len: 0,
            };
            write_header(&mut page, &h);
            let lpn = (2 * self.slot_pages + self.log_page) as u64;
            done = done.max(self.write_page(dev, at, lpn, &page)?);
            if rest.is_empty() {
                return Ok(done);
            }
        }
    }

    /// Writes `meta` whole into the inactive slot as the next generation and restarts the log.
    fn checkpoint(&mut self, dev: &mut BlockSsd, at: Nanos, meta: &DurableMeta) -> Result<Done> {
        let mut bytes = Vec::new();
        for r in meta.snapshot() {
            encode(&r, &mut bytes);
        }
        let pages_needed = bytes.len().div_ceil(self.payload()).max(1);
        if pages_needed > self.slot_pages as usize {
            return Err(FsError::NoSpace {
                op: "sync",
                path: String::new(),
                detail: format!(
                    "the file-system metadata ({} bytes) outgrew its checkpoint slot of {} pages",
                    bytes.len(),
                    self.slot_pages
                ),
            });
        }
        let slot = 1 - self.active_slot;
        let generation = self.generation + 1;
        let mut done = at;
        let mut page = vec![0u8; self.page_size];
        for (i, chunk) in bytes.chunks(self.payload()).chain(bytes.is_empty().then_some(&[][..])).enumerate() {
            page.fill(0);
            page[HEADER..HEADER + chunk.len()].copy_from_slice(chunk);
            let h = Header {
                kind: KIND_CHECKPOINT,
                generation,
                seq: i as u32,
                payload_len: chunk.len() as u32,
                total_len: bytes.len() as u32,
            };
            write_header(&mut page, &h);
            let lpn = (slot * self.slot_pages) as u64 + i as u64;
            done = done.max(self.write_page(dev, at, lpn, &page)?);
        }
        self.generation = generation;
        self.active_slot = slot;
        self.log_page = 0;
        self.log_buf.clear();
        Ok(done)
    }

    fn write_page(&mut self, dev: &mut BlockSsd, at: Nanos, lpn: u64, page: &[u8]) -> Result<Done> {
        self.pages_written += 1;
        dev.write(at, lpn, page, HostLabel::FsMetadata).map_err(|e| super::device_error("sync", "", e))
    }
}

fn read_page(dev: &mut BlockSsd, at: Nanos, lpn: u64, buf: &mut [u8]) -> Result<Nanos> {
    dev.read(at, lpn, buf, HostLabel::FsMetadata).map_err(|e| super::device_error("mount", "", e))
}

fn corrupt(what: &str) -> FsError {
    FsError::Io {
        op: "mount",
        path: String::new(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One record of every kind.
    fn sample() -> Vec<Record> {
        vec![
            Record::Inode { ino: 3, len: 12345, runs: vec![(100, 4), (900, 1)] },
            Record::Link { dir: "db".into(), name: "000001.log".into(), ino: 3 },
            Record::Unlink { dir: "db".into(), name: "x".into() },
            Record::Mkdir { dir: "db".into() },
            Record::Rmdir { dir: "old".into() },
            Record::InodeFree { ino: 9 },
            Record::NextIno { next: 10 },
        ]
    }

    fn valid_stream() -> Vec<u8> {
        let mut bytes = Vec::new();
        sample().iter().for_each(|r| encode(r, &mut bytes));
        bytes
    }

    #[test]
    fn records_round_trip_and_garbage_is_rejected() {
        let bytes = valid_stream();
        assert_eq!(decode_all(&bytes).unwrap(), sample());
        assert!(decode_all(&bytes[..bytes.len() - 1]).is_none());
        assert!(decode_all(&[99]).is_none());
    }

    #[test]
    fn headers_detect_damage() {
        let mut page = vec![0u8; 512];
        page[HEADER..HEADER + 3].copy_from_slice(b"abc");
        write_header(&mut page, &Header { kind: KIND_LOG, generation: 7, seq: 2, payload_len: 3, total_len: 0 });
        let h = read_header(&page).unwrap();
        assert_eq!((h.kind, h.generation, h.seq, h.payload_len), (KIND_LOG, 7, 2, 3));
        page[HEADER + 1] ^= 1;
        assert!(read_header(&page).is_none());
        assert!(read_header(&[0u8; 512]).is_none());
    }

    /// Found by the fuzz target (30 M cases): a record stream whose damaged Rmdir names the root.
    /// The root stays, and a snapshot of the state rebuilds the same state.
    #[test]
    fn a_record_cannot_remove_the_root_directory() {
        let mut bytes = Vec::new();
        for r in [Record::Mkdir { dir: "db".into() }, Record::Rmdir { dir: String::new() }] {
            encode(&r, &mut bytes);
        }
        let mut meta = DurableMeta::empty();
        decode_all(&bytes).unwrap().iter().for_each(|r| meta.apply(r));
        assert!(meta.dirs.contains_key(""), "the root directory is still there");
        let mut again = DurableMeta::empty();
        meta.snapshot().iter().for_each(|r| again.apply(r));
        assert_eq!(again, meta);
    }

    proptest::proptest! {
        #![proptest_config(crate::meta_codec::fuzz::config())]

        /// The journal's record decoder on damaged streams: records or `None`, never a panic;
        /// whatever decodes applies to the durable state and snapshots again.
        #[test]
        fn damaged_record_streams_decode_or_are_refused(bytes in crate::meta_codec::fuzz::damaged(valid_stream())) {
            if let Some(records) = decode_all(&bytes) {
                let mut meta = DurableMeta::empty();
                records.iter().for_each(|r| meta.apply(r));
                let mut again = DurableMeta::empty();
                meta.snapshot().iter().for_each(|r| again.apply(r));
                proptest::prop_assert_eq!(again, meta);
            }
        }
    }
}

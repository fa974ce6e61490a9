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

use flashsim::{BlockSsd, HostLabel, Nanos};

use super::LpnRun;
use crate::error::{FsError, Result};
use crate::flash::corrupt;
use crate::flash::page_header::{self, Header, HEADER};
use crate::flash::records::{decode_all, encode, DurableMeta, Record};

const MAGIC: u32 = 0x464b_564d;
const KIND_CHECKPOINT: u8 = 1;
const KIND_LOG: u8 = 2;

type Meta = DurableMeta<LpnRun>;

fn write_header(page: &mut [u8], h: &Header) {
    page_header::write(page, MAGIC, h);
}

fn read_header(page: &[u8]) -> Option<Header> {
    page_header::read(page, MAGIC)
}

/// Where the metadata lives and how far the log has got.
pub struct Journal {
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
        let done = j.checkpoint(dev, at, &Meta::empty())?;
        Ok((j, done))
    }

    /// Reads the newest complete checkpoint and the log after it.
    pub fn recover(dev: &mut BlockSsd, at: Nanos, slot_pages: u32, log_pages: u32) -> Result<(Journal, Meta, Done)> {
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
        let mut meta = Meta::empty();
        for r in decode_all::<LpnRun>(&stream).ok_or_else(|| corrupt("undecodable metadata checkpoint"))? {
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
        for r in decode_all::<LpnRun>(&stream).ok_or_else(|| corrupt("undecodable metadata log"))? {
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
    pub fn commit(&mut self, dev: &mut BlockSsd, at: Nanos, records: &[Record<LpnRun>], meta: &Meta) -> Result<Done> {
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
    fn checkpoint(&mut self, dev: &mut BlockSsd, at: Nanos, meta: &Meta) -> Result<Done> {
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
        dev.write(at, lpn, page, HostLabel::FsMetadata).map_err(|e| crate::flash::device_error("sync", "", e))
    }
}

fn read_page(dev: &mut BlockSsd, at: Nanos, lpn: u64, buf: &mut [u8]) -> Result<Nanos> {
    dev.read(at, lpn, buf, HostLabel::FsMetadata).map_err(|e| crate::flash::device_error("mount", "", e))
}

//! ZoneFs metadata on the device: a log of records in reserved metadata zones, rolled over to a
//! snapshot in the next metadata zone when the active one fills (as ZenFS's metadata zones).
//!
//! Each page starts with a 32-byte header (magic, kind, generation, sequence number = the page's
//! index in its zone, payload length, total length, CRC32C of header and payload). A zone of
//! generation `g` starts with a snapshot of the whole durable state (pages of kind snapshot) and
//! continues with commits (pages of kind log). A commit's bytes are cut into pages; its first page
//! carries the commit's total length, and replay applies a commit only once all of its pages are
//! read, so a commit is all or nothing. A zone cannot be rewritten, so every commit takes whole
//! pages (the rest of its last page is padding, counted as metadata bytes written).
//!
//! Roll-over, when a commit does not fit the active zone: finish the active zone (it stays
//! readable, and stops holding an active-zone token), reset the next metadata zone if it holds an
//! older generation, write the snapshot of generation `g + 1` there, and only then reset the old
//! zone. A power cut at any point leaves at least one complete snapshot: mount takes the zone with
//! the newest complete snapshot, replays its commits in page order until the first page that is
//! missing, stale, damaged or ends a commit early, and resets the other metadata zones.

use flashsim::{HostLabel, Nanos, ZoneState, ZonedSsd};

use super::Extent;
use crate::error::{FsError, Result};
use crate::flash::page_header::{self, Header, HEADER};
use crate::flash::records::{decode_all, encode, DurableMeta, Record};

const MAGIC: u32 = 0x5a4e_5346; // "ZNSF"
const KIND_SNAPSHOT: u8 = 1;
const KIND_LOG: u8 = 2;

fn write_header(page: &mut [u8], h: &Header) {
    page_header::write(page, MAGIC, h);
}

fn read_header(page: &[u8]) -> Option<Header> {
    page_header::read(page, MAGIC)
}

/// The metadata zones and where the log has got.
pub struct Journal {
    zones: Vec<u32>,
    active: usize,
    generation: u64,
    /// Next page of the active zone.
    next_page: u64,
    page_size: usize,
    capacity_pages: u64,
    /// Replay stopped before the zone's write pointer: the next commit rolls over.
    must_roll: bool,
    /// Metadata pages written (host writes of cause "fs metadata").
    pub pages_written: u64,
    /// Metadata zones reset.
    pub resets: u64,
}

impl Journal {
    /// Writes an empty file system: generation 1 in the first metadata zone (all of them are
    /// reset first).
    pub fn format(dev: &mut ZonedSsd, at: Nanos, zones: Vec<u32>) -> Result<(Journal, Nanos)> {
        let mut j = Journal::new(dev, zones);
        let mut done = at;
        for i in 0..j.zones.len() {
            done = done.max(j.reset(dev, at, i)?);
        }
        j.active = j.zones.len() - 1; // the roll-over goes to the first zone
        let done = j.roll(dev, done, &DurableMeta::<Extent>::empty())?;
        Ok((j, done))
    }

    /// A journal that knows nothing yet (replaced by `format` or `recover`).
    pub fn unloaded(zones: Vec<u32>) -> Journal {
        Journal {
            zones,
            active: 0,
            generation: 0,
            next_page: 0,
            page_size: 512,
            capacity_pages: 0,
            must_roll: true,
            pages_written: 0,
            resets: 0,
        }
    }

    fn new(dev: &ZonedSsd, zones: Vec<u32>) -> Journal {
        Journal {
            zones,
            active: 0,
            generation: 0,
            next_page: 0,
            page_size: dev.page_size() as usize,
            capacity_pages: dev.zone_capacity_pages(),
            must_roll: false,
            pages_written: 0,
            resets: 0,
        }
    }

    fn payload(&self) -> usize {
        self.page_size - HEADER
    }

    /// Reads the newest complete snapshot and the commits after it; resets stale metadata zones.
    pub fn recover(dev: &mut ZonedSsd, at: Nanos, zones: Vec<u32>) -> Result<(Journal, DurableMeta<Extent>, Nanos)> {
        let mut j = Journal::new(dev, zones);
        let mut t = at;
        let mut best: Option<(u64, usize, Vec<Record<Extent>>, u64)> = None; // generation, zone index, records, pages
        for i in 0..j.zones.len() {
            let (stream, gen, pages, done) = j.read_run(dev, t, i, KIND_SNAPSHOT, None)?;
            t = done;
            let (Some(stream), Some(generation)) = (stream.into_iter().next(), gen) else { continue };
            let Some(records) = decode_all::<Extent>(&stream) else { continue };
            if best.as_ref().is_none_or(|b| generation > b.0) {
                best = Some((generation, i, records, pages));
            }
        }
        let Some((generation, active, records, snapshot_pages)) = best else {
            return Err(corrupt("no complete metadata snapshot in the metadata zones (not formatted?)"));
        };
        let mut meta = DurableMeta::<Extent>::empty();
        records.iter().for_each(|r| meta.apply(r));
        let (commits, _, end, done) = j.read_run(dev, t, active, KIND_LOG, Some((generation, snapshot_pages)))?;
        t = done;
        for c in commits {
            decode_all::<Extent>(&c)
                .ok_or_else(|| corrupt("undecodable metadata commit"))?
                .iter()
                .for_each(|r| meta.apply(r));
        }
        j.active = active;
        j.generation = generation;
        j.next_page = end;
        j.must_roll = end < j.write_pointer(dev, active)?;
        for i in 0..j.zones.len() {
            if i != active {
                t = t.max(j.reset(dev, at, i)?);
            }
        }
        Ok((j, meta, t))
    }

    /// Reads the run of pages of `kind` in metadata zone `i`: from page 0 for a snapshot (any
    /// generation), or from `after.1` with generation `after.0` for commits. Returns the complete
    /// streams (one per snapshot or commit), the generation, the page after the last complete one,
    /// and the time the reads complete.
    #[allow(clippy::type_complexity)]
    fn read_run(
        &self,
        dev: &mut ZonedSsd,
        at: Nanos,
        i: usize,
        kind: u8,
        after: Option<(u64, u64)>,
    ) -> Result<(Vec<Vec<u8>>, Option<u64>, u64, Nanos)> {
        let zone = self.zones[i];
        let wp = self.write_pointer(dev, i)?;
        let (mut generation, first) = match after {
            Some((g, p)) => (Some(g), p),
            None => (None, 0),
        };
        let mut page = vec![0u8; self.page_size];
        let mut t = at;
        let mut out = Vec::new();
        let mut end = first;
        let mut cur: Option<(Vec<u8>, usize)> = None; // bytes so far, total
        let mut p = first;
        while p < wp {
            t = dev.read(t, zone, p, &mut page, HostLabel::FsMetadata).map_err(|e| device_error("mount", e))?;
            let Some(h) = read_header(&page) else { break };
            if h.kind != kind || h.seq as u64 != p || generation.is_some_and(|g| g != h.generation) {
                break;
            }
            generation = Some(h.generation);
            let body = &page[HEADER..HEADER + h.payload_len as usize];
            match (&mut cur, h.total_len) {
                (None, 0) => break, // a continuation without its first page
                (None, total) => cur = Some((body.to_vec(), total as usize)),
                (Some(_), t) if t != 0 => break, // a new commit before the last one ended
                (Some((bytes, _)), _) => bytes.extend_from_slice(body),
            }
            p += 1;
            if let Some((bytes, total)) = cur.take() {
                if bytes.len() >= total {
                    if bytes.len() > total {
                        break;
                    }
                    out.push(bytes);
                    end = p;
                    if kind == KIND_SNAPSHOT {
                        break; // one snapshot per zone
                    }
                } else {
                    cur = Some((bytes, total));
                }
            }
        }
        Ok((out, generation, end, t))
    }

    fn write_pointer(&self, dev: &ZonedSsd, i: usize) -> Result<u64> {
        let info = dev.zone(self.zones[i]).map_err(|e| device_error("mount", e))?;
        Ok(info.write_pointer)
    }

    /// Makes `records` durable; `meta` is the durable state with them already applied (written
    /// whole as the next snapshot when the active zone is full).
    pub fn commit(
        &mut self,
        dev: &mut ZonedSsd,
        at: Nanos,
        records: &[Record<Extent>],
        meta: &DurableMeta<Extent>,
    ) -> Result<Nanos> {
        let mut bytes = Vec::new();
        for r in records {
            encode(r, &mut bytes);
        }
        if bytes.is_empty() {
            return Ok(at);
        }
        let pages = bytes.len().div_ceil(self.payload()) as u64;
        if self.must_roll || self.next_page + pages > self.capacity_pages {
            return self.roll(dev, at, meta);
        }
        let data = self.pages(KIND_LOG, self.generation, self.next_page, &bytes);
        let zone = self.zones[self.active];
        let done =
            dev.write(at, zone, self.next_page, &data, HostLabel::FsMetadata).map_err(|e| device_error("sync", e))?;
        self.next_page += pages;
        self.pages_written += pages;
        Ok(done)
    }

    /// Cuts `bytes` into pages of `kind` numbered from `seq`.
    fn pages(&self, kind: u8, generation: u64, seq: u64, bytes: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, chunk) in bytes.chunks(self.payload()).enumerate() {
            let mut page = vec![0u8; self.page_size];
            page[HEADER..HEADER + chunk.len()].copy_from_slice(chunk);
            let h = Header {
                kind,
                generation,
                seq: (seq + i as u64) as u32,
                payload_len: chunk.len() as u32,
                total_len: if i == 0 { bytes.len() as u32 } else { 0 },
            };
            write_header(&mut page, &h);
            out.extend_from_slice(&page);
        }
        out
    }

    /// Writes `meta` as the snapshot of the next generation in the next metadata zone, then
    /// resets the zone it replaces (see the module docs for the order).
    fn roll(&mut self, dev: &mut ZonedSsd, at: Nanos, meta: &DurableMeta<Extent>) -> Result<Nanos> {
        let mut bytes = Vec::new();
        for r in meta.snapshot() {
            encode(&r, &mut bytes);
        }
        let pages = bytes.len().div_ceil(self.payload()) as u64;
        if pages > self.capacity_pages {
            return Err(FsError::NoSpace {
                op: "sync",
                path: String::new(),
                detail: format!(
                    "the file-system metadata ({} bytes) outgrew a metadata zone of {} pages",
                    bytes.len(),
                    self.capacity_pages
                ),
            });
        }
        let old = self.active;
        let next = (old + 1) % self.zones.len();
        let old_state = dev.zone(self.zones[old]).map_err(|e| device_error("sync", e))?.state;
        if !matches!(old_state, ZoneState::Empty | ZoneState::Full) && self.generation > 0 {
            dev.finish(self.zones[old]).map_err(|e| device_error("sync", e))?;
        }
        let mut t = at;
        t = self.reset(dev, t, next)?; // a no-op when it is empty
        let generation = self.generation + 1;
        let data = self.pages(KIND_SNAPSHOT, generation, 0, &bytes);
        let done =
            dev.write(t, self.zones[next], 0, &data, HostLabel::FsMetadata).map_err(|e| device_error("sync", e))?;
        self.pages_written += pages;
        self.generation = generation;
        self.active = next;
        self.next_page = pages;
        self.must_roll = false;
        let done = if old != next && self.generation > 1 { done.max(self.reset(dev, done, old)?) } else { done };
        Ok(done)
    }

    fn reset(&mut self, dev: &mut ZonedSsd, at: Nanos, i: usize) -> Result<Nanos> {
        let zone = self.zones[i];
        if dev.zone(zone).map_err(|e| device_error("mount", e))?.state == ZoneState::Empty {
            return Ok(at);
        }
        self.resets += 1;
        dev.reset_labelled(at, zone, HostLabel::FsMetadata).map_err(|e| device_error("sync", e))
    }
}

fn device_error(op: &'static str, e: flashsim::FlashError) -> FsError {
    crate::flash::device_error(op, "(metadata)", e)
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
    use crate::flash::zone::extent::Extent;
    use crate::fs::WriteHint;
    use flashsim::{Geometry, Timing, ZonedConfig};

    /// 512-byte pages, zones of 16 pages (4 planes x 4 pages), 8 zones; metadata in zones 0 and 1.
    fn device() -> ZonedSsd {
        let g = Geometry {
            channels: 2,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 2,
            blocks_per_plane: 8,
            pages_per_block: 4,
            page_size: 512,
            oob_size: 16,
        };
        let t = Timing { read_ns: 1_000, program_ns: 10_000, erase_ns: 100_000, transfer_ps_per_byte: 0 };
        ZonedSsd::new(ZonedConfig::new(g, t, 16 * 512)).unwrap()
    }

    fn inode(ino: u64) -> Record<Extent> {
        let extents = vec![Extent { zone: 3, start: ino as u32, bytes: 100 }];
        Record::Inode { ino, len: 100, hint: WriteHint::Flush, items: extents }
    }

    /// Commits one inode record at a time until the journal has rolled `rolls` times.
    fn fill(dev: &mut ZonedSsd, rolls: u64) -> (Journal, DurableMeta<Extent>) {
        let (mut j, _) = Journal::format(dev, 0, vec![0, 1]).unwrap();
        let mut meta = DurableMeta::<Extent>::empty();
        let mut ino = 1;
        while j.generation < 1 + rolls {
            let r = vec![inode(ino)];
            r.iter().for_each(|x| meta.apply(x));
            j.commit(dev, 0, &r, &meta).unwrap();
            ino += 1;
        }
        (j, meta)
    }

    #[test]
    fn commits_and_roll_overs_replay_to_the_same_state() {
        let mut dev = device();
        let (j, meta) = fill(&mut dev, 3);
        assert!(meta.inodes.len() > 20);
        let (r, got, _) = Journal::recover(&mut dev, 0, vec![0, 1]).unwrap();
        assert_eq!(got, meta);
        assert_eq!((r.generation, r.active, r.next_page), (j.generation, j.active, j.next_page));
        assert_eq!(dev.zone(1 - j.active as u32).unwrap().state, ZoneState::Empty, "the old zone was reset");
    }

    #[test]
    fn a_newer_complete_snapshot_wins_and_an_incomplete_one_is_ignored() {
        // A power cut after the new snapshot was written but before the old zone was reset.
        let mut dev = device();
        let (j, mut meta) = fill(&mut dev, 0);
        let next = 1 - j.active;
        (900..920).for_each(|i| meta.apply(&inode(i)));
        let mut bytes = Vec::new();
        meta.snapshot().iter().for_each(|r| encode(r, &mut bytes));
        let pages = j.pages(KIND_SNAPSHOT, j.generation + 1, 0, &bytes);
        assert!(pages.len() > 512, "a snapshot of several pages");
        dev.write(0, j.zones[next], 0, &pages, HostLabel::FsMetadata).unwrap();
        let (r, got, _) = Journal::recover(&mut dev, 0, vec![0, 1]).unwrap();
        assert_eq!((r.active, got.clone()), (next, meta));
        assert_eq!(dev.zone(j.zones[j.active]).unwrap().state, ZoneState::Empty, "the stale zone is reset");

        // A power cut in the middle of a snapshot: only its first page made it.
        let mut dev = device();
        let (j, meta) = fill(&mut dev, 0);
        let mut bigger = meta.clone();
        (900..920).for_each(|i| bigger.apply(&inode(i)));
        let mut bytes = Vec::new();
        bigger.snapshot().iter().for_each(|r| encode(r, &mut bytes));
        let pages = j.pages(KIND_SNAPSHOT, j.generation + 1, 0, &bytes);
        dev.write(0, j.zones[1 - j.active], 0, &pages[..512], HostLabel::FsMetadata).unwrap();
        let (r, got, _) = Journal::recover(&mut dev, 0, vec![0, 1]).unwrap();
        assert_eq!((r.active, got), (j.active, meta), "the older complete snapshot and its log");
    }

    #[test]
    fn a_torn_commit_is_dropped_and_the_next_commit_rolls_over() {
        let mut dev = device();
        let (j, meta) = fill(&mut dev, 0);
        // The first page of a two-page commit.
        let records: Vec<Record<Extent>> = (500..520).map(inode).collect();
        let mut bytes = Vec::new();
        records.iter().for_each(|r| encode(r, &mut bytes));
        let pages = j.pages(KIND_LOG, j.generation, j.next_page, &bytes);
        assert!(pages.len() >= 1024);
        dev.write(0, j.zones[j.active], j.next_page, &pages[..512], HostLabel::FsMetadata).unwrap();
        let (mut r, got, _) = Journal::recover(&mut dev, 0, vec![0, 1]).unwrap();
        assert_eq!(got, meta, "none of the torn commit's records");
        assert!(r.must_roll);
        let more = vec![inode(600)];
        let mut after = got;
        more.iter().for_each(|x| after.apply(x));
        r.commit(&mut dev, 0, &more, &after).unwrap();
        assert_eq!(r.generation, j.generation + 1);
        let (_, again, _) = Journal::recover(&mut dev, 0, vec![0, 1]).unwrap();
        assert_eq!(again, after);
    }
}

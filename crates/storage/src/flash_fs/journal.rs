//! The flash file system's journal: a log of records in a placement's metadata regions (zones
//! of a ZNS device, as ZenFS's metadata zones; LPN ranges of a block device), rolled over to a
//! snapshot in the next region when the active one fills.
//!
//! Each page starts with a [`page_header`] (the sequence number is the page's index in its
//! region). A region of generation `g` starts with a snapshot of the whole durable state (pages of
//! kind snapshot) and continues with commits (pages of kind log). A commit's bytes are cut into
//! pages; its first page carries the commit's total length, and replay applies a commit only once
//! all of its pages are read, so a commit is all or nothing. A region is written once, in order
//! (a zone cannot be rewritten, and a block device's region is used the same way), so every commit
//! takes whole pages (the rest of its last page is padding, counted as metadata bytes written).
//!
//! Roll-over, when a commit does not fit the active region: close the active region (a zone is
//! finished: it stays readable and gives back its active-zone token), reset the next region if it
//! holds an older generation, write the snapshot of generation `g + 1` there, and only then reset
//! the old region. A power cut at any point leaves at least one complete snapshot: mount takes the
//! region with the newest complete snapshot, replays its commits in page order until the first
//! page that is missing, stale, damaged or ends a commit early, and resets the other regions. When
//! replay stopped before the region's last written page (a torn commit), the next commit rolls
//! over, so no page is written twice.

use flashsim::Nanos;

use super::corrupt;
use super::page_header::{self, Header, HEADER};
use super::records::{decode_all, encode, DurableMeta, MapItem, Record};
use crate::error::{FsError, Result};

/// A complete snapshot found at mount: generation, region, records, pages.
type Snapshot<I> = (u64, usize, Vec<Record<I>>, u64);

const MAGIC: u32 = 0x4a4c_4b46; // "FKLJ"
const KIND_SNAPSHOT: u8 = 1;
const KIND_LOG: u8 = 2;

/// The metadata regions a placement gives the journal, each written from its start in order.
pub trait MetaRegions: Send {
    type Device;
    /// The map item of the placement's inode records.
    type Item: MapItem;
    fn count(&self) -> usize;
    fn page_size(&self, dev: &Self::Device) -> usize;
    fn capacity_pages(&self, dev: &Self::Device) -> u64;
    /// Pages written in region `i` from its start (a zone's write pointer; on a block device, up
    /// to its last mapped page).
    fn written_pages(&self, dev: &Self::Device, i: usize) -> Result<u64>;
    fn read(&self, dev: &mut Self::Device, at: Nanos, i: usize, page: u64, buf: &mut [u8]) -> Result<Nanos>;
    fn write(&self, dev: &mut Self::Device, at: Nanos, i: usize, page: u64, data: &[u8]) -> Result<Nanos>;
    /// Erases region `i` (a zone reset, a trim); `None` when nothing was written in it.
    fn reset(&self, dev: &mut Self::Device, at: Nanos, i: usize) -> Result<Option<Nanos>>;
    /// No more writes go to region `i` until its reset (a zone is finished).
    fn close(&self, dev: &mut Self::Device, i: usize) -> Result<()>;
}

fn write_header(page: &mut [u8], h: &Header) {
    page_header::write(page, MAGIC, h);
}

fn read_header(page: &[u8]) -> Option<Header> {
    page_header::read(page, MAGIC)
}

/// The metadata regions and where the log has got.
pub struct Journal<R> {
    regions: R,
    active: usize,
    generation: u64,
    /// Next page of the active region.
    next_page: u64,
    page_size: usize,
    capacity_pages: u64,
    /// Replay stopped before the region's last written page: the next commit rolls over.
    must_roll: bool,
    /// Metadata pages written (host writes of cause "fs metadata").
    pub pages_written: u64,
    /// Metadata regions reset.
    pub resets: u64,
}

impl<R: MetaRegions> Journal<R> {
    /// Writes an empty file system: generation 1 in the first metadata region (all of them are
    /// reset first).
    pub fn format(dev: &mut R::Device, at: Nanos, regions: R) -> Result<(Self, Nanos)> {
        let mut j = Journal::new(dev, regions);
        let mut done = at;
        for i in 0..j.regions.count() {
            done = done.max(j.reset(dev, at, i)?);
        }
        j.active = j.regions.count() - 1; // the roll-over goes to the first region
        let done = j.roll(dev, done, &DurableMeta::<R::Item>::empty())?;
        Ok((j, done))
    }

    /// A journal that knows nothing yet (replaced by `format` or `recover`).
    pub fn unloaded(regions: R) -> Self {
        Journal {
            regions,
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

    fn new(dev: &R::Device, regions: R) -> Self {
        Journal {
            page_size: regions.page_size(dev),
            capacity_pages: regions.capacity_pages(dev),
            regions,
            active: 0,
            generation: 0,
            next_page: 0,
            must_roll: false,
            pages_written: 0,
            resets: 0,
        }
    }

    fn payload(&self) -> usize {
        self.page_size - HEADER
    }

    /// Reads the newest complete snapshot and the commits after it; resets stale metadata regions.
    pub fn recover(dev: &mut R::Device, at: Nanos, regions: R) -> Result<(Self, DurableMeta<R::Item>, Nanos)> {
        let mut j = Journal::new(dev, regions);
        let mut t = at;
        // generation, region index, records, pages
        let mut best: Option<Snapshot<R::Item>> = None;
        for i in 0..j.regions.count() {
            let (stream, gen, pages, done) = j.read_run(dev, t, i, KIND_SNAPSHOT, None)?;
            t = done;
            let (Some(stream), Some(generation)) = (stream.into_iter().next(), gen) else { continue };
            let Some(records) = decode_all::<R::Item>(&stream) else { continue };
            if best.as_ref().is_none_or(|b| generation > b.0) {
                best = Some((generation, i, records, pages));
            }
        }
        let Some((generation, active, records, snapshot_pages)) = best else {
            return Err(corrupt("no complete metadata snapshot in the metadata regions (not formatted?)"));
        };
        let mut meta = DurableMeta::<R::Item>::empty();
        records.iter().for_each(|r| meta.apply(r));
        let (commits, _, end, done) = j.read_run(dev, t, active, KIND_LOG, Some((generation, snapshot_pages)))?;
        t = done;
        for c in commits {
            decode_all::<R::Item>(&c)
                .ok_or_else(|| corrupt("undecodable metadata commit"))?
                .iter()
                .for_each(|r| meta.apply(r));
        }
        j.active = active;
        j.generation = generation;
        j.next_page = end;
        j.must_roll = end < j.regions.written_pages(dev, active)?;
        for i in 0..j.regions.count() {
            if i != active {
                t = t.max(j.reset(dev, at, i)?);
            }
        }
        Ok((j, meta, t))
    }

    /// Reads the run of pages of `kind` in metadata region `i`: from page 0 for a snapshot (any
    /// generation), or from `after.1` with generation `after.0` for commits. Returns the complete
    /// streams (one per snapshot or commit), the generation, the page after the last complete one,
    /// and the time the reads complete.
    #[allow(clippy::type_complexity)]
    fn read_run(
        &self,
        dev: &mut R::Device,
        at: Nanos,
        i: usize,
        kind: u8,
        after: Option<(u64, u64)>,
    ) -> Result<(Vec<Vec<u8>>, Option<u64>, u64, Nanos)> {
        let wp = self.regions.written_pages(dev, i)?;
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
            t = self.regions.read(dev, t, i, p, &mut page)?;
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
                        break; // one snapshot per region
                    }
                } else {
                    cur = Some((bytes, total));
                }
            }
        }
        Ok((out, generation, end, t))
    }

    /// Makes `records` durable; `meta` is the durable state with them already applied (written
    /// whole as the next snapshot when the active region is full).
    pub fn commit(
        &mut self,
        dev: &mut R::Device,
        at: Nanos,
        records: &[Record<R::Item>],
        meta: &DurableMeta<R::Item>,
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
        let done = self.regions.write(dev, at, self.active, self.next_page, &data)?;
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

    /// Writes `meta` as the snapshot of the next generation in the next metadata region,
    /// then resets the region it replaces (see the module docs for the order).
    fn roll(&mut self, dev: &mut R::Device, at: Nanos, meta: &DurableMeta<R::Item>) -> Result<Nanos> {
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
                    "the file-system metadata ({} bytes) outgrew a metadata region of {} pages",
                    bytes.len(),
                    self.capacity_pages
                ),
            });
        }
        let old = self.active;
        let next = (old + 1) % self.regions.count();
        if self.generation > 0 {
            self.regions.close(dev, old)?;
        }
        let mut t = at;
        t = self.reset(dev, t, next)?; // a no-op when it is empty
        let generation = self.generation + 1;
        let data = self.pages(KIND_SNAPSHOT, generation, 0, &bytes);
        let done = self.regions.write(dev, t, next, 0, &data)?;
        self.pages_written += pages;
        self.generation = generation;
        self.active = next;
        self.next_page = pages;
        self.must_roll = false;
        let done = if old != next && self.generation > 1 { done.max(self.reset(dev, done, old)?) } else { done };
        Ok(done)
    }

    fn reset(&mut self, dev: &mut R::Device, at: Nanos, i: usize) -> Result<Nanos> {
        let done = self.regions.reset(dev, at, i)?;
        self.resets += done.is_some() as u64;
        Ok(done.unwrap_or(at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flash_fs::zone::{Extent, ZoneRegions};
    use crate::fs::WriteHint;
    use flashsim::{Geometry, HostLabel, Timing, ZoneState, ZonedConfig, ZonedSsd};

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

    fn regions() -> ZoneRegions {
        ZoneRegions { zones: vec![0, 1] }
    }

    fn inode(ino: u64) -> Record<Extent> {
        let extents = vec![Extent { zone: 3, start: ino as u32, bytes: 100 }];
        Record::Inode { ino, len: 100, hint: WriteHint::Flush, items: extents }
    }

    /// Commits one inode record at a time until the journal has rolled `rolls` times.
    fn fill(dev: &mut ZonedSsd, rolls: u64) -> (Journal<ZoneRegions>, DurableMeta<Extent>) {
        let (mut j, _) = Journal::format(dev, 0, regions()).unwrap();
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
        let (r, got, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
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
        dev.write(0, j.regions.zones[next], 0, &pages, HostLabel::FsMetadata).unwrap();
        let (r, got, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
        assert_eq!((r.active, got.clone()), (next, meta));
        assert_eq!(dev.zone(j.regions.zones[j.active]).unwrap().state, ZoneState::Empty, "the stale zone is reset");

        // A power cut in the middle of a snapshot: only its first page made it.
        let mut dev = device();
        let (j, meta) = fill(&mut dev, 0);
        let mut bigger = meta.clone();
        (900..920).for_each(|i| bigger.apply(&inode(i)));
        let mut bytes = Vec::new();
        bigger.snapshot().iter().for_each(|r| encode(r, &mut bytes));
        let pages = j.pages(KIND_SNAPSHOT, j.generation + 1, 0, &bytes);
        dev.write(0, j.regions.zones[1 - j.active], 0, &pages[..512], HostLabel::FsMetadata).unwrap();
        let (r, got, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
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
        dev.write(0, j.regions.zones[j.active], j.next_page, &pages[..512], HostLabel::FsMetadata).unwrap();
        let (mut r, got, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
        assert_eq!(got, meta, "none of the torn commit's records");
        assert!(r.must_roll);
        let more = vec![inode(600)];
        let mut after = got;
        more.iter().for_each(|x| after.apply(x));
        r.commit(&mut dev, 0, &more, &after).unwrap();
        assert_eq!(r.generation, j.generation + 1);
        let (_, again, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
        assert_eq!(again, after);
    }
}

/// The same journal on a block device's LPN regions.
#[cfg(test)]
mod block_tests {
    use super::*;
    use crate::flash_fs::block::{BlockRegions, LpnRun};
    use flashsim::{BlockSsd, Ftl, HostLabel, Preset, SsdConfig};

    fn regions() -> BlockRegions {
        BlockRegions { pages: 8 }
    }

    fn inode(ino: u64) -> Record<LpnRun> {
        Record::Inode { ino, len: 100, hint: crate::fs::WriteHint::None, items: vec![(100 + ino as u32, 1)] }
    }

    #[test]
    fn commits_roll_overs_and_a_torn_commit_replay_on_lpn_regions() {
        let mut dev: Box<dyn Ftl> =
            Box::new(BlockSsd::new(SsdConfig::from_preset(Preset::Femu, Some(64 << 20)).unwrap()).unwrap());
        let (mut j, _) = Journal::format(&mut dev, 0, regions()).unwrap();
        let mut meta = DurableMeta::<LpnRun>::empty();
        let mut ino = 1;
        while j.generation < 4 {
            let r = vec![inode(ino)];
            r.iter().for_each(|x| meta.apply(x));
            j.commit(&mut dev, 0, &r, &meta).unwrap();
            ino += 1;
        }
        let (r, got, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
        assert_eq!(got, meta);
        assert_eq!((r.generation, r.active, r.next_page), (j.generation, j.active, j.next_page));
        assert_eq!(regions().written_pages(&dev, 1 - j.active).unwrap(), 0, "the old region was trimmed");

        // The first page of a two-page commit: dropped, and the next commit rolls over.
        let records: Vec<Record<LpnRun>> = (500..700).map(inode).collect();
        let mut bytes = Vec::new();
        records.iter().for_each(|r| encode(r, &mut bytes));
        let pages = j.pages(KIND_LOG, j.generation, j.next_page, &bytes);
        let ps = dev.page_size() as usize;
        assert!(pages.len() >= 2 * ps);
        let base = (j.active as u64) * 8;
        dev.write(0, base + j.next_page, &pages[..ps], HostLabel::FsMetadata).unwrap();
        let (mut r, got, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
        assert_eq!(got, meta, "none of the torn commit's records");
        assert!(r.must_roll);
        let more = vec![inode(900)];
        more.iter().for_each(|x| meta.apply(x));
        r.commit(&mut dev, 0, &more, &meta).unwrap();
        assert_eq!(r.generation, j.generation + 1);
        let (_, again, _) = Journal::recover(&mut dev, 0, regions()).unwrap();
        assert_eq!(again, meta);
    }
}

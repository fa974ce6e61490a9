//! LSM in the device: seed 002's baseline, "LevelDB integrated into the KV-SSD", as an FTL of its
//! own on flashsim's media layer (the same one PLSC uses: [`crate::flash`]).
//!
//! - Levels L0..L6 (`levels`), LevelDB's leveled compaction (see `compaction`): L0 is compacted
//!   when it holds 4 SSTs (8 MB), L1 may hold 10 MB, each level after it 10 times more; SSTs of
//!   2 MB. A put or delete goes into the memtable (device DRAM, one SST's worth); a record that
//!   does not fit makes the memtable flush first, as one L0 SST of its records sorted by key. A
//!   delete writes a tombstone (`record`'s `vlen` = `TOMBSTONE`), dropped by the compaction that
//!   finds no older version can be below it.
//! - An SST is a run of flash pages holding its sorted records back to back (records straddle
//!   pages). The device keeps, in DRAM, each SST's key range and page list (LevelDB's MANIFEST,
//!   `version`) and, with `filters` (the default), a bloom filter of its keys (`bloom`: LevelDB's
//!   filter policy at 10 bits per key, about 1 % false positives); no block index or cache: **a
//!   lookup that consults an SST reads the whole SST**, every page of it (128 pages of 16 KiB for
//!   2 MB), as the paper states; the values are decoded from those pages. A lookup checks the
//!   memtable, then every L0 SST whose range covers the key, newest first, then the one SST of
//!   each level L1..L6 whose range covers it, one SST after another, stopping at the first version
//!   found (a tombstone answers "none"). With `filters`, an SST is consulted only when its filter
//!   also says the key may be in it (a false positive costs the whole SST); without, every
//!   covering SST is (our reading before issue 28, which read 2.4-3.7 SSTs per get in seed 002's
//!   repro where the seed's figures imply about one).
//! - Layout of an SST's pages (ours, the seed is silent): with `stripe` = true (the default, since
//!   issue 28) its pages go round-robin over all planes, one round of at most #planes pages
//!   programmed together, PLSC's layout and where SSDSim's dynamic allocation (its recommended
//!   setting, which the seed kept) puts consecutive pages. With `stripe` = false an SST's pages are
//!   programmed one after another into one plane's open block (and the next block of that plane
//!   when it fills), the next SST going to the next plane in stripe order, so one SST's 128
//!   programs (and, for a lookup, its 128 reads) queue on one die: our reading before issue 28.
//! - GC: the shared mechanism ([`crate::flash::gc`]) with PLSC's policy: while fewer pages than
//!   `gc_threshold_pages` are free (after each flush and its compactions), and whenever a plane has
//!   no page for an SST; GC's owner map is the PPN-to-SST map.
//!
//! Time: a put (or the tombstone of a delete) is complete once it is in the memtable, except the
//! one that makes the memtable flush: it completes when the flush, the compactions and the GC the
//! flush set off are done ([`LsmStats`] says how much of it was compaction). A get or an exist
//! completes when its SST reads are done (none if the memtable answers). A delete looks the key up
//! first (the `KvDevice` contract reports whether it was there): ours, it costs a get's reads, and
//! a key not found writes no tombstone. Compaction reads its input SSTs one after another, then
//! programs its output SSTs one after another (LevelDB compacts in one thread, one file at a time).
//! Host CPU time is not modelled.
//!
//! Accounting: the flush's programs are `Cause::Host(HostLabel::Flush)`; lookups' reads are host
//! (`Cause::HOST`); compaction's reads and programs are `Cause::DeviceCompaction { level }` with
//! the level of its output; GC's copybacks and erases are `Cause::Gc`.
//!
//! Power cuts: the memtable and the MANIFEST (levels, key ranges, page lists, PPN-to-SST map) live
//! in device DRAM and are not recovered; as for PLSC, after a power cut the device's contents are
//! lost, and no power-cut operation is offered.
//!
//! Errors: oversized or empty keys and oversized values change nothing. A full device
//! ([`KvError::DeviceFull`]) fails the request that needed the page; a flush that fails keeps the
//! memtable, a compaction that fails keeps its inputs (and drops the outputs it had written).

mod bloom;
mod compaction;
mod config;
mod memtable;
mod stats;
mod version;

pub use bloom::Bloom;
pub use config::LsmConfig;
pub use stats::LsmStats;

use flashsim::{Cause, HostLabel, HostOp, Media, Nanos};

use crate::device::{Completed, DeviceWork, KvDevice};
use crate::error::{Inconsistency, KvError, Result};
use crate::flash::{record, Flash, GcWork};
use memtable::Memtable;
use version::Version;

/// What the device tells of one SST (for tests and reports).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SstInfo {
    pub id: u32,
    pub smallest: Vec<u8>,
    pub largest: Vec<u8>,
    /// Bytes of records.
    pub bytes: u64,
    /// Its pages, in byte order.
    pub ppns: Vec<u32>,
}

/// The LSM-in-device baseline (`lsm-in-device`). Keys are 1 to `max_key_size` bytes (255 by
/// default); values up to what fits an SST beside the record header and the largest key.
pub struct LsmInDevice {
    cfg: LsmConfig,
    flash: Flash,
    version: Version,
    memtable: Memtable,
    stats: LsmStats,
    /// Planes in the order SSTs (or, striped, their pages) go to them, and the next one.
    stripe: Vec<u32>,
    cursor: usize,
}

impl LsmInDevice {
    /// An erased device.
    pub fn new(cfg: LsmConfig) -> Result<LsmInDevice> {
        cfg.validate()?;
        let media = Media::new(&cfg.media)?;
        let geo = media.geometry().clone();
        Ok(LsmInDevice {
            version: Version::new(cfg.levels, geo.total_pages()),
            memtable: Memtable::default(),
            stats: LsmStats::new(cfg.levels),
            stripe: geo.stripe_order(),
            cursor: 0,
            flash: Flash::new(media, cfg.copyback),
            cfg,
        })
    }

    pub fn config(&self) -> &LsmConfig {
        &self.cfg
    }

    /// The NAND array under the device (counters, wear, latency histograms, page states).
    pub fn media(&self) -> &Media {
        &self.flash.media
    }

    pub fn stats(&self) -> &LsmStats {
        &self.stats
    }

    /// The SSTs of `level`: L0 oldest first, the others by key.
    pub fn level_ssts(&self, level: u8) -> Vec<SstInfo> {
        self.version
            .level(level)
            .map(|s| SstInfo {
                id: s.id,
                smallest: s.smallest.to_vec(),
                largest: s.largest.to_vec(),
                bytes: s.used as u64,
                ppns: s.ppns.clone(),
            })
            .collect()
    }

    /// Bytes of records in `level`.
    pub fn level_bytes(&self, level: u8) -> u64 {
        self.version.bytes(level)
    }

    /// Bytes of records in the memtable.
    pub fn memtable_bytes(&self) -> usize {
        self.memtable.bytes()
    }

    /// Flushes the memtable as an L0 SST (if it holds anything), then runs the compactions and GC
    /// that this calls for. Returns when all of it is done.
    fn flush_dram(&mut self, at: Nanos) -> Result<Nanos> {
        let Some((data, smallest, largest)) = self.memtable.encode() else {
            return Ok(at);
        };
        let (smallest, largest) = (smallest.to_vec(), largest.to_vec());
        let (id, flushed) = self.write_sst(at, 0, &data, &smallest, &largest, Cause::Host(HostLabel::Flush))?;
        self.version.install(id);
        self.memtable.clear();
        self.stats.flushes += 1;
        let compacted = self.compact(flushed)?;
        self.stats.compaction_ns += compacted - flushed;
        let work = self.flash.collect_while_low(self.cfg.gc_threshold_pages, &mut self.version, compacted)?;
        self.add_gc(work);
        self.stats.held_ns += work.done - flushed;
        Ok(work.done)
    }

    fn add_gc(&mut self, work: GcWork) {
        self.stats.gc_runs += work.victims;
        self.stats.gc_moved_pages += work.moved_pages;
        self.stats.gc_ns += work.ns;
    }

    /// Programs `data` (sorted records) as a new SST of `level`, not yet installed in it, from
    /// `at`: one plane's pages one after another, or striped (module docs). Returns its number and
    /// when its last page is programmed. On failure nothing of it is left.
    fn write_sst(
        &mut self,
        at: Nanos,
        level: u8,
        data: &[u8],
        smallest: &[u8],
        largest: &[u8],
        cause: Cause,
    ) -> Result<(u32, Nanos)> {
        let ps = self.flash.page_size();
        let n = self.stripe.len();
        let records = directory(data)?;
        let filter = Bloom::build(records.iter().map(|(k, _)| &**k), self.cfg.bloom_bits_per_key);
        let id = self.version.create(level, smallest, largest, data.len() as u32, records, filter);
        let first_plane = self.cursor;
        let mut done = at;
        let mut gc = GcWork::default();
        let mut result = Ok(());
        // One round: one page per plane, at most #planes pages (one page when not striped).
        let per_round = if self.cfg.stripe { n * ps } else { ps };
        for (r, chunk) in data.chunks(per_round).enumerate() {
            let pages = chunk.len().div_ceil(ps);
            let planes: Vec<usize> = if self.cfg.stripe {
                (0..pages).map(|i| self.stripe[(first_plane + r * n + i) % n] as usize).collect()
            } else {
                vec![self.stripe[first_plane] as usize]
            };
            match self.flash.program_round(at, &planes, chunk, id, &mut self.version, cause, "an SST page", &mut gc) {
                Ok((ppns, programmed)) => {
                    self.version.add_pages(id, &ppns);
                    done = done.max(programmed);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        self.add_gc(gc);
        if let Err(e) = result {
            self.abort(id);
            return Err(e);
        }
        let advance = if self.cfg.stripe { data.len().div_ceil(ps) } else { 1 };
        self.cursor = (self.cursor + advance) % n;
        Ok((id, done))
    }

    /// Forgets SST `id` and invalidates its pages (an SST that failed or was compacted away).
    fn abort(&mut self, id: u32) {
        if let Some(s) = self.version.remove(id) {
            for ppn in s.ppns {
                self.flash.media.invalidate(ppn);
            }
        }
    }

    /// Reads every page of SST `id` from `at`, charged to `cause`; returns its records' bytes and
    /// when the last page is out.
    fn read_sst(&mut self, at: Nanos, id: u32, cause: Cause) -> Result<(Vec<u8>, Nanos)> {
        let s = self
            .version
            .get(id)
            .ok_or_else(|| KvError::Inconsistent { reason: format!("SST {id} is not in the MANIFEST") })?;
        let (ppns, used) = (s.ppns.clone(), s.used as usize);
        let (mut bytes, done) = self.flash.read_pages(at, &ppns, cause)?;
        bytes.truncate(used);
        Ok((bytes, done))
    }

    /// Looks `key` up from `at`: the memtable, then the SSTs whose ranges cover it (module docs).
    /// Returns its value (`None` when absent or deleted) and when the last read is done.
    fn lookup(&mut self, at: Nanos, key: &[u8]) -> Result<(Option<Vec<u8>>, Nanos)> {
        if let Some(found) = self.memtable.get(key) {
            self.stats.memtable_hits += 1;
            return Ok((found.map(<[u8]>::to_vec), at));
        }
        let mut covering: Vec<&version::Sst> = self.version.level(0).rev().filter(|s| s.covers(key)).collect();
        for level in 1..self.version.levels() {
            covering.extend(self.version.covering(level, key));
        }
        // With filters, an SST whose filter says "certainly not" is not read (its filter is in DRAM).
        let filters = self.cfg.filters;
        let candidates: Vec<u32> =
            covering.iter().filter(|s| !filters || s.filter.may_contain(key)).map(|s| s.id).collect();
        self.stats.lookup_filter_skips += (covering.len() - candidates.len()) as u64;
        let mut t = at;
        for id in candidates {
            // The device reads the whole SST (every page is charged); the simulator then finds the
            // record through its directory and decodes only the pages that hold it.
            let s =
                self.version.get(id).ok_or_else(|| KvError::Inconsistent { reason: format!("SST {id} is gone") })?;
            let reads: Vec<(u32, Nanos)> = s.ppns.iter().map(|&ppn| (ppn, t)).collect();
            let at_record = s.records.binary_search_by(|(k, _)| (**k).cmp(key)).ok().map(|i| s.records[i].1);
            t = self.flash.media.read(&reads, Cause::HOST)?;
            self.stats.lookup_ssts_read += 1;
            if let Some(offset) = at_record {
                let r = self.record_at(id, offset)?;
                return Ok((r, t));
            }
        }
        Ok((None, t))
    }

    /// The record at byte `offset` of SST `id`, from the contents of the pages that hold it
    /// (already charged): `Some(value)`, or `None` for a tombstone.
    fn record_at(&self, id: u32, offset: u32) -> Result<Option<Vec<u8>>> {
        let s = self.version.get(id).ok_or_else(|| KvError::Inconsistent { reason: format!("SST {id} is gone") })?;
        let ps = self.flash.page_size();
        let corrupt = |reason: String| KvError::CorruptSst { sst: id, reason };
        let mut bytes = Vec::new();
        let mut page = vec![0u8; ps];
        let mut next = offset as usize / ps;
        loop {
            // Pages until the record decodes whole (it may straddle several).
            let ppn =
                *s.ppns.get(next).ok_or_else(|| corrupt(format!("record at byte {offset} runs past its pages")))?;
            if !self.flash.media.contents(ppn, &mut page)? {
                return Err(KvError::Inconsistent { reason: format!("PPN {ppn} keeps no contents") });
            }
            let skip = if bytes.is_empty() { offset as usize % ps } else { 0 };
            bytes.extend_from_slice(&page[skip..]);
            next += 1;
            if let Ok(r) = record::decode(&bytes) {
                return Ok((!r.tombstone).then(|| r.value.to_vec()));
            }
            if next * ps >= s.used as usize + ps {
                return Err(corrupt(format!("record at byte {offset} does not decode")));
            }
        }
    }

    /// Puts `value` (`None`: a tombstone) into the memtable, flushing it first if the record does
    /// not fit; returns when the put is complete.
    fn put(&mut self, at: Nanos, key: &[u8], value: Option<&[u8]>) -> Result<Nanos> {
        let done = if self.memtable.bytes_after(key, value) > self.cfg.write_buffer_bytes as usize {
            self.flush_dram(at)?
        } else {
            at
        };
        self.memtable.insert(key, value);
        Ok(done)
    }

    /// Checks the device's structures against each other and the media: every SST installed in
    /// its level, its pages valid and owned by it (OOB and PPN-to-SST map), its records decoding
    /// to exactly its bytes, sorted, within its range and reaching both ends; levels 1 and up
    /// sorted and without overlaps; each level's bytes. Meant for tests.
    pub(crate) fn check_state(&self) -> std::result::Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: "lsm-in-device", what };
        let ps = self.flash.page_size();
        let mut installed = 0;
        for level in 0..self.version.levels() {
            let mut prev: Option<&[u8]> = None;
            let mut bytes = 0;
            for s in self.version.level(level) {
                installed += 1;
                bytes += s.used as u64;
                if s.level != level {
                    return Err(bad(format!("SST {} of level {} is listed in level {level}", s.id, s.level)));
                }
                if level > 0 {
                    if prev.is_some_and(|p| p >= &*s.smallest) {
                        return Err(bad(format!("level {level}: SST {} overlaps or precedes the one before", s.id)));
                    }
                    prev = Some(&s.largest);
                }
            }
            if bytes != self.version.bytes(level) {
                return Err(bad(format!(
                    "level {level}: {bytes} bytes in its SSTs, {} counted",
                    self.version.bytes(level)
                )));
            }
        }
        for s in self.version.iter() {
            if s.ppns.len() != (s.used as usize).div_ceil(ps) {
                return Err(bad(format!("SST {}: {} pages for {} bytes", s.id, s.ppns.len(), s.used)));
            }
            let mut data = vec![0u8; s.ppns.len() * ps];
            for (&ppn, page) in s.ppns.iter().zip(data.chunks_mut(ps)) {
                let owner = self.flash.media.oob(ppn).0;
                if !self.flash.media.is_valid(ppn) || owner != s.id || self.version.sst_of(ppn) != Some(s.id) {
                    return Err(bad(format!(
                        "PPN {ppn} of SST {}: OOB owner {owner}, map {:?}",
                        s.id,
                        self.version.sst_of(ppn)
                    )));
                }
                self.flash.media.contents(ppn, page).map_err(|e| bad(format!("PPN {ppn}: {e}")))?;
            }
            let mut at = 0;
            let mut last: Option<&[u8]> = None;
            while at < s.used as usize {
                let r = record::decode(&data[at..s.used as usize]).map_err(|e| bad(format!("SST {}: {e}", s.id)))?;
                if last.is_none() && r.key != &*s.smallest || last.is_some_and(|l| l >= r.key) || r.key > &*s.largest {
                    return Err(bad(format!("SST {}: key {:?} out of order or out of its range", s.id, r.key)));
                }
                last = Some(r.key);
                at += r.len();
            }
            if last != Some(&*s.largest) {
                return Err(bad(format!("SST {}: its last key is not its largest", s.id)));
            }
        }
        if installed != self.version.iter().count() {
            return Err(bad(format!("{} SSTs known, {installed} installed in levels", self.version.iter().count())));
        }
        Ok(())
    }
}

/// The directory of the sorted records of `bytes`: each key and its record's byte offset. The
/// bytes are the device's own, just merged in DRAM, so a record that does not decode is a bug.
fn directory(bytes: &[u8]) -> Result<version::Directory> {
    let mut records = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let r = record::decode(&bytes[at..])
            .map_err(|e| KvError::Inconsistent { reason: format!("an SST being written: record at byte {at}: {e}") })?;
        records.push((r.key.into(), at as u32));
        at += r.len();
    }
    Ok(records)
}

impl KvDevice for LsmInDevice {
    fn name(&self) -> &str {
        "lsm-in-device"
    }

    fn max_key_size(&self) -> usize {
        self.cfg.max_key_size
    }

    fn max_value_size(&self) -> usize {
        self.cfg.max_value_size()
    }

    fn store_valid(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>> {
        let done = self.put(at, key, Some(value))?;
        self.flash.media.record_latency(HostOp::Write, done - at);
        Ok(Completed { done, value: () })
    }

    fn retrieve_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>> {
        let before = self.stats.lookup_ssts_read;
        let (value, done) = self.lookup(at, key)?;
        self.stats.gets += 1;
        self.stats.get_ssts_read += self.stats.lookup_ssts_read - before;
        self.flash.media.record_latency(HostOp::Read, done - at);
        Ok(Completed { done, value })
    }

    fn delete_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<()>> {
        let (value, looked) = self.lookup(at, key)?;
        if value.is_none() {
            return Err(KvError::key_not_found(key, looked));
        }
        let done = self.put(looked, key, None)?;
        Ok(Completed { done, value: () })
    }

    fn exist_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>> {
        let (value, done) = self.lookup(at, key)?;
        Ok(Completed { done, value: value.is_some() })
    }

    fn flush(&mut self, at: Nanos) -> Result<Nanos> {
        self.flush_dram(at)
    }

    fn check(&self) -> std::result::Result<(), Inconsistency> {
        self.check_state()
    }

    fn describe(&self) -> String {
        let c = &self.cfg;
        format!(
            "lsm-in-device ({} levels, SST {} KiB, write buffer {} KiB, L0 at {} SSTs, L1 {} MiB x{}, {}, {}; each \
             SST consulted is read whole)",
            c.levels,
            c.sst_bytes >> 10,
            c.write_buffer_bytes >> 10,
            c.l0_compaction_trigger,
            c.l1_max_bytes >> 20,
            c.level_size_multiplier,
            if c.stripe { "SSTs striped over the planes" } else { "an SST's pages in one plane" },
            if c.filters {
                format!("a bloom filter per SST in DRAM ({} bits per key)", c.bloom_bits_per_key)
            } else {
                "no filters".to_string()
            }
        )
    }

    fn media(&self) -> &Media {
        &self.flash.media
    }

    fn work(&self) -> DeviceWork {
        let s = &self.stats;
        DeviceWork {
            flushes: s.flushes,
            compactions_by_level: s.compactions.clone(),
            compaction_ns: s.compaction_ns,
            gc_runs: s.gc_runs,
            gc_moved_pages: s.gc_moved_pages,
            gc_ns: s.gc_ns,
            held_ns: s.held_ns,
            dram_hits: s.memtable_hits,
            ssts_read_per_get: (s.gets > 0).then(|| s.get_ssts_read as f64 / s.gets as f64),
            ftl: None,
        }
    }
}

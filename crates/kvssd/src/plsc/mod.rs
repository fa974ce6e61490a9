//! PLSC-tree (seed 002): two-level key-value management inside a key-value SSD, as an FTL of its
//! own on flashsim's media layer.
//!
//! - A put appends its record (`klen | key | vlen | value`, see `record`) to the write buffer of
//!   #planes pages and its kNode to the KVbatchList. When a record does not fit, the buffer is
//!   flushed as a level-0 UST: its pages go one per plane, programmed together (same ready time),
//!   so the media overlaps them; the kNodes move into the global index (one group per key length,
//!   256 buckets each, see `index`).
//! - An update adds the old record's Len to its UST's invalid bytes (or, if the old record is still
//!   in the buffer, takes it out of the buffer). A delete removes the kNode the same way and writes
//!   no tombstone.
//! - A get of a buffered key costs no flash read; otherwise it reads only the pages of the UST that
//!   cover the record's bytes `[Offset, Offset + Len)`, and decodes the value from them.
//! - Compaction (logical reclamation, `compaction`): after a flush, while a level holds more pages
//!   than its threshold, L0 first, then L1, the UST of that level with the most invalid bytes is
//!   read and its valid records are re-put into one new L1 UST; the victim is dropped.
//! - GC (physical reclamation, `gc`): while fewer pages than the threshold are free, and whenever a
//!   plane has no page for a UST, the block with the most invalid pages is collected: its valid
//!   pages move by copyback inside their plane, the PPNtoUTID map and the UST's PPN list follow,
//!   the block is erased.
//!
//! Time: a put is complete once its record is in the write buffer (at its arrival time), except
//! the put that makes the buffer flush: it completes when the flush, the compaction and the GC the
//! flush set off are done (the paper's "real response time"; [`PlscStats`] says how much of it was
//! compaction). A get completes when its pages are read; delete and exist touch no flash and
//! complete on arrival. Host CPU time is not modelled.
//!
//! Accounting: the flush's programs and the gets' reads are host I/O (`Cause::HOST`); compaction's
//! reads and programs are `Cause::DeviceCompaction { level }` with the level of the victim (L0:
//! compaction of an L0 UST into L1; L1: of an L1 UST into L1); GC's copybacks and erases are
//! `Cause::Gc`.
//!
//! Power cuts: this model keeps the write buffer, the KVbatchList, the global index, the UST Lists
//! and the PPNtoUTID map in device DRAM, and does not recover them after a power cut; the seed is
//! silent about it. After a power cut the device's contents are lost, and no power-cut operation
//! is offered.
//!
//! Errors: oversized or empty keys and oversized values change nothing. A full device
//! ([`KvError::DeviceFull`]: a plane has no free page and no block with an invalid page) fails the
//! request that needed the page; a flush that fails keeps its records in the buffer.

mod buffer;
mod compaction;
mod config;
mod gc;
mod index;
mod knode;
mod stats;
mod ust;

pub use config::{GcScope, PlscConfig, UstPlanes};
pub use stats::PlscStats;

use flashsim::{Cause, HostOp, Media, Nanos};

use crate::device::{Completed, DeviceWork, KvDevice};
use crate::error::{Inconsistency, KvError, Result};
use crate::flash::{record, Flash, GcWork};
use buffer::WriteBuffer;
use index::GlobalIndex;
use knode::{signature, KNode};
use ust::Usts;

/// A PLSC-tree key-value SSD. Keys are 1 to `max_key_size` bytes (255 by default); values are up to
/// the write buffer's size (#planes x page size) less the record header and the largest key (512 KiB
/// less 261 bytes with the `plsc` preset): fine limits for PLSC, whose records must fit one L0 UST.
pub struct Plsc {
    cfg: PlscConfig,
    /// The media and its per-plane space, shared mechanism (`crate::flash`).
    flash: Flash,
    usts: Usts,
    index: GlobalIndex,
    buffer: WriteBuffer,
    stats: PlscStats,
    /// Planes in the order UST pages go to them (channel first), and where the next UST starts.
    stripe: Vec<u32>,
    cursor: usize,
}

impl Plsc {
    /// An erased device.
    pub fn new(cfg: PlscConfig) -> Result<Plsc> {
        cfg.validate()?;
        let media = Media::new(&cfg.media)?;
        let geo = media.geometry().clone();
        Ok(Plsc {
            usts: Usts::new(geo.total_pages()),
            index: GlobalIndex::new(cfg.max_key_size),
            buffer: WriteBuffer::new(cfg.buffer_bytes()),
            stats: PlscStats::default(),
            stripe: geo.stripe_order(),
            cursor: 0,
            flash: Flash::new(media, cfg.copyback),
            cfg,
        })
    }

    pub fn config(&self) -> &PlscConfig {
        &self.cfg
    }

    /// The NAND array under the device (counters, wear, latency histograms, page states).
    pub fn media(&self) -> &Media {
        &self.flash.media
    }

    pub fn stats(&self) -> &PlscStats {
        &self.stats
    }

    /// Pages allocated to the USTs of `level` (0 or 1).
    pub fn level_pages(&self, level: u8) -> u64 {
        self.usts.pages(level)
    }

    /// USTs in `level` (0 or 1).
    pub fn ust_count(&self, level: u8) -> usize {
        self.usts.count(level)
    }

    /// kNodes in the global index (keys on flash) and in the KVbatchList (keys in the buffer).
    pub fn knodes(&self) -> (u64, usize) {
        (self.index.len(), self.buffer.knodes())
    }

    /// Bytes of records in the write buffer.
    pub fn buffered_bytes(&self) -> usize {
        self.buffer.used()
    }

    fn page_size(&self) -> usize {
        self.flash.page_size()
    }

    /// Flushes the write buffer as an L0 UST (if it holds anything), then runs the compaction and
    /// GC that this calls for. Returns when all of it is done.
    fn flush_dram(&mut self, at: Nanos) -> Result<Nanos> {
        if self.buffer.is_empty() {
            return Ok(at);
        }
        let data = self.buffer.take_bytes();
        let (utid, flushed) = match self.write_ust(at, 0, &data, Cause::HOST) {
            Ok(w) => w,
            Err(e) => {
                self.buffer.restore(data);
                return Err(e);
            }
        };
        for knode in self.buffer.flushed(utid) {
            let old = self.index.insert(knode);
            debug_assert!(old.is_none(), "a key is in the buffer or in the index, never both");
        }
        self.stats.flushes += 1;
        let compacted = self.compact(flushed)?;
        self.stats.compaction_ns += compacted - flushed;
        let done = self.collect_while_low(compacted)?;
        self.stats.held_ns += done - flushed;
        Ok(done)
    }

    /// Programs `data` as a new UST of `level`: ceil(len / page size) pages (at most #planes), one
    /// on each of the next planes in stripe order (of the first, `UstPlanes::Aligned`), all ready
    /// at `at` so that the media overlaps them. A plane without a free page gets one from GC first
    /// (its die then queues the UST's page behind GC's work). Returns the new UTID and when the
    /// last page is programmed.
    fn write_ust(&mut self, at: Nanos, level: u8, data: &[u8], cause: Cause) -> Result<(u32, Nanos)> {
        let ps = self.page_size();
        let pages = data.len().div_ceil(ps);
        let n = self.stripe.len();
        debug_assert!((1..=n).contains(&pages), "a UST has 1 to #planes pages, not {pages}");
        let start = match self.cfg.ust_planes {
            UstPlanes::Rotating => self.cursor,
            UstPlanes::Aligned => 0,
        };
        let planes: Vec<usize> = (0..pages).map(|i| self.stripe[(start + i) % n] as usize).collect();
        let utid = self.usts.next_utid();
        let mut gc = GcWork::default();
        let written = self.flash.program_round(at, &planes, data, utid, &mut self.usts, cause, "a UST page", &mut gc);
        self.add_gc(gc);
        let (ppns, done) = written?;
        self.cursor = (self.cursor + pages) % n;
        self.usts.add(level, ppns, data.len() as u32);
        Ok((utid, done))
    }

    /// Reads the record `knode` points to from flash, from `at`, charged to `cause`; returns its
    /// value and when the last page is read.
    fn read_record(&mut self, at: Nanos, knode: &KNode, cause: Cause) -> Result<(Vec<u8>, Nanos)> {
        let corrupt = |reason: String| KvError::Corrupt { utid: knode.utid, offset: knode.offset, reason };
        let ps = self.page_size();
        let ust = self.usts.get(knode.utid).ok_or_else(|| corrupt("the index names a UST that is gone".into()))?;
        let (start, end) = (knode.offset as usize, knode.offset as usize + knode.len as usize);
        let (first, last) = (start / ps, (end - 1) / ps);
        let ppns = ust
            .ppns
            .get(first..=last)
            .ok_or_else(|| corrupt(format!("bytes {start}..{end} run past its {} pages", ust.ppns.len())))?
            .to_vec();
        let reads: Vec<(u32, Nanos)> = ppns.iter().map(|&ppn| (ppn, at)).collect();
        let done = self.flash.media.read(&reads, cause)?;
        let mut bytes = vec![0u8; ppns.len() * ps];
        for (&ppn, page) in ppns.iter().zip(bytes.chunks_mut(ps)) {
            if !self.flash.media.contents(ppn, page)? {
                return Err(corrupt(format!("PPN {ppn} keeps no contents")));
            }
        }
        let rec = &bytes[start - first * ps..end - first * ps];
        let r = record::decode(rec).map_err(|e| corrupt(e.to_string()))?;
        if *r.key != *knode.key || r.len() != rec.len() {
            return Err(corrupt(format!("found a {}-byte record of another key", r.len())));
        }
        Ok((r.value.to_vec(), done))
    }

    /// Checks the device's structures against each other and the media: every UST's pages valid and
    /// owned by it (OOB and PPNtoUTID map), every indexed kNode inside its UST, each UST's live plus
    /// invalid bytes equal to its used bytes, levels' page counts. Meant for tests.
    pub(crate) fn check_state(&self) -> std::result::Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: "plsc", what };
        // The index has no iterator of its own: it is checked through the USTs' records.
        let mut live = std::collections::BTreeMap::<u32, u64>::new();
        let mut live_records = 0u64;
        for ust in self.usts.iter() {
            for (i, &ppn) in ust.ppns.iter().enumerate() {
                if !self.flash.media.is_valid(ppn) {
                    return Err(bad(format!("page {i} (PPN {ppn}) of UST {} is not valid", ust.utid)));
                }
                if self.flash.media.oob(ppn).0 != ust.utid || self.usts.utid_of(ppn) != Some(ust.utid) {
                    return Err(bad(format!(
                        "PPN {ppn} of UST {}: OOB owner {}, PPNtoUTID {:?}",
                        ust.utid,
                        self.flash.media.oob(ppn).0,
                        self.usts.utid_of(ppn)
                    )));
                }
            }
            let ps = self.page_size();
            let mut bytes = vec![0u8; ust.ppns.len() * ps];
            for (&ppn, page) in ust.ppns.iter().zip(bytes.chunks_mut(ps)) {
                self.flash.media.contents(ppn, page).map_err(|e| bad(format!("PPN {ppn}: {e}")))?;
            }
            let mut at = 0;
            while at < ust.used as usize {
                let r =
                    record::decode(&bytes[at..ust.used as usize]).map_err(|e| bad(format!("UST {}: {e}", ust.utid)))?;
                let sig = signature(r.key);
                if let Some(k) = self.index.get(r.key, sig) {
                    if k.utid == ust.utid && k.offset as usize == at {
                        if k.len as usize != r.len() {
                            return Err(bad(format!(
                                "kNode of UST {} at {at}: Len {} for a {}-byte record",
                                ust.utid,
                                k.len,
                                r.len()
                            )));
                        }
                        *live.entry(ust.utid).or_default() += r.len() as u64;
                        live_records += 1;
                    }
                }
                at += r.len();
            }
            let valid = live.get(&ust.utid).copied().unwrap_or(0);
            if valid + ust.invalid != ust.used as u64 {
                return Err(bad(format!(
                    "UST {}: {valid} live + {} invalid bytes != {} used",
                    ust.utid, ust.invalid, ust.used
                )));
            }
        }
        if live_records != self.index.len() {
            return Err(bad(format!(
                "{} kNodes in the index, {live_records} of them found in their USTs",
                self.index.len()
            )));
        }
        for level in 0..ust::LEVELS as u8 {
            let pages: u64 = self.usts.iter().filter(|u| u.level == level).map(|u| u.ppns.len() as u64).sum();
            if pages != self.usts.pages(level) {
                return Err(bad(format!(
                    "level {level}: {pages} pages in its USTs, {} counted",
                    self.usts.pages(level)
                )));
            }
        }
        Ok(())
    }
}

impl KvDevice for Plsc {
    fn name(&self) -> &str {
        "plsc"
    }

    fn max_key_size(&self) -> usize {
        self.cfg.max_key_size
    }

    fn max_value_size(&self) -> usize {
        self.cfg.max_value_size()
    }

    fn store_valid(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>> {
        let sig = signature(key);
        let len = record::encoded_len(key.len(), value.len());
        // The old version's bytes leave the buffer, so they count as room.
        let room = self.buffer.free() + self.buffer.get(key).map_or(0, |k| k.len as usize);
        let done = if len > room { self.flush_dram(at)? } else { at };
        if self.buffer.remove(key).is_none() {
            if let Some(old) = self.index.remove(key, sig) {
                self.usts.invalidate(old.utid, old.len);
            }
        }
        self.buffer.append(key, sig, value);
        self.flash.media.record_latency(HostOp::Write, done - at);
        Ok(Completed { done, value: () })
    }

    fn retrieve_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>> {
        if let Some(v) = self.buffer.value(key) {
            let value = Some(v.to_vec());
            self.stats.buffered_gets += 1;
            self.flash.media.record_latency(HostOp::Read, 0);
            return Ok(Completed { done: at, value });
        }
        let Some(knode) = self.index.get(key, signature(key)).cloned() else {
            return Ok(Completed { done: at, value: None });
        };
        let (value, done) = self.read_record(at, &knode, Cause::HOST)?;
        self.flash.media.record_latency(HostOp::Read, done - at);
        Ok(Completed { done, value: Some(value) })
    }

    fn delete_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<()>> {
        let found = match self.buffer.remove(key) {
            Some(_) => true,
            None => match self.index.remove(key, signature(key)) {
                Some(old) => {
                    self.usts.invalidate(old.utid, old.len);
                    true
                }
                None => false,
            },
        };
        if !found {
            return Err(KvError::key_not_found(key, at));
        }
        Ok(Completed { done: at, value: () })
    }

    fn exist_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>> {
        let found = self.buffer.get(key).is_some() || self.index.get(key, signature(key)).is_some();
        Ok(Completed { done: at, value: found })
    }

    fn flush(&mut self, at: Nanos) -> Result<Nanos> {
        self.flush_dram(at)
    }

    fn check(&self) -> std::result::Result<(), Inconsistency> {
        self.check_state()
    }

    fn describe(&self) -> String {
        let c = &self.cfg;
        let mib = |pages: u64| (pages * c.media.geometry.page_size as u64) >> 20;
        format!(
            "plsc (write buffer {} KiB, L0 {} MiB, L1 {} MiB, GC below {} MiB free{}{}{})",
            c.buffer_bytes() >> 10,
            mib(c.l0_threshold_pages),
            mib(c.l1_threshold_pages),
            mib(c.gc_threshold_pages),
            // The defaults say nothing, so that descriptions from before these readings hold.
            if c.gc_scope == GcScope::Plane { " counted per plane" } else { "" },
            if c.copyback { ", copyback" } else { "" },
            if c.ust_planes == UstPlanes::Aligned { ", USTs aligned to the first planes" } else { "" },
        )
    }

    fn media(&self) -> &Media {
        &self.flash.media
    }

    fn work(&self) -> DeviceWork {
        let s = &self.stats;
        DeviceWork {
            flushes: s.flushes,
            compactions_by_level: s.compactions.to_vec(),
            compaction_ns: s.compaction_ns,
            gc_runs: s.gc_runs,
            gc_moved_pages: s.gc_moved_pages,
            gc_ns: s.gc_ns,
            held_ns: s.held_ns,
            dram_hits: s.buffered_gets,
            ssts_read_per_get: None,
            ftl: None,
        }
    }
}

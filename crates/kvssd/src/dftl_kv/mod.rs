//! DFTL-KV: seed 004's baseline, the "revised DFTL" (page-level DFTL, Gupta et al., ASPLOS'09,
//! altered for key-value operations), on flashsim's media layer.
//!
//! - A value of `v` bytes takes ceil(v / page) logical pages (LPAs), one flash page each; the
//!   remainder of the last page is wasted (the paper's 50 % utilisation on small values). A value
//!   of 0 bytes takes none (ours).
//! - The page map (LPA -> PPN, with the value size and key id in each entry: the paper's revised
//!   CMT) lives in translation pages on flash; the GTD says where each translation page is (832 B
//!   by default: 208 translation pages, Table II's; `config.rs`); the **KGTD** maps a key to the
//!   bitmap of the translation pages holding its LPAs (26 B an entry; the device keeps the key's
//!   LPAs themselves beside it, which is what the bitmap and the key-id field of the entries find:
//!   a request touches exactly the translation pages of its LPAs, in the bitmap's order).
//!   With no RAM budget the whole map is in RAM (the paper's Figs 8-13). With one, the cached
//!   mapping table (CMT) holds, as [`DftlCache`] says:
//!   - **entries** (the default; the seed: "each entry of CMT is modified to include the fields of
//!     value size and key identifier"): `budget / 14` single entries (`cmt.rs`, `entries.rs`). A
//!     get, and the lookup of a key's old value by a put or a delete, reads its entries: a miss
//!     loads their translation page ("load"; once per request, as the page is then in the
//!     controller), unless it was never written. A put writes its new entries and an unmap writes
//!     unmapped ones, whole, with no load. Evicting a dirty entry writes its translation page back
//!     by a read-modify-write ("store": the old copy read, the page programmed) with every other
//!     cached dirty entry of that page (DFTL's batch update). A get serves its pages' PPNs from the
//!     CMT's entries.
//!   - **pages** (issue 28's reading): whole translation pages, `budget / page` of them
//!     (flashsim's [`MappingCache`] keyed by translation page): a get or put touches each of its
//!     LPAs' entries, so each of their pages; a miss evicts the least recently used page (a dirty
//!     one is programmed: "store") and reads the missed one ("load"), unless it was never written.
//!     Caching whole pages makes the RAM a map needs the translation pages holding a live entry
//!     times the page size, and with LPAs spread over the space (below) far more than the live
//!     entries alone.
//!
//!   Translation pages are written out of place at hidden LPAs past the values' and are garbage
//!   collected like any page.
//! - **LPAs** (`lpa.rs`): by default a put takes fresh LPAs after the last ones taken, wrapping
//!   around the logical space (one LPA per physical page), as a page-mapped FTL writes its log;
//!   the replaced value's LPAs are freed. Over time the live LPAs spread over the space, and with
//!   them the translation pages a workload touches (ours: the paper does not say how its DFTL
//!   picks LPAs; `LpaAllocation::LowestFree` packs them at the bottom instead).
//! - **put**: GC first while free pages are below the threshold; a put of an existing key deletes
//!   the old value (its entries become unmapped: dirty accesses); the new value's LPAs are
//!   translated, then their pages programmed, striped over the planes. **get**: translate each
//!   LPA, read its page. **delete**: translate each LPA (dirty), invalidate the pages.
//! - **GC**: greedy (the most invalid pages), the crate's shared mechanism (`crate::flash`); a
//!   moved page's cached entry (or cached translation page) turns dirty, an uncached one is
//!   rewritten (read, then programmed) after the request (as flashsim's BlockSsd does).
//!
//! - Room (ours): a put first runs GC until the planes have free pages for its value and, under a
//!   RAM budget, for a translation store per entry it touches and for every translation page not
//!   yet on flash (so that later gets and deletes find room for their stores, as KVFTL's tables),
//!   beyond the GC reserve; if they cannot be had it fails with [`KvError::DeviceFull`], changing
//!   nothing. Should a later step still fail, the new pages are dropped and the key (its old
//!   value already deleted) removed.
//!
//! Time, accounting and power cuts as KVFTL's: a request completes when the media has done its
//! work; host data is `Cause::HOST`, relocations and erases `Cause::Gc`, translation pages
//! `Cause::Mapping`; the map is authoritative in RAM and no power-cut operation is offered.
//! Keys map to key ids through an in-RAM dictionary (the paper's 16-bit key identifiers).

mod check;
mod cmt;
mod config;
mod entries;
mod lpa;
mod stats;
mod translation;

pub use config::{
    DftlCache, DftlKvConfig, LpaAllocation, CMT_ENTRY_BYTES, GTD_ENTRY_BYTES, KGTD_ENTRY_BYTES, PAPER_GTD_ENTRIES,
    TRANSLATION_ENTRY_BYTES,
};
pub use stats::DftlKvStats;

use std::collections::HashMap;

use flashsim::{Cause, HostOp, Media, Nanos, PageWrite};

use crate::device::{Completed, DeviceWork, FtlWork, KvDevice};
use crate::error::{Inconsistency, KvError, Result};
use crate::flash::space::RESERVE_BLOCKS;
use crate::flash::{Flash, GcWork, Owners};
use crate::mapping::MappingStats;
use cmt::EntryCmt;
use flashsim::MappingCache;
use lpa::FreeLpas;

/// "No page" / "no owner".
const NONE: u32 = u32::MAX;

/// A stored key: its value's length, its LPAs in the order taken, and its KGTD bitmap (bit `tp`
/// set: translation page `tp` holds one of its LPAs).
struct KeyInfo {
    len: u32,
    lpas: Vec<u32>,
    kgtd: Box<[u64]>,
}

/// The page map both ways, which GC reads and fixes.
struct PageOwners {
    /// Owner (an LPA, or `lpas + translation page`) -> PPN.
    map: Vec<u32>,
    /// PPN -> owner.
    rev: Vec<u32>,
    /// LPAs whose pages GC moved since the device last looked.
    moved: Vec<u32>,
    lpas: u32,
}

impl Owners for PageOwners {
    fn owner_of(&self, ppn: u32) -> Option<u32> {
        let o = self.rev[ppn as usize];
        (o != NONE).then_some(o)
    }

    fn moved(&mut self, from: u32, to: u32) {
        let o = self.rev[from as usize];
        self.rev[from as usize] = NONE;
        self.rev[to as usize] = o;
        self.map[o as usize] = to;
        if o < self.lpas {
            self.moved.push(o);
        }
    }
}

/// A DFTL-KV key-value SSD.
pub struct DftlKv {
    cfg: DftlKvConfig,
    flash: Flash,
    pages: PageOwners,
    free: FreeLpas,
    /// Where sequential allocation takes the next LPAs.
    next_lpa: u32,
    ids: HashMap<Box<[u8]>, u32>,
    keys: Vec<Option<KeyInfo>>,
    free_ids: Vec<u32>,
    /// The cached translation pages under a RAM budget, keyed by page (the pages reading).
    cmt: Option<MappingCache<u64>>,
    /// The cached single entries under a RAM budget (the entries reading).
    entries: Option<EntryCmt>,
    /// Translation pages the current request has loaded (the entries reading).
    loaded: Vec<u64>,
    /// Its hits, misses, loads and stores.
    mapping: MappingStats,
    /// Translation pages GC changed while they were not cached: stored after the request.
    deferred: Vec<u64>,
    /// Mapped LPAs per translation page (the GTD's live entries).
    tp_live: Vec<u32>,
    /// Translation pages written to flash at least once (those with a GTD entry).
    tps_written: u64,
    counts: DftlKvStats,
    /// Planes in the order pages go to them, and the next one.
    stripe: Vec<u32>,
    cursor: usize,
    page: Vec<u8>,
    zero: Vec<u8>,
}

impl DftlKv {
    /// An erased device.
    pub fn new(cfg: DftlKvConfig) -> Result<DftlKv> {
        cfg.validate()?;
        let media = Media::new(&cfg.media)?;
        let geo = media.geometry().clone();
        let (lpas, tps) = (cfg.lpas() as u32, cfg.translation_pages());
        let ps = geo.page_size as usize;
        Ok(DftlKv {
            pages: PageOwners {
                map: vec![NONE; lpas as usize + tps as usize],
                rev: vec![NONE; geo.total_pages() as usize],
                moved: Vec::new(),
                lpas,
            },
            free: FreeLpas::new(lpas),
            next_lpa: 0,
            ids: HashMap::new(),
            keys: Vec::new(),
            free_ids: Vec::new(),
            cmt: cfg
                .cached_translation_pages()
                .map(|n| MappingCache::new(u32::try_from(n.max(1)).unwrap_or(u32::MAX), 1)),
            entries: cfg.cached_entries().map(|n| EntryCmt::new(n, cfg.entries_per_translation_page(), lpas)),
            loaded: Vec::new(),
            mapping: MappingStats::default(),
            deferred: Vec::new(),
            tp_live: vec![0; tps as usize],
            tps_written: 0,
            counts: DftlKvStats::default(),
            stripe: geo.stripe_order(),
            cursor: 0,
            page: vec![0; ps],
            zero: vec![0; ps],
            flash: Flash::new(media, cfg.copyback),
            cfg,
        })
    }

    pub fn config(&self) -> &DftlKvConfig {
        &self.cfg
    }

    /// The NAND array under the device.
    pub fn media(&self) -> &Media {
        &self.flash.media
    }

    fn ps(&self) -> usize {
        self.page.len()
    }

    fn tp_of(&self, lpa: u32) -> u64 {
        lpa as u64 / self.cfg.entries_per_translation_page()
    }

    /// Writes every dirty cached translation page back, from `at` (the device has no write
    /// buffer). Returns when it is done.
    fn flush_dram(&mut self, at: Nanos) -> Result<Nanos> {
        self.loaded.clear();
        let mut t = at;
        for tp in self.cmt.as_mut().map_or_else(Vec::new, |c| c.take_dirty()) {
            t = self.store_translation_page(t, tp, false)?;
        }
        // Single entries are merged into their pages on flash.
        for tp in self.entries.as_mut().map_or_else(Vec::new, |c| c.take_dirty()) {
            t = self.store_translation_page(t, tp, true)?;
        }
        self.finish_deferred(t)
    }

    /// The KGTD bitmap of `lpas`: bit `tp` set for each translation page holding one of them.
    fn kgtd_of(&self, lpas: &[u32]) -> Box<[u64]> {
        let mut bits = vec![0u64; (self.tp_live.len()).div_ceil(64)].into_boxed_slice();
        for &lpa in lpas {
            let tp = self.tp_of(lpa) as usize;
            bits[tp / 64] |= 1 << (tp % 64);
        }
        bits
    }

    /// Programs one page for `owner` on the next plane (after making room there), from `ready`;
    /// the owner's previous page, if any, becomes invalid. Returns when it is programmed.
    fn program_page(&mut self, ready: Nanos, owner: u32, data: &[u8], cause: Cause) -> Result<Nanos> {
        let plane = self.stripe[self.cursor] as usize;
        let mut gc = self.flash.make_room(plane, &mut self.pages, ready, "a page")?;
        let ppn =
            self.flash.space.take(plane, false).ok_or(KvError::DeviceFull { op: "a page", plane: plane as u32 })?;
        self.cursor = (self.cursor + 1) % self.stripe.len();
        let done = if data.len() == self.ps() {
            self.flash.media.program(&[PageWrite { ppn, ready, owner, data: Some(data) }], cause)?
        } else {
            self.page[..data.len()].copy_from_slice(data);
            self.page[data.len()..].fill(0);
            self.flash.media.program(&[PageWrite { ppn, ready, owner, data: Some(&self.page) }], cause)?
        };
        let old = self.pages.map[owner as usize];
        if old != NONE {
            self.flash.media.invalidate(old);
            self.pages.rev[old as usize] = NONE;
        }
        self.pages.map[owner as usize] = ppn;
        self.pages.rev[ppn as usize] = owner;
        gc.done = gc.done.max(done);
        self.add_gc(gc);
        Ok(done)
    }

    fn add_gc(&mut self, gc: GcWork) {
        self.counts.gc_runs += gc.victims;
        self.counts.gc_moved_pages += gc.moved_pages;
        self.counts.gc_ns += gc.ns;
    }

    /// Invalidates the pages of `lpas`, frees the LPAs and takes them out of their translation
    /// pages' live counts (no translation I/O).
    fn release(&mut self, lpas: &[u32]) {
        for &lpa in lpas {
            let ppn = self.pages.map[lpa as usize];
            if ppn != NONE {
                self.flash.media.invalidate(ppn);
                self.pages.rev[ppn as usize] = NONE;
                self.pages.map[lpa as usize] = NONE;
            }
            let tp = self.tp_of(lpa) as usize;
            self.tp_live[tp] -= 1;
        }
        self.free.give_back(lpas);
    }

    /// Unmaps key `id`'s value `old` (deleted or replaced): each page is invalidated and each LPA
    /// freed, and each entry accessed dirty from `t` (the entries reading first reads them, to
    /// find the pages). Returns when the translation I/O is done.
    fn unmap(&mut self, t: Nanos, id: u32, old: &KeyInfo) -> Result<Nanos> {
        if self.entries.is_some() {
            return self.unmap_entries(t, id, old);
        }
        self.release(&old.lpas);
        let mut t = t;
        for &lpa in &old.lpas {
            t = self.translate(t, lpa, true)?;
        }
        Ok(t)
    }

    fn put(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Nanos> {
        self.loaded.clear();
        let ps = self.ps();
        let n = value.len().div_ceil(ps);
        let id = self.ids.get(key).copied();
        let old_lpas = id.and_then(|id| self.keys[id as usize].as_ref()).map_or(0, |k| k.lpas.len());
        // Room first: the value's pages and, under a RAM budget, a translation store per entry
        // access at worst, beyond the planes' GC reserve (the entries reading reads and writes
        // each old entry).
        let g = self.flash.media.geometry();
        let ppb = g.pages_per_block as u64;
        let reserve = g.total_planes() as u64 * RESERVE_BLOCKS as u64 * ppb;
        let accesses = match (&self.cmt, &self.entries) {
            (Some(_), _) => old_lpas + n,
            (_, Some(_)) => 2 * old_lpas + n,
            _ => 0,
        } as u64;
        let unwritten = if accesses > 0 { self.tp_live.len() as u64 - self.tps_written } else { 0 };
        let need = n as u64 + accesses + unwritten;
        let threshold = (self.cfg.gc_threshold_blocks as u64 * ppb).max(reserve + need);
        let gc = self.flash.collect_while_low(threshold, &mut self.pages, at)?;
        self.add_gc(gc);
        let mut t = self.finish_deferred(gc.done.max(at))?;
        self.counts.held_ns += t - at;
        if self.flash.space.free_pages() < reserve + need {
            return Err(KvError::DeviceFull { op: "a put", plane: 0 });
        }
        if (n as u64) > self.free.free() + old_lpas as u64 {
            return Err(KvError::DeviceFull { op: "a put (no free logical page)", plane: 0 });
        }
        if let Some((id, old)) = id.and_then(|id| Some((id, self.keys[id as usize].take()?))) {
            self.counts.space.removed(old.len as u64, (old.lpas.len() * ps) as u64);
            match self.unmap(t, id, &old) {
                Ok(after) => t = after,
                Err(e) => {
                    self.forget_key(key);
                    return Err(e);
                }
            }
        }
        // A new key's id is taken now (its entries carry it) and given back should the put fail.
        let new_id = id.is_none();
        let id = id.unwrap_or_else(|| match self.free_ids.pop() {
            Some(id) => id,
            None => {
                self.keys.push(None);
                (self.keys.len() - 1) as u32
            }
        });
        let mut lpas = Vec::with_capacity(n);
        match self.cfg.lpa_allocation {
            LpaAllocation::Sequential => self.free.take_after(&mut self.next_lpa, n, &mut lpas),
            LpaAllocation::LowestFree => self.free.take(n, &mut lpas),
        };
        for &lpa in &lpas {
            let tp = self.tp_of(lpa) as usize;
            self.tp_live[tp] += 1;
        }
        let done = match self.write_value(t, id, &lpas, value) {
            Ok(done) => done,
            Err(e) => {
                // Nothing half-written stays: the new pages and entries are dropped, and the key
                // (whose old value is gone) is removed.
                if let Some(c) = self.entries.as_mut() {
                    for &lpa in &lpas {
                        c.reset(lpa, cmt::MapEntry::UNMAPPED);
                    }
                }
                self.release(&lpas);
                if new_id {
                    self.free_ids.push(id);
                } else {
                    self.forget_key(key);
                }
                return Err(e);
            }
        };
        let kgtd = self.kgtd_of(&lpas);
        self.keys[id as usize] = Some(KeyInfo { len: value.len() as u32, lpas, kgtd });
        if new_id {
            self.ids.insert(key.into(), id);
        }
        let c = &mut self.counts;
        c.puts += 1;
        c.pages_per_value.add(n);
        c.lpas_put += n as u64;
        c.space.put(value.len() as u64, (n * ps) as u64);
        let t = self.finish_deferred(done)?;
        Ok(done.max(t))
    }

    /// Translates the value's LPAs (dirty) from `t`, then programs its pages (the entries
    /// reading writes the entries, with their PPNs, once the pages are programmed). Returns when
    /// all of it is done.
    fn write_value(&mut self, t: Nanos, id: u32, lpas: &[u32], value: &[u8]) -> Result<Nanos> {
        let ps = self.ps();
        let mut t = t;
        for &lpa in lpas {
            t = self.translate(t, lpa, true)?;
        }
        let mut done = t;
        for (i, &lpa) in lpas.iter().enumerate() {
            let chunk = &value[i * ps..((i + 1) * ps).min(value.len())];
            done = done.max(self.program_page(t, lpa, chunk, Cause::HOST)?);
        }
        if self.entries.is_some() {
            done = done.max(self.write_entries(t, id, lpas, value.len() as u32)?);
        }
        Ok(done)
    }

    /// Removes `key` from the dictionary (its KGTD entry is already gone).
    fn forget_key(&mut self, key: &[u8]) {
        if let Some(id) = self.ids.remove(key) {
            self.keys[id as usize] = None;
            self.free_ids.push(id);
        }
    }

    fn get(&mut self, at: Nanos, key: &[u8]) -> Result<(Nanos, Option<Vec<u8>>)> {
        let Some(id) = self.ids.get(key).copied() else {
            return Ok((at, None));
        };
        let (len, lpas) = match &self.keys[id as usize] {
            Some(k) => (k.len as usize, k.lpas.clone()),
            None => return Err(KvError::Inconsistent { reason: "a key in the dictionary has no KGTD entry".into() }),
        };
        self.loaded.clear();
        let mut t = at;
        let ppns = if self.entries.is_some() {
            let after = self.read_entries(at, id)?;
            t = self.finish_deferred(after)?;
            self.entry_ppns(id)?
        } else {
            for &lpa in &lpas {
                t = self.translate(t, lpa, false)?;
            }
            lpas.iter().map(|&l| self.pages.map[l as usize]).collect()
        };
        let reads: Vec<(u32, Nanos)> = ppns.iter().map(|&p| (p, t)).collect();
        let done = if reads.is_empty() { t } else { self.flash.media.read(&reads, Cause::HOST)? };
        let ps = self.ps();
        let mut out = vec![0u8; lpas.len() * ps];
        for (&(ppn, _), page) in reads.iter().zip(out.chunks_mut(ps)) {
            if !self.flash.media.contents(ppn, page)? {
                return Err(KvError::Inconsistent { reason: format!("PPN {ppn} keeps no contents") });
            }
        }
        out.truncate(len);
        self.counts.gets += 1;
        Ok((done.max(t), Some(out)))
    }
}

impl KvDevice for DftlKv {
    fn name(&self) -> &str {
        "dftl-kv"
    }

    fn max_key_size(&self) -> usize {
        self.cfg.max_key_size
    }

    fn max_value_size(&self) -> usize {
        self.cfg.max_value_size
    }

    fn store_valid(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>> {
        let done = self.put(at, key, value)?;
        self.flash.media.record_latency(HostOp::Write, done - at);
        Ok(Completed { done, value: () })
    }

    fn retrieve_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>> {
        let (done, value) = self.get(at, key)?;
        if value.is_some() {
            self.flash.media.record_latency(HostOp::Read, done - at);
        }
        Ok(Completed { done, value })
    }

    fn delete_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<()>> {
        let Some(id) = self.ids.remove(key) else {
            return Err(KvError::key_not_found(key, at));
        };
        let old = self.keys[id as usize]
            .take()
            .ok_or_else(|| KvError::Inconsistent { reason: "a key in the dictionary has no KGTD entry".into() })?;
        self.free_ids.push(id);
        self.loaded.clear();
        let t = self.unmap(at, id, &old)?;
        self.counts.space.removed(old.len as u64, (old.lpas.len() * self.ps()) as u64);
        self.counts.deletes += 1;
        let done = self.finish_deferred(t)?;
        Ok(Completed { done, value: () })
    }

    fn exist_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>> {
        Ok(Completed { done: at, value: self.ids.contains_key(key) })
    }

    fn flush(&mut self, at: Nanos) -> Result<Nanos> {
        self.flush_dram(at)
    }

    fn check(&self) -> std::result::Result<(), Inconsistency> {
        self.check_state()
    }

    fn describe(&self) -> String {
        let c = &self.cfg;
        let ram = match (c.ram_budget, c.cached_translation_pages(), c.cached_entries()) {
            (Some(b), Some(n), _) => format!("CMT of {n} translation pages in {} KiB", b >> 10),
            (Some(b), _, Some(n)) => format!(
                "CMT of {n} entries in {} KiB, {} translation pages of {} entries",
                b >> 10,
                c.translation_pages(),
                c.entries_per_translation_page()
            ),
            _ => "map in RAM".to_string(),
        };
        let lpas = match c.lpa_allocation {
            LpaAllocation::Sequential => "sequential LPAs",
            LpaAllocation::LowestFree => "lowest free LPAs",
        };
        format!(
            "dftl-kv (page-level DFTL, {lpas}, greedy GC below {} free blocks, {ram}{})",
            c.gc_threshold_blocks,
            if c.copyback { ", copyback" } else { "" }
        )
    }

    fn media(&self) -> &Media {
        &self.flash.media
    }

    fn work(&self) -> DeviceWork {
        let c = &self.counts;
        DeviceWork {
            flushes: 0,
            compactions_by_level: Vec::new(),
            compaction_ns: 0,
            gc_runs: c.gc_runs,
            gc_moved_pages: c.gc_moved_pages,
            gc_ns: c.gc_ns,
            held_ns: c.held_ns,
            dram_hits: 0,
            ssts_read_per_get: None,
            ftl: Some({
                let s = self.stats();
                FtlWork {
                    space: s.space,
                    units_per_value: s.pages_per_value,
                    mapping: s.mapping,
                    static_ram_bytes: s.static_ram_bytes,
                    table_ram_bytes: s.cmt_bytes,
                }
            }),
        }
    }
}

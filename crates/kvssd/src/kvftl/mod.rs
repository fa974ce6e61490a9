//! KVFTL (seed 004, Chen et al., IEEE TCAD 2018): a partition-based FTL for key-value SSDs, and
//! its revised variants KVFTL-SP, -NP and -WS, on flashsim's media layer.
//!
//! - **Partitions** (`block`): a value is cut by the value partitioner (`partition`, Alg. 1) into
//!   partitions of 2^p bytes, p in `[min_p, max_p]`, each stored in a *partitioned block* of that
//!   size, used in order; each size has a running block for new data and one for GC's re-puts.
//!   Partitions below a page go through page buffers (`buffer`); larger ones are programmed
//!   directly, each over 2^p / page pages (`partition_io`).
//! - **Tables** (`table`): the KVHeadTable (key -> head partition) in RAM; per partitioned block a
//!   PartitionPtrTable (pid -> pre, next), a chain per value in size order; pre = NULL marks an
//!   invalid partition. Under a RAM budget the PartitionPtrTables are cached entry by entry and
//!   live on flash otherwise (`Cause::Mapping` loads and stores).
//! - **put**: a put of an existing key deletes the old value first (Alg. 1, line 2), then every
//!   partition is linked and written. **get** (Alg. 2) follows head -> next, reading each
//!   partition (a buffered one is a buffer read; an internal one costs one page read; an external
//!   one the pages that hold value bytes). **delete** (Alg. 3) sets pre = NULL along the chain,
//!   with no flash access (but table loads and stores under a RAM budget); deleting an absent key
//!   is `KvError::KeyNotFound` (the paper's "Fail").
//! - **GC** (`gc`, Alg. 4): while fewer blocks than the threshold are free, the block with the
//!   largest W = invalid partitions x partition size / live pages (infinite with no live page) is
//!   collected: each live page is read once, each valid partition re-put into the GC running block
//!   of its size, its neighbours' pointers fixed, the block erased. Mapping blocks are candidates
//!   too (W over their superseded table pages).
//!
//! Time: a request's completion is computed by the media (serial on the `kvftl` preset). A put
//! runs the GC it needs first (from its arrival), then its table I/O, then its programs; it
//! completes when its data is programmed (or buffered) and all of that is done. A get completes
//! when its last partition is read; delete and exist complete on arrival unless table I/O is due.
//! Host CPU time is not modelled.
//!
//! Accounting: gets' reads and puts' programs are `Cause::HOST`; GC's reads, programs (re-puts
//! and moved table pages) and erases are `Cause::Gc`; table-page loads and stores are
//! `Cause::Mapping`. Every program is one of these, so flash programs = host + GC + mapping.
//!
//! Choices the paper leaves open (ours):
//! - the GC threshold (`config`); GC runs at the start of a put, never in the middle of one;
//! - a put first makes room for all its partitions (and, under a RAM budget, for every table page
//!   not yet on flash, so that later gets and deletes always find room for their table stores)
//!   and fails with [`KvError::NoFreeBlock`], changing nothing, when GC cannot make it (the room
//!   its old value will free is not counted). Should a later step still fail, nothing
//!   half-written stays: the new partitions are invalidated and the key (its old value already
//!   deleted) is removed;
//! - gets, deletes and flushes run GC only when the pool is too low for their table stores, and
//!   may use the GC reserve for them;
//! - a value's length is kept with its head; a get reads only the pages of its last partition
//!   that hold value bytes, while puts program and GC copies whole partitions;
//! - a value of 0 bytes has no partition; keys are mapped to key ids by an in-RAM dictionary;
//! - GC copies by reading and programming (no copyback), each live page read once; mapping blocks
//!   are GC victims like partitioned blocks.
//!
//! Power cuts: the paper's page buffers are power-safe (supercapacitor); this model keeps every
//! table authoritative in RAM and offers no power-cut operation. [`Kvftl::flush`] programs the
//! buffers and writes dirty table entries back, as the supercapacitor would.

mod block;
mod buffer;
mod check;
mod config;
mod gc;
pub mod partition;
mod partition_io;
mod stats;
mod table;

pub use config::{default_gc_threshold, KvftlConfig, GC_RESERVE_BLOCKS, HEAD_ENTRY_BYTES, PTR_ENTRY_BYTES};
pub use partition::{Partitioner, Partitions, Variant};
pub use stats::KvftlStats;

use std::collections::BTreeMap;

use flashsim::{Cause, HostOp, Media, Nanos};

use crate::device::{Completed, DeviceWork, FtlWork, KvDevice};
use crate::error::{Inconsistency, KvError, Result};
use crate::mapping::TableCache;
use block::{Blocks, Entry, Loc, Pre, Stream};
use buffer::Buffers;
use table::{Head, KvHeadTable};

/// Sizes of the device that every path needs.
#[derive(Clone, Copy, Debug)]
struct Geo {
    ps: usize,
    page_log2: u8,
    ppb: u32,
    total_blocks: u32,
    /// PartitionPtrTable entries per table page.
    entries_per_tp: u64,
    /// Table pages reserved per block (enough for the smallest partitions).
    tps_per_block: u64,
}

/// A KVFTL key-value SSD (pure or one of its variants, by its configuration).
pub struct Kvftl {
    cfg: KvftlConfig,
    part: Partitioner,
    geo: Geo,
    media: Media,
    blocks: Blocks,
    buffers: Buffers,
    heads: KvHeadTable,
    tables: TableCache,
    /// Where each stored table page is on flash.
    directory: BTreeMap<u64, u32>,
    counts: KvftlStats,
    /// The victim GC is collecting (never erased by the pool's emergency refill).
    collecting: Option<u32>,
    /// Reused buffers: a page, GC's victim pages, a read list.
    page: Vec<u8>,
    zero: Vec<u8>,
    gc_data: Vec<u8>,
    reads: Vec<(u32, Nanos)>,
}

impl Kvftl {
    /// An erased device.
    pub fn new(cfg: KvftlConfig) -> Result<Kvftl> {
        cfg.validate()?;
        let media = Media::new(&cfg.media)?;
        let g = media.geometry();
        let ps = g.page_size as usize;
        let page_log2 = g.page_size.trailing_zeros() as u8;
        let entries_per_tp = (ps as u64 / PTR_ENTRY_BYTES).max(1);
        let max_partitions = (g.pages_per_block as u64) << page_log2 >> cfg.min_p;
        let geo = Geo {
            ps,
            page_log2,
            ppb: g.pages_per_block,
            total_blocks: g.total_blocks() as u32,
            entries_per_tp,
            tps_per_block: max_partitions.div_ceil(entries_per_tp),
        };
        Ok(Kvftl {
            part: cfg.partitioner(),
            blocks: Blocks::new(geo.total_blocks, cfg.min_p, cfg.max_p, page_log2, geo.ppb, entries_per_tp as u32),
            buffers: Buffers::new(cfg.min_p, page_log2),
            heads: KvHeadTable::default(),
            tables: TableCache::new(cfg.ram_budget, PTR_ENTRY_BYTES, entries_per_tp),
            directory: BTreeMap::new(),
            counts: KvftlStats::default(),
            collecting: None,
            page: vec![0; ps],
            zero: vec![0; ps],
            gc_data: Vec::new(),
            reads: Vec::new(),
            media,
            geo,
            cfg,
        })
    }

    pub fn config(&self) -> &KvftlConfig {
        &self.cfg
    }

    /// The NAND array under the device (counters, wear, latency histograms, page states).
    pub fn media(&self) -> &Media {
        &self.media
    }

    /// The value partitioner of this device.
    pub fn partitioner(&self) -> &Partitioner {
        &self.part
    }

    /// Erased blocks in the pool.
    pub fn free_blocks(&self) -> usize {
        self.blocks.free_count()
    }

    /// Programs every page buffer that holds a partition (the rest of its page is skipped) and
    /// writes every dirty cached table entry back, from `at`. Returns when all of it is done.
    fn flush_dram(&mut self, at: Nanos) -> Result<Nanos> {
        self.tables.begin_request();
        let mut done = at;
        for p in self.cfg.min_p..self.geo.page_log2.min(self.cfg.max_p + 1) {
            for stream in [Stream::New, Stream::Gc] {
                let Some(block) = self.blocks.running(p, stream) else { continue };
                let used = self.blocks.data(block).used;
                if used % self.blocks.per_page(p) == 0 {
                    continue;
                }
                let cause = if stream == Stream::New { Cause::HOST } else { Cause::Gc };
                let page = used / self.blocks.per_page(p);
                done = done.max(self.program_buffer(at, block, p, stream, page, cause)?);
                self.counts.skipped_partitions += self.blocks.skip_to_page_end(p, stream) as u64;
                self.counts.buffer_flushes += 1;
            }
        }
        let dirty = self.tables.take_dirty();
        let mut t = self.room_for_tables(at, dirty.len(), "a flush")?;
        for tp in dirty {
            t = self.store_table_page(t, tp)?;
        }
        Ok(done.max(t))
    }

    /// Erased blocks a put of `powers` needs beyond the running blocks' room, and, under a RAM
    /// budget, mapping blocks for `accesses` table-entry stores and for every table page not on
    /// flash yet (so that later gets and deletes always find room for their table stores).
    fn blocks_needed(&self, powers: &[u8], accesses: usize) -> usize {
        let mut need = 0;
        let mut i = 0;
        while i < powers.len() {
            let p = powers[i];
            let k = powers[i..].iter().take_while(|&&q| q == p).count();
            let room = self.blocks.room(p, Stream::New) as usize;
            if k > room {
                need += (k - room).div_ceil(self.blocks.capacity(p) as usize);
            }
            i += k;
        }
        if self.tables.enabled() {
            let new_tables = powers.len() as u64; // at most a new table page per partition
            let unstored = self.blocks.table_pages + new_tables - self.directory.len() as u64;
            need += unstored.div_ceil(self.geo.ppb as u64) as usize;
        }
        need + self.mapping_blocks_needed(accesses)
    }

    /// Erased blocks the table stores of `accesses` entry accesses may need at worst (a store
    /// each) beyond the running mapping block's room; 0 without a RAM budget.
    fn mapping_blocks_needed(&self, accesses: usize) -> usize {
        if !self.tables.enabled() {
            return 0;
        }
        let room = self.blocks.mapping_running.map_or(0, |b| (self.geo.ppb - self.media.write_pointer(b)) as usize);
        accesses.saturating_sub(room).div_ceil(self.geo.ppb as usize)
    }

    fn put(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Nanos> {
        let parts = self.part.split(value.len() as u64);
        self.tables.begin_request();
        let id = self.heads.id(key);
        let old_len = id.and_then(|id| self.heads.head(id)).map_or(0, |h| self.chain_len(h.first));
        // Room for every partition first (GC never runs in the middle of a put).
        let need = self.blocks_needed(parts.powers(), old_len + 2 * parts.len());
        let mut t = self.collect(at, need, "a put")?;
        self.counts.held_ns += t - at;
        // GC may have moved the old value's partitions: its head is read after.
        if let Some((id, old)) = id.and_then(|id| Some((id, self.heads.head(id)?))) {
            let (locs, bytes) = self.unlink_chain(old.first)?;
            self.counts.space.removed(old.len as u64, bytes);
            self.heads.set(id, Head { len: 0, first: None });
            t = match self.touch_all(t, &locs) {
                Ok(t) => t,
                Err(e) => {
                    self.heads.remove(id);
                    return Err(e);
                }
            };
        }
        let id = match id {
            Some(id) => id,
            None => self.heads.insert(key, Head { len: 0, first: None }),
        };
        let mut written = Vec::with_capacity(parts.len());
        match self.write_chain(t, id, &parts, value, &mut written) {
            Ok(done) => {
                self.heads.set(id, Head { len: value.len() as u32, first: written.first().copied() });
                let c = &mut self.counts;
                c.puts += 1;
                c.partitions_per_value.add(parts.len());
                c.partitions_put += parts.len() as u64;
                c.space.put(value.len() as u64, parts.total());
                Ok(done)
            }
            Err(e) => {
                // Nothing half-written stays: the partitions made valid are invalidated, and the
                // key (whose old value is gone) is removed.
                for &loc in &written {
                    self.invalidate_partition(loc)?;
                }
                self.heads.remove(id);
                Err(e)
            }
        }
    }

    /// Links and writes the partitions `parts` of `value` for key `id` from `t`, pushing each
    /// partition to `written` once it is valid. Returns when the data is programmed (or
    /// buffered) and the table I/O done.
    fn write_chain(
        &mut self,
        t: Nanos,
        id: u32,
        parts: &Partitions,
        value: &[u8],
        written: &mut Vec<Loc>,
    ) -> Result<Nanos> {
        let (mut t, mut offset) = (t, 0usize);
        let mut done = t;
        for &p in parts.powers() {
            let loc = self.blocks.alloc(p, Stream::New, 0, "a put")?;
            t = self.touch(t, loc, true)?;
            let pre = match written.last().copied() {
                None => Pre::Head(id),
                Some(pl) => {
                    t = self.touch(t, pl, true)?;
                    if let Some(e) = self.blocks.entry_mut(pl) {
                        e.next = Some(loc);
                    }
                    Pre::Part(pl)
                }
            };
            self.blocks.add_valid(loc, Entry { pre, next: None });
            written.push(loc);
            let end = (offset + (1usize << p)).min(value.len());
            done = done.max(self.write_partition(t, loc, p, Stream::New, &value[offset..end], Cause::HOST)?);
            offset = end;
        }
        Ok(done.max(t))
    }

    /// Partitions on the chain from `first`.
    fn chain_len(&self, first: Option<Loc>) -> usize {
        let (mut n, mut cur) = (0, first);
        while let Some(loc) = cur {
            n += 1;
            cur = self.blocks.entry(loc).and_then(|e| e.next);
        }
        n
    }

    fn get(&mut self, at: Nanos, key: &[u8]) -> Result<(Nanos, Option<Vec<u8>>)> {
        let Some(head) = self.heads.id(key).and_then(|id| self.heads.head(id)) else {
            return Ok((at, None));
        };
        let at = self.room_for_tables(at, self.chain_len(head.first), "a get")?;
        // GC may have moved the value's partitions: its head is read again.
        let head = self.heads.id(key).and_then(|id| self.heads.head(id)).unwrap_or(head);
        self.tables.begin_request();
        let len = head.len as usize;
        let mut out = Vec::with_capacity(len);
        let (mut t, mut done, mut cur) = (at, at, head.first);
        while let Some(loc) = cur {
            t = self.touch(t, loc, false)?;
            let p = self.blocks.data(loc.block).p;
            let entry = *self.blocks.entry(loc).ok_or_else(|| KvError::Inconsistent {
                reason: format!("partition {} of block {} is on a chain but not valid", loc.pid, loc.block),
            })?;
            let n = (len - out.len()).min(1 << p);
            done = done.max(self.read_partition(t, loc, p, n, &mut out)?);
            cur = entry.next;
        }
        if out.len() != len {
            return Err(KvError::Inconsistent {
                reason: format!("a {len}-byte value's partitions hold {} bytes", out.len()),
            });
        }
        self.counts.gets += 1;
        Ok((done.max(t), Some(out)))
    }
}

impl KvDevice for Kvftl {
    fn name(&self) -> &str {
        self.cfg.variant.name()
    }

    fn max_key_size(&self) -> usize {
        self.cfg.max_key_size
    }

    fn max_value_size(&self) -> usize {
        self.cfg.max_value_size()
    }

    fn store_valid(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>> {
        let done = self.put(at, key, value)?;
        self.media.record_latency(HostOp::Write, done - at);
        Ok(Completed { done, value: () })
    }

    fn retrieve_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>> {
        let (done, value) = self.get(at, key)?;
        if value.is_some() {
            self.media.record_latency(HostOp::Read, done - at);
        }
        Ok(Completed { done, value })
    }

    fn delete_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<()>> {
        let Some(id) = self.heads.id(key) else {
            return Err(KvError::key_not_found(key, at));
        };
        let chain = self.heads.head(id).map_or(0, |h| self.chain_len(h.first));
        let at = self.room_for_tables(at, chain, "a delete")?;
        self.tables.begin_request();
        let head = self.heads.remove(id).ok_or_else(|| KvError::Inconsistent {
            reason: "a key in the dictionary has no KVHeadTable entry".into(),
        })?;
        let (locs, bytes) = self.unlink_chain(head.first)?;
        self.counts.space.removed(head.len as u64, bytes);
        self.counts.deletes += 1;
        let done = self.touch_all(at, &locs)?;
        Ok(Completed { done, value: () })
    }

    fn exist_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>> {
        Ok(Completed { done: at, value: self.heads.id(key).is_some() })
    }

    fn flush(&mut self, at: Nanos) -> Result<Nanos> {
        self.flush_dram(at)
    }

    fn check(&self) -> std::result::Result<(), Inconsistency> {
        self.check_state()
    }

    fn describe(&self) -> String {
        let c = &self.cfg;
        let ram = match c.ram_budget {
            None => "tables in RAM".to_string(),
            Some(b) => format!("table cache {} KiB", b >> 10),
        };
        let rule = match c.variant {
            Variant::Pure => String::new(),
            Variant::SmallestPartition { min_p } => format!("SP 2^{min_p}, "),
            Variant::MaxPartitions { n } => format!("NP {n}, "),
            Variant::MaxWaste { bytes } => format!("WS {bytes} B, "),
        };
        format!(
            "{} ({rule}partitions 2^{}..2^{}, GC below {} free blocks, {ram}{})",
            c.variant.name(),
            c.min_p,
            c.max_p,
            c.gc_threshold_blocks,
            if c.buffer_reads { "" } else { ", buffer reads charged as page reads" }
        )
    }

    fn media(&self) -> &Media {
        &self.media
    }

    fn work(&self) -> DeviceWork {
        let c = &self.counts;
        DeviceWork {
            flushes: c.buffer_flushes,
            compactions_by_level: Vec::new(),
            compaction_ns: 0,
            gc_runs: c.gc_runs,
            gc_moved_pages: c.gc_live_page_copies,
            gc_ns: c.gc_ns,
            held_ns: c.held_ns,
            dram_hits: c.buffer_reads,
            ssts_read_per_get: None,
            ftl: Some({
                let s = self.stats();
                FtlWork {
                    space: s.space,
                    units_per_value: s.partitions_per_value,
                    mapping: s.mapping,
                    static_ram_bytes: s.static_ram_bytes,
                    table_ram_bytes: s.table_bytes,
                }
            }),
        }
    }
}

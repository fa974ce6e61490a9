//! The KVHeadTable and the PartitionPtrTables' home on flash (seed 004 §III-C1, §V-B4).
//!
//! **KVHeadTable**: key -> the value's length and its head partition. The paper assumes 16-bit
//! keys stored as a linear table of 6-byte entries (key id + pointer). Ours: keys are arbitrary
//! byte strings, so an in-DRAM key dictionary maps each stored key to a key id (ids of deleted
//! keys are reused); the table is indexed by key id. It is the "static part" of the RAM and
//! always resident; [`HEAD_ENTRY_BYTES`] per live key is what the statistics report (the paper's
//! accounting: neither the dictionary's key bytes nor the value length, which a device needs to
//! know where a value's last partition ends, is counted). A value of 0 bytes has an entry and no
//! partition.
//!
//! **PartitionPtrTables** on flash, under a RAM budget: each partitioned block's table is split
//! into table pages of page_size / [`PTR_ENTRY_BYTES`] entries (a table page never holds two
//! blocks' entries). Entries are cached one by one (`crate::mapping`); a miss loads the entry's
//! table page, a dirty eviction stores it. Stored table pages are written out of place into
//! mapping blocks (taken from the pool of erased blocks; GC reclaims them like any block), and a
//! directory in RAM says where each one is (ours: the paper says the tables "are stored in an
//! isolated area", not how it is managed). A table page never stored holds nothing to load. When
//! GC erases a block its table is reset: its cached entries are dropped and its table pages on
//! flash become invalid. The simulator keeps every entry in RAM regardless (tables change cost,
//! not contents), so table pages carry no bytes.

use std::collections::HashMap;

use flashsim::{Cause, Nanos, PageWrite};

use super::block::{Loc, NO_TP};
use super::config::{HEAD_ENTRY_BYTES, PTR_ENTRY_BYTES};
use super::Kvftl;
use crate::error::Result;

/// A stored key's value: its length and its head partition (`None` for an empty value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Head {
    pub len: u32,
    pub first: Option<Loc>,
}

/// Key dictionary and KVHeadTable.
#[derive(Default)]
pub(crate) struct KvHeadTable {
    ids: HashMap<Box<[u8]>, u32>,
    keys: Vec<Box<[u8]>>,
    heads: Vec<Option<Head>>,
    free_ids: Vec<u32>,
}

impl KvHeadTable {
    /// The key id of stored key `key`.
    pub fn id(&self, key: &[u8]) -> Option<u32> {
        self.ids.get(key).copied()
    }

    pub fn head(&self, id: u32) -> Option<Head> {
        self.heads.get(id as usize).copied().flatten()
    }

    /// Sets the head of stored key `id`.
    pub fn set(&mut self, id: u32, head: Head) {
        self.heads[id as usize] = Some(head);
    }

    /// GC moved the head partition of stored key `id` to `first`.
    pub fn set_first(&mut self, id: u32, first: Loc) {
        if let Some(h) = self.heads.get_mut(id as usize).and_then(|h| h.as_mut()) {
            h.first = Some(first);
        }
    }

    /// Stores a new key; returns its id.
    pub fn insert(&mut self, key: &[u8], head: Head) -> u32 {
        let id = match self.free_ids.pop() {
            Some(id) => {
                self.keys[id as usize] = key.into();
                self.heads[id as usize] = Some(head);
                id
            }
            None => {
                self.keys.push(key.into());
                self.heads.push(Some(head));
                (self.keys.len() - 1) as u32
            }
        };
        self.ids.insert(key.into(), id);
        id
    }

    /// Removes stored key `id`; returns its head.
    pub fn remove(&mut self, id: u32) -> Option<Head> {
        let head = self.heads.get_mut(id as usize)?.take()?;
        let key = std::mem::take(&mut self.keys[id as usize]);
        self.ids.remove(&key);
        self.free_ids.push(id);
        Some(head)
    }

    /// Keys stored.
    pub fn live(&self) -> u64 {
        self.ids.len() as u64
    }

    /// Static RAM of the table: live entries x [`HEAD_ENTRY_BYTES`].
    pub fn ram_bytes(&self) -> u64 {
        self.live() * HEAD_ENTRY_BYTES
    }

    /// Every stored key: (id, key, head), by id.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8], Head)> + '_ {
        self.heads.iter().enumerate().filter_map(|(id, h)| h.map(|h| (id as u32, &*self.keys[id], h)))
    }
}

/// Owner written to a table page's OOB (table pages are found through the directory).
pub(crate) const TABLE_PAGE_OWNER: u32 = u32::MAX - 1;

impl Kvftl {
    /// The cache number of `loc`'s entry: table page * entries per page + index in the page.
    pub(crate) fn entry_id(&self, loc: Loc) -> u64 {
        let ept = self.geo.entries_per_tp;
        (loc.block as u64 * self.geo.tps_per_block + loc.pid as u64 / ept) * ept + loc.pid as u64 % ept
    }

    /// Table pages of `block`: `[first, first + tps_per_block)`.
    fn table_pages_of(&self, block: u32) -> std::ops::Range<u64> {
        let first = block as u64 * self.geo.tps_per_block;
        first..first + self.geo.tps_per_block
    }

    /// Accesses `loc`'s table entry from `t` (`dirty` when the access changes it): stores the
    /// table pages the cache evicts, then loads the entry's page on a miss. Returns when the
    /// entry is in RAM.
    pub(crate) fn touch(&mut self, t: Nanos, loc: Loc, dirty: bool) -> Result<Nanos> {
        if !self.tables.enabled() {
            return Ok(t);
        }
        let io = self.tables.access(self.entry_id(loc), dirty);
        let mut t = t;
        for tp in io.write_back {
            t = self.store_table_page(t, tp)?;
        }
        if let Some(tp) = io.read {
            t = self.load_table_page(t, tp)?;
        }
        Ok(t)
    }

    fn mapping_busy(&self) -> Nanos {
        self.media.counters().cause(Cause::Mapping).busy_ns
    }

    /// Reads table page `tp` if it was ever stored (a load). Returns when it is in RAM.
    pub(crate) fn load_table_page(&mut self, t: Nanos, tp: u64) -> Result<Nanos> {
        let Some(&ppn) = self.directory.get(&tp) else {
            return Ok(t);
        };
        let before = self.mapping_busy();
        let done = self.media.read(&[(ppn, t)], Cause::Mapping)?;
        self.tables.stats.loads += 1;
        self.tables.stats.load_ns += self.mapping_busy() - before;
        Ok(done)
    }

    /// Writes table page `tp` back: reads its old copy (to merge the entries not cached), programs
    /// the new copy in the running mapping block, and invalidates the old one.
    pub(crate) fn store_table_page(&mut self, t: Nanos, tp: u64) -> Result<Nanos> {
        let before = self.mapping_busy();
        let old = self.directory.get(&tp).copied();
        let mut t = t;
        if let Some(ppn) = old {
            t = self.media.read(&[(ppn, t)], Cause::Mapping)?;
            self.tables.stats.store_reads += 1;
        }
        let ppn = self.next_mapping_page(t, "a table page store")?;
        let done =
            self.media.program(&[PageWrite { ppn, ready: t, owner: TABLE_PAGE_OWNER, data: None }], Cause::Mapping)?;
        self.mapped(ppn, tp);
        if let Some(old) = old {
            self.unmap_table_copy(old);
        }
        self.tables.stats.stores += 1;
        // Die time of the store's own operations (not of a block erase it may have needed).
        self.tables.stats.store_ns += self.mapping_busy() - before;
        Ok(done)
    }

    /// The next page of the running mapping block (opening one from the pool when needed, from
    /// `t`).
    pub(crate) fn next_mapping_page(&mut self, t: Nanos, op: &'static str) -> Result<u32> {
        let block = match self.blocks.mapping_running {
            Some(b) => b,
            None => {
                self.refill_pool(t)?;
                self.blocks.open_mapping(op)?
            }
        };
        let ppb = self.geo.ppb;
        let wp = self.media.write_pointer(block);
        if wp + 1 == ppb {
            self.blocks.mapping_running = None;
        }
        Ok(block * ppb + wp)
    }

    /// Table page `tp` is now at `ppn` (just programmed in a mapping block).
    pub(crate) fn mapped(&mut self, ppn: u32, tp: u64) {
        let m = self.blocks.mapping_mut(ppn / self.geo.ppb);
        m.pages.push(tp);
        m.valid += 1;
        self.directory.insert(tp, ppn);
    }

    /// The copy of a table page at `ppn` is superseded.
    fn unmap_table_copy(&mut self, ppn: u32) {
        let ppb = self.geo.ppb;
        let m = self.blocks.mapping_mut(ppn / ppb);
        m.pages[(ppn % ppb) as usize] = NO_TP;
        m.valid -= 1;
        self.media.invalidate(ppn);
    }

    /// Loads every stored table page of `block` (GC reads its victim's whole table).
    pub(crate) fn load_block_table(&mut self, t: Nanos, block: u32) -> Result<Nanos> {
        let tps: Vec<u64> = self.directory.range(self.table_pages_of(block)).map(|(&tp, _)| tp).collect();
        let mut t = t;
        for tp in tps {
            t = self.load_table_page(t, tp)?;
        }
        Ok(t)
    }

    /// `block` was erased: its table is reset (cached entries dropped unwritten, its table pages
    /// on flash invalid).
    pub(crate) fn reset_block_table(&mut self, block: u32) {
        let pages = self.table_pages_of(block);
        let ept = self.geo.entries_per_tp;
        self.tables.forget(pages.start * ept..pages.end * ept);
        let copies: Vec<(u64, u32)> = self.directory.range(pages).map(|(&tp, &ppn)| (tp, ppn)).collect();
        for (tp, ppn) in copies {
            self.directory.remove(&tp);
            self.unmap_table_copy(ppn);
        }
    }

    /// RAM of the PartitionPtrTables if all were resident: used partitions of every partitioned
    /// block x [`PTR_ENTRY_BYTES`].
    pub(crate) fn table_bytes(&self) -> u64 {
        self.blocks.used_partitions * PTR_ENTRY_BYTES
    }
}

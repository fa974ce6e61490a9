//! Partitioned blocks and running blocks (seed 004 §III-B/C).
//!
//! Every page of a *partitioned block* is cut into partitions of one size 2^p, used in order
//! (left to right, top to bottom): a partition smaller than a page is one of page / 2^p
//! ("internal") partitions of a page; a larger one spans 2^p / page consecutive pages
//! ("external"). Each size has at most two *running* blocks taking partitions: one for newly put
//! data and one for partitions GC re-puts (the paper's hot/cold separation). A block stops running
//! once its last partition is handed out, and only then may GC pick it.
//!
//! Each partitioned block has its PartitionPtrTable: pid -> (pre, next). Ours: only valid
//! partitions have an entry (an absent pid is the paper's pre = NULL), so memory follows the live
//! partitions, not the 4 M partitions a 2^0-byte block has. The block also counts its valid
//! partitions and its live pages (pages holding at least one valid partition), which GC's victim
//! choice needs; a page whose partitions are all invalid is invalidated in the media at once (or
//! when it is programmed, for a page still in its buffer), so the media's valid pages are the
//! live pages.
//!
//! Mapping blocks hold table pages (the PartitionPtrTables' copies on flash); they come from the
//! same pool of erased blocks, one running at a time, and GC may pick them too.

use std::collections::{BTreeMap, VecDeque};

use crate::error::{KvError, Result};

/// Where a partition is: its partitioned block and its pid there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Loc {
    pub block: u32,
    pub pid: u32,
}

/// A partition's `pre` pointer: the KVHeadTable entry of its key (head partition) or the previous
/// partition of the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pre {
    Head(u32),
    Part(Loc),
}

/// One PartitionPtrTable entry of a valid partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub pre: Pre,
    pub next: Option<Loc>,
}

/// Which running block of a size takes a partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Newly put data.
    New = 0,
    /// Partitions GC re-puts.
    Gc = 1,
}

/// A partitioned block's state.
pub(crate) struct DataBlock {
    pub p: u8,
    pub stream: Stream,
    /// Partitions handed out (valid, invalid, or skipped by a flush).
    pub used: u32,
    pub valid: u32,
    /// Pages holding at least one valid partition.
    pub live_pages: u32,
    /// Internal sizes: valid partitions per page (empty for external sizes).
    pub page_valid: Vec<u32>,
    /// The PartitionPtrTable: valid partitions only.
    pub table: BTreeMap<u32, Entry>,
}

/// "No table page" in a mapping block's page list (the page was superseded).
pub(crate) const NO_TP: u64 = u64::MAX;

/// A block of table pages.
pub(crate) struct MappingBlock {
    /// The table page in each programmed page (`NO_TP` once superseded).
    pub pages: Vec<u64>,
    pub valid: u32,
}

pub(crate) enum BlockUse {
    Free,
    Data(DataBlock),
    Mapping(MappingBlock),
}

/// Every block's use, the pool of erased blocks, and the running blocks.
pub(crate) struct Blocks {
    pub uses: Vec<BlockUse>,
    /// Erased blocks, least recently erased first.
    free: VecDeque<u32>,
    /// Running block per size (index p - min_p) and stream.
    running: Vec<[Option<u32>; 2]>,
    pub mapping_running: Option<u32>,
    /// Table pages the partitioned blocks' tables span (ceil(used / entries per table page),
    /// summed): what their tables would take on flash if every entry were stored.
    pub table_pages: u64,
    /// Partitions handed out in every partitioned block (their table entries).
    pub used_partitions: u64,
    entries_per_tp: u32,
    min_p: u8,
    page_log2: u8,
    ppb: u32,
}

impl Blocks {
    pub fn new(total_blocks: u32, min_p: u8, max_p: u8, page_log2: u8, ppb: u32, entries_per_tp: u32) -> Blocks {
        Blocks {
            uses: (0..total_blocks).map(|_| BlockUse::Free).collect(),
            free: (0..total_blocks).collect(),
            running: vec![[None; 2]; (max_p - min_p) as usize + 1],
            mapping_running: None,
            table_pages: 0,
            used_partitions: 0,
            entries_per_tp,
            min_p,
            page_log2,
            ppb,
        }
    }

    pub fn free_count(&self) -> usize {
        self.free.len()
    }

    pub fn free_blocks(&self) -> impl Iterator<Item = u32> + '_ {
        self.free.iter().copied()
    }

    /// Partitions of 2^p bytes in a block.
    pub fn capacity(&self, p: u8) -> u32 {
        ((self.ppb as u64) << self.page_log2 >> p) as u32
    }

    pub fn is_internal(&self, p: u8) -> bool {
        p < self.page_log2
    }

    /// Partitions per page of an internal size.
    pub fn per_page(&self, p: u8) -> u32 {
        1 << (self.page_log2 - p)
    }

    /// Pages per partition of an external size.
    pub fn pages_per_partition(&self, p: u8) -> u32 {
        1 << (p - self.page_log2)
    }

    /// The pages of partition `pid` of size 2^p: the first page in its block and how many.
    pub fn pages_of(&self, p: u8, pid: u32) -> (u32, u32) {
        if self.is_internal(p) {
            (pid / self.per_page(p), 1)
        } else {
            let m = self.pages_per_partition(p);
            (pid * m, m)
        }
    }

    pub fn running(&self, p: u8, stream: Stream) -> Option<u32> {
        self.running[(p - self.min_p) as usize][stream as usize]
    }

    /// Partitions of 2^p left in the running block of `stream` (0 when none runs).
    pub fn room(&self, p: u8, stream: Stream) -> u32 {
        self.running(p, stream).map_or(0, |b| self.capacity(p) - self.data(b).used)
    }

    /// Takes an erased block, leaving `keep` in the pool; `op` names the writer in the error.
    pub fn take_free(&mut self, keep: usize, op: &'static str) -> Result<u32> {
        if self.free.len() <= keep {
            return Err(KvError::NoFreeBlock { op, needed: keep + 1, free: self.free.len() });
        }
        self.free.pop_front().ok_or(KvError::NoFreeBlock { op, needed: 1, free: 0 })
    }

    /// Hands out the next partition of 2^p bytes for `stream`, opening a block from the pool when
    /// none runs (leaving `keep` erased blocks there). The block stops running with its last
    /// partition.
    pub fn alloc(&mut self, p: u8, stream: Stream, keep: usize, op: &'static str) -> Result<Loc> {
        let slot = (p - self.min_p) as usize;
        let block = match self.running[slot][stream as usize] {
            Some(b) => b,
            None => {
                let b = self.take_free(keep, op)?;
                let page_valid = if self.is_internal(p) { vec![0; self.ppb as usize] } else { Vec::new() };
                self.uses[b as usize] = BlockUse::Data(DataBlock {
                    p,
                    stream,
                    used: 0,
                    valid: 0,
                    live_pages: 0,
                    page_valid,
                    table: BTreeMap::new(),
                });
                self.running[slot][stream as usize] = Some(b);
                b
            }
        };
        let cap = self.capacity(p);
        let ept = self.entries_per_tp;
        let d = self.data_mut(block);
        let pid = d.used;
        d.used += 1;
        let full = d.used == cap;
        self.used_partitions += 1;
        if pid % ept == 0 {
            self.table_pages += 1;
        }
        if full {
            self.running[slot][stream as usize] = None;
        }
        Ok(Loc { block, pid })
    }

    /// Skips the rest of the current page of the running block of (p, stream) (a flush programmed
    /// the page half full). Returns the partitions skipped.
    pub fn skip_to_page_end(&mut self, p: u8, stream: Stream) -> u32 {
        let Some(b) = self.running(p, stream) else { return 0 };
        let (per_page, cap, ept) = (self.per_page(p), self.capacity(p), self.entries_per_tp);
        let d = self.data_mut(b);
        let skipped = (per_page - d.used % per_page) % per_page;
        let before = d.used.div_ceil(ept);
        d.used += skipped;
        let (after, full) = (d.used.div_ceil(ept), d.used == cap);
        self.table_pages += (after - before) as u64;
        self.used_partitions += skipped as u64;
        if full {
            self.running[(p - self.min_p) as usize][stream as usize] = None;
        }
        skipped
    }

    pub fn data(&self, block: u32) -> &DataBlock {
        match &self.uses[block as usize] {
            BlockUse::Data(d) => d,
            _ => panic!("block {block} is not a partitioned block"),
        }
    }

    pub fn data_mut(&mut self, block: u32) -> &mut DataBlock {
        match &mut self.uses[block as usize] {
            BlockUse::Data(d) => d,
            _ => panic!("block {block} is not a partitioned block"),
        }
    }

    /// The data block `block`, if it is one.
    pub fn get_data(&self, block: u32) -> Option<&DataBlock> {
        match &self.uses[block as usize] {
            BlockUse::Data(d) => Some(d),
            _ => None,
        }
    }

    /// Partition `loc`'s table entry.
    pub fn entry(&self, loc: Loc) -> Option<&Entry> {
        self.get_data(loc.block)?.table.get(&loc.pid)
    }

    pub fn entry_mut(&mut self, loc: Loc) -> Option<&mut Entry> {
        match &mut self.uses[loc.block as usize] {
            BlockUse::Data(d) => d.table.get_mut(&loc.pid),
            _ => None,
        }
    }

    /// Partition `loc` becomes valid with `entry`; `page` is its first page, `pages` how many.
    pub fn add_valid(&mut self, loc: Loc, entry: Entry) {
        let (page, pages) = self.pages_of(self.data(loc.block).p, loc.pid);
        let d = self.data_mut(loc.block);
        let old = d.table.insert(loc.pid, entry);
        debug_assert!(old.is_none(), "partition {loc:?} handed out twice");
        d.valid += 1;
        if d.page_valid.is_empty() {
            d.live_pages += pages;
        } else {
            d.page_valid[page as usize] += 1;
            if d.page_valid[page as usize] == 1 {
                d.live_pages += 1;
            }
        }
    }

    /// Partition `loc` becomes invalid (pre = NULL): its entry leaves the table. Returns the
    /// entry and the pages that hold no valid partition any more (first page, count; 0 pages
    /// when its page still holds one).
    pub fn remove_valid(&mut self, loc: Loc) -> Option<(Entry, u32, u32)> {
        let p = self.get_data(loc.block)?.p;
        let (page, pages) = self.pages_of(p, loc.pid);
        let d = self.data_mut(loc.block);
        let entry = d.table.remove(&loc.pid)?;
        d.valid -= 1;
        if d.page_valid.is_empty() {
            d.live_pages -= pages;
            Some((entry, page, pages))
        } else {
            d.page_valid[page as usize] -= 1;
            if d.page_valid[page as usize] == 0 {
                d.live_pages -= 1;
                Some((entry, page, 1))
            } else {
                Some((entry, page, 0))
            }
        }
    }

    /// Opens a mapping block from the pool (any erased block: GC and puts reserved room for it).
    pub fn open_mapping(&mut self, op: &'static str) -> Result<u32> {
        let b = self.take_free(0, op)?;
        self.uses[b as usize] =
            BlockUse::Mapping(MappingBlock { pages: Vec::with_capacity(self.ppb as usize), valid: 0 });
        self.mapping_running = Some(b);
        Ok(b)
    }

    pub fn mapping_mut(&mut self, block: u32) -> &mut MappingBlock {
        match &mut self.uses[block as usize] {
            BlockUse::Mapping(m) => m,
            _ => panic!("block {block} is not a mapping block"),
        }
    }

    /// An erased block goes back to the pool, newest last.
    pub fn release(&mut self, block: u32) {
        if let BlockUse::Data(d) = &self.uses[block as usize] {
            self.table_pages -= d.used.div_ceil(self.entries_per_tp) as u64;
            self.used_partitions -= d.used as u64;
        }
        self.uses[block as usize] = BlockUse::Free;
        self.free.push_back(block);
    }
}

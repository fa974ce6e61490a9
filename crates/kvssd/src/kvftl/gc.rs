//! Partition-based garbage collection (seed 004, Alg. 4).
//!
//! While fewer erased blocks than the threshold are in the pool (or fewer than a put needs beyond
//! the GC reserve), the block with the largest
//!
//!   W = #invalid partitions x partition size / #live pages to copy
//!
//! is collected (W is infinite for a block with no live page; among equal W, the block with more
//! invalid bytes, then the lowest block number; running blocks are never victims). A page is live
//! while it holds a valid partition; partitions skipped by a flush count as invalid. GC reads its
//! victim's table (loading its table pages under a RAM budget), reads each live page once, re-puts
//! each valid partition into the GC running block of its size (through the GC page buffers for
//! sizes below a page), fixes the pre and next pointers of its neighbours (or the KVHeadTable's
//! head), and erases the victim; its table is reset.
//!
//! Mapping blocks (table pages) are victims like any other: W = superseded table pages x page
//! size / valid table pages; their valid pages move to the running mapping block (a read and a
//! program each, no copyback: ours, as the paper's simulator copies pages by reading and writing).
//! Every read, program and erase here is `Cause::Gc`; the table loads and stores that fixing the
//! pointers sets off are `Cause::Mapping`.

use std::cmp::Ordering;

use flashsim::{Cause, Nanos};

use super::block::{BlockUse, Loc, Pre, Stream, NO_TP};
use super::config::GC_RESERVE_BLOCKS;
use super::table::TABLE_PAGE_OWNER;
use super::Kvftl;
use crate::error::{KvError, Result};

/// A candidate's W as a fraction: invalid bytes over live pages (0 live pages: infinite).
#[derive(Clone, Copy)]
struct Worth {
    invalid_bytes: u64,
    live_pages: u64,
}

impl Worth {
    fn cmp(&self, other: &Worth) -> Ordering {
        match (self.live_pages, other.live_pages) {
            (0, 0) => self.invalid_bytes.cmp(&other.invalid_bytes),
            (0, _) => Ordering::Greater,
            (_, 0) => Ordering::Less,
            (a, b) => {
                let lhs = self.invalid_bytes as u128 * b as u128;
                let rhs = other.invalid_bytes as u128 * a as u128;
                lhs.cmp(&rhs).then(self.invalid_bytes.cmp(&other.invalid_bytes))
            }
        }
    }
}

impl Kvftl {
    /// Collects victims from `at` while fewer than the threshold, or than the reserve plus `need`,
    /// erased blocks are free. Fails, having collected what it could, when the pool still has
    /// fewer than the reserve plus `need` blocks; `op` names what needed them.
    pub(crate) fn collect(&mut self, at: Nanos, need: usize, op: &'static str) -> Result<Nanos> {
        let want = (self.cfg.gc_threshold_blocks as usize).max(GC_RESERVE_BLOCKS + need);
        self.collect_to(at, want, GC_RESERVE_BLOCKS + need, op)
    }

    /// Makes room for the table stores of `accesses` table-entry accesses (under a RAM budget)
    /// before a request that writes nothing else (a get, a delete, a flush): GC runs only when
    /// the pool is below the reserve plus what those stores may need, and the request fails only
    /// when fewer blocks than the stores need are left (such requests may use the reserve).
    pub(crate) fn room_for_tables(&mut self, at: Nanos, accesses: usize, op: &'static str) -> Result<Nanos> {
        if !self.tables.enabled() {
            return Ok(at);
        }
        let need = self.mapping_blocks_needed(accesses);
        if self.blocks.free_count() >= GC_RESERVE_BLOCKS + need {
            return Ok(at);
        }
        self.collect_to(at, GC_RESERVE_BLOCKS + need, need, op)
    }

    /// Collects victims from `at` while fewer than `want` blocks are free; fails when fewer than
    /// `floor` are.
    fn collect_to(&mut self, at: Nanos, want: usize, floor: usize, op: &'static str) -> Result<Nanos> {
        let mut t = at;
        // Every round erases a block; the bound only stops a pathological ping-pong.
        let mut rounds = 0;
        while self.blocks.free_count() < want && rounds < self.geo.total_blocks {
            let Some(victim) = self.victim() else { break };
            let start = t;
            t = self.collect_block(t, victim)?;
            self.counts.gc_runs += 1;
            self.counts.gc_ns += t - start;
            rounds += 1;
        }
        let free = self.blocks.free_count();
        if free < floor {
            return Err(KvError::NoFreeBlock { op, needed: floor, free });
        }
        Ok(t)
    }

    /// When the pool is empty (GC or a table store needs a block in the middle of its work),
    /// erases a block that holds nothing valid, if there is one: it needs no copy, so this cannot
    /// recurse. GC's victims come from the same blocks first, so this is rare.
    pub(crate) fn refill_pool(&mut self, t: Nanos) -> Result<()> {
        if self.blocks.free_count() > 0 {
            return Ok(());
        }
        let ppb = self.geo.ppb as usize;
        let collecting = self.collecting;
        let dead = self.blocks.uses.iter().enumerate().position(|(b, u)| match u {
            _ if Some(b as u32) == collecting => false,
            BlockUse::Data(d) => d.valid == 0 && d.used == self.blocks.capacity(d.p),
            BlockUse::Mapping(m) => m.valid == 0 && m.pages.len() == ppb,
            BlockUse::Free => false,
        });
        let Some(b) = dead else { return Ok(()) };
        let b = b as u32;
        let done = self.media.erase(t, b, Cause::Gc)?;
        if let BlockUse::Data(_) = self.blocks.uses[b as usize] {
            self.reset_block_table(b);
        } else {
            self.counts.gc_mapping_victims += 1;
        }
        self.blocks.release(b);
        self.counts.gc_runs += 1;
        self.counts.gc_ns += done - t;
        Ok(())
    }

    /// The block with the largest W, if any block has something to reclaim.
    pub(crate) fn victim(&self) -> Option<u32> {
        let ppb = self.geo.ppb as u64;
        let mut best: Option<(Worth, u32)> = None;
        for (b, use_) in self.blocks.uses.iter().enumerate() {
            let w = match use_ {
                BlockUse::Data(d) => {
                    if d.used < self.blocks.capacity(d.p) {
                        continue; // running
                    }
                    Worth { invalid_bytes: ((d.used - d.valid) as u64) << d.p, live_pages: d.live_pages as u64 }
                }
                BlockUse::Mapping(m) => {
                    if (m.pages.len() as u64) < ppb {
                        continue; // running
                    }
                    Worth { invalid_bytes: (ppb - m.valid as u64) * self.geo.ps as u64, live_pages: m.valid as u64 }
                }
                BlockUse::Free => continue,
            };
            if w.invalid_bytes == 0 {
                continue;
            }
            if best.is_none_or(|(bw, _)| w.cmp(&bw) == Ordering::Greater) {
                best = Some((w, b as u32));
            }
        }
        best.map(|(_, b)| b)
    }

    /// Collects `block` from `t`; returns when it is erased.
    fn collect_block(&mut self, t: Nanos, block: u32) -> Result<Nanos> {
        self.collecting = Some(block);
        let done = match self.blocks.uses[block as usize] {
            BlockUse::Data(_) => self.collect_partitioned(t, block),
            BlockUse::Mapping(_) => self.collect_mapping(t, block),
            BlockUse::Free => Err(KvError::Inconsistent { reason: format!("GC victim {block} is erased") }),
        };
        self.collecting = None;
        done
    }

    fn collect_partitioned(&mut self, t: Nanos, block: u32) -> Result<Nanos> {
        let (p, pids): (u8, Vec<u32>) = {
            let d = self.blocks.data(block);
            (d.p, d.table.keys().copied().collect())
        };
        let ps = self.geo.ps;
        let base = block * self.geo.ppb;
        let internal = self.blocks.is_internal(p);
        let mut t = self.load_block_table(t, block)?;
        let mut done = t;
        let mut data = std::mem::take(&mut self.gc_data);
        let mut loaded_page = u32::MAX;
        let mut read_done = t;
        let result = (|| -> Result<()> {
            for pid in pids {
                let (first, pages) = self.blocks.pages_of(p, pid);
                let range = if internal {
                    if first != loaded_page {
                        read_done = self.media.read(&[(base + first, t)], Cause::Gc)?;
                        data.resize(ps, 0);
                        self.media.contents(base + first, &mut data)?;
                        loaded_page = first;
                        self.counts.gc_live_page_copies += 1;
                    }
                    let off = ((pid % self.blocks.per_page(p)) as usize) << p;
                    off..off + (1 << p)
                } else {
                    self.reads.clear();
                    self.reads.extend((first..first + pages).map(|pg| (base + pg, t)));
                    read_done = self.media.read(&self.reads, Cause::Gc)?;
                    data.resize(pages as usize * ps, 0);
                    for (i, chunk) in data.chunks_mut(ps).enumerate() {
                        self.media.contents(base + first + i as u32, chunk)?;
                    }
                    self.counts.gc_live_page_copies += pages as u64;
                    0..pages as usize * ps
                };
                let old = Loc { block, pid };
                if self.blocks.room(p, Stream::Gc) == 0 {
                    self.refill_pool(t)?;
                }
                let new = self.blocks.alloc(p, Stream::Gc, 0, "GC")?;
                let entry = *self.blocks.entry(old).ok_or_else(|| KvError::Inconsistent {
                    reason: format!("GC victim {block}: partition {pid} has no entry"),
                })?;
                t = self.touch(t, new, true)?;
                match entry.pre {
                    Pre::Head(id) => self.heads.set_first(id, new),
                    Pre::Part(prev) => {
                        t = self.touch(t, prev, true)?;
                        if let Some(e) = self.blocks.entry_mut(prev) {
                            e.next = Some(new);
                        }
                    }
                }
                if let Some(next) = entry.next {
                    t = self.touch(t, next, true)?;
                    if let Some(e) = self.blocks.entry_mut(next) {
                        e.pre = Pre::Part(new);
                    }
                }
                self.blocks.remove_valid(old);
                self.blocks.add_valid(new, entry);
                let w = self.write_partition(t.max(read_done), new, p, Stream::Gc, &data[range], Cause::Gc)?;
                done = done.max(w);
                self.counts.gc_moved_partitions += 1;
            }
            Ok(())
        })();
        self.gc_data = data;
        result?;
        let erased = self.media.erase(done.max(t), block, Cause::Gc)?;
        self.reset_block_table(block);
        self.blocks.release(block);
        Ok(erased)
    }

    fn collect_mapping(&mut self, t: Nanos, block: u32) -> Result<Nanos> {
        let ppb = self.geo.ppb;
        let pages: Vec<(u32, u64)> = match &self.blocks.uses[block as usize] {
            BlockUse::Mapping(m) => {
                m.pages.iter().enumerate().filter(|(_, &tp)| tp != NO_TP).map(|(i, &tp)| (i as u32, tp)).collect()
            }
            _ => Vec::new(),
        };
        let mut done = t;
        for (i, tp) in pages {
            let dst = self.next_mapping_page(t, "GC of a mapping block")?;
            done = done.max(self.media.relocate(t, block * ppb + i, dst, TABLE_PAGE_OWNER, false, Cause::Gc)?);
            let m = self.blocks.mapping_mut(block);
            m.pages[i as usize] = NO_TP;
            m.valid -= 1;
            self.mapped(dst, tp);
            self.counts.gc_moved_table_pages += 1;
            self.counts.gc_live_page_copies += 1;
        }
        let erased = self.media.erase(done, block, Cause::Gc)?;
        self.blocks.release(block);
        self.counts.gc_mapping_victims += 1;
        Ok(erased)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kvftl::{KvftlConfig, Variant};
    use crate::KvDevice;
    use flashsim::{Geometry, MediaConfig, Preset};

    fn device() -> Kvftl {
        let g = Geometry {
            channels: 1,
            chips_per_channel: 1,
            dies_per_chip: 1,
            planes_per_die: 1,
            blocks_per_plane: 64,
            pages_per_block: 4,
            page_size: 512,
            oob_size: 64,
        };
        let mut cfg = KvftlConfig::new(MediaConfig::new(g, Preset::Kvftl.timing())).with_variant(Variant::Pure);
        cfg.max_p = 11;
        cfg.gc_threshold_blocks = 26;
        Kvftl::new(cfg).unwrap()
    }

    #[test]
    fn worth_orders_by_invalid_bytes_per_live_page_with_no_live_page_first() {
        let w = |invalid_bytes, live_pages| Worth { invalid_bytes, live_pages };
        // Fig. 5: block 77 (1023 invalid 4 KiB partitions, one live page) beats the others.
        assert_eq!(w(1023 * 4096, 1).cmp(&w(512 * 4096, 128)), Ordering::Greater);
        assert_eq!(w(1, 0).cmp(&w(1 << 30, 1)), Ordering::Greater, "no live page: infinite W");
        assert_eq!(w(2, 0).cmp(&w(1, 0)), Ordering::Greater, "among infinities, more invalid bytes");
        assert_eq!(w(1536, 1).cmp(&w(1024, 2)), Ordering::Greater);
        assert_eq!(w(1024, 2).cmp(&w(512, 1)), Ordering::Greater, "equal W: more invalid bytes");
    }

    /// Block X (512-B partitions): 3 of 4 invalid, 1 live page, W = 1536; block Y (1 KiB): 1 of 2
    /// invalid, 2 live pages, W = 512; block Z (2 KiB): its one partition invalid, W infinite.
    #[test]
    fn the_victim_is_the_block_with_the_largest_w_and_its_live_partition_moves_to_the_gc_stream() {
        let mut d = device();
        let value = |seed: u8, len: usize| (0..len).map(|i| seed.wrapping_add(i as u8)).collect::<Vec<u8>>();
        for k in 0..4u8 {
            d.store(0, &[b'x', k], &value(k, 512)).unwrap();
        }
        for k in 0..2u8 {
            d.store(0, &[b'y', k], &value(10 + k, 1024)).unwrap();
        }
        let x = d.blocks.running(9, Stream::New);
        assert_eq!(x, None, "block X is full");
        let block_of = |d: &Kvftl, key: &[u8]| d.heads.head(d.heads.id(key).unwrap()).unwrap().first.unwrap().block;
        let (x, y) = (block_of(&d, b"x\x03"), block_of(&d, b"y\x01"));
        for k in 0..3u8 {
            d.delete(0, &[b'x', k]).unwrap();
        }
        d.delete(0, b"y\x00").unwrap();
        assert_eq!(d.victim(), Some(x), "W(X) = 1536 > W(Y) = 512");
        d.store(0, b"z", &value(20, 2048)).unwrap();
        let z = block_of(&d, b"z");
        d.delete(0, b"z").unwrap();
        assert_eq!(d.victim(), Some(z), "no live page: infinite W");

        let t = d.collect_block(0, z).unwrap();
        let t = d.collect_block(t, x).unwrap();
        assert_eq!(d.victim(), Some(y));
        let moved = block_of(&d, b"x\x03");
        assert_ne!(moved, x);
        assert_eq!(d.blocks.data(moved).stream, Stream::Gc, "re-put partitions go to the GC running block");
        assert_eq!(d.stats().gc_live_page_copies, 1, "X's one live page read once");
        d.check().unwrap();
        assert_eq!(d.retrieve(t, b"x\x03").unwrap().value, Some(value(3, 512)));
        assert_eq!(d.retrieve(t, b"y\x01").unwrap().value, Some(value(11, 1024)));
    }
}

//! The consistency check of a KVFTL device (for tests): every chain, table, counter, buffer and
//! page state agrees with the others and with the media.

use std::collections::BTreeMap;

use super::block::{BlockUse, Loc, Pre, NO_TP};
use super::table::TABLE_PAGE_OWNER;
use super::Kvftl;
use crate::error::Inconsistency;

impl Kvftl {
    /// Checks that: every stored key's chain links back (pre) and forth (next), holds valid
    /// partitions of the sizes the partitioner gives for its length, and covers it; every valid
    /// partition is on exactly one chain; each block's valid, live-page and used counts match its
    /// table and the media (write pointer, valid pages); running blocks are the unfilled ones;
    /// the directory and the mapping blocks agree; erased blocks are erased; the space statistics
    /// match the chains.
    pub(crate) fn check_state(&self) -> std::result::Result<(), Inconsistency> {
        let bad = |what: String| Inconsistency { device: self.cfg.variant.name(), what };
        let mut on_chain: BTreeMap<Loc, u32> = BTreeMap::new();
        let (mut live_value, mut live_alloc) = (0u64, 0u64);
        for (id, key, head) in self.heads.iter() {
            if self.heads.id(key) != Some(id) {
                return Err(bad(format!("key {key:?}: dictionary id {:?}, table id {id}", self.heads.id(key))));
            }
            let want = self.part.split(head.len as u64);
            let mut powers = Vec::new();
            let (mut cur, mut pre) = (head.first, Pre::Head(id));
            while let Some(loc) = cur {
                let d = self
                    .blocks
                    .get_data(loc.block)
                    .ok_or_else(|| bad(format!("key {key:?}: {loc:?} is not in a partitioned block")))?;
                let e = d.table.get(&loc.pid).ok_or_else(|| bad(format!("key {key:?}: {loc:?} is not valid")))?;
                if e.pre != pre {
                    return Err(bad(format!("key {key:?}: {loc:?} has pre {:?}, expected {pre:?}", e.pre)));
                }
                if on_chain.insert(loc, id).is_some() {
                    return Err(bad(format!("{loc:?} is on two chains")));
                }
                if powers.len() > want.len() {
                    return Err(bad(format!("key {key:?}: chain longer than its {} partitions", want.len())));
                }
                powers.push(d.p);
                pre = Pre::Part(loc);
                cur = e.next;
            }
            if powers != want.powers() {
                return Err(bad(format!(
                    "key {key:?} ({} B): partitions 2^{powers:?}, partitioner gives {want:?}",
                    head.len
                )));
            }
            live_value += head.len as u64;
            live_alloc += want.total();
        }
        let s = &self.counts.space;
        if (s.live_value_bytes, s.live_alloc_bytes) != (live_value, live_alloc) {
            return Err(bad(format!(
                "space: {} value bytes in {} partition bytes counted, {live_value} in {live_alloc} on the chains",
                s.live_value_bytes, s.live_alloc_bytes
            )));
        }
        let ppb = self.geo.ppb;
        let mut valid_total = 0usize;
        let mut table_pages = 0u64;
        let mut directory_pages = 0usize;
        let free: Vec<u32> = self.blocks.free_blocks().collect();
        for (b, use_) in self.blocks.uses.iter().enumerate() {
            let b = b as u32;
            let wp = self.media.write_pointer(b);
            match use_ {
                BlockUse::Free => {
                    if wp != 0 || !free.contains(&b) {
                        return Err(bad(format!(
                            "erased block {b}: write pointer {wp}, in the pool: {}",
                            free.contains(&b)
                        )));
                    }
                }
                BlockUse::Data(d) => {
                    let cap = self.blocks.capacity(d.p);
                    let running = self.blocks.running(d.p, d.stream) == Some(b);
                    if d.used > cap || running != (d.used < cap) {
                        return Err(bad(format!("block {b} (2^{}): {} of {cap} used, running {running}", d.p, d.used)));
                    }
                    if d.table.len() != d.valid as usize || d.table.keys().any(|&pid| pid >= d.used) {
                        return Err(bad(format!("block {b}: {} valid counted, {} entries", d.valid, d.table.len())));
                    }
                    if let Some(pid) = d.table.keys().find(|&&pid| !on_chain.contains_key(&Loc { block: b, pid })) {
                        return Err(bad(format!("block {b}: valid partition {pid} is on no chain")));
                    }
                    valid_total += d.table.len();
                    table_pages += d.used.div_ceil(self.geo.entries_per_tp as u32) as u64;
                    // Pages programmed: whole pages of handed-out partitions (internal), all of them (external).
                    let (programmed, mut live) = if self.blocks.is_internal(d.p) {
                        let per_page = self.blocks.per_page(d.p);
                        let mut page_valid = vec![0u32; ppb as usize];
                        for &pid in d.table.keys() {
                            page_valid[(pid / per_page) as usize] += 1;
                        }
                        if page_valid != d.page_valid {
                            return Err(bad(format!("block {b}: per-page valid counts differ from its table")));
                        }
                        (d.used / per_page, page_valid.iter().map(|&v| (v > 0) as u32).collect::<Vec<_>>())
                    } else {
                        let m = self.blocks.pages_per_partition(d.p);
                        let mut live = vec![0u32; ppb as usize];
                        for &pid in d.table.keys() {
                            live[(pid * m) as usize..((pid + 1) * m) as usize].fill(1);
                        }
                        (d.used * m, live)
                    };
                    if wp != programmed {
                        return Err(bad(format!(
                            "block {b} (2^{}): write pointer {wp}, {programmed} pages written",
                            d.p
                        )));
                    }
                    if live.iter().sum::<u32>() != d.live_pages {
                        return Err(bad(format!("block {b}: {} live pages counted", d.live_pages)));
                    }
                    live.truncate(wp as usize);
                    for (pg, &l) in live.iter().enumerate() {
                        let ppn = b * ppb + pg as u32;
                        if self.media.is_valid(ppn) != (l > 0) {
                            return Err(bad(format!(
                                "block {b} page {pg}: media valid {}, live {l}",
                                self.media.is_valid(ppn)
                            )));
                        }
                    }
                }
                BlockUse::Mapping(m) => {
                    if m.pages.len() as u32 != wp || (self.blocks.mapping_running == Some(b)) != (wp < ppb) {
                        return Err(bad(format!(
                            "mapping block {b}: {} pages listed, write pointer {wp}",
                            m.pages.len()
                        )));
                    }
                    let mut valid = 0;
                    for (i, &tp) in m.pages.iter().enumerate() {
                        let ppn = b * ppb + i as u32;
                        if self.media.is_valid(ppn) != (tp != NO_TP) {
                            return Err(bad(format!("mapping page {ppn}: media valid {}", self.media.is_valid(ppn))));
                        }
                        if tp != NO_TP {
                            valid += 1;
                            if self.directory.get(&tp) != Some(&ppn) || self.media.oob(ppn).0 != TABLE_PAGE_OWNER {
                                return Err(bad(format!(
                                    "table page {tp} at {ppn}: directory says {:?}",
                                    self.directory.get(&tp)
                                )));
                            }
                        }
                    }
                    if valid != m.valid {
                        return Err(bad(format!("mapping block {b}: {valid} valid pages, {} counted", m.valid)));
                    }
                    directory_pages += valid as usize;
                }
            }
        }
        if valid_total != on_chain.len() {
            return Err(bad(format!("{valid_total} valid partitions, {} on chains", on_chain.len())));
        }
        let used: u64 = self
            .blocks
            .uses
            .iter()
            .map(|u| match u {
                BlockUse::Data(d) => d.used as u64,
                _ => 0,
            })
            .sum();
        if used != self.blocks.used_partitions {
            return Err(bad(format!("{used} partitions handed out, {} counted", self.blocks.used_partitions)));
        }
        if table_pages != self.blocks.table_pages {
            return Err(bad(format!("tables span {table_pages} table pages, {} counted", self.blocks.table_pages)));
        }
        if directory_pages != self.directory.len() {
            return Err(bad(format!(
                "{} table pages in the directory, {directory_pages} in mapping blocks",
                self.directory.len()
            )));
        }
        let mut sorted = free.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != free.len() {
            return Err(bad("a block is in the pool twice".into()));
        }
        Ok(())
    }
}

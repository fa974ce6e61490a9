//! Per-plane block bookkeeping: free blocks, the write frontier, and the closed blocks indexed by
//! valid-page count so that greedy GC finds its victim in O(1).
//!
//! A block is Free (erased), Open (the plane's write frontier: host writes and GC relocations both
//! append there, as in FEMU), or Closed (fully written, or cut short by a power loss). Only closed
//! blocks are GC candidates. Closed blocks sit in doubly-linked bucket lists, one per valid count,
//! so invalidating a page moves its block down one bucket in O(1).

use std::collections::VecDeque;

/// Marker for "no block" in the intrusive lists.
pub(crate) const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BlockState {
    Free,
    Open,
    Closed,
}

#[derive(Clone, Debug)]
pub(crate) struct BlockInfo {
    pub state: BlockState,
    /// Pages programmed since the last erase (the write pointer).
    pub written: u32,
    /// Pages referenced by at least one LPN.
    pub valid: u32,
    pub erase_count: u32,
    /// Device program counter when the block closed (its age for cost-benefit GC).
    pub closed_at: u64,
    prev: u32,
    next: u32,
}

impl BlockInfo {
    pub fn new() -> Self {
        BlockInfo { state: BlockState::Free, written: 0, valid: 0, erase_count: 0, closed_at: 0, prev: NIL, next: NIL }
    }
}

#[derive(Clone, Debug)]
pub(crate) struct Plane {
    /// Erased blocks, least recently erased first (a little wear levelling for free).
    pub free: VecDeque<u32>,
    /// The write frontier.
    pub open: Option<u32>,
    /// Head of the closed-block list for each valid count 0..=pages_per_block.
    heads: Vec<u32>,
    /// No bucket below this is non-empty.
    min_hint: u32,
    /// Closed blocks in the order they closed (FIFO victim policy).
    pub closed_order: VecDeque<u32>,
}

impl Plane {
    pub fn new(first_block: u32, blocks: u32, pages_per_block: u32) -> Self {
        Plane {
            free: (first_block..first_block + blocks).collect(),
            open: None,
            heads: vec![NIL; pages_per_block as usize + 1],
            min_hint: 0,
            closed_order: VecDeque::new(),
        }
    }

    /// Links a newly closed block into its bucket.
    pub fn insert_closed(&mut self, blocks: &mut [BlockInfo], b: u32) {
        let v = blocks[b as usize].valid;
        let head = self.heads[v as usize];
        let info = &mut blocks[b as usize];
        info.prev = NIL;
        info.next = head;
        if head != NIL {
            blocks[head as usize].prev = b;
        }
        self.heads[v as usize] = b;
        self.min_hint = self.min_hint.min(v);
    }

    /// Unlinks a closed block from the bucket of its current valid count.
    pub fn remove_closed(&mut self, blocks: &mut [BlockInfo], b: u32) {
        let (prev, next, v) = {
            let i = &blocks[b as usize];
            (i.prev, i.next, i.valid)
        };
        if prev == NIL {
            self.heads[v as usize] = next;
        } else {
            blocks[prev as usize].next = next;
        }
        if next != NIL {
            blocks[next as usize].prev = prev;
        }
    }

    /// The closed block with the fewest valid pages, if any.
    pub fn min_valid_block(&mut self) -> Option<u32> {
        while (self.min_hint as usize) < self.heads.len() {
            let h = self.heads[self.min_hint as usize];
            if h != NIL {
                return Some(h);
            }
            self.min_hint += 1;
        }
        None
    }

    /// Every closed block (bucket order), for policies that scan.
    pub fn closed_blocks<'a>(&'a self, blocks: &'a [BlockInfo]) -> impl Iterator<Item = u32> + 'a {
        self.heads.iter().flat_map(move |&h| {
            std::iter::successors((h != NIL).then_some(h), move |&b| {
                let n = blocks[b as usize].next;
                (n != NIL).then_some(n)
            })
        })
    }

    /// Forgets all closed-block indexes (recovery rebuilds them).
    pub fn clear_closed(&mut self) {
        self.heads.iter_mut().for_each(|h| *h = NIL);
        self.min_hint = 0;
        self.closed_order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_track_valid_counts() {
        let mut blocks = vec![BlockInfo::new(); 4];
        let mut p = Plane::new(0, 4, 8);
        for (b, v) in [(0, 5), (1, 2), (2, 8), (3, 2)] {
            blocks[b].valid = v;
            blocks[b].state = BlockState::Closed;
            p.insert_closed(&mut blocks, b as u32);
        }
        let m = p.min_valid_block().unwrap();
        assert_eq!(blocks[m as usize].valid, 2);
        // Invalidate a page of block 0 until it is the minimum.
        for _ in 0..4 {
            p.remove_closed(&mut blocks, 0);
            blocks[0].valid -= 1;
            p.insert_closed(&mut blocks, 0);
        }
        assert_eq!(p.min_valid_block(), Some(0));
        let mut all: Vec<u32> = p.closed_blocks(&blocks).collect();
        all.sort_unstable();
        assert_eq!(all, vec![0, 1, 2, 3]);
        p.remove_closed(&mut blocks, 0);
        p.remove_closed(&mut blocks, 1);
        p.remove_closed(&mut blocks, 3);
        assert_eq!(p.min_valid_block(), Some(2));
    }
}

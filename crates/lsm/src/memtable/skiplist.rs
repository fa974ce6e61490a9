//! A skiplist of (internal key, value) entries ordered by [`compare_internal`], in safe Rust:
//! one writer at a time inserts (a mutex serialises them), any number of readers search and walk
//! it concurrently without locks. Entries are never removed; the list lives until dropped.
//!
//! Layout: nodes are addressed by `u32` index into an append-only segmented vector
//! ([`SegVec`]) whose chunks are created once and never move, so a reader can hold an index, not
//! a borrow, and an iterator can own an `Arc` of the list. Each node's forward links (its tower)
//! are `AtomicU32`s in a second segmented vector. A new node is fully built (data, tower) before
//! the release stores that link it in, level 0 first; readers load links with acquire, so they
//! see either the old list or the node complete. Node 0 is the head; index 0 as a link means
//! "none".

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Mutex, OnceLock};

use crate::key::{compare_internal, user_key};

pub const MAX_HEIGHT: usize = 12;
/// One node in `BRANCHING` reaches each next level.
const BRANCHING: u64 = 4;
const HEAD: u32 = 0;
const NIL: u32 = 0;

/// An append-only vector that readers may index while one writer grows it. Chunk `c` holds
/// `first << c` slots; chunks are allocated once (`OnceLock`) and never move.
struct SegVec<T> {
    first_shift: u32,
    chunks: Box<[OnceLock<Box<[T]>>]>,
}

impl<T: Default> SegVec<T> {
    /// Room for at least 2^32 slots.
    fn new(first_shift: u32) -> SegVec<T> {
        let n = 33 - first_shift as usize;
        SegVec { first_shift, chunks: (0..n).map(|_| OnceLock::new()).collect() }
    }

    fn locate(&self, i: usize) -> (usize, usize) {
        let q = (i >> self.first_shift) + 1;
        let c = (usize::BITS - 1 - q.leading_zeros()) as usize;
        let base = ((1usize << c) - 1) << self.first_shift;
        (c, i - base)
    }

    fn get(&self, i: usize) -> Option<&T> {
        let (c, off) = self.locate(i);
        self.chunks.get(c)?.get()?.get(off)
    }

    /// Makes slot `i` exist; returns the bytes newly allocated.
    fn ensure(&self, i: usize) -> usize {
        let (c, _) = self.locate(i);
        let Some(chunk) = self.chunks.get(c) else {
            return 0;
        };
        if chunk.get().is_some() {
            return 0;
        }
        let len = 1usize << (self.first_shift as usize + c);
        chunk.get_or_init(|| (0..len).map(|_| T::default()).collect());
        len * std::mem::size_of::<T>()
    }
}

/// Links kept inside the node; taller nodes (1 in 256) keep the rest in `towers`.
const INLINE_LEVELS: usize = 4;

struct Node {
    /// The internal key followed by the value.
    data: Box<[u8]>,
    key_len: u32,
    height: u8,
    /// Index in `towers` of link `INLINE_LEVELS` (nodes taller than `INLINE_LEVELS` only).
    upper: u32,
    /// The first 8 bytes of the user key, zero-padded, big-endian: decides most comparisons
    /// without touching `data` (one cache miss fewer per search step).
    prefix: u64,
    links: [AtomicU32; INLINE_LEVELS],
}

impl Node {
    fn key(&self) -> &[u8] {
        &self.data[..self.key_len as usize]
    }
}

/// The order of the first 8 user-key bytes, zero-padded. A strict difference here is the order
/// of the user keys (a shorter key padded with zeros is a prefix of, so less than, a longer
/// one); equal prefixes need the full comparison.
fn key_prefix(internal_key: &[u8]) -> u64 {
    let user = user_key(internal_key);
    let mut b = [0u8; 8];
    let n = user.len().min(8);
    b[..n].copy_from_slice(&user[..n]);
    u64::from_be_bytes(b)
}

struct WriterState {
    rng: u64,
    next_node: usize,
    next_tower: usize,
}

/// The skiplist; see the module documentation.
pub struct SkipList {
    nodes: SegVec<OnceLock<Node>>,
    towers: SegVec<AtomicU32>,
    max_height: AtomicUsize,
    len: AtomicUsize,
    /// Bytes of the chunks allocated plus the entries' data.
    heap_bytes: AtomicUsize,
    writer: Mutex<WriterState>,
}

impl Default for SkipList {
    fn default() -> Self {
        SkipList::new()
    }
}

impl SkipList {
    pub fn new() -> SkipList {
        let list = SkipList {
            nodes: SegVec::new(8),
            towers: SegVec::new(6),
            max_height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
            heap_bytes: AtomicUsize::new(0),
            writer: Mutex::new(WriterState {
                rng: 0x2545_f491_4f6c_dd1d,
                next_node: 1,
                next_tower: MAX_HEIGHT - INLINE_LEVELS,
            }),
        };
        let mut bytes = list.nodes.ensure(0) + list.towers.ensure(MAX_HEIGHT - INLINE_LEVELS - 1);
        if let Some(slot) = list.nodes.get(0) {
            let _ = slot.set(Node {
                data: Box::new([]),
                key_len: 0,
                height: MAX_HEIGHT as u8,
                upper: 0,
                prefix: 0,
                links: Default::default(),
            });
        }
        bytes += std::mem::size_of::<SkipList>();
        list.heap_bytes.store(bytes, AtomicOrdering::Relaxed);
        list
    }

    /// Entries inserted.
    pub fn len(&self) -> usize {
        self.len.load(AtomicOrdering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes this structure holds on the heap (chunks reserved plus entry data).
    pub fn heap_bytes(&self) -> usize {
        self.heap_bytes.load(AtomicOrdering::Relaxed)
    }

    fn node(&self, n: u32) -> Option<&Node> {
        self.nodes.get(n as usize)?.get()
    }

    fn link_of<'a>(&'a self, node: &'a Node, level: usize) -> Option<&'a AtomicU32> {
        if level < INLINE_LEVELS {
            node.links.get(level)
        } else if level < node.height as usize {
            self.towers.get(node.upper as usize + level - INLINE_LEVELS)
        } else {
            None
        }
    }

    /// The successor of node `n` at `level` (`NIL` if none).
    pub fn next(&self, n: u32, level: usize) -> u32 {
        self.node(n).and_then(|node| self.link_of(node, level)).map_or(NIL, |a| a.load(AtomicOrdering::Acquire))
    }

    /// The internal key of node `n` (empty for the head or `NIL`).
    pub fn key(&self, n: u32) -> &[u8] {
        self.node(n).map_or(&[][..], Node::key)
    }

    pub fn value(&self, n: u32) -> &[u8] {
        self.node(n).map_or(&[][..], |node| &node.data[node.key_len as usize..])
    }

    /// Whether node `n` sorts before `target` (whose prefix is `prefix`); `NIL` does not.
    fn before(&self, n: u32, prefix: u64, target: &[u8]) -> bool {
        if n == NIL {
            return false;
        }
        let Some(node) = self.node(n) else {
            return false;
        };
        match node.prefix.cmp(&prefix) {
            Ordering::Equal => compare_internal(node.key(), target) == Ordering::Less,
            o => o == Ordering::Less,
        }
    }

    fn top_level(&self) -> usize {
        self.max_height.load(AtomicOrdering::Relaxed).clamp(1, MAX_HEIGHT) - 1
    }

    /// The first node whose key is >= `target` (`NIL` if none); fills `prev[level]` with the last
    /// node before it at each level when asked.
    pub fn find_greater_or_equal(&self, target: &[u8], mut prev: Option<&mut [u32; MAX_HEIGHT]>) -> u32 {
        let prefix = key_prefix(target);
        let mut x = HEAD;
        let mut level = self.top_level();
        loop {
            let next = self.next(x, level);
            if self.before(next, prefix, target) {
                x = next;
                continue;
            }
            if let Some(p) = prev.as_deref_mut() {
                p[level] = x;
            }
            if level == 0 {
                return next;
            }
            level -= 1;
        }
    }

    /// The last node whose key is < `target` (`HEAD` if none).
    pub fn find_less_than(&self, target: &[u8]) -> u32 {
        let prefix = key_prefix(target);
        let mut x = HEAD;
        let mut level = self.top_level();
        loop {
            let next = self.next(x, level);
            if self.before(next, prefix, target) {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    /// The last node (`HEAD` if empty).
    pub fn find_last(&self) -> u32 {
        let mut x = HEAD;
        let mut level = self.top_level();
        loop {
            let next = self.next(x, level);
            if next != NIL {
                x = next;
            } else if level == 0 {
                return x;
            } else {
                level -= 1;
            }
        }
    }

    pub fn is_head(n: u32) -> bool {
        n == HEAD
    }

    pub fn is_nil(n: u32) -> bool {
        n == NIL
    }

    /// Inserts `internal_key` -> `value` and returns the new node's height. An equal key already
    /// present stays, and the new entry goes before it; the engine never inserts one (sequence
    /// numbers are unique).
    ///
    /// # Panics
    /// Beyond 2^32 - 1 entries (hundreds of GiB of entries: a memtable flushes long before).
    pub fn insert(&self, internal_key: &[u8], value: &[u8]) -> usize {
        let mut st = crate::memtable::lock(&self.writer);
        let mut prev = [HEAD; MAX_HEIGHT];
        self.find_greater_or_equal(internal_key, Some(&mut prev));
        let height = random_height(&mut st.rng);
        if height > self.max_height.load(AtomicOrdering::Relaxed) {
            // `prev` already holds HEAD above the old height. Readers that see the new height
            // before the head links find NIL there and step down.
            self.max_height.store(height, AtomicOrdering::Relaxed);
        }
        let idx = st.next_node;
        let upper = st.next_tower;
        let n_upper = height.saturating_sub(INLINE_LEVELS);
        assert!(
            idx < u32::MAX as usize && upper + n_upper <= u32::MAX as usize && internal_key.len() <= u32::MAX as usize,
            "memtable skiplist is full (2^32 entries)"
        );
        let mut allocated = self.nodes.ensure(idx);
        // The new node's links point at its successors before anything points at it.
        let links: [AtomicU32; INLINE_LEVELS] = std::array::from_fn(|level| {
            AtomicU32::new(if level < height { self.next(prev[level], level) } else { NIL })
        });
        if n_upper > 0 {
            allocated += self.towers.ensure(upper + n_upper - 1);
            for (level, &p) in prev.iter().enumerate().take(height).skip(INLINE_LEVELS) {
                if let Some(slot) = self.towers.get(upper + level - INLINE_LEVELS) {
                    slot.store(self.next(p, level), AtomicOrdering::Relaxed);
                }
            }
        }
        let mut data = Vec::with_capacity(internal_key.len() + value.len());
        data.extend_from_slice(internal_key);
        data.extend_from_slice(value);
        allocated += data.len();
        if let Some(slot) = self.nodes.get(idx) {
            let _ = slot.set(Node {
                data: data.into_boxed_slice(),
                key_len: internal_key.len() as u32,
                height: height as u8,
                upper: upper as u32,
                prefix: key_prefix(internal_key),
                links,
            });
        }
        st.next_node = idx + 1;
        st.next_tower = upper + n_upper;
        // Publish bottom-up: once linked at level 0 the node is in the list.
        for (level, &p) in prev.iter().enumerate().take(height) {
            if let Some(link) = self.node(p).and_then(|node| self.link_of(node, level)) {
                link.store(idx as u32, AtomicOrdering::Release);
            }
        }
        self.heap_bytes.fetch_add(allocated, AtomicOrdering::Relaxed);
        self.len.fetch_add(1, AtomicOrdering::Release);
        height
    }
}

fn random_height(rng: &mut u64) -> usize {
    let mut height = 1;
    while height < MAX_HEIGHT && next_random(rng) % BRANCHING == 0 {
        height += 1;
    }
    height
}

/// xorshift64*: heights need speed and a fixed sequence (determinism), not quality.
fn next_random(state: &mut u64) -> u64 {
    let mut x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    #[test]
    fn segvec_locates_every_slot_once() {
        let v: SegVec<AtomicU32> = SegVec::new(2);
        let mut seen = std::collections::HashSet::new();
        for i in 0..1000 {
            v.ensure(i);
            let (c, off) = v.locate(i);
            assert!(off < (4 << c));
            assert!(seen.insert((c, off)));
            v.get(i).unwrap().store(i as u32, AtomicOrdering::Relaxed);
        }
        for i in 0..1000 {
            assert_eq!(v.get(i).unwrap().load(AtomicOrdering::Relaxed), i as u32);
        }
        // The largest index fits.
        let (c, _) = v.locate(u32::MAX as usize);
        assert!(c < v.chunks.len());
    }

    #[test]
    fn inserts_come_out_sorted() {
        let list = SkipList::new();
        let mut keys: Vec<Vec<u8>> =
            (0..500u32).map(|i| internal_key(&(i * 7919 % 500).to_be_bytes(), 5, ValueKind::Value)).collect();
        for k in &keys {
            list.insert(k, b"v");
        }
        keys.sort_by(|a, b| compare_internal(a, b));
        let mut n = list.next(HEAD, 0);
        for k in &keys {
            assert_eq!(list.key(n), &k[..]);
            n = list.next(n, 0);
        }
        assert!(SkipList::is_nil(n));
        assert_eq!(list.len(), 500);
        assert_eq!(list.key(list.find_last()), &keys[499][..]);
        assert!(SkipList::is_head(list.find_less_than(&keys[0])));
    }
}

//! A skiplist of (internal key, value) entries ordered by [`compare_internal`], in safe Rust:
//! one writer at a time inserts (a mutex serialises them), any number of readers search and walk
//! it concurrently without locks. Entries are never removed; the list lives until dropped.
//!
//! Layout: nodes are addressed by `u32` index into append-only segmented vectors ([`SegVec`])
//! whose chunks are created once and never move, so a reader can hold an index, not a borrow,
//! and an iterator can own an `Arc` of the list. What a search step needs (the first 16 user-key
//! bytes and the first two links) sits in one 32-byte [`Node`] of atomics, so that a 4 MiB
//! memtable's nodes (about 1 MiB) stay in a core's L2 cache: a random insert is bound by the
//! memory latency of its search. The entry's bytes live apart (`entries`) and are touched only
//! when two keys share those 16 bytes; taller nodes (1 in 16) keep their upper links in `towers`. A new node is fully written (fields,
//! entry, tower) before the release stores that link it in, level 0 first; readers load links
//! with acquire, so they see either the old list or the node complete. Node 0 is the head;
//! index 0 as a link means "none".
//!
//! [`compare_internal`]: crate::key::compare_internal

use std::cmp::Ordering;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Mutex, OnceLock};

use crate::coding::get_fixed64;
use crate::cpu::{self, Term};
use crate::key::user_key;

pub const MAX_HEIGHT: usize = 12;
/// One node in `BRANCHING` reaches each next level.
const BRANCHING: u64 = 4;
const HEAD: u32 = 0;
const NIL: u32 = 0;
const RELAXED: AtomicOrdering = AtomicOrdering::Relaxed;

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

    #[inline]
    fn locate(&self, i: usize) -> (usize, usize) {
        let q = (i >> self.first_shift) + 1;
        let c = (usize::BITS - 1 - q.leading_zeros()) as usize;
        let base = ((1usize << c) - 1) << self.first_shift;
        (c, i - base)
    }

    #[inline]
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

/// Links kept inside the node; taller nodes (1 in 16) keep the rest in `towers`.
const INLINE_LEVELS: usize = 2;

/// What a search step reads, in one cache line. Every field is written once by the writer
/// before the node is linked in (relaxed stores ordered by the linking release store).
#[derive(Default)]
#[repr(align(32))]
struct Node {
    /// The first 16 bytes of the user key, zero-padded, as two big-endian words: a strict
    /// difference here is the order of the user keys (a shorter key padded with zeros is a
    /// prefix of, so less than, a longer one); equal prefixes need the entry's bytes.
    prefix: [AtomicU64; 2],
    links: [AtomicU32; INLINE_LEVELS],
    /// Index in `towers` of link `INLINE_LEVELS` (nodes taller than `INLINE_LEVELS` only).
    upper: AtomicU32,
    height: AtomicU32,
}

/// Bytes before the internal key in an entry: its length, u32 little-endian.
const ENTRY_HEADER: usize = 4;

/// A key being searched for, split the way nodes keep theirs.
#[derive(Clone, Copy)]
pub struct Probe<'a> {
    prefix: [u64; 2],
    user_key: &'a [u8],
    tag: u64,
}

impl<'a> Probe<'a> {
    /// The probe for an internal key (a malformed one orders as `compare_internal` does).
    pub fn of_internal(ikey: &'a [u8]) -> Probe<'a> {
        let user = user_key(ikey);
        let tag = ikey.get(user.len()..).filter(|t| t.len() == 8).and_then(get_fixed64).unwrap_or(0);
        Probe::new(user, tag)
    }

    /// The probe for `user_key` with `tag` (sequence << 8 | kind).
    pub fn new(user_key: &'a [u8], tag: u64) -> Probe<'a> {
        Probe { prefix: key_prefix(user_key), user_key, tag }
    }
}

/// The first 16 bytes of `user_key`, zero-padded, as two big-endian words.
fn key_prefix(user_key: &[u8]) -> [u64; 2] {
    let mut b = [0u8; 16];
    let n = user_key.len().min(16);
    b[..n].copy_from_slice(&user_key[..n]);
    let (hi, lo) = b.split_at(8);
    let word = |s: &[u8]| s.try_into().map_or(0, u64::from_be_bytes);
    [word(hi), word(lo)]
}

struct WriterState {
    rng: u64,
    next_node: usize,
    next_tower: usize,
    /// The node inserted last (`NIL` before the first insert).
    last: u32,
    /// Where an entry right after `last` goes: per level, its predecessor.
    after_last: [u32; MAX_HEIGHT],
    /// Whether the last insert went right after the one before it (keys arriving in order).
    appending: bool,
}

/// The skiplist; see the module documentation.
pub struct SkipList {
    nodes: SegVec<Node>,
    /// Entry `i` of node `i`: the internal key's length (`ENTRY_HEADER`), the key, the value.
    entries: SegVec<OnceLock<Box<[u8]>>>,
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
            entries: SegVec::new(8),
            towers: SegVec::new(6),
            max_height: AtomicUsize::new(1),
            len: AtomicUsize::new(0),
            heap_bytes: AtomicUsize::new(0),
            writer: Mutex::new(WriterState {
                rng: 0x2545_f491_4f6c_dd1d,
                next_node: 1,
                next_tower: MAX_HEIGHT - INLINE_LEVELS,
                last: NIL,
                after_last: [HEAD; MAX_HEIGHT],
                appending: false,
            }),
        };
        let mut bytes = list.nodes.ensure(0) + list.entries.ensure(0);
        bytes += list.towers.ensure(MAX_HEIGHT - INLINE_LEVELS - 1);
        if let Some(head) = list.nodes.get(0) {
            head.height.store(MAX_HEIGHT as u32, RELAXED);
        }
        bytes += std::mem::size_of::<SkipList>();
        list.heap_bytes.store(bytes, RELAXED);
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
        self.heap_bytes.load(RELAXED)
    }

    #[inline]
    fn node(&self, n: u32) -> Option<&Node> {
        self.nodes.get(n as usize)
    }

    #[inline]
    fn link_of<'a>(&'a self, node: &'a Node, level: usize) -> Option<&'a AtomicU32> {
        if level < INLINE_LEVELS {
            node.links.get(level)
        } else if level < node.height.load(RELAXED) as usize {
            self.towers.get(node.upper.load(RELAXED) as usize + level - INLINE_LEVELS)
        } else {
            None
        }
    }

    /// The successor of node `n` at `level` (`NIL` if none).
    #[inline]
    pub fn next(&self, n: u32, level: usize) -> u32 {
        self.node(n).and_then(|node| self.link_of(node, level)).map_or(NIL, |a| a.load(AtomicOrdering::Acquire))
    }

    /// The internal key and the value of node `n` (empty for the head or `NIL`).
    #[inline]
    fn entry(&self, n: u32) -> (&[u8], &[u8]) {
        let e = self.entries.get(n as usize).and_then(OnceLock::get).map_or(&[][..], |e| e);
        let Some((len, rest)) = e.split_first_chunk::<ENTRY_HEADER>() else {
            return (&[], &[]);
        };
        rest.split_at_checked(u32::from_le_bytes(*len) as usize).unwrap_or((rest, &[]))
    }

    /// The internal key of node `n` (empty for the head or `NIL`).
    pub fn key(&self, n: u32) -> &[u8] {
        self.entry(n).0
    }

    pub fn value(&self, n: u32) -> &[u8] {
        self.entry(n).1
    }

    /// Whether `node` (index `n`) sorts before `probe`.
    #[inline]
    fn before(&self, node: &Node, n: u32, probe: &Probe) -> bool {
        let prefix = [node.prefix[0].load(RELAXED), node.prefix[1].load(RELAXED)];
        match prefix.cmp(&probe.prefix) {
            Ordering::Equal => self.compare_entry(n, probe) == Ordering::Less,
            o => o == Ordering::Less,
        }
    }

    /// The successor of `node` at `level`, with its node (`NIL` and `None` if none).
    #[inline]
    fn step(&self, node: &Node, level: usize) -> (u32, Option<&Node>) {
        let next = self.link_of(node, level).map_or(NIL, |a| a.load(AtomicOrdering::Acquire));
        if next == NIL {
            (NIL, None)
        } else {
            (next, self.node(next))
        }
    }

    /// Node `n` against `probe` by the whole key: user key ascending, then tag descending.
    #[cold]
    fn compare_entry(&self, n: u32, probe: &Probe) -> Ordering {
        let ikey = self.key(n);
        let probe_side = Probe::of_internal(ikey);
        probe_side.user_key.cmp(probe.user_key).then_with(|| probe.tag.cmp(&probe_side.tag))
    }

    fn top_level(&self) -> usize {
        self.max_height.load(RELAXED).clamp(1, MAX_HEIGHT) - 1
    }

    /// The first node whose key is >= `target` (an internal key; `NIL` if none).
    pub fn find_greater_or_equal(&self, target: &[u8]) -> u32 {
        self.seek(&Probe::of_internal(target), None)
    }

    /// The first node whose key is >= `probe` (`NIL` if none); fills `prev[level]` with the last
    /// node before it at each level when asked.
    pub fn seek(&self, probe: &Probe, mut prev: Option<&mut [u32; MAX_HEIGHT]>) -> u32 {
        let (mut x, mut level) = (HEAD, self.top_level());
        let Some(mut x_node) = self.node(HEAD) else {
            return NIL;
        };
        let mut steps = 0;
        loop {
            // Each step looks its node up once and carries it on (a search is memory-bound).
            let (next, next_node) = self.step(x_node, level);
            steps += 1;
            if let Some(nn) = next_node.filter(|nn| self.before(nn, next, probe)) {
                (x, x_node) = (next, nn);
                continue;
            }
            if let Some(p) = prev.as_deref_mut() {
                p[level] = x;
            }
            if level == 0 {
                cpu::count(Term::MemtableStep, steps);
                return next;
            }
            level -= 1;
        }
    }

    /// The last node whose key is < `target` (`HEAD` if none).
    pub fn find_less_than(&self, target: &[u8]) -> u32 {
        let probe = Probe::of_internal(target);
        let (mut x, mut level) = (HEAD, self.top_level());
        let Some(mut x_node) = self.node(HEAD) else {
            return HEAD;
        };
        loop {
            let (next, next_node) = self.step(x_node, level);
            if let Some(nn) = next_node.filter(|nn| self.before(nn, next, &probe)) {
                (x, x_node) = (next, nn);
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

    /// Whether `probe` goes right after node `last` (which is then its predecessor at every level
    /// `last` reaches, and at the levels above, so is `last`'s own predecessor): `last` sorts
    /// before it and `last`'s successor, if any, does not. Any node after `last` at a higher
    /// level comes after that successor too.
    fn goes_right_after(&self, last: u32, probe: &Probe) -> bool {
        let Some(node) = (last != NIL).then(|| self.node(last)).flatten() else {
            return false;
        };
        if !self.before(node, last, probe) {
            return false;
        }
        match self.step(node, 0) {
            (next, Some(next_node)) => !self.before(next_node, next, probe),
            _ => true,
        }
    }

    /// Inserts (`user_key`, `tag`) -> `value` and returns the new node's height. An equal key
    /// already present stays, and the new entry goes before it; the engine never inserts one
    /// (sequence numbers are unique).
    ///
    /// # Panics
    /// Beyond 2^32 - 1 entries (hundreds of GiB of entries: a memtable flushes long before).
    pub fn insert(&self, user_key: &[u8], tag: u64, value: &[u8]) -> usize {
        let mut st = crate::memtable::lock(&self.writer);
        let probe = Probe::new(user_key, tag);
        let mut prev = [HEAD; MAX_HEIGHT];
        if st.appending && self.goes_right_after(st.last, &probe) {
            // Keys in order (a sequential fill, a memtable rebuilt from a WAL): the search would
            // end where the last insert did.
            prev = st.after_last;
        } else {
            self.seek(&probe, Some(&mut prev));
        }
        let height = random_height(&mut st.rng);
        if height > self.max_height.load(RELAXED) {
            // `prev` already holds HEAD above the old height. Readers that see the new height
            // before the head links find NIL there and step down.
            self.max_height.store(height, RELAXED);
        }
        let idx = st.next_node;
        let upper = st.next_tower;
        let n_upper = height.saturating_sub(INLINE_LEVELS);
        let key_len = user_key.len() + 8;
        assert!(
            idx < u32::MAX as usize && upper + n_upper <= u32::MAX as usize && key_len <= u32::MAX as usize,
            "memtable skiplist is full (2^32 entries)"
        );
        let mut allocated = self.nodes.ensure(idx) + self.entries.ensure(idx);
        let mut entry = Vec::with_capacity(ENTRY_HEADER + key_len + value.len());
        entry.extend_from_slice(&(key_len as u32).to_le_bytes());
        entry.extend_from_slice(user_key);
        entry.extend_from_slice(&tag.to_le_bytes());
        entry.extend_from_slice(value);
        allocated += entry.len();
        if let Some(slot) = self.entries.get(idx) {
            let _ = slot.set(entry.into_boxed_slice());
        }
        if let Some(node) = self.nodes.get(idx) {
            node.prefix[0].store(probe.prefix[0], RELAXED);
            node.prefix[1].store(probe.prefix[1], RELAXED);
            node.height.store(height as u32, RELAXED);
            node.upper.store(upper as u32, RELAXED);
            // The new node's links point at its successors before anything points at it.
            for (level, link) in node.links.iter().enumerate().take(height) {
                link.store(self.next(prev[level], level), RELAXED);
            }
        }
        if n_upper > 0 {
            allocated += self.towers.ensure(upper + n_upper - 1);
            for (level, &p) in prev.iter().enumerate().take(height).skip(INLINE_LEVELS) {
                if let Some(slot) = self.towers.get(upper + level - INLINE_LEVELS) {
                    slot.store(self.next(p, level), RELAXED);
                }
            }
        }
        st.next_node = idx + 1;
        st.next_tower = upper + n_upper;
        st.appending = st.last != NIL && prev[0] == st.last;
        st.last = idx as u32;
        for (level, p) in st.after_last.iter_mut().enumerate() {
            *p = if level < height { idx as u32 } else { prev[level] };
        }
        // Publish bottom-up: once linked at level 0 the node is in the list.
        for (level, &p) in prev.iter().enumerate().take(height) {
            if let Some(link) = self.node(p).and_then(|node| self.link_of(node, level)) {
                link.store(idx as u32, AtomicOrdering::Release);
            }
        }
        self.heap_bytes.fetch_add(allocated, RELAXED);
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
    use crate::key::{compare_internal, internal_key, ValueKind};

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
        // Short keys, keys sharing their first 16 bytes (the prefix cannot decide), keys that
        // are zero-padded prefixes of others, and one user key at several sequence numbers.
        let mut keys: Vec<Vec<u8>> = Vec::new();
        for i in 0..500u32 {
            let k = i * 7919 % 500;
            keys.push(internal_key(&k.to_be_bytes(), 5, ValueKind::Value));
            keys.push(internal_key(format!("{:024}", k).as_bytes(), u64::from(k), ValueKind::Value));
        }
        keys.push(internal_key(b"ab", 1, ValueKind::Value));
        keys.push(internal_key(b"ab\0", 1, ValueKind::Value));
        keys.push(internal_key(b"ab\0\0", 1, ValueKind::Deletion));
        for seq in [3, 9, 1, 7] {
            keys.push(internal_key(b"0000000000000000same", seq, ValueKind::Value));
        }
        keys.push(internal_key(b"0000000000000000same", 7, ValueKind::Deletion));
        for k in &keys {
            let p = Probe::of_internal(k);
            list.insert(p.user_key, p.tag, b"v");
        }
        keys.sort_by(|a, b| compare_internal(a, b));
        let mut n = list.next(HEAD, 0);
        for k in &keys {
            assert_eq!(list.key(n), &k[..]);
            assert_eq!(list.value(n), b"v");
            assert_eq!(list.find_greater_or_equal(k), n);
            n = list.next(n, 0);
        }
        assert!(SkipList::is_nil(n));
        assert_eq!(list.len(), keys.len());
        assert_eq!(list.key(list.find_last()), &keys[keys.len() - 1][..]);
        assert!(SkipList::is_head(list.find_less_than(&keys[0])));
    }

    #[test]
    fn runs_of_ordered_inserts_take_the_shortcut_and_keep_every_level_sorted() {
        let list = SkipList::new();
        let mut keys: Vec<Vec<u8>> = Vec::new();
        // Ascending runs (the shortcut), a descending run and scattered keys (full searches).
        let mut order: Vec<u32> = (1000..3000).collect();
        order.extend((0..500).rev());
        order.extend((0..300).map(|i| (i * 7919) % 5000 + 5000));
        order.extend(3000..3300);
        order.extend(500..700);
        // An ascending run through existing keys: each next key has an older node before it.
        order.extend((0..400).map(|i| 20_000 + 2 * i));
        order.extend((0..400).map(|i| 20_001 + 2 * i));
        for (seq, k) in order.iter().enumerate() {
            let user = format!("{k:08}");
            list.insert(user.as_bytes(), (seq as u64 + 1) << 8 | 1, b"v");
            keys.push(internal_key(user.as_bytes(), seq as u64 + 1, ValueKind::Value));
        }
        keys.sort_by(|a, b| compare_internal(a, b));
        let mut n = list.next(HEAD, 0);
        for k in &keys {
            assert_eq!(list.key(n), &k[..]);
            n = list.next(n, 0);
        }
        assert!(SkipList::is_nil(n));
        for level in 1..MAX_HEIGHT {
            let mut x = list.next(HEAD, level);
            while !SkipList::is_nil(x) {
                let y = list.next(x, level);
                if !SkipList::is_nil(y) {
                    assert_eq!(compare_internal(list.key(x), list.key(y)), Ordering::Less, "level {level}");
                }
                x = y;
            }
        }
        for k in &keys {
            assert_eq!(list.key(list.find_greater_or_equal(k)), &k[..]);
        }
    }
}

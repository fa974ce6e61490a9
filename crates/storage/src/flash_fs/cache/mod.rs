//! The host's page cache of a flash file system: file pages in memory, keyed by (inode, page of
//! the file), as Linux's page cache holds them for a file system on an SSD.
//!
//! - **Size**: a stated number of pages ([`PageCacheConfig::capacity_bytes`]; 0 = no cache, every
//!   read and write goes to the placement as before).
//! - **Replacement**: CLOCK (second chance) over the cached pages. A hit sets the page's reference
//!   bit; a page that needs a slot sweeps the hand, clearing bits, and takes the first clean page
//!   whose bit is clear. Dirty pages are never evicted: when only dirty pages are left, the file
//!   dirtied longest ago is written back first (`pressure`).
//! - **Dirty pages**: a file's bytes not yet handed to its placement are a suffix of the file (files
//!   grow by appending): `dirty_bytes` past the placement's length, dirtied first at `since`. They
//!   are written back in file order — at `fsync`, before a clone that touches the file, when dirty
//!   pages pass `dirty_background_ratio` of the cache (files oldest first, their whole pages), and
//!   when a file's oldest dirty byte is older than `dirty_expire` (its whole pages), and all of
//!   them at `FlashFs::write_back_all` (an unmount). Linux's defaults are the named constants; a
//!   partly filled last page waits for `fsync`, pressure or the unmount (our choice: writing it
//!   early would program the page twice on flash).
//! - **Readahead**: Linux's on-demand readahead, per file (`readahead`).
//! - **Clones**: the destination's pages in the cloned range hold its old bytes and are dropped;
//!   with `clone_keeps_pages` (the default) they take the source's cached pages instead.
//! - **Clean pages on the device** (`clean_on_device`): a clean whole page keeps no bytes; a hit
//!   reads them from the device's store (in memory), without time or counts (`page_bytes`). The
//!   cache's memory then follows its dirty and partial pages, and the device keeps every clean
//!   page once, as compactly as its store keeps pages; no page is encoded or copied for the
//!   cache at write-back or on a miss. A page with dirty bytes, or a partial one (a file's tail,
//!   which appends fill), is whole.
//!
//! The cache holds contents and bookkeeping only: the file system (`flash_fs::io`) decides what goes
//! to the placement and when, and a hit costs no device time (the page's `ready_at`, when a
//! readahead brought it, is the earliest it can be used).

use std::collections::{BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use flashsim::Nanos;

use super::page_bytes::PageBytes;

mod config;
mod readahead;

pub use config::{
    PageCacheConfig, PageCacheStats, WriteBack, DIRTY_BACKGROUND_RATIO, DIRTY_EXPIRE_CENTISECS, READ_AHEAD_KB,
};
pub use readahead::Fetch;
use readahead::Readahead;

struct Slot {
    key: (u64, u64),
    /// The page's bytes from its start: whole, or up to the file's end.
    data: PageBytes,
    referenced: bool,
    /// When a readahead that brought the page completes.
    ready_at: Nanos,
}

/// A cache hit: when the page's bytes are ready (a readahead's completion), and whether they are on
/// the device rather than copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    pub ready: Nanos,
    pub on_device: bool,
}

/// No slot: the page is not cached.
const ABSENT: u32 = u32::MAX;

/// A file's cached pages, dirty suffix and readahead state.
#[derive(Debug, Clone, Default)]
struct FileState {
    /// The slot of each page of the file (`ABSENT` when not cached), by page number: files grow
    /// by appending and are read near where they were written, so their cached pages are dense.
    pages: Vec<u32>,
    dirty_bytes: u64,
    /// When the oldest dirty byte was written.
    since: Nanos,
    /// The path the dirty bytes were written under, for the placement's errors.
    path: String,
    ra: Readahead,
}

/// Hashes an inode number by one multiplication (Fibonacci hashing): inode numbers are small and
/// dense, and the files map is looked up for every page a read or write touches.
#[derive(Default)]
struct InodeHasher(u64);

impl Hasher for InodeHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The files map: never iterated (orders come from `dirty`), so its order does not matter.
type Files = HashMap<u64, FileState, BuildHasherDefault<InodeHasher>>;

pub struct PageCache {
    cfg: PageCacheConfig,
    page_size: u64,
    capacity_pages: usize,
    slots: Vec<Slot>,
    /// Pages held now.
    cached: usize,
    free: Vec<usize>,
    hand: usize,
    files: Files,
    /// Files with dirty bytes as (since, inode): dirtied longest ago first.
    dirty: BTreeSet<(Nanos, u64)>,
    dirty_bytes: u64,
    stats: PageCacheStats,
}

impl PageCache {
    pub fn new(cfg: PageCacheConfig, page_size: u64) -> PageCache {
        // A cache smaller than a page still holds one: appends need a page to gather in.
        let capacity_pages = if cfg.enabled() { (cfg.capacity_bytes / page_size).max(1) as usize } else { 0 };
        PageCache {
            cfg,
            page_size,
            capacity_pages,
            slots: Vec::new(),
            cached: 0,
            free: Vec::new(),
            hand: 0,
            files: Files::default(),
            dirty: BTreeSet::new(),
            dirty_bytes: 0,
            stats: PageCacheStats { capacity_bytes: cfg.capacity_bytes, ..Default::default() },
        }
    }

    pub fn enabled(&self) -> bool {
        self.cfg.enabled()
    }

    pub fn config(&self) -> PageCacheConfig {
        self.cfg
    }

    pub fn stats(&self) -> &PageCacheStats {
        &self.stats
    }

    pub(crate) fn stats_mut(&mut self) -> &mut PageCacheStats {
        &mut self.stats
    }

    /// Pages held now.
    pub fn cached_pages(&self) -> usize {
        self.cached
    }

    /// Bytes of `ino` not yet handed to its placement (they follow its placement's length).
    pub fn dirty_bytes(&self, ino: u64) -> u64 {
        self.files.get(&ino).map_or(0, |f| f.dirty_bytes)
    }

    /// Dirty bytes of every file.
    pub fn total_dirty_bytes(&self) -> u64 {
        self.dirty_bytes
    }

    /// Forgets everything (power loss: dirty bytes are lost).
    pub fn clear(&mut self) {
        self.slots.clear();
        self.cached = 0;
        self.free.clear();
        self.hand = 0;
        self.files.clear();
        self.dirty.clear();
        self.dirty_bytes = 0;
    }

    /// Drops a deleted file's pages; its dirty bytes are never written.
    pub fn drop_file(&mut self, ino: u64) {
        self.drop_pages(ino, 0, u64::MAX);
        if let Some(f) = self.files.remove(&ino) {
            self.dirty.remove(&(f.since, ino));
            self.stats.dropped_dirty_bytes += f.dirty_bytes;
            self.dirty_bytes -= f.dirty_bytes;
        }
    }

    /// Drops `ino`'s pages `from..to` (their bytes changed on the placement: a clone), in page
    /// order: the freed slots are taken again last freed first.
    pub fn drop_pages(&mut self, ino: u64, from: u64, to: u64) {
        let Some(f) = self.files.get_mut(&ino) else { return };
        let n = f.pages.len() as u64;
        let (from, to) = (from.min(n) as usize, to.min(n) as usize);
        for s in &mut f.pages[from..to] {
            let s = std::mem::replace(s, ABSENT);
            if s != ABSENT {
                // The slot keeps its buffer for the next page (the cache's bytes stay allocated,
                // as a kernel's page frames do).
                self.slots[s as usize].data.clear();
                self.free.push(s as usize);
                self.cached -= 1;
            }
        }
    }

    /// The slot holding page `page` of `ino`.
    fn slot_of(&self, ino: u64, page: u64) -> Option<usize> {
        let s = *self.files.get(&ino)?.pages.get(usize::try_from(page).ok()?)?;
        (s != ABSENT).then_some(s as usize)
    }

    /// Copies what page `page` of `ino` holds of the file's bytes `buf_at..buf_at + buf.len()`
    /// into the matching part of `buf`, unless its bytes are on the device (the caller reads them
    /// from there); when the page is cached (a hit sets its reference bit), returns the hit.
    pub fn read(&mut self, ino: u64, page: u64, buf: &mut [u8], buf_at: u64) -> Option<Hit> {
        let s = self.slot_of(ino, page)?;
        let slot = &mut self.slots[s];
        slot.referenced = true;
        let hit = Hit { ready: slot.ready_at, on_device: slot.data.bytes().is_none() };
        if let Some(bytes) = slot.data.bytes() {
            let data_at = page * self.page_size;
            let from = buf_at.max(data_at);
            let to = (buf_at + buf.len() as u64).min(data_at + bytes.len() as u64);
            if from < to {
                let (b, d) = ((from - buf_at) as usize, (from - data_at) as usize);
                let n = (to - from) as usize;
                buf[b..b + n].copy_from_slice(&bytes[d..d + n]);
            }
        }
        Some(hit)
    }

    /// A copy of cached page `page` of `ino` (`None` for a page whose bytes are on the device)
    /// and when it is ready, without touching its reference bit.
    pub fn peek(&self, ino: u64, page: u64) -> Option<(Option<Vec<u8>>, Nanos)> {
        let slot = &self.slots[self.slot_of(ino, page)?];
        Some((slot.data.bytes().map(<[u8]>::to_vec), slot.ready_at))
    }

    pub fn contains(&self, ino: u64, page: u64) -> bool {
        self.slot_of(ino, page).is_some()
    }

    /// Records that `slot` holds page `page` of `ino` (`ABSENT`: holds it no more).
    fn set_slot(&mut self, ino: u64, page: u64, slot: u32) {
        let pages = &mut self.files.entry(ino).or_default().pages;
        let p = page as usize;
        if pages.len() <= p {
            if slot == ABSENT {
                return;
            }
            pages.resize(p + 1, ABSENT);
        }
        pages[p] = slot;
    }

    /// Whether page `page` of `ino` holds dirty bytes, given the file's placement length `wb`.
    fn is_dirty(&self, ino: u64, page: u64, wb: impl Fn(u64) -> u64) -> bool {
        let d = self.dirty_bytes(ino);
        if d == 0 {
            return false;
        }
        let from = wb(ino);
        let (start, end) = (page * self.page_size, (page + 1) * self.page_size);
        start < from + d && end > from
    }

    /// A slot for a new page, evicting a clean page if the cache is full; `None` when every page
    /// is dirty (the caller writes some back and asks again).
    fn take_slot(&mut self, wb: &impl Fn(u64) -> u64) -> Option<usize> {
        if let Some(s) = self.free.pop() {
            return Some(s);
        }
        if self.slots.len() < self.capacity_pages {
            self.slots.push(Slot { key: (0, 0), data: PageBytes::default(), referenced: false, ready_at: 0 });
            return Some(self.slots.len() - 1);
        }
        // Two sweeps: the first may only clear reference bits.
        for _ in 0..2 * self.slots.len() {
            let s = self.hand;
            self.hand = (self.hand + 1) % self.slots.len();
            let (ino, page) = self.slots[s].key;
            if self.is_dirty(ino, page, wb) {
                continue;
            }
            if std::mem::take(&mut self.slots[s].referenced) {
                continue;
            }
            self.set_slot(ino, page, ABSENT);
            self.cached -= 1;
            self.stats.evictions += 1;
            return Some(s);
        }
        None
    }

    /// Puts page `page` of `ino` in the cache with `data` (its bytes from the page's start; `None`:
    /// a whole page whose bytes are on the device), replacing what it held; `false` when every
    /// page is dirty. A clean whole page given with its bytes keeps none of them when the cache
    /// leaves clean pages on the device.
    pub fn insert(
        &mut self,
        ino: u64,
        page: u64,
        data: Option<&[u8]>,
        ready_at: Nanos,
        wb: &impl Fn(u64) -> u64,
    ) -> bool {
        let s = match self.slot_of(ino, page) {
            Some(s) => s,
            None => match self.take_slot(wb) {
                Some(s) => {
                    self.set_slot(ino, page, s as u32);
                    self.cached += 1;
                    s
                }
                None => return false,
            },
        };
        let on_device = match data {
            None => true,
            Some(d) => self.cfg.clean_on_device && d.len() as u64 == self.page_size,
        };
        let slot = &mut self.slots[s];
        slot.key = (ino, page);
        match data {
            Some(d) if !on_device => slot.data.set(d),
            _ => slot.data.leave_on_device(),
        }
        slot.referenced = false;
        slot.ready_at = ready_at;
        true
    }

    /// Appends `data` to cached page `page` of `ino` (present: the caller inserted it) and counts
    /// it dirty.
    pub fn append_dirty(&mut self, ino: u64, page: u64, path: &str, data: &[u8], now: Nanos) {
        let s = self.slot_of(ino, page).expect("append_dirty: the caller inserted the page");
        let slot = &mut self.slots[s];
        let bytes = slot.data.whole_mut().expect("appends land past a file's whole pages, never on one on the device");
        // A page fills by small appends: room for all of it at once, not growth step by step.
        if bytes.capacity() < self.page_size as usize {
            bytes.reserve_exact(self.page_size as usize - bytes.len());
        }
        bytes.extend_from_slice(data);
        slot.referenced = true;
        let f = self.files.entry(ino).or_default();
        if f.dirty_bytes == 0 {
            f.since = now;
            path.clone_into(&mut f.path);
            self.dirty.insert((now, ino));
        }
        f.dirty_bytes += data.len() as u64;
        self.dirty_bytes += data.len() as u64;
        self.stats.dirty_peak_bytes = self.stats.dirty_peak_bytes.max(self.dirty_bytes);
    }

    /// Marks `bytes` of `ino`'s dirty suffix (from its start, byte `from` of the file) written back
    /// at `now`; what is left (a partly filled page) counts as dirtied then. A cache that leaves
    /// clean pages on the device drops the bytes of the whole pages now clean.
    pub fn cleaned(&mut self, ino: u64, from: u64, bytes: u64, cause: WriteBack, now: Nanos) {
        let f = self.files.entry(ino).or_default();
        let bytes = bytes.min(f.dirty_bytes);
        if self.cfg.clean_on_device {
            let ps = self.page_size;
            for page in from / ps..(from + bytes) / ps {
                if let Some(s) = self.slot_of(ino, page) {
                    if self.slots[s].data.len(ps as usize) as u64 == ps {
                        self.slots[s].data.leave_on_device();
                    }
                }
            }
        }
        let f = self.files.entry(ino).or_default();
        self.dirty.remove(&(f.since, ino));
        f.dirty_bytes -= bytes;
        f.since = now;
        if f.dirty_bytes > 0 {
            self.dirty.insert((now, ino));
        }
        self.dirty_bytes -= bytes;
        self.stats.add_written_back(cause, bytes);
    }

    /// The path `ino`'s dirty bytes were written under.
    pub fn dirty_path(&self, ino: u64) -> &str {
        self.files.get(&ino).map_or("", |f| f.path.as_str())
    }

    /// The dirty bytes `len` of `ino` starting at byte `from` of the file, gathered from its pages
    /// into `out` (cleared first: a write-back's buffer is kept from one to the next).
    pub fn dirty_data(&self, ino: u64, from: u64, len: u64, out: &mut Vec<u8>) {
        let ps = self.page_size;
        out.clear();
        let mut at = from;
        while at < from + len {
            let page = at / ps;
            let s = self.slot_of(ino, page).expect("a dirty page is never evicted");
            let data = self.slots[s].data.bytes().expect("a page with dirty bytes keeps them");
            let skip = (at - page * ps) as usize;
            let take = ((from + len - at) as usize).min(data.len() - skip);
            out.extend_from_slice(&data[skip..skip + take]);
            at += take as u64;
        }
    }

    /// Files with dirty bytes, dirtied longest ago first (Linux's `b_dirty` order).
    pub fn dirty_files(&self) -> Vec<u64> {
        self.dirty.iter().map(|&(_, ino)| ino).collect()
    }

    /// Whether dirty pages are over `dirty_background_ratio` of the cache.
    pub fn over_background(&self) -> bool {
        let limit = self.capacity_pages as u64 * self.page_size * self.cfg.dirty_background_ratio as u64 / 100;
        self.dirty_bytes > limit
    }

    /// Files whose oldest dirty byte is older than `dirty_expire` at `now`, oldest first.
    pub fn expired_files(&self, now: Nanos) -> Vec<u64> {
        let expired = |&&(since, _): &&(Nanos, u64)| since.saturating_add(self.cfg.dirty_expire) <= now;
        self.dirty.iter().take_while(expired).map(|&(_, ino)| ino).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PS: u64 = 4096;

    pub(super) fn cache(pages: u64) -> PageCache {
        PageCache::new(PageCacheConfig::with_capacity(pages * PS), PS)
    }

    pub(super) fn nothing_placed(_: u64) -> u64 {
        0
    }

    #[test]
    fn clock_gives_a_referenced_page_a_second_chance() {
        let mut c = cache(3);
        for p in 0..3 {
            assert!(c.insert(1, p, Some(&[p as u8]), 0, &nothing_placed));
        }
        assert!(c.read(1, 0, &mut [], 0).is_some());
        assert!(c.insert(1, 3, Some(&[3]), 0, &nothing_placed));
        // Page 0 was referenced: the hand cleared its bit and took page 1.
        assert!(c.contains(1, 0) && !c.contains(1, 1) && c.contains(1, 2) && c.contains(1, 3));
        assert!(c.insert(1, 4, Some(&[4]), 0, &nothing_placed));
        // The hand goes on from page 1's slot: page 2 next, unreferenced.
        assert!(c.contains(1, 0) && !c.contains(1, 2));
        assert_eq!(c.stats().evictions, 2);
        assert_eq!(c.peek(1, 0).map(|(d, _)| d), Some(Some(vec![0])));
    }

    #[test]
    fn dirty_pages_are_never_evicted() {
        let mut c = cache(2);
        for p in 0..2 {
            assert!(c.insert(7, p, Some(&[]), 0, &nothing_placed));
            c.append_dirty(7, p, "f", &[1; PS as usize], 5);
        }
        assert_eq!(c.dirty_bytes(7), 2 * PS);
        assert!(!c.insert(8, 0, Some(&[0]), 0, &nothing_placed), "every page is dirty");
        assert_eq!(c.dirty_files(), vec![7]);
        // Once written back (the placement holds them), they are clean and can go.
        c.cleaned(7, 0, 2 * PS, WriteBack::Fsync, 9);
        let placed = |_| 2 * PS;
        assert!(c.insert(8, 0, Some(&[0]), 0, &placed));
        assert_eq!(c.stats().written_back_fsync, 2 * PS);
        let mut out = vec![1];
        c.dirty_data(7, 0, 0, &mut out);
        assert_eq!(out, Vec::<u8>::new());
    }

    #[test]
    fn a_deleted_files_dirty_bytes_are_dropped() {
        let mut c = cache(4);
        c.insert(3, 0, Some(&[]), 0, &nothing_placed);
        c.append_dirty(3, 0, "f", &[9; 100], 0);
        c.drop_file(3);
        assert_eq!((c.total_dirty_bytes(), c.cached_pages(), c.stats().dropped_dirty_bytes), (0, 0, 100));
    }

    #[test]
    fn a_reused_slot_holds_only_its_new_pages_bytes() {
        // Slots keep their buffers when pages go (deleted files, evictions): a page that takes
        // one must not see the old page's bytes, whether it is read in or appended to.
        let mut c = cache(1);
        c.insert(3, 0, Some(&[]), 0, &nothing_placed);
        c.append_dirty(3, 0, "old", &[9; PS as usize], 0);
        c.drop_file(3);
        c.insert(4, 0, Some(&[]), 0, &nothing_placed);
        c.append_dirty(4, 0, "new", &[1; 10], 0);
        c.append_dirty(4, 0, "new", &[2; 5], 0);
        let mut out = Vec::new();
        c.dirty_data(4, 0, 15, &mut out);
        assert_eq!(out, [[1; 10].as_slice(), &[2; 5]].concat());
        assert_eq!(c.peek(4, 0).map(|(d, _)| d.map(|d| d.len())), Some(Some(15)));
        c.cleaned(4, 0, 15, WriteBack::Fsync, 1);
        let placed = |_| 15;
        assert!(c.insert(5, 2, Some(&[7; 3]), 0, &placed), "the clean page is evicted for this one");
        assert_eq!(c.peek(5, 2).map(|(d, _)| d), Some(Some(vec![7; 3])));
    }

    /// A cache that leaves clean pages on the device keeps the bytes of its dirty and partial
    /// pages only; a hit on a clean whole page says its bytes are on the device (the file system
    /// reads them from there), and appends to a partial page keep its bytes.
    #[test]
    fn clean_whole_pages_are_left_on_the_device() {
        let cfg = PageCacheConfig { clean_on_device: true, ..PageCacheConfig::with_capacity(8 * PS) };
        let mut c = PageCache::new(cfg, PS);
        let file: Vec<u8> = (0..3 * PS as usize + 100).map(|i| (i % 251) as u8).collect();
        for (p, chunk) in file.chunks(PS as usize).enumerate() {
            c.insert(1, p as u64, Some(&[]), 0, &nothing_placed);
            c.append_dirty(1, p as u64, "f", chunk, 0);
        }
        let mut out = Vec::new();
        c.dirty_data(1, 0, file.len() as u64, &mut out);
        assert_eq!(out, file);
        c.cleaned(1, 0, 3 * PS, WriteBack::Fsync, 1);
        let kept: Vec<usize> = c.slots.iter().filter_map(|s| s.data.bytes().map(<[u8]>::len)).collect();
        assert_eq!(kept, vec![100], "the three whole clean pages keep no bytes, the partial dirty one its own");
        let mut buf = vec![0xEE; 2 * PS as usize];
        let hit = c.read(1, 1, &mut buf, PS).expect("cached");
        assert!(hit.on_device && buf.iter().all(|&b| b == 0xEE), "nothing copied from a page on the device");
        let tail = c.read(1, 3, &mut buf, 3 * PS).expect("cached");
        assert!(!tail.on_device && buf[..100] == file[3 * PS as usize..], "the partial page's bytes copied");
        assert_eq!(c.peek(1, 0), Some((None, 0)));
        // A whole page read in keeps no bytes; a partial one stays whole and takes appends.
        let full: Vec<u8> = (0..PS).map(|i| (i % 7 == 0) as u8).collect();
        assert!(c.insert(3, 0, Some(&full), 0, &|_| PS));
        assert_eq!(c.peek(3, 0).map(|(d, _)| d), Some(None));
        assert!(c.insert(2, 0, Some(&[1, 0, 0, 2]), 0, &|_| 4));
        c.append_dirty(2, 0, "g", &[0, 42], 2);
        assert_eq!(c.peek(2, 0).map(|(d, _)| d), Some(Some(vec![1, 0, 0, 2, 0, 42])));
        // Without the setting, every page keeps its bytes.
        let mut whole = cache(2);
        assert!(whole.insert(3, 0, Some(&full), 0, &|_| PS));
        assert_eq!(whole.peek(3, 0).map(|(d, _)| d), Some(Some(full)));
    }

    #[test]
    fn dirty_bytes_expire_and_pass_the_background_ratio() {
        let mut c = cache(20);
        c.insert(1, 0, Some(&[]), 0, &nothing_placed);
        c.append_dirty(1, 0, "a", &[1; 10], 1_000);
        let expire = PageCacheConfig::with_capacity(1).dirty_expire;
        assert!(c.expired_files(1_000 + expire - 1).is_empty());
        assert_eq!(c.expired_files(1_000 + expire), vec![1]);
        assert!(!c.over_background());
        // 10 % of 20 pages is 2 pages.
        for p in 0..2 {
            c.insert(2, p, Some(&[]), 0, &nothing_placed);
            c.append_dirty(2, p, "b", &[2; PS as usize], 2_000);
        }
        assert!(c.over_background());
        assert_eq!(c.dirty_files(), vec![1, 2], "oldest first");
    }
}

//! Where page contents live: in memory, in a sparse backing file (devices larger than RAM), in
//! memory up to a budget and in a file beyond it, in memory without their zero runs ([`compact`]),
//! or nowhere (metadata-only mode for pure FTL studies).
//!
//! [`compact`]: super::compact
//!
//! The store is indexed by physical page, so it sees exactly what the NAND sees, and it keeps only
//! pages that can still be read: the media layer drops a page's contents the moment its FTL
//! invalidates it (an overwrite, a trim, a relocation, an erase), so memory follows the live data,
//! not everything ever programmed. A page without kept contents reads as "absent", which devices
//! turn into [`FlashError::NoData`]; the store never invents bytes.
//!
//! - Memory: page-sized slots in chunks of [`SLOTS_PER_CHUNK`], a free list of dropped slots, and a
//!   slot index per physical page (4 bytes). A relocation moves a slot, it does not copy bytes.
//!   Chunks are never returned, so resident memory is the peak of live pages (or the budget).
//! - Sparse file: page `ppn` at offset `ppn x page_size` with a presence bit per page. A dropped
//!   page's bit is cleared at once (it cannot be read again); its bytes leave the disk when its
//!   block is erased (one hole punched per erase, where the file system supports it). Pages of a
//!   block being programmed are gathered in memory and written with one system call when the
//!   block is full (blocks are programmed in order, and only the open ones are in memory: about
//!   one per write frontier), because a call per 4 KiB page made writing three times slower.
//! - Memory, then file: a page goes to memory while the memory holds fewer than its budget of
//!   pages (reusing dropped slots first), else to an unnamed file created when first needed.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::compact::CompactPages;
use crate::bits::BitSet;
use crate::error::{FlashError, Result};

/// How a device keeps page contents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataMode {
    /// Page contents in RAM (only the pages that can still be read).
    Memory,
    /// Page contents in a sparse file at this path (created, truncated to the raw capacity, kept).
    SparseFile(PathBuf),
    /// Page contents in an unnamed sparse file in this directory, gone when the device is dropped
    /// (or its process killed).
    TempFile(PathBuf),
    /// Page contents in RAM up to `memory_bytes`, beyond it in an unnamed sparse file in `dir`.
    MemoryThenFile { memory_bytes: u64, dir: PathBuf },
    /// Page contents in RAM without their runs of zero bytes (see `media::compact`): for runs whose
    /// values are zeros, where only keys and headers take memory.
    Compact,
    /// No contents: reads fail with `NoData`. For FTL studies where only the accounting matters.
    MetadataOnly,
}

/// Slots per memory chunk: 1 MiB of 4 KiB pages.
pub const SLOTS_PER_CHUNK: usize = 256;

const NO_SLOT: u32 = u32::MAX;

pub(crate) struct PageStore {
    memory: Option<MemoryPages>,
    compact: Option<CompactPages>,
    file: Option<FilePages>,
    /// Where the file goes when it is created on demand (memory-then-file).
    spill_dir: Option<PathBuf>,
    pages: u64,
    page_size: u32,
    pages_per_block: u32,
}

struct MemoryPages {
    page_size: usize,
    /// Per physical page: its slot, or `NO_SLOT`.
    slot_of: Vec<u32>,
    chunks: Vec<Box<[u8]>>,
    free: Vec<u32>,
    slots: u32,
    max_slots: u32,
}

struct FilePages {
    file: File,
    path: PathBuf,
    page_size: u64,
    pages_per_block: u32,
    present: BitSet,
    /// Blocks being programmed: the bytes of their pages so far.
    open: HashMap<u32, Vec<u8>>,
}

impl PageStore {
    pub fn new(mode: &DataMode, pages: u64, page_size: u32, pages_per_block: u32) -> Result<PageStore> {
        let mut store =
            PageStore { memory: None, compact: None, file: None, spill_dir: None, pages, page_size, pages_per_block };
        let memory = |max_slots: u64| MemoryPages {
            page_size: page_size as usize,
            slot_of: vec![NO_SLOT; pages as usize],
            chunks: Vec::new(),
            free: Vec::new(),
            slots: 0,
            max_slots: max_slots.min(u32::MAX as u64) as u32,
        };
        match mode {
            DataMode::Memory => store.memory = Some(memory(pages)),
            DataMode::MetadataOnly => {}
            DataMode::Compact => store.compact = Some(CompactPages::new(pages, page_size)),
            DataMode::SparseFile(path) => {
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .map_err(|e| backing(path, "create", e))?;
                store.file = Some(store.file_pages(f, path.clone())?);
            }
            DataMode::TempFile(dir) => store.file = Some(store.temp_file(dir)?),
            DataMode::MemoryThenFile { memory_bytes, dir } => {
                store.memory = Some(memory(memory_bytes / page_size as u64));
                store.spill_dir = Some(dir.clone());
            }
        }
        Ok(store)
    }

    fn temp_file(&self, dir: &Path) -> Result<FilePages> {
        let f = tempfile::tempfile_in(dir).map_err(|e| backing(dir, "create a temporary file in", e))?;
        self.file_pages(f, dir.join("(unnamed page store)"))
    }

    fn file_pages(&self, file: File, path: PathBuf) -> Result<FilePages> {
        file.set_len(self.pages * self.page_size as u64).map_err(|e| backing(&path, "set_len", e))?;
        Ok(FilePages {
            file,
            path,
            page_size: self.page_size as u64,
            pages_per_block: self.pages_per_block,
            present: BitSet::new(self.pages),
            open: HashMap::new(),
        })
    }

    /// Keeps `data` (exactly one page) as the contents of `ppn`, or nothing when `None`.
    pub fn put(&mut self, ppn: u32, data: Option<&[u8]>) -> Result<()> {
        let Some(d) = data else {
            self.drop_page(ppn);
            return Ok(());
        };
        if let Some(c) = self.compact.as_mut() {
            c.put(ppn, d);
            return Ok(());
        }
        if let Some(m) = self.memory.as_mut() {
            if m.has_room() {
                m.put(ppn, d);
                return self.page_in_memory(ppn);
            }
        }
        if self.file.is_none() {
            match self.spill_dir.clone() {
                Some(dir) => self.file = Some(self.temp_file(&dir)?),
                None => return Ok(()), // metadata only
            }
        }
        match self.file.as_mut() {
            Some(f) => f.put(ppn, d),
            None => Ok(()),
        }
    }

    /// A page went to memory. When it ends its block, the file's buffer of that block's earlier
    /// pages is complete: write it out (otherwise a block whose pages were split between memory
    /// and file would keep its buffer until it is erased, which may be never).
    fn page_in_memory(&mut self, ppn: u32) -> Result<()> {
        match self.file.as_mut() {
            Some(f) if (ppn + 1) % f.pages_per_block == 0 => f.write_open_block(ppn / f.pages_per_block),
            _ => Ok(()),
        }
    }

    /// Reads `ppn` into `buf`; `Ok(false)` when the page has no kept contents.
    pub fn get(&self, ppn: u32, buf: &mut [u8]) -> Result<bool> {
        if let Some(c) = &self.compact {
            return Ok(c.get(ppn, buf));
        }
        if self.memory.as_ref().is_some_and(|m| m.get(ppn, buf)) {
            return Ok(true);
        }
        match &self.file {
            Some(f) => f.get(ppn, buf),
            None => Ok(false),
        }
    }

    /// Moves the contents of `from` to `to` (a relocation): `from` keeps nothing.
    pub fn move_page(&mut self, from: u32, to: u32, scratch: &mut Vec<u8>) -> Result<()> {
        if let Some(c) = self.compact.as_mut() {
            c.move_page(from, to);
            return Ok(());
        }
        if let Some(m) = self.memory.as_mut() {
            if m.slot_of[from as usize] != NO_SLOT {
                m.drop_page(to);
                m.slot_of[to as usize] = std::mem::replace(&mut m.slot_of[from as usize], NO_SLOT);
                return self.page_in_memory(to);
            }
        }
        scratch.resize(self.page_size as usize, 0);
        let has = self.get(from, scratch)?;
        self.put(to, has.then_some(&scratch[..]))?;
        self.drop_page(from);
        Ok(())
    }

    /// Forgets the contents of `ppn` (invalidated: it can never be read again).
    pub fn drop_page(&mut self, ppn: u32) {
        if let Some(c) = self.compact.as_mut() {
            c.drop_page(ppn);
        }
        if let Some(m) = self.memory.as_mut() {
            m.drop_page(ppn);
        }
        if let Some(f) = self.file.as_mut() {
            f.drop_page(ppn);
        }
    }

    /// Forgets `pages` pages from `first` (an erased block), giving their disk space back.
    pub fn erase(&mut self, first: u32, pages: u32) {
        for ppn in first..first + pages {
            self.drop_page(ppn);
        }
        if let Some(f) = self.file.as_mut() {
            f.open.remove(&(first / f.pages_per_block));
            punch_hole(&f.file, first as u64 * f.page_size, pages as u64 * f.page_size);
        }
    }

    /// Bytes of page contents held in memory.
    pub fn resident_bytes(&self) -> u64 {
        let slots = self.memory.as_ref().map_or(0, |m| m.chunks.len() as u64 * (SLOTS_PER_CHUNK * m.page_size) as u64);
        slots + self.compact.as_ref().map_or(0, CompactPages::resident_bytes)
    }
}

impl FilePages {
    fn put(&mut self, ppn: u32, data: &[u8]) -> Result<()> {
        let (block, page) = (ppn / self.pages_per_block, (ppn % self.pages_per_block) as usize);
        let ps = self.page_size as usize;
        let buf = self.open.entry(block).or_default();
        if buf.len() < (page + 1) * ps {
            buf.resize((page + 1) * ps, 0);
        }
        buf[page * ps..(page + 1) * ps].copy_from_slice(data);
        self.present.set(ppn, true);
        if page + 1 == self.pages_per_block as usize {
            self.write_open_block(block)?;
        }
        Ok(())
    }

    /// Forgets `ppn`; when no page of its block is readable any more (and the block is not being
    /// programmed), gives the block's disk space back at once rather than at its erase: a device
    /// with room to spare may erase a dead block late or never, and the file would grow to every
    /// page ever programmed.
    fn drop_page(&mut self, ppn: u32) {
        if !self.present.get(ppn) {
            return;
        }
        self.present.set(ppn, false);
        // A dead page gives its disk space back at once (a page of a block still being programmed
        // is in memory, and is never written: see `write_open_block`). Per page, not per block:
        // blocks that mix live and dead pages for long would otherwise keep the file at the size
        // of everything written since their erase.
        if !self.open.contains_key(&(ppn / self.pages_per_block)) {
            punch_hole(&self.file, ppn as u64 * self.page_size, self.page_size);
        }
    }

    /// Writes the buffered pages of `block` (programmed in order, so a prefix of it) that are still
    /// alive to the file, in runs of consecutive pages: a page that died while its block was open
    /// (or went to memory) never reaches the file, where no later drop would punch it.
    fn write_open_block(&mut self, block: u32) -> Result<()> {
        let Some(buf) = self.open.remove(&block) else { return Ok(()) };
        let first = block * self.pages_per_block;
        let ps = self.page_size as usize;
        let pages = (buf.len() / ps) as u32;
        let mut p = 0;
        while p < pages {
            if !self.present.get(first + p) {
                p += 1;
                continue;
            }
            let start = p;
            while p < pages && self.present.get(first + p) {
                p += 1;
            }
            let at = (first + start) as u64 * self.page_size;
            self.file
                .write_all_at(&buf[start as usize * ps..p as usize * ps], at)
                .map_err(|e| backing(&self.path, "write", e))?;
        }
        Ok(())
    }

    fn get(&self, ppn: u32, buf: &mut [u8]) -> Result<bool> {
        if !self.present.get(ppn) {
            return Ok(false);
        }
        let (block, page) = (ppn / self.pages_per_block, (ppn % self.pages_per_block) as usize);
        let ps = self.page_size as usize;
        match self.open.get(&block) {
            Some(open) => buf.copy_from_slice(&open[page * ps..(page + 1) * ps]),
            None => {
                self.file.read_exact_at(buf, ppn as u64 * self.page_size).map_err(|e| backing(&self.path, "read", e))?
            }
        }
        Ok(true)
    }
}

impl MemoryPages {
    /// Whether a new page fits: a dropped slot to reuse, or room under the budget.
    fn has_room(&self) -> bool {
        !self.free.is_empty() || self.slots < self.max_slots
    }

    fn put(&mut self, ppn: u32, data: &[u8]) {
        let mut slot = self.slot_of[ppn as usize];
        if slot == NO_SLOT {
            slot = match self.free.pop() {
                Some(s) => s,
                None => {
                    if self.slots as usize == self.chunks.len() * SLOTS_PER_CHUNK {
                        // Zeroed allocation: the kernel hands out pages as they are first written.
                        self.chunks.push(vec![0u8; SLOTS_PER_CHUNK * self.page_size].into_boxed_slice());
                    }
                    self.slots += 1;
                    self.slots - 1
                }
            };
            self.slot_of[ppn as usize] = slot;
        }
        self.slot_mut(slot).copy_from_slice(data);
    }

    fn get(&self, ppn: u32, buf: &mut [u8]) -> bool {
        let slot = self.slot_of[ppn as usize];
        if slot == NO_SLOT {
            return false;
        }
        let (chunk, i) = (slot as usize / SLOTS_PER_CHUNK, slot as usize % SLOTS_PER_CHUNK);
        buf.copy_from_slice(&self.chunks[chunk][i * self.page_size..(i + 1) * self.page_size]);
        true
    }

    fn drop_page(&mut self, ppn: u32) {
        let slot = std::mem::replace(&mut self.slot_of[ppn as usize], NO_SLOT);
        if slot != NO_SLOT {
            self.free.push(slot);
        }
    }

    fn slot_mut(&mut self, slot: u32) -> &mut [u8] {
        let (chunk, i) = (slot as usize / SLOTS_PER_CHUNK, slot as usize % SLOTS_PER_CHUNK);
        &mut self.chunks[chunk][i * self.page_size..(i + 1) * self.page_size]
    }
}

/// Best effort: where the file system cannot punch holes, the bytes stay on disk, unread.
fn punch_hole(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: fallocate on a file descriptor we own, with a range inside the file; it reads or
        // writes no memory of ours.
        unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                offset as libc::off_t,
                len as libc::off_t,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

fn backing(path: &Path, op: &'static str, source: std::io::Error) -> FlashError {
    FlashError::Backing { path: path.to_path_buf(), op, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(b: u8) -> Vec<u8> {
        vec![b; 512]
    }

    fn check_store(mut s: PageStore) {
        let mut buf = page(0);
        let mut scratch = Vec::new();
        s.put(3, Some(&page(1))).unwrap();
        s.put(4, Some(&page(2))).unwrap();
        assert!(s.get(3, &mut buf).unwrap() && buf == page(1));
        s.move_page(3, 9, &mut scratch).unwrap();
        assert!(!s.get(3, &mut buf).unwrap(), "a moved page leaves nothing behind");
        assert!(s.get(9, &mut buf).unwrap() && buf == page(1));
        s.drop_page(4);
        assert!(!s.get(4, &mut buf).unwrap());
        s.put(4, Some(&page(5))).unwrap();
        s.erase(8, 8);
        assert!(!s.get(9, &mut buf).unwrap(), "erased");
        assert!(s.get(4, &mut buf).unwrap() && buf == page(5), "outside the erased block");
    }

    #[test]
    fn every_store_keeps_moves_and_drops_pages() {
        check_store(PageStore::new(&DataMode::Memory, 16, 512, 8).unwrap());
        check_store(PageStore::new(&DataMode::Compact, 16, 512, 8).unwrap());
        let dir = tempfile::tempdir().unwrap();
        check_store(PageStore::new(&DataMode::SparseFile(dir.path().join("p.img")), 16, 512, 8).unwrap());
        check_store(PageStore::new(&DataMode::TempFile(dir.path().to_path_buf()), 16, 512, 8).unwrap());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "the temporary store has no name");
        // Two pages of memory, the rest in a file.
        let spill = DataMode::MemoryThenFile { memory_bytes: 1024, dir: dir.path().to_path_buf() };
        check_store(PageStore::new(&spill, 16, 512, 8).unwrap());
    }

    #[test]
    fn memory_then_file_keeps_to_its_budget() {
        let dir = tempfile::tempdir().unwrap();
        let spill = DataMode::MemoryThenFile { memory_bytes: 8 * 512, dir: dir.path().to_path_buf() };
        let mut s = PageStore::new(&spill, 64, 512, 8).unwrap();
        assert!(s.file.is_none(), "no file until the memory is full");
        for ppn in 0..32 {
            s.put(ppn, Some(&page(ppn as u8))).unwrap();
        }
        assert!(s.file.is_some());
        assert_eq!(s.memory.as_ref().unwrap().slots, 8);
        let mut buf = page(0);
        for ppn in 0..32 {
            assert!(s.get(ppn, &mut buf).unwrap() && buf == page(ppn as u8), "PPN {ppn}");
        }
        // Dropped memory slots take new pages first; a page moved out of the file stays readable.
        s.drop_page(3);
        s.move_page(20, 40, &mut Vec::new()).unwrap();
        assert!(s.get(40, &mut buf).unwrap() && buf == page(20));
        assert!(!s.get(20, &mut buf).unwrap());
        assert_eq!(s.memory.as_ref().unwrap().slots, 8, "the budget holds");
    }

    /// Pages of one block split between memory (slots freed by dropped pages) and the file: once
    /// the block's last page is written, wherever it went, the file holds no buffer for it, and
    /// every page reads back.
    #[test]
    fn a_block_split_between_memory_and_file_leaves_no_buffer_behind() {
        let dir = tempfile::tempdir().unwrap();
        let spill = DataMode::MemoryThenFile { memory_bytes: 4 * 512, dir: dir.path().to_path_buf() };
        let mut s = PageStore::new(&spill, 64, 512, 8).unwrap();
        for ppn in 0..4 {
            s.put(ppn, Some(&page(ppn as u8))).unwrap(); // memory, now full
        }
        for ppn in 8..15 {
            s.put(ppn, Some(&page(ppn as u8))).unwrap(); // the file, buffered: block 1 is open
        }
        s.drop_page(0); // a slot frees up, so block 1's last page goes to memory
        s.put(15, Some(&page(15))).unwrap();
        assert!(s.file.as_ref().unwrap().open.is_empty(), "block 1's buffer was written out");
        s.drop_page(1);
        for ppn in 16..23 {
            s.put(ppn, Some(&page(ppn as u8))).unwrap();
        }
        let mut scratch = Vec::new();
        s.put(2, None).unwrap();
        s.move_page(3, 23, &mut scratch).unwrap(); // a relocation ends block 2 in memory
        assert!(s.file.as_ref().unwrap().open.is_empty(), "block 2's buffer was written out");
        let mut buf = page(0);
        for ppn in (8..24).filter(|&p| p != 23) {
            assert!(s.get(ppn, &mut buf).unwrap() && buf == page(ppn as u8), "PPN {ppn}");
        }
        assert!(s.get(23, &mut buf).unwrap() && buf == page(3));
    }

    /// A block whose file pages all die while it is open, and whose last page goes to memory, never
    /// reaches the file: no later drop of a file page could punch it.
    #[test]
    fn a_block_dead_before_it_is_written_never_reaches_the_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let spill = DataMode::MemoryThenFile { memory_bytes: 4096, dir: dir.path().to_path_buf() };
        let mut s = PageStore::new(&spill, 64 * 16, 4096, 16).unwrap();
        s.put(0, Some(&vec![1; 4096])).unwrap(); // the one memory slot
        for ppn in 16..31 {
            s.put(ppn, Some(&vec![2; 4096])).unwrap(); // block 1 in the file, open
            s.drop_page(ppn);
        }
        s.drop_page(0);
        s.put(31, Some(&vec![3; 4096])).unwrap(); // block 1's last page, in memory
        let f = s.file.as_ref().unwrap();
        assert!(f.open.is_empty());
        assert_eq!(f.file.metadata().unwrap().blocks(), 0, "nothing of block 1 was written");
        let mut buf = vec![0u8; 4096];
        assert!(s.get(31, &mut buf).unwrap() && buf == vec![3; 4096]);
    }

    /// A file page that dies gives its disk space back before any erase, alone or with its block.
    #[test]
    fn a_dead_block_leaves_the_file_at_once() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let mut s = PageStore::new(&DataMode::TempFile(dir.path().to_path_buf()), 64 * 16, 4096, 16).unwrap();
        let allocated = |s: &PageStore| s.file.as_ref().unwrap().file.metadata().unwrap().blocks() * 512;
        for ppn in 0..64 * 16 {
            s.put(ppn, Some(&vec![ppn as u8; 4096])).unwrap();
        }
        let full = allocated(&s);
        assert!(full >= 64 * 16 * 4096, "{full}");
        for ppn in 0..32 * 16 {
            s.drop_page(ppn); // blocks 0..32 die whole
        }
        for ppn in (32 * 16..64 * 16).step_by(2) {
            s.drop_page(ppn); // the others keep half their pages
        }
        let after = allocated(&s);
        assert!(after <= full / 4 + 64 * 1024, "a quarter of the pages live: {full} -> {after}");
        let mut buf = vec![0u8; 4096];
        for ppn in (32 * 16 + 1..64 * 16).step_by(2) {
            assert!(s.get(ppn, &mut buf).unwrap() && buf == vec![ppn as u8; 4096], "PPN {ppn}");
        }
    }

    /// Pages that die while their block is being programmed are not written to the file.
    #[test]
    fn pages_dead_before_their_block_is_written_never_reach_the_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let mut s = PageStore::new(&DataMode::TempFile(dir.path().to_path_buf()), 4 * 16, 4096, 16).unwrap();
        for ppn in 0..16 {
            s.put(ppn, Some(&vec![ppn as u8; 4096])).unwrap();
            if ppn % 4 != 0 && ppn < 15 {
                s.drop_page(ppn); // dies while block 0 is open
            }
        }
        let f = s.file.as_ref().unwrap();
        assert!(f.open.is_empty(), "block 0 is full, so written");
        let allocated = f.file.metadata().unwrap().blocks() * 512;
        assert!(allocated <= 5 * 4096, "5 of 16 pages live, {allocated} bytes on disk");
        let mut buf = vec![0u8; 4096];
        for ppn in [0, 4, 8, 12, 15] {
            assert!(s.get(ppn, &mut buf).unwrap() && buf == vec![ppn as u8; 4096], "PPN {ppn}");
        }
    }

    #[test]
    fn memory_reuses_dropped_slots() {
        let mut s = PageStore::new(&DataMode::Memory, 4 * SLOTS_PER_CHUNK as u64, 512, 8).unwrap();
        for round in 0..10u32 {
            for ppn in 0..SLOTS_PER_CHUNK as u32 {
                let target = (round % 4) * SLOTS_PER_CHUNK as u32 + ppn;
                s.put(target, Some(&page(round as u8))).unwrap();
                if round > 0 {
                    s.drop_page(((round - 1) % 4) * SLOTS_PER_CHUNK as u32 + ppn);
                }
            }
        }
        // At most two chunks' worth of pages were ever live at once.
        assert!(s.resident_bytes() <= 2 * (SLOTS_PER_CHUNK * 512) as u64, "{}", s.resident_bytes());
    }
}

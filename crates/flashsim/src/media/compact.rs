//! Page contents in RAM with their runs of zero bytes left out ([`DataMode::Compact`]).
//!
//! A page is kept as its runs of non-zero bytes (`crate::zero_runs`); a page of zeros keeps no
//! bytes at all. Reading a page writes zeros and copies the runs back: the bytes read are exactly
//! the bytes programmed, whatever they are.
//!
//! Why: the paper-scale key-value SSD runs write tens of GB of values that no one reads back for
//! their content (the repro measures counts and times). With the lab's zero values
//! (`--values zeros`) a page keeps only its keys and record headers, so a run that needed a spill
//! file of 40 GB fits in a few hundred MB of RAM. Counts and simulated times depend on sizes only,
//! never on the bytes, so nothing measured changes. Random values do not shrink here: they cost
//! their page size plus the run headers.
//!
//! [`DataMode::Compact`]: super::DataMode::Compact

use crate::zero_runs::{decode, encode, GRANULE};

pub(crate) struct CompactPages {
    page_size: usize,
    /// Per physical page: its encoded runs, or `None` when the page has no kept contents.
    pages: Vec<Option<Box<[u8]>>>,
    /// Bytes of the encoded runs of every kept page.
    bytes: u64,
    /// The runs of the page being encoded, kept between pages (every page programmed is encoded).
    runs: Vec<(usize, usize)>,
}

impl CompactPages {
    /// A page holds at most 65,536 granules (4 MiB; the run headers are u16).
    pub fn new(pages: u64, page_size: u32) -> CompactPages {
        let page_size = page_size as usize;
        debug_assert!(page_size.div_ceil(GRANULE) <= 1 << 16);
        CompactPages { page_size, pages: vec![None; pages as usize], bytes: 0, runs: Vec::new() }
    }

    pub fn put(&mut self, ppn: u32, data: &[u8]) {
        debug_assert_eq!(data.len(), self.page_size);
        let encoded = encode(data, &mut self.runs);
        self.bytes += encoded.len() as u64;
        if let Some(old) = self.pages[ppn as usize].replace(encoded) {
            self.bytes -= old.len() as u64;
        }
    }

    /// Reads `ppn` into `buf`; `false` when the page has no kept contents.
    pub fn get(&self, ppn: u32, buf: &mut [u8]) -> bool {
        match &self.pages[ppn as usize] {
            Some(runs) => {
                decode(runs, buf);
                true
            }
            None => false,
        }
    }

    /// Moves the contents of `from` to `to`: the runs change owner, no byte is copied.
    pub fn move_page(&mut self, from: u32, to: u32) {
        self.drop_page(to);
        self.pages[to as usize] = self.pages[from as usize].take();
    }

    pub fn drop_page(&mut self, ppn: u32) {
        if let Some(old) = self.pages[ppn as usize].take() {
            self.bytes -= old.len() as u64;
        }
    }

    /// Bytes held: the runs, and the per-page table.
    pub fn resident_bytes(&self) -> u64 {
        self.bytes + (self.pages.len() * std::mem::size_of::<Option<Box<[u8]>>>()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zero_runs::{GRANULE, RUN_HEADER};

    #[test]
    fn the_store_keeps_moves_and_drops_pages_and_counts_its_bytes() {
        let mut s = CompactPages::new(8, 4096);
        let table = s.resident_bytes();
        let mut page = vec![0u8; 4096];
        page[100] = 5;
        s.put(3, &page);
        assert_eq!(s.resident_bytes(), table + (RUN_HEADER + GRANULE) as u64);
        let mut buf = vec![1u8; 4096];
        assert!(s.get(3, &mut buf) && buf == page);
        assert!(!s.get(4, &mut buf), "a page never written has no contents");
        s.move_page(3, 6);
        assert!(!s.get(3, &mut buf) && s.get(6, &mut buf) && buf == page);
        s.put(6, &vec![0u8; 4096]);
        assert_eq!(s.resident_bytes(), table, "an overwrite gives the old runs back");
        assert!(s.get(6, &mut buf) && buf.iter().all(|&b| b == 0), "a page of zeros is kept, as zeros");
        s.drop_page(6);
        assert!(!s.get(6, &mut buf));
    }
}

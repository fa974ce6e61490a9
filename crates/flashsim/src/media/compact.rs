//! Page contents in RAM with their runs of zero bytes left out ([`DataMode::Compact`]).
//!
//! A page is cut into [`GRANULE`]-byte granules and kept as its runs of granules that hold a
//! non-zero byte, each as `first granule (u16) | granules (u16) | bytes`; a page of zeros keeps
//! no bytes at all. Reading a page writes zeros and copies the runs back: the bytes read are
//! exactly the bytes programmed, whatever they are.
//!
//! Why: the paper-scale key-value SSD runs write tens of GB of values that no one reads back for
//! their content (the repro measures counts and times). With the lab's zero values
//! (`--values zeros`) a page keeps only its keys and record headers, so a run that needed a spill
//! file of 40 GB fits in a few hundred MB of RAM. Counts and simulated times depend on sizes only,
//! never on the bytes, so nothing measured changes. Random values do not shrink here: they cost
//! their page size plus the run headers.
//!
//! [`DataMode::Compact`]: super::DataMode::Compact

/// Bytes per granule: small enough that a record's header and key cost little more than their own
/// bytes, large enough that the scan and the run headers stay cheap.
pub const GRANULE: usize = 64;

/// Bytes of a run's header: its first granule and its length in granules, u16 each.
const RUN_HEADER: usize = 4;

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

/// The runs of non-zero granules of `page` (`runs`: scratch space).
fn encode(page: &[u8], runs: &mut Vec<(usize, usize)>) -> Box<[u8]> {
    let granules = page.len().div_ceil(GRANULE);
    let zero = |g: usize| is_zero(&page[g * GRANULE..((g + 1) * GRANULE).min(page.len())]);
    // Sized once: a first pass finds the runs, so the output is allocated exactly (this is on the
    // path of every page programmed, and reallocation was a large part of its cost).
    runs.clear();
    let mut g = 0;
    while g < granules {
        if zero(g) {
            g += 1;
            continue;
        }
        let first = g;
        while g < granules && !zero(g) {
            g += 1;
        }
        runs.push((first, g));
    }
    let len = runs.iter().map(|&(a, b)| RUN_HEADER + (b * GRANULE).min(page.len()) - a * GRANULE).sum();
    let mut out = Vec::with_capacity(len);
    for &(first, end) in runs.iter() {
        // Both fit a u16: a page has at most 65,536 granules, and a run of all of them starts at 0
        // (its length is kept minus one).
        out.extend_from_slice(&(first as u16).to_le_bytes());
        out.extend_from_slice(&((end - first - 1) as u16).to_le_bytes());
        out.extend_from_slice(&page[first * GRANULE..(end * GRANULE).min(page.len())]);
    }
    out.into_boxed_slice()
}

/// Whether every byte of `g` is zero: the OR of its 8-byte words, with no early exit, which the
/// compiler turns into wide vector operations (a byte-by-byte scan that stops at the first
/// non-zero byte cannot be, and cost a third of a zero-valued run's time).
fn is_zero(g: &[u8]) -> bool {
    // A whole granule has a length the compiler knows, and its loop unrolls into a few vector
    // ORs; only a page's last, partial granule takes the general loop.
    if let Ok(full) = <&[u8; GRANULE]>::try_from(g) {
        return full.chunks_exact(8).fold(0u64, |a, w| a | u64::from_ne_bytes(w.try_into().expect("8 bytes"))) == 0;
    }
    let words = g.chunks_exact(8);
    let tail = words.remainder().iter().fold(0u8, |a, &b| a | b);
    words.fold(0u64, |a, w| a | u64::from_ne_bytes(w.try_into().expect("8-byte chunk"))) == 0 && tail == 0
}

/// Writes the page whose runs are `runs` into `buf`.
fn decode(runs: &[u8], buf: &mut [u8]) {
    buf.fill(0);
    let mut at = 0;
    while at < runs.len() {
        let first = u16::from_le_bytes([runs[at], runs[at + 1]]) as usize * GRANULE;
        let granules = u16::from_le_bytes([runs[at + 2], runs[at + 3]]) as usize + 1;
        let end = (first + granules * GRANULE).min(buf.len());
        at += RUN_HEADER;
        buf[first..end].copy_from_slice(&runs[at..at + end - first]);
        at += end - first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(page: &[u8]) -> usize {
        let runs = encode(page, &mut Vec::new());
        let mut back = vec![0xAA; page.len()];
        decode(&runs, &mut back);
        assert_eq!(back, page);
        runs.len()
    }

    #[test]
    fn pages_come_back_byte_for_byte_and_zeros_cost_nothing() {
        let ps = 16 << 10;
        assert_eq!(round_trip(&vec![0u8; ps]), 0, "a page of zeros keeps no bytes");
        let full: Vec<u8> = (0..ps).map(|i| (i % 251) as u8 + 1).collect();
        assert_eq!(round_trip(&full), ps + RUN_HEADER, "one run of the whole page");
        // A record header and key at 1,000 and another at 9,000, zeros between: two runs.
        let mut records = vec![0u8; ps];
        records[1000..1400].fill(7);
        records[9000..9010].fill(9);
        let kept = round_trip(&records);
        assert!(kept <= 2 * RUN_HEADER + 400 + 10 + 4 * GRANULE, "{kept} bytes kept for 410 non-zero bytes");
        // Non-zero bytes at both edges, and in the last byte only.
        let mut edges = vec![0u8; ps];
        edges[0] = 1;
        edges[ps - 1] = 2;
        assert_eq!(round_trip(&edges), 2 * (RUN_HEADER + GRANULE));
    }

    /// One non-zero byte anywhere, in a whole granule or in a page's last, partial one, is kept
    /// with its granule and nothing else.
    #[test]
    fn a_single_byte_is_found_at_every_offset() {
        let ps = 1000; // 15 whole granules and a partial one of 40 bytes
        for at in 0..ps {
            let mut page = vec![0u8; ps];
            page[at] = 0x80;
            let granule = GRANULE.min(ps - at / GRANULE * GRANULE);
            assert_eq!(round_trip(&page), RUN_HEADER + granule, "byte {at}");
        }
    }

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

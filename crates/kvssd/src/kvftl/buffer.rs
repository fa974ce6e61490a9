//! Page buffers (seed 004 §III-C1): one per partition size below the page size and per running
//! block (new data, GC data), each holding the page of its running block that is being filled.
//!
//! A partition smaller than a page is copied into its buffer; the page is programmed when its
//! last partition arrives (the buffer is full), so every page is programmed once and in order.
//! Partitions of a page or more are programmed directly and never buffered. A get of a partition
//! whose page is still in a buffer is a "buffer read": no flash read.
//!
//! The paper's buffers are DRAM backed by a supercapacitor: on a power failure their contents are
//! programmed to flash, so an acknowledged put survives whether it is buffered or not. This model
//! offers no power-cut operation; [`super::Kvftl::flush`] is what the supercapacitor does: every
//! buffer holding a partition is programmed half full, and the rest of its page is skipped (those
//! partitions can never be used: they count as invalid, reclaimed by GC).
//!
//! Ours: the GC stream has buffers of its own (the paper keeps re-put partitions apart from new
//! ones but sizes its RAM for 14 buffers), so RAM for buffers is up to twice the paper's 14 pages;
//! buffers are allocated when first used.

use super::block::Stream;

pub(crate) struct Buffers {
    bufs: Vec<Option<Box<[u8]>>>,
    min_p: u8,
    page_size: usize,
}

impl Buffers {
    pub fn new(min_p: u8, page_log2: u8) -> Buffers {
        let sizes = page_log2.saturating_sub(min_p) as usize;
        Buffers { bufs: (0..2 * sizes).map(|_| None).collect(), min_p, page_size: 1 << page_log2 }
    }

    fn index(&self, p: u8, stream: Stream) -> usize {
        (p - self.min_p) as usize * 2 + stream as usize
    }

    /// The buffer of internal size 2^p and `stream` (allocated, zeroed, on first use).
    pub fn page_mut(&mut self, p: u8, stream: Stream) -> &mut [u8] {
        let i = self.index(p, stream);
        let ps = self.page_size;
        self.bufs[i].get_or_insert_with(|| vec![0u8; ps].into_boxed_slice())
    }

    /// The buffer of internal size 2^p and `stream`, if it was ever used.
    pub fn page(&self, p: u8, stream: Stream) -> Option<&[u8]> {
        self.bufs[self.index(p, stream)].as_deref()
    }

    /// Bytes of RAM the buffers in use take.
    pub fn ram_bytes(&self) -> u64 {
        self.bufs.iter().flatten().map(|b| b.len() as u64).sum()
    }
}

//! A file on the zone placement: its bytes as a list of extents in zones, the bytes still buffered in memory, and
//! how far it was synced.
//!
//! An extent is a run of bytes written contiguously from a page of a zone: `(zone, start page,
//! bytes)`. Only the last page of an extent may be partly used: that happens when `sync` had to
//! write a partial page (padded: a zone cannot be rewritten), and then the file's next bytes start
//! a new extent on a fresh page. Invariants: the extents hold exactly the file's first `dev_len`
//! bytes, in order; `buf` holds the rest (`len - dev_len` bytes, not yet on the device); the
//! durable snapshot of the last sync is the prefix of the extents covering `synced_len` bytes (a
//! file only grows, and host GC moves extents in both views at once).

use flashsim::Nanos;

use crate::flash_fs::FileInode;
use crate::fs::WriteHint;

/// A run of a file's bytes in one zone, starting at a page boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub zone: u32,
    /// First page, counted from the zone start.
    pub start: u32,
    pub bytes: u64,
}

impl Extent {
    /// Pages the extent occupies (its last page may be partly used).
    pub fn pages(&self, page_size: u64) -> u64 {
        self.bytes.div_ceil(page_size)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Inode {
    pub hint: WriteHint,
    pub extents: Vec<Extent>,
    pub len: u64,
    /// Bytes on the device (the extents' total).
    pub dev_len: u64,
    /// Bytes `dev_len..len`, waiting for a whole chunk of pages (or a sync).
    pub buf: Vec<u8>,
    pub synced_len: u64,
    /// Completion time of the latest device write of this file.
    pub pending: Nanos,
}

impl FileInode for Inode {
    fn new(hint: WriteHint) -> Inode {
        Inode { hint, ..Default::default() }
    }

    fn len(&self) -> u64 {
        self.len
    }

    fn hint(&self) -> WriteHint {
        self.hint
    }
}

impl Inode {
    /// A file as a remount finds it: everything it has is on the device and synced.
    pub fn restored(hint: WriteHint, len: u64, extents: Vec<Extent>) -> Inode {
        Inode { hint, extents, len, dev_len: len, synced_len: len, ..Default::default() }
    }

    /// Appends an extent written after the last one, merging when it continues it on the next
    /// page of the same zone (only possible when the last one ends on a page boundary).
    pub fn push_extent(&mut self, e: Extent, page_size: u64) {
        self.dev_len += e.bytes;
        if let Some(last) = self.extents.last_mut() {
            if last.zone == e.zone
                && last.bytes % page_size == 0
                && last.start as u64 + last.bytes / page_size == e.start as u64
            {
                last.bytes += e.bytes;
                return;
            }
        }
        self.extents.push(e);
    }

    /// The extents of the durable snapshot: the prefix covering `synced_len` bytes.
    pub fn durable_extents(&self) -> Vec<Extent> {
        let mut out = Vec::new();
        let mut left = self.synced_len;
        for e in &self.extents {
            if left == 0 {
                break;
            }
            let take = e.bytes.min(left);
            out.push(Extent { bytes: take, ..*e });
            left -= take;
        }
        out
    }

    /// The pieces of the device bytes `offset..offset + n` (inside `dev_len`): for each, the
    /// extent's zone, the first page to read, how many pages, and where the wanted bytes start in
    /// the first page and how many there are.
    pub(crate) fn pieces(&self, offset: u64, n: u64, page_size: u64) -> Vec<Piece> {
        let mut out = Vec::new();
        let end = offset + n;
        let mut at = 0u64; // file offset of the current extent
        for e in &self.extents {
            let (lo, hi) = (at.max(offset), (at + e.bytes).min(end));
            if lo < hi {
                let rel = lo - at;
                let first = rel / page_size;
                let last = (hi - at - 1) / page_size;
                out.push(Piece {
                    zone: e.zone,
                    page: e.start as u64 + first,
                    pages: last - first + 1,
                    skip: (rel % page_size) as usize,
                    len: (hi - lo) as usize,
                });
            }
            at += e.bytes;
            if at >= end {
                break;
            }
        }
        out
    }
}

/// A contiguous read from one zone (see [`Inode::pieces`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    pub zone: u32,
    pub page: u64,
    pub pages: u64,
    pub skip: usize,
    pub len: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_merge_only_on_whole_pages_and_the_durable_prefix_is_cut_at_the_sync() {
        let mut i = Inode::new(WriteHint::Flush);
        i.push_extent(Extent { zone: 3, start: 0, bytes: 8192 }, 4096);
        i.push_extent(Extent { zone: 3, start: 2, bytes: 100 }, 4096);
        assert_eq!(i.extents, vec![Extent { zone: 3, start: 0, bytes: 8292 }]);
        // After a partial page the next bytes start a new extent, even on the next page.
        i.push_extent(Extent { zone: 3, start: 3, bytes: 4096 }, 4096);
        i.push_extent(Extent { zone: 5, start: 0, bytes: 4096 }, 4096);
        assert_eq!(i.extents.len(), 3);
        assert_eq!(i.dev_len, 8292 + 8192);
        i.synced_len = 8292 + 10;
        assert_eq!(
            i.durable_extents(),
            vec![Extent { zone: 3, start: 0, bytes: 8292 }, Extent { zone: 3, start: 3, bytes: 10 }]
        );
    }

    #[test]
    fn pieces_cover_a_range_across_extents() {
        let mut i = Inode::new(WriteHint::None);
        i.push_extent(Extent { zone: 1, start: 4, bytes: 5000 }, 4096);
        i.push_extent(Extent { zone: 2, start: 0, bytes: 8192 }, 4096);
        let p = i.pieces(4000, 2000, 4096);
        assert_eq!(
            p,
            vec![
                Piece { zone: 1, page: 4, pages: 2, skip: 4000, len: 1000 },
                Piece { zone: 2, page: 0, pages: 1, skip: 0, len: 1000 },
            ]
        );
        assert_eq!(i.pieces(5000 + 4096, 10, 4096), vec![Piece { zone: 2, page: 1, pages: 1, skip: 0, len: 10 }]);
    }
}

//! The remap log: modelled battery-backed NVRAM that keeps the mappings a page's OOB cannot express.
//!
//! After `remap(src, dst)` the physical page's OOB still names `src` (flash cannot be rewritten in
//! place), so a map rebuilt from OOB alone (power-loss recovery) or consulted by GC to find a page's
//! owners would miss `dst`: the Remap-SSD consistency problem (seed 000 section 2.2). As in Remap-SSD
//! and RemapCom, each entry (page offset in block, LPN) goes to an NVRAM segment of the block that
//! holds the physical page; segments are allocated whole and freed when the block is erased.
//!
//! Invariant kept by the device: an entry exists exactly while its LPN is mapped to that page
//! through a remap (an overwrite, trim or new remap of the LPN removes it), so every entry is
//! current and recovery applies them over the OOB scan without sequence numbers. TRIMs of LPNs
//! that still have older copies on flash are logged too (a trim entry), or recovery would
//! resurrect the old data; a trim entry lives until the LPN is written again or its last stale copy
//! is erased.

use serde::Serialize;

/// One remap entry: the LPN `lpn` maps to page `page` of the segment's block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RemapEntry {
    pub page: u32,
    pub lpn: u32,
}

/// NVRAM usage of the remap log.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct NvramUsage {
    /// Bytes per entry: 6 (16-bit page offset + 32-bit LPN, as seed 000 section 4.6) or 8 for devices
    /// whose LPNs or page offsets need more bits.
    pub entry_bytes: u32,
    pub remap_entries: u64,
    pub trim_entries: u64,
    pub segments: u64,
    /// Segments x entries per segment x entry size, plus trim entries x entry size.
    pub bytes: u64,
    /// Highest `bytes` seen.
    pub peak_bytes: u64,
}

pub(crate) struct RemapLog {
    /// Per block: the entries of pages in that block.
    segments: Vec<Vec<RemapEntry>>,
    segment_entries: u64,
    usage: NvramUsage,
}

impl RemapLog {
    pub fn new(blocks: u64, segment_entries: u32, entry_bytes: u32) -> Self {
        RemapLog {
            segments: vec![Vec::new(); blocks as usize],
            segment_entries: segment_entries as u64,
            usage: NvramUsage { entry_bytes, ..Default::default() },
        }
    }

    pub fn usage(&self) -> NvramUsage {
        self.usage
    }

    pub fn push(&mut self, block: u32, entry: RemapEntry) {
        let seg = &mut self.segments[block as usize];
        if seg.len() as u64 % self.segment_entries == 0 {
            self.usage.segments += 1;
        }
        seg.push(entry);
        self.usage.remap_entries += 1;
        self.update_bytes();
    }

    /// Removes the entry of `lpn` from `block`'s segment; returns whether there was one.
    pub fn remove(&mut self, block: u32, lpn: u32) -> bool {
        let seg = &mut self.segments[block as usize];
        let Some(i) = seg.iter().position(|e| e.lpn == lpn) else {
            return false;
        };
        seg.swap_remove(i);
        if seg.len() as u64 % self.segment_entries == 0 {
            self.usage.segments -= 1;
        }
        self.usage.remap_entries -= 1;
        self.update_bytes();
        true
    }

    /// Takes every entry of `block` (GC of that block frees its segments).
    pub fn take(&mut self, block: u32) -> Vec<RemapEntry> {
        let seg = std::mem::take(&mut self.segments[block as usize]);
        self.usage.segments -= (seg.len() as u64).div_ceil(self.segment_entries);
        self.usage.remap_entries -= seg.len() as u64;
        self.update_bytes();
        seg
    }

    pub fn entries(&self, block: u32) -> &[RemapEntry] {
        &self.segments[block as usize]
    }

    pub fn set_trim_entries(&mut self, n: u64) {
        self.usage.trim_entries = n;
        self.update_bytes();
    }

    fn update_bytes(&mut self) {
        let u = &mut self.usage;
        u.bytes = (u.segments * self.segment_entries + u.trim_entries) * u.entry_bytes as u64;
        u.peak_bytes = u.peak_bytes.max(u.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_allocated_whole_and_freed() {
        let mut log = RemapLog::new(4, 2, 6);
        log.push(1, RemapEntry { page: 0, lpn: 10 });
        assert_eq!((log.usage().segments, log.usage().bytes), (1, 12));
        log.push(1, RemapEntry { page: 1, lpn: 11 });
        log.push(1, RemapEntry { page: 2, lpn: 12 });
        assert_eq!(log.usage().segments, 2);
        assert!(log.remove(1, 11));
        assert!(!log.remove(1, 11));
        assert_eq!(log.usage().segments, 1);
        log.set_trim_entries(3);
        assert_eq!(log.usage().bytes, (2 + 3) * 6);
        let taken = log.take(1);
        assert_eq!(taken.len(), 2);
        assert_eq!((log.usage().segments, log.usage().remap_entries), (0, 0));
        assert_eq!(log.usage().peak_bytes, (2 + 3) * 6);
    }
}

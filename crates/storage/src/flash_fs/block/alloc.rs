//! The LPN allocator of SimFs: free extents of the data region, handed out so that files stay
//! contiguous. An appending file first asks for the LPN right after its last one; failing that it
//! takes a window of several pages from the next free extent (a roving first fit), so that files
//! written at the same time (a WAL and an SST) do not interleave page by page.

use std::collections::BTreeMap;

/// Free LPN extents: start -> length, maximal (no two adjacent).
#[derive(Debug, Clone)]
pub(super) struct Allocator {
    free: BTreeMap<u32, u32>,
    free_pages: u64,
    cursor: u32,
}

impl Allocator {
    /// All of `start..end` free.
    pub fn new(start: u32, end: u32) -> Allocator {
        let mut free = BTreeMap::new();
        if end > start {
            free.insert(start, end - start);
        }
        Allocator { free, free_pages: (end - start) as u64, cursor: start }
    }

    pub fn free_pages(&self) -> u64 {
        self.free_pages
    }

    /// Takes `lpn` if it is free.
    pub fn take_exact(&mut self, lpn: u32) -> bool {
        let Some((&start, &len)) = self.free.range(..=lpn).next_back() else {
            return false;
        };
        if lpn >= start + len {
            return false;
        }
        self.free.remove(&start);
        if lpn > start {
            self.free.insert(start, lpn - start);
        }
        if lpn + 1 < start + len {
            self.free.insert(lpn + 1, start + len - lpn - 1);
        }
        self.free_pages -= 1;
        true
    }

    /// Takes up to `want` contiguous pages from the first free extent at or after the cursor
    /// (wrapping); returns (start, count).
    pub fn take_run(&mut self, want: u32) -> Option<(u32, u32)> {
        let (&start, &len) = self.free.range(self.cursor..).next().or_else(|| self.free.iter().next())?;
        let got = want.min(len);
        self.free.remove(&start);
        if got < len {
            self.free.insert(start + got, len - got);
        }
        self.free_pages -= got as u64;
        self.cursor = start + got;
        Some((start, got))
    }

    /// Returns `start..start+len` to the free set, merging with neighbours.
    pub fn release(&mut self, start: u32, len: u32) {
        if len == 0 {
            return;
        }
        let (mut s, mut l) = (start, len);
        if let Some((&ps, &pl)) = self.free.range(..start).next_back() {
            if ps + pl == start {
                self.free.remove(&ps);
                s = ps;
                l += pl;
            }
        }
        if let Some(&nl) = self.free.get(&(start + len)) {
            self.free.remove(&(start + len));
            l += nl;
        }
        self.free.insert(s, l);
        self.free_pages += len as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_exact_takes_and_merging_releases() {
        let mut a = Allocator::new(10, 30);
        assert_eq!(a.take_run(5), Some((10, 5)));
        assert!(a.take_exact(15));
        assert!(!a.take_exact(15));
        assert_eq!(a.take_run(100), Some((16, 14)));
        assert_eq!(a.take_run(1), None);
        assert_eq!(a.free_pages(), 0);
        a.release(12, 2);
        a.release(14, 2);
        a.release(10, 2);
        assert_eq!(a.free_pages(), 6);
        assert_eq!(a.take_run(100), Some((10, 6)));
    }
}

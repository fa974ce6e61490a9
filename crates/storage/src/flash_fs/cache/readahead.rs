//! Linux's on-demand readahead, per file (`struct file_ra_state`, `get_init_ra_size`,
//! `get_next_ra_size`): a read that starts a file or continues the previous read is sequential;
//! its first miss reads a window of `init(request)` pages, and each window grows (x4 while small,
//! then x2, up to `readahead_max`) when a read reaches its marker page, which reads the next
//! window ahead without waiting. Random reads read only what they ask for.

use super::PageCache;

/// Linux's per-file readahead window (`struct file_ra_state`), in pages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Readahead {
    start: u64,
    size: u64,
    /// The window's marker page: a read reaching it reads the next window ahead.
    marker: u64,
    /// The page after the previous read.
    next: u64,
    /// Whether the file was read before (a read at page 0 of a fresh file is sequential).
    used: bool,
}

/// The pages a read should fetch from the placement: `wait` before it returns, `ahead` without
/// waiting (readahead), each as runs of consecutive pages.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Fetch {
    pub wait: Vec<(u64, u64)>,
    pub ahead: Vec<(u64, u64)>,
}

impl PageCache {
    /// What a read of pages `first..=last` of `ino` fetches, given the pages the placement holds
    /// (`backed`: pages below it have bytes on the placement); updates the file's readahead window.
    pub fn plan_read(&mut self, ino: u64, first: u64, last: u64, backed: u64) -> Fetch {
        let max = self.cfg.readahead_max_bytes / self.page_size;
        let ra = self.files.entry(ino).or_default().ra;
        // Linux: a read at the file's start, or one that continues the previous read.
        let sequential = first == 0 || (ra.used && first == ra.next);
        let missing: Vec<u64> = (first..=last).filter(|&p| !self.contains(ino, p)).collect();
        let mut fetch = Fetch { wait: runs(&missing), ahead: Vec::new() };
        let mut new = Readahead { next: last + 1, used: true, ..ra };
        let req = last - first + 1;
        if max > 0 && sequential {
            if !missing.is_empty() {
                // A miss: a new window from the read, the request included (sync readahead).
                let size =
                    if ra.size > 0 && first == ra.next { next_window(ra.size, max) } else { init_window(req, max) };
                let size = size.max(req);
                new.start = first;
                new.size = size;
                new.marker = first + req;
                fetch.ahead = self.absent(ino, first + req, first + size, backed);
            } else if ra.size > 0 && (first..=last).contains(&ra.marker) {
                // The marker: the next window, ahead (async readahead).
                let start = ra.start + ra.size;
                let size = next_window(ra.size, max);
                new.start = start;
                new.size = size;
                new.marker = start;
                fetch.ahead = self.absent(ino, start, start + size, backed);
            }
        }
        self.files.entry(ino).or_default().ra = new;
        fetch
    }

    /// Runs of the pages `from..to` (below `backed`) the cache does not hold.
    fn absent(&self, ino: u64, from: u64, to: u64, backed: u64) -> Vec<(u64, u64)> {
        let pages: Vec<u64> = (from..to.min(backed)).filter(|&p| !self.contains(ino, p)).collect();
        runs(&pages)
    }
}

/// Runs `(first, count)` of consecutive pages.
fn runs(pages: &[u64]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &p in pages {
        match out.last_mut() {
            Some((s, n)) if *s + *n == p => *n += 1,
            _ => out.push((p, 1)),
        }
    }
    out
}

/// Linux's first window for a request of `req` pages (`get_init_ra_size`).
fn init_window(req: u64, max: u64) -> u64 {
    let r = req.next_power_of_two();
    if r <= max / 32 {
        4 * r
    } else if r <= max / 4 {
        2 * r
    } else {
        max
    }
}

/// Linux's next window after one of `cur` pages (`get_next_ra_size`).
fn next_window(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cache, nothing_placed};
    use super::*;

    #[test]
    fn readahead_grows_on_sequential_reads_and_not_on_random_ones() {
        let mut c = cache(1000);
        // 128 KiB = 32 pages at most. A first read of page 0: 4 pages (the request and 3 ahead).
        let f = c.plan_read(1, 0, 0, 1000);
        assert_eq!(f, Fetch { wait: vec![(0, 1)], ahead: vec![(1, 3)] });
        for p in 0..4 {
            c.insert(1, p, Some(&[]), 0, &nothing_placed);
        }
        // Page 1 is the marker: the next window (8 pages) is read ahead.
        assert_eq!(c.plan_read(1, 1, 1, 1000), Fetch { wait: vec![], ahead: vec![(4, 8)] });
        for p in 4..12 {
            c.insert(1, p, Some(&[]), 0, &nothing_placed);
        }
        assert_eq!(c.plan_read(1, 2, 3, 1000), Fetch::default());
        // The marker of the second window: 16 pages, then 32 (the most).
        assert_eq!(c.plan_read(1, 4, 4, 1000), Fetch { wait: vec![], ahead: vec![(12, 16)] });
        for p in 12..28 {
            c.insert(1, p, Some(&[]), 0, &nothing_placed);
        }
        assert_eq!(c.plan_read(1, 5, 12, 1000), Fetch { wait: vec![], ahead: vec![(28, 32)] });
        // A random read elsewhere reads what it asks for.
        assert_eq!(c.plan_read(1, 500, 501, 1000), Fetch { wait: vec![(500, 2)], ahead: vec![] });
        // Readahead stops at the placed pages.
        assert_eq!(c.plan_read(2, 0, 1, 3), Fetch { wait: vec![(0, 2)], ahead: vec![(2, 1)] });
    }

    #[test]
    fn linux_window_sizes() {
        // get_init_ra_size and get_next_ra_size with a 32-page maximum.
        assert_eq!([1, 2, 3, 8, 9, 32].map(|r| init_window(r, 32)), [4, 4, 8, 16, 32, 32]);
        assert_eq!([1, 2, 4, 16, 17, 32].map(|r| next_window(r, 32)), [4, 4, 8, 32, 32, 32]);
    }
}

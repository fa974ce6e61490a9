//! Free logical pages (LPAs) of DFTL-KV, kept as runs so that a 64-page value costs a few map
//! operations, and the two ways a put takes its LPAs ([`super::LpaAllocation`]):
//! - **sequential** (the default): the next free LPAs after the last ones taken, wrapping around
//!   the logical space, as a log-structured page-mapped FTL writes: every put takes fresh LPAs
//!   and the old value's are invalidated (freed), so over time the live LPAs spread over the whole
//!   logical space, and with them the translation pages holding live entries;
//! - **lowest free**: the lowest free LPAs (DFTL-KV before issue 28): the live LPAs stay packed
//!   at the bottom of the space, in as few translation pages as the live entries fill.

use std::collections::BTreeMap;

pub(crate) struct FreeLpas {
    /// Free runs: first LPA -> length.
    runs: BTreeMap<u32, u32>,
    free: u64,
}

impl FreeLpas {
    /// LPAs `0..n`, all free.
    pub fn new(n: u32) -> FreeLpas {
        let mut runs = BTreeMap::new();
        if n > 0 {
            runs.insert(0, n);
        }
        FreeLpas { runs, free: n as u64 }
    }

    pub fn free(&self) -> u64 {
        self.free
    }

    /// The `n` free LPAs at and after `cursor`, wrapping past the end of the space to LPA 0 (in
    /// the order taken); false (and nothing taken) when fewer are free. Returns the LPA after the
    /// last one taken in `cursor`.
    pub fn take_after(&mut self, cursor: &mut u32, n: usize, out: &mut Vec<u32>) -> bool {
        if (n as u64) > self.free {
            return false;
        }
        let mut left = n as u32;
        while left > 0 {
            // The run holding the cursor, else the first one after it, else the first one.
            let holding = self.runs.range(..=*cursor).next_back().filter(|&(&s, &l)| *cursor < s + l);
            let (&s, &l) = match holding.or_else(|| self.runs.range(*cursor..).next()) {
                Some(run) => run,
                None => match self.runs.first_key_value() {
                    Some(run) => run,
                    None => return false,
                },
            };
            let from = if s <= *cursor && *cursor < s + l { *cursor } else { s };
            let k = (s + l - from).min(left);
            self.runs.remove(&s);
            if from > s {
                self.runs.insert(s, from - s);
            }
            if from + k < s + l {
                self.runs.insert(from + k, s + l - from - k);
            }
            out.extend(from..from + k);
            *cursor = from + k;
            left -= k;
        }
        self.free -= n as u64;
        true
    }

    /// The `n` lowest free LPAs, ascending; `None` (and nothing taken) when fewer are free.
    pub fn take(&mut self, n: usize, out: &mut Vec<u32>) -> bool {
        if (n as u64) > self.free {
            return false;
        }
        let mut left = n as u32;
        while left > 0 {
            let Some((start, len)) = self.runs.pop_first() else { return false };
            let k = len.min(left);
            out.extend(start..start + k);
            if k < len {
                self.runs.insert(start + k, len - k);
            }
            left -= k;
        }
        self.free -= n as u64;
        true
    }

    /// Frees `lpas` (as a take gave them: no LPA twice).
    pub fn give_back(&mut self, lpas: &[u32]) {
        let mut i = 0;
        while i < lpas.len() {
            let start = lpas[i];
            let mut len = 1;
            while i + (len as usize) < lpas.len() && lpas[i + len as usize] == start + len {
                len += 1;
            }
            i += len as usize;
            self.insert_run(start, len);
        }
    }

    fn insert_run(&mut self, mut start: u32, mut len: u32) {
        self.free += len as u64;
        if let Some((&s, &l)) = self.runs.range(..start).next_back() {
            debug_assert!(s + l <= start, "LPA {start} freed twice");
            if s + l == start {
                self.runs.remove(&s);
                start = s;
                len += l;
            }
        }
        if let Some(&l) = self.runs.get(&(start + len)) {
            self.runs.remove(&(start + len));
            len += l;
        }
        self.runs.insert(start, len);
    }

    /// Whether `lpa` is free (for the consistency check).
    pub fn is_free(&self, lpa: u32) -> bool {
        self.runs.range(..=lpa).next_back().is_some_and(|(&s, &l)| lpa < s + l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowest_first_and_runs_merge_back() {
        let mut f = FreeLpas::new(10);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        assert!(f.take(3, &mut a) && f.take(4, &mut b));
        assert_eq!((a.clone(), b.clone()), (vec![0, 1, 2], vec![3, 4, 5, 6]));
        f.give_back(&a);
        let mut c = Vec::new();
        assert!(f.take(5, &mut c));
        assert_eq!(c, vec![0, 1, 2, 7, 8], "the lowest free, across runs");
        assert!(!f.take(2, &mut Vec::new()), "one left");
        f.give_back(&b);
        f.give_back(&c);
        assert_eq!(f.free(), 10);
        assert_eq!(f.runs.len(), 1, "everything merged into one run");
        assert!(f.is_free(9) && f.is_free(0));
    }

    #[test]
    fn sequential_takes_fresh_lpas_and_wraps_around() {
        let mut f = FreeLpas::new(10);
        let mut cursor = 0;
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        assert!(f.take_after(&mut cursor, 3, &mut a) && f.take_after(&mut cursor, 4, &mut b));
        assert_eq!((a.clone(), b.clone(), cursor), (vec![0, 1, 2], vec![3, 4, 5, 6], 7));
        // a's LPAs are freed (its key updated): the next put still takes fresh ones, then wraps
        // to the freed ones and skips b's.
        f.give_back(&a);
        assert!(f.take_after(&mut cursor, 5, &mut c));
        assert_eq!((c.clone(), cursor), (vec![7, 8, 9, 0, 1], 2));
        assert!(!f.take_after(&mut cursor, 2, &mut Vec::new()), "one left");
        let mut d = Vec::new();
        assert!(f.take_after(&mut cursor, 1, &mut d));
        assert_eq!(d, vec![2]);
        // A cursor inside a free run takes from the cursor on.
        f.give_back(&b);
        let mut cursor = 5;
        let mut e = Vec::new();
        assert!(f.take_after(&mut cursor, 3, &mut e));
        assert_eq!((e.clone(), cursor), (vec![5, 6, 3], 4));
        f.give_back(&c);
        f.give_back(&d);
        f.give_back(&e);
        assert_eq!((f.free(), f.runs.len()), (10, 1));
    }
}

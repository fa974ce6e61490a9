//! Free logical pages (LPAs) of DFTL-KV: a value gets the lowest free LPAs (ours: the paper does
//! not say how LPAs are chosen; lowest-first keeps a value's LPAs, and so its CMT entries, in few
//! translation pages), kept as runs so that a 64-page value costs a few map operations.

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

    /// Frees `lpas` (ascending, as [`FreeLpas::take`] gave them).
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
}

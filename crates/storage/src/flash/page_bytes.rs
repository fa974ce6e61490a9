//! A cached page's bytes (`cache`): whole, or as its runs of non-zero bytes
//! (`flashsim::zero_runs`) when the cache keeps its pages compact.
//!
//! A page the engine appends to is whole (appends land in place); a clean page of a compact cache
//! is kept as runs, so a cache of zero-valued records holds their keys and headers only, as the
//! device's compact store does. Whatever the form, the bytes read back are the bytes put in.

use flashsim::zero_runs;

#[derive(Debug)]
pub(super) enum PageBytes {
    Whole(Vec<u8>),
    /// The runs of a page of `len` bytes.
    Runs {
        runs: Box<[u8]>,
        len: usize,
    },
}

impl Default for PageBytes {
    fn default() -> Self {
        PageBytes::Whole(Vec::new())
    }
}

impl PageBytes {
    pub fn len(&self) -> usize {
        match self {
            PageBytes::Whole(v) => v.len(),
            PageBytes::Runs { len, .. } => *len,
        }
    }

    /// Empties the page; a whole page keeps its buffer for the next one (as a kernel keeps its
    /// page frames), a compact one gives its runs back.
    pub fn clear(&mut self) {
        match self {
            PageBytes::Whole(v) => v.clear(),
            PageBytes::Runs { .. } => *self = PageBytes::default(),
        }
    }

    /// The page's bytes become `data`, whole (a compact page's runs are dropped, not decoded).
    pub fn set(&mut self, data: &[u8]) {
        match self {
            PageBytes::Whole(v) => {
                v.clear();
                v.extend_from_slice(data);
            }
            PageBytes::Runs { .. } => *self = PageBytes::Whole(data.to_vec()),
        }
    }

    /// The page whole, to append to (a compact page is decoded first).
    pub fn whole_mut(&mut self) -> &mut Vec<u8> {
        if let PageBytes::Runs { runs, len } = self {
            *self = PageBytes::Whole(zero_runs::decode_to_vec(runs, *len));
        }
        match self {
            PageBytes::Whole(v) => v,
            PageBytes::Runs { .. } => unreachable!("decoded above"),
        }
    }

    /// Keeps the page as its runs (`scratch`: the encoder's run list).
    pub fn compact(&mut self, scratch: &mut Vec<(usize, usize)>) {
        if let PageBytes::Whole(v) = self {
            let runs = zero_runs::encode(v, scratch);
            *self = PageBytes::Runs { runs, len: v.len() };
        }
    }

    /// Copies the page's bytes `offset..offset + dst.len()` (inside the page) into `dst`.
    pub fn copy_to(&self, offset: usize, dst: &mut [u8]) {
        match self {
            PageBytes::Whole(v) => dst.copy_from_slice(&v[offset..offset + dst.len()]),
            PageBytes::Runs { runs, .. } => zero_runs::decode_range(runs, offset, dst),
        }
    }

    /// Appends the page's bytes `offset..offset + len` to `out`.
    pub fn extend_into(&self, offset: usize, len: usize, out: &mut Vec<u8>) {
        match self {
            PageBytes::Whole(v) => out.extend_from_slice(&v[offset..offset + len]),
            PageBytes::Runs { .. } => {
                let start = out.len();
                out.resize(start + len, 0);
                self.copy_to(offset, &mut out[start..]);
            }
        }
    }

    pub fn to_vec(&self) -> Vec<u8> {
        let mut v = vec![0u8; self.len()];
        self.copy_to(0, &mut v);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_reads_back_the_same_whole_or_compact() {
        let mut data = vec![0u8; 4096];
        data[100..140].fill(7);
        data[4000] = 9;
        let mut p = PageBytes::default();
        p.set(&data);
        p.compact(&mut Vec::new());
        assert!(matches!(&p, PageBytes::Runs { runs, len: 4096 } if runs.len() < 300));
        assert_eq!(p.to_vec(), data);
        let mut part = vec![1u8; 50];
        p.copy_to(95, &mut part);
        assert_eq!(part, &data[95..145]);
        p.whole_mut().extend_from_slice(&[3, 4]);
        assert_eq!(p.len(), 4098);
        assert_eq!(&p.to_vec()[..4096], &data[..]);
        p.clear();
        assert_eq!(p.len(), 0);
        // Setting a compact page replaces its runs.
        p.set(&data);
        p.compact(&mut Vec::new());
        p.set(&[5, 0, 6]);
        assert_eq!(p.to_vec(), vec![5, 0, 6]);
    }
}

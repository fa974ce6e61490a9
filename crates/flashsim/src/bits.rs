//! A fixed-size bit set (one bit per LPN or PPN; a Vec<bool> would be eight times larger).

#[derive(Clone, Debug)]
pub(crate) struct BitSet {
    words: Vec<u64>,
}

impl BitSet {
    pub fn new(len: u64) -> Self {
        BitSet { words: vec![0; len.div_ceil(64) as usize] }
    }

    pub fn get(&self, i: u32) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    pub fn set(&mut self, i: u32, on: bool) {
        let w = &mut self.words[(i / 64) as usize];
        if on {
            *w |= 1 << (i % 64);
        } else {
            *w &= !(1 << (i % 64));
        }
    }

    /// Indexes of the set bits, ascending.
    pub fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(wi, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let b = w.trailing_zeros();
                w &= w - 1;
                Some(wi as u32 * 64 + b)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_and_iterate() {
        let mut b = BitSet::new(130);
        for i in [0, 63, 64, 129] {
            b.set(i, true);
        }
        b.set(63, false);
        assert!(b.get(0) && !b.get(63) && b.get(64) && b.get(129));
        assert_eq!(b.ones().collect::<Vec<_>>(), vec![0, 64, 129]);
    }
}

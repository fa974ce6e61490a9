//! `std::mt19937_64`, the engine behind RocksDB's `Random64`.
//!
//! Contract: the output sequence for a seed is the C++ standard's `std::mt19937_64(seed)` sequence (checked against
//! the standard's required value: the 10000th output of a default-constructed engine, seed 5489, is
//! 9981545732273789042). Mixgraph needs it twice: as the per-thread generator (`thread->rand`) and as a hash,
//! `Random64(seed).Next()`, that scatters power-law ranks over the key space; [`first_output`] computes the latter
//! without building the whole 312-word state.

const N: usize = 312;
const M: usize = 156;
const MATRIX_A: u64 = 0xB502_6F5A_A966_19E9;
const UPPER: u64 = !0u64 << 31;
const LOWER: u64 = (1u64 << 31) - 1;
const F: u64 = 6_364_136_223_846_793_005;

/// The C++ standard library's default seed for `mt19937_64`.
pub const DEFAULT_SEED: u64 = 5489;

#[inline]
fn temper(mut y: u64) -> u64 {
    y ^= (y >> 29) & 0x5555_5555_5555_5555;
    y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
    y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
    y ^ (y >> 43)
}

#[inline]
fn init_step(prev: u64, i: u64) -> u64 {
    F.wrapping_mul(prev ^ (prev >> 62)).wrapping_add(i)
}

/// The 64-bit Mersenne Twister.
#[derive(Clone)]
pub struct Mt19937_64 {
    state: Box<[u64; N]>,
    index: usize,
}

impl std::fmt::Debug for Mt19937_64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mt19937_64").field("index", &self.index).finish_non_exhaustive()
    }
}

impl Mt19937_64 {
    /// `std::mt19937_64(seed)`.
    pub fn new(seed: u64) -> Mt19937_64 {
        let mut state = Box::new([0u64; N]);
        state[0] = seed;
        for i in 1..N {
            state[i] = init_step(state[i - 1], i as u64);
        }
        Mt19937_64 { state, index: N }
    }

    fn twist(&mut self) {
        let s = &mut self.state;
        for i in 0..N {
            let y = (s[i] & UPPER) | (s[(i + 1) % N] & LOWER);
            let mut next = s[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                next ^= MATRIX_A;
            }
            s[i] = next;
        }
        self.index = 0;
    }

    /// The next output (`engine()`).
    pub fn next_u64(&mut self) -> u64 {
        if self.index >= N {
            self.twist();
        }
        let y = self.state[self.index];
        self.index += 1;
        temper(y)
    }
}

/// `std::mt19937_64(seed)()`: the first output only, from the three state words it depends on.
pub fn first_output(seed: u64) -> u64 {
    // The first output is the tempered new x[0] = x[M] ^ twist(x[0], x[1]); x[1] and x[M] come from the seeding
    // recurrence, so only M + 1 steps of it are needed.
    let x0 = seed;
    let x1 = init_step(x0, 1);
    let mut xm = x1;
    for i in 2..=M as u64 {
        xm = init_step(xm, i);
    }
    let y = (x0 & UPPER) | (x1 & LOWER);
    let mut next = xm ^ (y >> 1);
    if y & 1 != 0 {
        next ^= MATRIX_A;
    }
    temper(next)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_check_value() {
        let mut g = Mt19937_64::new(DEFAULT_SEED);
        let mut last = 0;
        for _ in 0..10_000 {
            last = g.next_u64();
        }
        assert_eq!(last, 9_981_545_732_273_789_042);
    }

    #[test]
    fn first_output_matches_engine() {
        for seed in [0u64, 1, 1000, 5489, u64::MAX, 0x1234_5678_9abc_def0] {
            assert_eq!(first_output(seed), Mt19937_64::new(seed).next_u64(), "seed {seed}");
        }
    }
}

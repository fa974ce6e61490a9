//! LevelDB's `Random` (Park-Miller "minimal standard" generator) and its `RandomGenerator` of compressible values.
//!
//! Contract: bit-identical to LevelDB's `util/random.h` `Random` and to `benchmarks/db_bench.cc` `RandomGenerator`
//! (with `test::CompressibleString` / `test::RandomString`): the same seed gives the same numbers and the same value
//! bytes as LevelDB. RocksDB's db_bench builds its values the same way (same `Random`, same seed 301), so Mixgraph
//! reuses [`CompressibleValues`].

use crate::error::WorkloadError;

/// LevelDB's `Random`: `seed = seed * 16807 mod (2^31 - 1)`.
///
/// Period 2^31 - 2; `uniform(n)` is `next() % n` (slightly biased for `n` not dividing 2^31 - 2, as in LevelDB).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkMiller {
    seed: u32,
}

impl ParkMiller {
    const M: u32 = 2_147_483_647;
    const A: u64 = 16_807;

    /// LevelDB's constructor: the low 31 bits of `s`; 0 and 2^31 - 1 (fixed points) become 1.
    pub fn new(s: u32) -> ParkMiller {
        let mut seed = s & 0x7fff_ffff;
        if seed == 0 || seed == Self::M {
            seed = 1;
        }
        ParkMiller { seed }
    }

    /// The next value in `1..2^31 - 1`.
    pub fn next_u31(&mut self) -> u32 {
        let product = self.seed as u64 * Self::A;
        // (product % M) using (x << 31) % M == x, as LevelDB does; the first reduction can exceed M by at most M.
        let mut s = ((product >> 31) + (product & Self::M as u64)) as u32;
        if s > Self::M {
            s -= Self::M;
        }
        self.seed = s;
        s
    }

    /// `next() % n` for `n >= 1` (LevelDB's `Uniform(int n)`).
    pub fn uniform(&mut self, n: u32) -> u32 {
        self.next_u31() % n.max(1)
    }
}

/// LevelDB's `RandomGenerator`: a buffer of 100-byte pieces, each `compression_ratio x 100` random printable bytes
/// repeated to 100, from which values are consecutive slices (wrapping to the start when a value would overrun).
///
/// The buffer grows piece by piece until it holds at least 1 MiB (LevelDB; the 1 MiB exceeds the compressors'
/// 32 KiB window so values do not compress against each other) and, our addition, more than the largest value asked
/// for (LevelDB asserts instead; RocksDB grows it to `max(1 MiB, value_size)`). For every value size LevelDB accepts
/// the buffer is byte-for-byte LevelDB's.
#[derive(Debug, Clone)]
pub struct CompressibleValues {
    data: Vec<u8>,
    pos: usize,
}

impl CompressibleValues {
    /// LevelDB's default buffer size.
    pub const MIN_BUFFER: usize = 1 << 20;

    /// The generator for `compression_ratio` (db_bench's `--compression_ratio`, default 0.5) able to serve values up
    /// to `max_value` bytes.
    ///
    /// Errors: `compression_ratio` must be finite and in `(0, 1]`; `max_value` at most 1 GiB.
    pub fn new(compression_ratio: f64, max_value: usize) -> Result<CompressibleValues, WorkloadError> {
        if !compression_ratio.is_finite() || compression_ratio <= 0.0 || compression_ratio > 1.0 {
            return Err(WorkloadError::invalid(
                "compression_ratio",
                compression_ratio,
                "a fraction in (0, 1] (db_bench default 0.5)",
            ));
        }
        if max_value > 1 << 30 {
            return Err(WorkloadError::invalid("value_size", max_value, "at most 1073741824 bytes"));
        }
        let mut rnd = ParkMiller::new(301);
        // `static_cast<int>(len * compressed_fraction)`, at least 1.
        let raw = ((100.0 * compression_ratio) as usize).max(1);
        let mut data = Vec::with_capacity(Self::MIN_BUFFER.max(max_value) + 100);
        let mut raw_piece = Vec::with_capacity(raw);
        while data.len() < Self::MIN_BUFFER || data.len() <= max_value {
            raw_piece.clear();
            // RandomString: ' ' + Uniform(95), i.e. ' '..='~'.
            raw_piece.extend((0..raw).map(|_| b' ' + rnd.uniform(95) as u8));
            let mut piece = 0;
            while piece < 100 {
                let take = raw.min(100 - piece);
                data.extend_from_slice(&raw_piece[..take]);
                piece += take;
            }
        }
        Ok(CompressibleValues { data, pos: 0 })
    }

    /// The next `len` bytes of the buffer (LevelDB's `Generate`); restarts at the beginning when `len` would overrun.
    /// `len` larger than the buffer returns the whole buffer (cannot happen for sizes up to the constructor's
    /// `max_value`).
    pub fn generate(&mut self, len: usize) -> &[u8] {
        let len = len.min(self.data.len());
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        self.pos += len;
        &self.data[self.pos - len..self.pos]
    }

    /// The whole buffer (for tests and compression checks).
    pub fn buffer(&self) -> &[u8] {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_miller_known_sequence() {
        // The minimal standard generator from seed 1: 16807, 282475249, 1622650073 (Park & Miller 1988), and the
        // classic check that seed 1 reaches 1043618065 after 10,000 steps.
        let mut r = ParkMiller::new(1);
        assert_eq!(r.next_u31(), 16_807);
        assert_eq!(r.next_u31(), 282_475_249);
        assert_eq!(r.next_u31(), 1_622_650_073);
        let mut r = ParkMiller::new(1);
        let mut last = 0;
        for _ in 0..10_000 {
            last = r.next_u31();
        }
        assert_eq!(last, 1_043_618_065);
    }

    #[test]
    fn bad_seeds_become_one() {
        assert_eq!(ParkMiller::new(0), ParkMiller::new(1));
        assert_eq!(ParkMiller::new(0x7fff_ffff), ParkMiller::new(1));
        assert_eq!(ParkMiller::new(0x8000_0001), ParkMiller::new(1));
    }

    #[test]
    fn buffer_shape() {
        let g = CompressibleValues::new(0.5, 100).unwrap();
        let d = g.buffer();
        assert_eq!(d.len(), 1_048_600); // 10486 pieces of 100 bytes: the first length >= 1 MiB.
        for piece in d.chunks(100) {
            assert_eq!(piece[..50], piece[50..]);
        }
        assert!(d.iter().all(|c| (b' '..=b'~').contains(c)));
        assert!(CompressibleValues::new(0.0, 10).is_err());
        assert!(CompressibleValues::new(1.5, 10).is_err());
    }

    #[test]
    fn consecutive_slices_and_wrap() {
        let mut g = CompressibleValues::new(0.5, 4096).unwrap();
        let whole = g.buffer().to_vec();
        assert_eq!(g.generate(10), &whole[0..10]);
        assert_eq!(g.generate(5), &whole[10..15]);
        let n = whole.len();
        let mut g = CompressibleValues::new(0.5, 4096).unwrap();
        g.generate(n - 3);
        assert_eq!(g.generate(4), &whole[0..4]);
    }
}

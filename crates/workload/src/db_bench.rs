//! LevelDB db_bench key/value generators: fillseq, fillrandom, overwrite, readrandom, readseq, seekrandom, plus
//! fillzipfian (fillrandom with YCSB-Zipfian keys).
//!
//! Contract:
//! - Keys are `%016d` of the key number: 16 ASCII digits (db_bench's `KeyBuffer` with `--key_prefix=0`).
//! - Key numbers come from LevelDB's own generator, [`ParkMiller`], exactly as db_bench draws them
//!   (`rand.Uniform(FLAGS_num)`), so a seed reproduces db_bench's key sequence bit for bit. db_bench seeds a benchmark's
//!   thread with `1000 + threads created so far` (1001 for the first benchmark of a run, 1002 for the second, ...):
//!   pass [`LEVELDB_FIRST_SEED`] to get the first benchmark's keys. Park-Miller is a weak generator (31-bit state,
//!   `next % n` slightly biased); we keep it because fidelity to db_bench's key stream matters more here than quality,
//!   and it is trivially deterministic. A `u64` seed is folded to 32 bits (`seed ^ seed >> 32`), so seeds below 2^32
//!   are LevelDB's seeds.
//! - Values are LevelDB's `RandomGenerator` slices ([`CompressibleValues`]): about 50 % compressible at the default
//!   `compression_ratio` 0.5, byte-identical to LevelDB's for a fixed value size.
//! - Op mapping: fillseq / fillrandom / fillzipfian -> `Insert`, overwrite -> `Update`, readrandom -> `Read`,
//!   seekrandom -> `Scan { len: 0 }` (db_bench seeks and compares the key, reads no further), readseq -> one
//!   `Scan { start_key: [], len: reads }` (db_bench counts each `Next` as an op; the caller can count records).
//! - Extensions (not in db_bench): a value-size distribution instead of the fixed `--value_size` (drawn from an
//!   independent PCG stream so the key stream stays LevelDB's), and fillzipfian: key numbers from
//!   [`crate::zipfian::Zipfian`] (theta 0.99 by default) over `0..num`, rank 0 most popular. By default the rank is the
//!   key number, so hot keys are adjacent; [`ZipfianKeyOrder::Hashed`] scatters them (`fnvhash64(rank) % num`). The
//!   Zipfian's uniform draws come from an independent PCG stream (Park-Miller's 31 bits are too coarse for it).

use crate::error::WorkloadError;
use crate::fnv::fnvhash64;
use crate::op::Op;
use crate::park_miller::{CompressibleValues, ParkMiller};
use crate::rng::{seeded, sub_seed, Pcg64Mcg};
use crate::value_size::ValueSize;
use crate::zipfian::{Zipfian, ZIPFIAN_CONSTANT};
use std::fmt;
use std::str::FromStr;

/// The seed db_bench gives the first benchmark of a run (`1000 + 1`).
pub const LEVELDB_FIRST_SEED: u64 = 1001;

/// Largest `num` db_bench accepts (`FLAGS_num` is an `int`).
pub const MAX_NUM: u64 = i32::MAX as u64;

/// A db_bench benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum DbBenchKind {
    /// Keys 0..num in order.
    FillSeq,
    /// `num` keys drawn uniformly (with replacement) from 0..num.
    FillRandom,
    /// As fillrandom, over an existing database.
    Overwrite,
    /// `reads` point reads of uniform keys.
    ReadRandom,
    /// One iteration over the first `reads` records.
    ReadSeq,
    /// `reads` seeks to uniform keys.
    SeekRandom,
    /// `num` inserts with Zipfian key numbers (our extension; see the module docs).
    FillZipfian,
}

impl DbBenchKind {
    /// All kinds.
    pub const ALL: [DbBenchKind; 7] = [
        DbBenchKind::FillSeq,
        DbBenchKind::FillRandom,
        DbBenchKind::Overwrite,
        DbBenchKind::ReadRandom,
        DbBenchKind::ReadSeq,
        DbBenchKind::SeekRandom,
        DbBenchKind::FillZipfian,
    ];

    /// Accepted names.
    pub const NAMES: &'static str = "fillseq, fillrandom, overwrite, readrandom, readseq, seekrandom, fillzipfian";

    /// db_bench's name.
    pub fn name(self) -> &'static str {
        match self {
            DbBenchKind::FillSeq => "fillseq",
            DbBenchKind::FillRandom => "fillrandom",
            DbBenchKind::Overwrite => "overwrite",
            DbBenchKind::ReadRandom => "readrandom",
            DbBenchKind::ReadSeq => "readseq",
            DbBenchKind::SeekRandom => "seekrandom",
            DbBenchKind::FillZipfian => "fillzipfian",
        }
    }

    /// Whether the benchmark writes.
    pub fn writes(self) -> bool {
        matches!(
            self,
            DbBenchKind::FillSeq | DbBenchKind::FillRandom | DbBenchKind::Overwrite | DbBenchKind::FillZipfian
        )
    }

    /// Whether db_bench runs the benchmark on a freshly destroyed database (its `fresh_db`): the
    /// fills do, so after `fillseq,fillrandom` the database holds only what fillrandom wrote.
    pub fn fresh_db(self) -> bool {
        matches!(self, DbBenchKind::FillSeq | DbBenchKind::FillRandom | DbBenchKind::FillZipfian)
    }
}

impl fmt::Display for DbBenchKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for DbBenchKind {
    type Err = WorkloadError;

    /// The names in [`DbBenchKind::NAMES`]; `zipfian` and `fillrandom-zipfian` also mean fillzipfian.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase().replace('_', "-");
        if t == "zipfian" || t == "fillrandom-zipfian" || t == "fill-zipfian" {
            return Ok(DbBenchKind::FillZipfian);
        }
        DbBenchKind::ALL.into_iter().find(|k| k.name() == t).ok_or_else(|| WorkloadError::UnknownName {
            kind: "db_bench benchmark",
            name: s.to_string(),
            accepted: DbBenchKind::NAMES.to_string(),
        })
    }
}

/// How fillzipfian turns a Zipfian rank into a key number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZipfianKeyOrder {
    /// Key number = rank: the hottest keys are 0, 1, 2, ... (adjacent in key order).
    Ranked,
    /// Key number = `fnvhash64(rank) % num`: hot keys scattered over the key space (YCSB's scrambling idea).
    Hashed,
}

/// db_bench parameters (flag names in the field docs).
#[derive(Debug, Clone, PartialEq)]
pub struct DbBenchConfig {
    /// The benchmark.
    pub kind: DbBenchKind,
    /// `--num` (default 1,000,000): key space and number of writes.
    pub num: u64,
    /// `--reads`; `None` means `num`.
    pub reads: Option<u64>,
    /// `--value_size` (default fixed 100), or a distribution (our extension).
    pub value_size: ValueSize,
    /// `--compression_ratio` (default 0.5).
    pub compression_ratio: f64,
    /// Zipfian constant for fillzipfian (default 0.99).
    pub zipf_theta: f64,
    /// Rank-to-key mapping for fillzipfian (default ranked).
    pub zipf_order: ZipfianKeyOrder,
    /// `--key_size` (RocksDB's db_bench; LevelDB's is fixed at 16): keys are the key number in decimal, zero-padded
    /// to this many digits.
    pub key_size: usize,
}

/// Largest `key_size` accepted (db_bench, YCSB and Mixgraph alike).
pub const MAX_KEY_SIZE: usize = 1024;

impl DbBenchConfig {
    /// db_bench defaults for `kind` over `num` keys.
    pub fn new(kind: DbBenchKind, num: u64) -> DbBenchConfig {
        DbBenchConfig {
            kind,
            num,
            reads: None,
            value_size: ValueSize::Fixed(100),
            compression_ratio: 0.5,
            zipf_theta: ZIPFIAN_CONSTANT,
            zipf_order: ZipfianKeyOrder::Ranked,
            key_size: 16,
        }
    }

    /// Number of operations the generator yields.
    pub fn op_count(&self) -> u64 {
        match self.kind {
            k if k.writes() => self.num,
            _ => self.reads.unwrap_or(self.num),
        }
    }
}

/// Format a db_bench key: `%016d`.
pub fn format_key(k: u64) -> Vec<u8> {
    format_key_of_size(k, 16)
}

/// Format a db_bench key of `key_size` digits: `%0*d`.
pub fn format_key_of_size(k: u64, key_size: usize) -> Vec<u8> {
    let mut key = vec![b'0'; key_size];
    let mut n = k;
    let mut i = key_size;
    while n > 0 && i > 0 {
        i -= 1;
        key[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    if n > 0 {
        // More digits than the width: printf widens the field; so do we.
        let mut s = n.to_string().into_bytes();
        s.extend_from_slice(&key);
        return s;
    }
    key
}

/// A db_bench benchmark as an iterator of [`Op`]s.
#[derive(Debug, Clone)]
pub struct DbBench {
    config: DbBenchConfig,
    keys: ParkMiller,
    sizes: Pcg64Mcg,
    zipf_rng: Pcg64Mcg,
    zipf: Option<Zipfian>,
    values: Option<CompressibleValues>,
    done: u64,
    total: u64,
}

impl DbBench {
    /// The benchmark for `config`; `seed` seeds the key stream (see the module docs for LevelDB's seeds).
    ///
    /// Errors: `num` must be in `1..=2^31 - 1`; `compression_ratio` in `(0, 1]`; `zipf_theta` in `[0, 1)`.
    pub fn new(config: DbBenchConfig, seed: u64) -> Result<DbBench, WorkloadError> {
        if config.num == 0 || config.num > MAX_NUM {
            return Err(WorkloadError::invalid(
                "num",
                config.num,
                "a key count in 1..=2147483647 (db_bench's --num is an int)",
            ));
        }
        if config.key_size == 0 || config.key_size > MAX_KEY_SIZE {
            return Err(WorkloadError::invalid("key_size", config.key_size, "1..=1024 bytes"));
        }
        let zipf = match config.kind {
            DbBenchKind::FillZipfian => Some(Zipfian::new(config.num, config.zipf_theta)?),
            _ => None,
        };
        let values = if config.kind.writes() {
            Some(CompressibleValues::new(config.compression_ratio, config.value_size.max() as usize)?)
        } else {
            None
        };
        Ok(DbBench {
            keys: ParkMiller::new((seed ^ (seed >> 32)) as u32),
            sizes: seeded(sub_seed(seed, 1)),
            zipf_rng: seeded(sub_seed(seed, 2)),
            zipf,
            values,
            done: 0,
            total: config.op_count(),
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &DbBenchConfig {
        &self.config
    }

    /// The next key number (no value drawn): db_bench's `seq ? i : rand.Uniform(num)`, or the Zipfian draw.
    fn next_keynum(&mut self) -> u64 {
        let i = self.done;
        match self.config.kind {
            DbBenchKind::FillSeq => i,
            DbBenchKind::FillZipfian => {
                let rank = match &mut self.zipf {
                    Some(z) => z.next(&mut self.zipf_rng),
                    None => 0,
                };
                match self.config.zipf_order {
                    ZipfianKeyOrder::Ranked => rank,
                    ZipfianKeyOrder::Hashed => fnvhash64(rank) % self.config.num,
                }
            }
            _ => self.keys.uniform(self.config.num as u32) as u64,
        }
    }

    fn value(&mut self) -> Vec<u8> {
        let len = self.config.value_size.sample(&mut self.sizes) as usize;
        match &mut self.values {
            Some(v) => v.generate(len).to_vec(),
            None => Vec::new(),
        }
    }
}

impl Iterator for DbBench {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        if self.done >= self.total {
            return None;
        }
        let op = match self.config.kind {
            // One record per operation, from the first key on.
            DbBenchKind::ReadSeq => Op::Next,
            DbBenchKind::ReadRandom => Op::Read { key: format_key_of_size(self.next_keynum(), self.config.key_size) },
            DbBenchKind::SeekRandom => {
                Op::Scan { start_key: format_key_of_size(self.next_keynum(), self.config.key_size), len: 0 }
            }
            DbBenchKind::Overwrite => {
                let key = format_key_of_size(self.next_keynum(), self.config.key_size);
                Op::Update { key, value: self.value() }
            }
            DbBenchKind::FillSeq | DbBenchKind::FillRandom | DbBenchKind::FillZipfian => {
                let key = format_key_of_size(self.next_keynum(), self.config.key_size);
                Op::Insert { key, value: self.value() }
            }
        };
        self.done += 1;
        Some(op)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.total - self.done;
        (usize::try_from(left).unwrap_or(usize::MAX), usize::try_from(left).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_16_digits() {
        assert_eq!(format_key(0), b"0000000000000000".to_vec());
        assert_eq!(format_key(1234), b"0000000000001234".to_vec());
        assert_eq!(format_key(12_345_678_901_234_567), b"12345678901234567".to_vec());
    }

    #[test]
    fn fillseq_is_in_order() {
        let ops: Vec<Op> = DbBench::new(DbBenchConfig::new(DbBenchKind::FillSeq, 5), 1).unwrap().collect();
        assert_eq!(ops.len(), 5);
        for (i, op) in ops.iter().enumerate() {
            assert_eq!(op.key(), format_key(i as u64).as_slice());
            assert_eq!(op.value().map(<[u8]>::len), Some(100));
        }
    }

    #[test]
    fn fillrandom_reproduces_leveldb_key_stream() {
        // db_bench's first benchmark: Random(1001), k = Next() % num.
        let mut pm = ParkMiller::new(1001);
        let expected: Vec<Vec<u8>> = (0..100).map(|_| format_key((pm.next_u31() % 1000) as u64)).collect();
        let got: Vec<Vec<u8>> = DbBench::new(DbBenchConfig::new(DbBenchKind::FillRandom, 1000), LEVELDB_FIRST_SEED)
            .unwrap()
            .map(|op| op.key().to_vec())
            .collect::<Vec<_>>()[..100]
            .to_vec();
        assert_eq!(got, expected);
    }

    #[test]
    fn readseq_and_seekrandom_shapes() {
        let mut c = DbBenchConfig::new(DbBenchKind::ReadSeq, 10);
        c.reads = Some(7);
        let ops: Vec<Op> = DbBench::new(c, 1).unwrap().collect();
        assert_eq!(ops, vec![Op::Next; 7]);
        let ops: Vec<Op> = DbBench::new(DbBenchConfig::new(DbBenchKind::SeekRandom, 10), 1).unwrap().collect();
        assert_eq!(ops.len(), 10);
        assert!(ops.iter().all(|o| matches!(o, Op::Scan { len: 0, .. })));
    }

    #[test]
    fn bad_parameters() {
        assert!(DbBench::new(DbBenchConfig::new(DbBenchKind::FillRandom, 0), 1).is_err());
        assert!(DbBench::new(DbBenchConfig::new(DbBenchKind::FillRandom, 1 << 31), 1).is_err());
        let mut c = DbBenchConfig::new(DbBenchKind::FillZipfian, 100);
        c.zipf_theta = 1.0;
        assert!(DbBench::new(c, 1).is_err());
        let e = "fillrandm".parse::<DbBenchKind>().unwrap_err().to_string();
        assert!(e.contains("fillseq") && e.contains("fillrandm"), "{e}");
        assert_eq!("fill_zipfian".parse::<DbBenchKind>().unwrap(), DbBenchKind::FillZipfian);
    }
}

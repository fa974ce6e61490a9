//! RocksDB db_bench `mixgraph` (Cao et al., FAST'20): the four synthetic workloads all_random, all_dist,
//! prefix_random and prefix_dist, and their fill phase.
//!
//! Contract (RocksDB `tools/db_bench_tool.cc` as it was before PR #6795, May 2020, except where stated):
//! - Per operation one draw `ini_rand = Random64.Next() % num` from the thread's `std::mt19937_64` (seeded
//!   `1000 + thread index` in RocksDB: [`ROCKSDB_SEED`]); `u = ini_rand / num` drives the value size and the scan
//!   length, and `ini_rand % range` (RocksDB's `QueryDecider`, shares rounded up to thousandths) picks get / put / seek.
//!   The same draw drives all three, as in RocksDB.
//! - Keys: `key_size` bytes (48), RocksDB's `GenerateKeyFromInt`: the key number's low 8 bytes big-endian, then `'0'`
//!   padding.
//!   - all_random: the key number is `ini_rand`, uniform. (Before #6795 this path went through the power law with
//!     `a = b = 0`, i.e. `(u/0)^(1/0)`, an infinite seed cast to an integer: undefined behaviour in C++ that in
//!     practice sent every operation to one key. #6795 made it uniform; we do the same.)
//!   - all_dist: power law, seed `ceil((u/a)^(1/b))`, key number `Random64(seed).Next() % num` (RocksDB takes a signed
//!     modulo here, so half of its key numbers are negative, i.e. keys outside `0..num`; we take it unsigned).
//!   - prefix_random and prefix_dist: the two-term-exponential key-range hotness of [`KeyRanges`], in the ORIGINAL
//!     pre-#6795 behaviour. After #6795, a workload without `key_dist_a/b` (prefix_random) silently runs uniform over
//!     the whole key space, ignoring the key ranges; we keep the key-range hotness. For prefix_dist's in-range power
//!     law see [`KeyRanges::key_id`].
//! - Put value size: generalized Pareto inverse CDF, `ceil(theta + sigma * (u^-k - 1) / k)` (`theta - sigma*ln u`
//!   when `k = 0`); below 10 becomes 10, above `min(mix_max_value_size, 1 MiB)` wraps (`size % max`, which can give a
//!   size below 10). The floor of 10 is the current RocksDB rule (PR #9711); the 2020 code only replaced negative sizes.
//!   Value bytes are db_bench's compressible `RandomGenerator` slices.
//! - Seek: position at the key, then read `ParetoCdfInversion(u, iter_theta, iter_k, iter_sigma) % mix_max_scan_len`
//!   records (`Op::Scan`).
//! - Where RocksDB converts an infinite or too large double to an integer (undefined in C++, e.g. `u = 0` in the
//!   Pareto inverse), we saturate to `i64::MAX` as Rust's `as` does.
//! - `pow`, `exp`, `log` are `libm`'s, so streams are bit-identical on every machine; against RocksDB built on glibc a
//!   last-ulp difference could in rare cases move a rounding boundary.

mod keyrange;

pub use keyrange::KeyRanges;

use crate::error::WorkloadError;
use crate::mt19937::{first_output, Mt19937_64};
use crate::op::{Op, OpKind};
use crate::park_miller::CompressibleValues;
use std::fmt;
use std::str::FromStr;

/// RocksDB's seed for the first thread when `--seed` is not given (`1000 + 0`).
pub const ROCKSDB_SEED: u64 = 1000;

/// RocksDB caps mixgraph values at 1 MiB whatever `mix_max_value_size` says.
pub const MIX_VALUE_HARD_MAX: u64 = 1 << 20;

/// The four FAST'20 synthetic workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum MixgraphKind {
    /// Uniform keys.
    AllRandom,
    /// Power-law keys over the whole key space.
    AllDist,
    /// Key-range hotness (two-term exponential over 30 ranges), uniform inside a range.
    PrefixRandom,
    /// Key-range hotness and power-law keys inside a range.
    PrefixDist,
}

impl MixgraphKind {
    /// All four.
    pub const ALL: [MixgraphKind; 4] =
        [MixgraphKind::AllRandom, MixgraphKind::AllDist, MixgraphKind::PrefixRandom, MixgraphKind::PrefixDist];

    /// Accepted names.
    pub const NAMES: &'static str = "all_random, all_dist, prefix_random, prefix_dist";

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            MixgraphKind::AllRandom => "all_random",
            MixgraphKind::AllDist => "all_dist",
            MixgraphKind::PrefixRandom => "prefix_random",
            MixgraphKind::PrefixDist => "prefix_dist",
        }
    }
}

impl fmt::Display for MixgraphKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for MixgraphKind {
    type Err = WorkloadError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase().replace('-', "_");
        MixgraphKind::ALL.into_iter().find(|k| k.name() == t).ok_or_else(|| WorkloadError::UnknownName {
            kind: "Mixgraph workload",
            name: s.to_string(),
            accepted: MixgraphKind::NAMES.to_string(),
        })
    }
}

/// Mixgraph parameters; field names are db_bench's flags.
#[derive(Debug, Clone, PartialEq)]
pub struct MixgraphConfig {
    /// `--num`: the key space.
    pub num: u64,
    /// Operations to generate (`--reads` / `--mix_accesses`).
    pub ops: u64,
    /// `--key_size` (48 in the FAST'20 runs).
    pub key_size: usize,
    /// `--key_dist_a` (power law `y = a x^b`; 0 = off).
    pub key_dist_a: f64,
    /// `--key_dist_b`.
    pub key_dist_b: f64,
    /// `--keyrange_dist_a` (two-term exponential `a e^(bx) + c e^(dx)`; all zero = no key ranges).
    pub keyrange_dist_a: f64,
    /// `--keyrange_dist_b`.
    pub keyrange_dist_b: f64,
    /// `--keyrange_dist_c`.
    pub keyrange_dist_c: f64,
    /// `--keyrange_dist_d`.
    pub keyrange_dist_d: f64,
    /// `--keyrange_num`.
    pub keyrange_num: u64,
    /// `--value_theta`.
    pub value_theta: f64,
    /// `--value_k`.
    pub value_k: f64,
    /// `--value_sigma`.
    pub value_sigma: f64,
    /// `--iter_theta`.
    pub iter_theta: f64,
    /// `--iter_k`.
    pub iter_k: f64,
    /// `--iter_sigma`.
    pub iter_sigma: f64,
    /// `--mix_get_ratio`.
    pub mix_get_ratio: f64,
    /// `--mix_put_ratio`.
    pub mix_put_ratio: f64,
    /// `--mix_seek_ratio`.
    pub mix_seek_ratio: f64,
    /// `--mix_max_value_size` (RocksDB default 1024).
    pub mix_max_value_size: u64,
    /// `--mix_max_scan_len` (default 10000).
    pub mix_max_scan_len: u64,
    /// `--compression_ratio` of the value bytes (default 0.5).
    pub compression_ratio: f64,
    /// `--value_size` of the fill phase (43 in the FAST'20 runs).
    pub fill_value_size: u32,
}

impl MixgraphConfig {
    /// The FAST'20 parameters for `kind` over `num` keys and `ops` operations (from the public script labelled as the
    /// paper's appendix; see shared/reference/workloads.md).
    pub fn fast20(kind: MixgraphKind, num: u64, ops: u64) -> MixgraphConfig {
        let (key_dist, keyranges) = match kind {
            MixgraphKind::AllRandom => (false, false),
            MixgraphKind::AllDist => (true, false),
            MixgraphKind::PrefixRandom => (false, true),
            MixgraphKind::PrefixDist => (true, true),
        };
        let pick = |on: bool, v: f64| if on { v } else { 0.0 };
        MixgraphConfig {
            num,
            ops,
            key_size: 48,
            key_dist_a: pick(key_dist, 0.002312),
            key_dist_b: pick(key_dist, 0.3467),
            keyrange_dist_a: pick(keyranges, 14.18),
            keyrange_dist_b: pick(keyranges, -2.917),
            keyrange_dist_c: pick(keyranges, 0.0164),
            keyrange_dist_d: pick(keyranges, -0.08082),
            keyrange_num: if keyranges { 30 } else { 1 },
            value_theta: 0.0,
            value_k: 0.2615,
            value_sigma: 25.45,
            iter_theta: 0.0,
            iter_k: 2.517,
            iter_sigma: 14.236,
            mix_get_ratio: 0.83,
            mix_put_ratio: 0.14,
            mix_seek_ratio: 0.03,
            mix_max_value_size: 1024,
            mix_max_scan_len: 10_000,
            compression_ratio: 0.5,
            fill_value_size: 43,
        }
    }

    fn uses_keyranges(&self) -> bool {
        self.keyrange_dist_a != 0.0
            || self.keyrange_dist_b != 0.0
            || self.keyrange_dist_c != 0.0
            || self.keyrange_dist_d != 0.0
    }

    fn validate(&self) -> Result<(), WorkloadError> {
        if self.num == 0 {
            return Err(WorkloadError::invalid("num", 0, "a key count >= 1"));
        }
        if self.key_size == 0 || self.key_size > 1024 {
            return Err(WorkloadError::invalid("key_size", self.key_size, "1..=1024 bytes"));
        }
        let ratios = [self.mix_get_ratio, self.mix_put_ratio, self.mix_seek_ratio];
        if ratios.iter().any(|r| !r.is_finite() || *r < 0.0) || ratios.iter().sum::<f64>() <= 0.0 {
            return Err(WorkloadError::invalid(
                "mix_get_ratio/mix_put_ratio/mix_seek_ratio",
                format!("{ratios:?}"),
                "finite non-negative ratios with a positive sum",
            ));
        }
        if self.mix_max_value_size == 0 {
            return Err(WorkloadError::invalid("mix_max_value_size", 0, "a size >= 1"));
        }
        if self.mix_max_scan_len == 0 {
            return Err(WorkloadError::invalid("mix_max_scan_len", 0, "a length >= 1"));
        }
        for (field, v) in [
            ("value_theta", self.value_theta),
            ("value_k", self.value_k),
            ("value_sigma", self.value_sigma),
            ("iter_theta", self.iter_theta),
            ("iter_k", self.iter_k),
            ("iter_sigma", self.iter_sigma),
            ("key_dist_a", self.key_dist_a),
            ("key_dist_b", self.key_dist_b),
        ] {
            if !v.is_finite() {
                return Err(WorkloadError::invalid(field, v, "a finite number"));
            }
        }
        Ok(())
    }
}

/// The generalized Pareto inverse CDF (RocksDB's `ParetoCdfInversion`), rounded up, saturating where C++ would be
/// undefined (`u = 0`).
pub fn pareto_cdf_inversion(u: f64, theta: f64, k: f64, sigma: f64) -> i64 {
    let ret = if k == 0.0 { theta - sigma * libm::log(u) } else { theta + sigma * (libm::pow(u, -k) - 1.0) / k };
    libm::ceil(ret) as i64
}

/// The power-law inverse CDF (RocksDB's `PowerCdfInversion`): `ceil((u/a)^(1/b))`, saturating.
pub fn power_cdf_inversion(u: f64, a: f64, b: f64) -> i64 {
    libm::ceil(libm::pow(u / a, 1.0 / b)) as i64
}

/// RocksDB's `GenerateKeyFromInt` without prefixes: the low `min(key_size, 8)` bytes of `v` big-endian, then `'0'`s.
pub fn key_from_int(v: u64, key_size: usize) -> Vec<u8> {
    let fill = key_size.min(8);
    let mut key = Vec::with_capacity(key_size);
    key.extend_from_slice(&v.to_be_bytes()[8 - fill..]);
    key.resize(key_size, b'0');
    key
}

/// RocksDB's `QueryDecider`: cumulative integer shares of 1000, each rounded up.
#[derive(Debug, Clone)]
struct QueryDecider {
    bounds: [u64; 3],
}

impl QueryDecider {
    fn new(ratios: [f64; 3]) -> QueryDecider {
        let sum: f64 = ratios.iter().sum();
        let mut range = 0u64;
        let mut bounds = [0u64; 3];
        for (b, r) in bounds.iter_mut().zip(ratios) {
            range += libm::ceil(1000.0 * (r / sum)) as u64;
            *b = range;
        }
        QueryDecider { bounds }
    }

    fn kind(&self, rand: u64) -> OpKind {
        let pos = rand % self.bounds[2].max(1);
        let kinds = [OpKind::Read, OpKind::Update, OpKind::Scan];
        self.bounds.iter().position(|&b| pos < b).map_or(OpKind::Read, |i| kinds[i])
    }
}

/// How a workload turns a draw into a key number.
#[derive(Debug, Clone)]
enum KeyModel {
    Uniform,
    Power { a: f64, b: f64 },
    Ranges(Box<KeyRanges>),
}

/// A Mixgraph workload as an iterator of [`Op`]s (`Read` = get, `Update` = put, `Scan` = seek + nexts).
#[derive(Debug, Clone)]
pub struct Mixgraph {
    config: MixgraphConfig,
    rand: Mt19937_64,
    keys: KeyModel,
    query: QueryDecider,
    values: CompressibleValues,
    value_max: u64,
    done: u64,
}

impl Mixgraph {
    /// The workload for `config`; `seed` seeds the thread generator (RocksDB uses [`ROCKSDB_SEED`]).
    ///
    /// Errors: `num >= 1`, `key_size` in `1..=1024`, finite parameters, a positive op mix, and for key ranges
    /// `keyrange_num` in `1..=num` with parameters giving some range a share.
    pub fn new(config: MixgraphConfig, seed: u64) -> Result<Mixgraph, WorkloadError> {
        config.validate()?;
        let keys = if config.uses_keyranges() {
            KeyModel::Ranges(Box::new(KeyRanges::new(
                config.num,
                config.keyrange_num,
                config.keyrange_dist_a,
                config.keyrange_dist_b,
                config.keyrange_dist_c,
                config.keyrange_dist_d,
            )?))
        } else if config.key_dist_a == 0.0 || config.key_dist_b == 0.0 {
            KeyModel::Uniform
        } else {
            KeyModel::Power { a: config.key_dist_a, b: config.key_dist_b }
        };
        let value_max = config.mix_max_value_size.min(MIX_VALUE_HARD_MAX);
        Ok(Mixgraph {
            query: QueryDecider::new([config.mix_get_ratio, config.mix_put_ratio, config.mix_seek_ratio]),
            values: CompressibleValues::new(config.compression_ratio, value_max as usize)?,
            rand: Mt19937_64::new(seed),
            keys,
            value_max,
            done: 0,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &MixgraphConfig {
        &self.config
    }

    /// The key ranges, for prefix workloads.
    pub fn key_ranges(&self) -> Option<&KeyRanges> {
        match &self.keys {
            KeyModel::Ranges(r) => Some(r),
            _ => None,
        }
    }

    /// The next operation and its key number.
    pub fn next_with_keynum(&mut self) -> Option<(Op, u64)> {
        if self.done >= self.config.ops {
            return None;
        }
        self.done += 1;
        let num = self.config.num;
        let ini_rand = self.rand.next_u64() % num;
        let u = ini_rand as f64 / num as f64;
        let key_id = match &self.keys {
            KeyModel::Uniform => ini_rand,
            KeyModel::Power { a, b } => first_output(power_cdf_inversion(u, *a, *b) as u64) % num,
            KeyModel::Ranges(r) => r.key_id(ini_rand, self.config.key_dist_a, self.config.key_dist_b),
        };
        let key = key_from_int(key_id, self.config.key_size);
        let op = match self.query.kind(ini_rand) {
            OpKind::Update => {
                let size = self.value_size(u);
                Op::Update { key, value: self.values.generate(size as usize).to_vec() }
            }
            OpKind::Scan => {
                let c = &self.config;
                // C++ `%` keeps the sign; a negative length runs zero `Next` calls, hence the clamp at 0.
                let len = pareto_cdf_inversion(u, c.iter_theta, c.iter_k, c.iter_sigma)
                    .checked_rem(c.mix_max_scan_len as i64)
                    .map_or(0, |l| l.max(0)) as u64;
                Op::Scan { start_key: key, len }
            }
            _ => Op::Read { key },
        };
        Some((op, key_id))
    }

    /// The put value size for draw `u`: Pareto, at least 10, wrapped above the maximum (RocksDB's order of checks).
    pub fn value_size(&self, u: f64) -> u64 {
        let c = &self.config;
        let v = pareto_cdf_inversion(u, c.value_theta, c.value_k, c.value_sigma);
        if v < 10 {
            10
        } else if v as u64 > self.value_max {
            v as u64 % self.value_max
        } else {
            v as u64
        }
    }
}

impl Iterator for Mixgraph {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        self.next_with_keynum().map(|(op, _)| op)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.config.ops - self.done;
        (usize::try_from(left).unwrap_or(usize::MAX), usize::try_from(left).ok())
    }
}

/// The fill phase of the FAST'20 runs: db_bench `fillrandom` with the Mixgraph key format, `num` puts of
/// `Random64.Next() % num` keys and `fill_value_size`-byte values.
#[derive(Debug, Clone)]
pub struct MixgraphFill {
    rand: Mt19937_64,
    values: CompressibleValues,
    num: u64,
    key_size: usize,
    value_size: usize,
    done: u64,
}

impl MixgraphFill {
    /// The fill for `config`, seeded like [`Mixgraph::new`].
    pub fn new(config: &MixgraphConfig, seed: u64) -> Result<MixgraphFill, WorkloadError> {
        config.validate()?;
        Ok(MixgraphFill {
            rand: Mt19937_64::new(seed),
            values: CompressibleValues::new(config.compression_ratio, config.fill_value_size as usize)?,
            num: config.num,
            key_size: config.key_size,
            value_size: config.fill_value_size as usize,
            done: 0,
        })
    }
}

impl Iterator for MixgraphFill {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        if self.done >= self.num {
            return None;
        }
        self.done += 1;
        let k = self.rand.next_u64() % self.num;
        Some(Op::Insert { key: key_from_int(k, self.key_size), value: self.values.generate(self.value_size).to_vec() })
    }
}

#[cfg(test)]
mod tests;

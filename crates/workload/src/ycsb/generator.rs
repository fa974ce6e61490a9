//! The YCSB operation stream.

use super::config::{
    FieldLengthDistribution, InsertOrder, Phase, RequestDistribution, ScanLengthDistribution, YcsbConfig,
};
use super::keys::{build_key_name, fill_random_printable, skip_random_printable};
use crate::error::WorkloadError;
use crate::op::{Op, OpKind};
use crate::rng::{below, in_range, seeded, unit_f64, Pcg64Mcg};
use crate::value_data::ValueData;
use crate::zipfian::{ScrambledZipfian, SkewedLatest, Zipfian, ZIPFIAN_CONSTANT};

/// How reads, updates, scans and read-modify-writes choose a key number (YCSB's `keychooser`).
#[derive(Debug, Clone)]
enum KeyChooser {
    Uniform { lo: u64, hi: u64 },
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot { lo: u64, hot: u64, cold: u64, hot_op_fraction: f64 },
}

/// A length generator (field length, scan length).
#[derive(Debug, Clone)]
enum LengthGen {
    Constant(u64),
    Uniform { lo: u64, hi: u64 },
    Zipfian(Box<Zipfian>),
}

impl LengthGen {
    fn next(&mut self, rng: &mut Pcg64Mcg) -> u64 {
        match self {
            LengthGen::Constant(n) => *n,
            LengthGen::Uniform { lo, hi } => in_range(rng, *lo, *hi),
            LengthGen::Zipfian(z) => z.next(rng),
        }
    }
}

/// YCSB's `DiscreteGenerator` over the operation kinds with a positive proportion, in YCSB's order.
#[derive(Debug, Clone)]
struct OpChooser {
    choices: Vec<(OpKind, f64)>,
}

impl OpChooser {
    fn new(props: [f64; 5]) -> OpChooser {
        let choices = OpKind::ALL.into_iter().zip(props).filter(|&(_, w)| w > 0.0).collect();
        OpChooser { choices }
    }

    fn next(&self, rng: &mut Pcg64Mcg) -> OpKind {
        // Same arithmetic as YCSB: the sum is recomputed and each weight divided by it, then the uniform draw is
        // walked down the list. Rounding can leave a sliver past the last weight; YCSB would throw there, we take the
        // last kind.
        let sum: f64 = self.choices.iter().map(|&(_, w)| w).sum();
        let mut val = unit_f64(rng);
        for &(kind, w) in &self.choices {
            let pw = w / sum;
            if val < pw {
                return kind;
            }
            val -= pw;
        }
        self.choices.last().map_or(OpKind::Read, |&(k, _)| k)
    }
}

/// A YCSB load or run phase as an iterator of [`Op`]s.
#[derive(Debug, Clone)]
pub struct Ycsb {
    config: YcsbConfig,
    rng: Pcg64Mcg,
    remaining: u64,
    /// Next key number of the load phase (`keysequence`).
    load_next: u64,
    /// Next key number of a run-phase insert (`transactioninsertkeysequence`).
    insert_next: u64,
    /// Last acknowledged run-phase insert (`transactioninsertkeysequence.lastValue()`).
    last_acked: u64,
    chooser: OpChooser,
    keys: KeyChooser,
    field_length: LengthGen,
    scan_length: LengthGen,
}

impl Ycsb {
    /// A generator for `config`, every random choice drawn from `seed`.
    ///
    /// Errors: any parameter [`YcsbConfig::validate`] rejects.
    pub fn new(config: YcsbConfig, seed: u64) -> Result<Ycsb, WorkloadError> {
        config.validate()?;
        let insert_count = config.effective_insert_count();
        let lo = config.insert_start;
        let hi = lo + insert_count - 1;
        let keys = match config.request_distribution {
            RequestDistribution::Uniform => KeyChooser::Uniform { lo, hi },
            RequestDistribution::Zipfian => {
                // YCSB: expectednewkeys = (int)(opcount * insertproportion * 2.0), "2 is fudge factor", and the
                // range's upper end is insertstart + insertcount + expectednewkeys (inclusive).
                let expected_new = (config.operation_count as f64 * config.proportions.insert * 2.0) as u64;
                KeyChooser::Zipfian(ScrambledZipfian::with_range(
                    lo,
                    lo.saturating_add(insert_count).saturating_add(expected_new),
                )?)
            }
            RequestDistribution::Latest => KeyChooser::Latest(SkewedLatest::new(config.record_count - 1)?),
            RequestDistribution::Hotspot { hot_data_fraction, hot_op_fraction } => {
                let interval = hi - lo + 1;
                let hot = (interval as f64 * hot_data_fraction) as u64;
                KeyChooser::Hotspot { lo, hot, cold: interval - hot, hot_op_fraction }
            }
        };
        let field_length = match config.field_length_distribution {
            FieldLengthDistribution::Constant => LengthGen::Constant(config.field_length as u64),
            FieldLengthDistribution::Uniform => {
                LengthGen::Uniform { lo: config.min_field_length as u64, hi: config.field_length as u64 }
            }
            FieldLengthDistribution::Zipfian => LengthGen::Zipfian(Box::new(Zipfian::with_range(
                config.min_field_length as u64,
                config.field_length as u64,
                ZIPFIAN_CONSTANT,
            )?)),
        };
        let scan_length = match config.scan_length_distribution {
            // Only built when scans can happen, so that an unused bad range does not fail construction.
            _ if config.proportions.scan <= 0.0 => LengthGen::Constant(0),
            ScanLengthDistribution::Uniform => {
                LengthGen::Uniform { lo: config.min_scan_length, hi: config.max_scan_length }
            }
            ScanLengthDistribution::Zipfian => LengthGen::Zipfian(Box::new(Zipfian::with_range(
                config.min_scan_length,
                config.max_scan_length,
                ZIPFIAN_CONSTANT,
            )?)),
        };
        let remaining = match config.phase {
            Phase::Load => insert_count,
            Phase::Run => config.operation_count,
        };
        Ok(Ycsb {
            chooser: OpChooser::new(config.proportions.in_ycsb_order()),
            rng: seeded(seed),
            remaining,
            load_next: config.insert_start,
            insert_next: config.record_count,
            last_acked: config.record_count - 1,
            keys,
            field_length,
            scan_length,
            config,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &YcsbConfig {
        &self.config
    }

    /// Operations still to come.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// The highest key number a read may target now (the last acknowledged insert).
    pub fn last_acknowledged(&self) -> u64 {
        self.last_acked
    }

    /// The next operation together with its key number (before hashing): for analysis and tests.
    pub fn next_with_keynum(&mut self) -> Option<(Op, u64)> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        Some(match self.config.phase {
            Phase::Load => {
                let k = self.load_next;
                self.load_next += 1;
                (self.insert(k), k)
            }
            Phase::Run => self.transaction(),
        })
    }

    fn transaction(&mut self) -> (Op, u64) {
        match self.chooser.next(&mut self.rng) {
            OpKind::Insert => {
                let k = self.insert_next;
                self.insert_next += 1;
                let op = self.insert(k);
                // Acknowledged before the next operation is drawn: one client, in order.
                self.last_acked = k;
                (op, k)
            }
            OpKind::Read => {
                let k = self.next_keynum();
                (Op::Read { key: self.key(k) }, k)
            }
            OpKind::Update => {
                let k = self.next_keynum();
                let value = self.update_value();
                (Op::Update { key: self.key(k), value }, k)
            }
            OpKind::Scan => {
                let k = self.next_keynum();
                let len = self.scan_length.next(&mut self.rng);
                (Op::Scan { start_key: self.key(k), len }, k)
            }
            OpKind::ReadModifyWrite => {
                let k = self.next_keynum();
                let value = self.update_value();
                (Op::ReadModifyWrite { key: self.key(k), value }, k)
            }
            OpKind::Next => unreachable!("YCSB's operation chooser draws among OpKind::ALL, which has no next"),
        }
    }

    fn insert(&mut self, k: u64) -> Op {
        Op::Insert { key: self.key(k), value: self.all_fields() }
    }

    fn key(&self, k: u64) -> Vec<u8> {
        build_key_name(k, self.config.zero_padding, self.config.insert_order == InsertOrder::Hashed)
    }

    /// YCSB's `nextKeynum`: redraw while the key number is past the last acknowledged insert.
    fn next_keynum(&mut self) -> u64 {
        loop {
            let k = match &mut self.keys {
                KeyChooser::Uniform { lo, hi } => in_range(&mut self.rng, *lo, *hi),
                KeyChooser::Zipfian(z) => z.next(&mut self.rng),
                KeyChooser::Latest(l) => l.next(&mut self.rng, self.last_acked),
                KeyChooser::Hotspot { lo, hot, cold, hot_op_fraction } => {
                    // YCSB divides by the hot (or cold) interval even when it is empty; fall to the other set.
                    let pick_hot = unit_f64(&mut self.rng) < *hot_op_fraction;
                    if (pick_hot && *hot > 0) || *cold == 0 {
                        *lo + below(&mut self.rng, *hot)
                    } else {
                        *lo + *hot + below(&mut self.rng, *cold)
                    }
                }
            };
            if k <= self.last_acked {
                return k;
            }
        }
    }

    fn all_fields(&mut self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.config.record_bytes() as usize);
        for _ in 0..self.config.field_count {
            let len = self.field_length.next(&mut self.rng) as usize;
            self.fill_value(len, &mut v);
        }
        v
    }

    /// Appends a field of `len` value bytes: YCSB's random printable ones, or zeros.
    fn fill_value(&mut self, len: usize, v: &mut Vec<u8>) {
        match self.config.values {
            ValueData::Generated => fill_random_printable(&mut self.rng, len, v),
            ValueData::Zeros => skip_random_printable(&mut self.rng, len, v),
        }
    }

    fn update_value(&mut self) -> Vec<u8> {
        if self.config.write_all_fields {
            return self.all_fields();
        }
        // YCSB draws the field name here; the value holds only the field's bytes, so the index is not needed beyond
        // keeping the draw sequence YCSB's (field choice, then field length).
        let _field = below(&mut self.rng, self.config.field_count as u64);
        let len = self.field_length.next(&mut self.rng) as usize;
        let mut v = Vec::with_capacity(len);
        self.fill_value(len, &mut v);
        v
    }
}

impl Iterator for Ycsb {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        self.next_with_keynum().map(|(op, _)| op)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.remaining).unwrap_or(usize::MAX);
        (n, usize::try_from(self.remaining).ok())
    }
}

//! Workload names: one parser for every generator in the crate, and a builder that turns a name into an op stream.
//!
//! Contract: [`Workload::from_str`] accepts exactly the names in [`Workload::ACCEPTED`] (case-insensitive, with the
//! aliases each family documents) and otherwise returns [`WorkloadError::UnknownName`] listing them all.
//! [`Workload::build`] maps the common parameters ([`WorkloadSpec`]) onto each family's own configuration, with that
//! family's defaults for everything else; callers who need more control build the family's generator directly.

use crate::db_bench::{DbBench, DbBenchConfig, DbBenchKind, MAX_KEY_SIZE};
use crate::error::WorkloadError;
use crate::mixgraph::{Mixgraph, MixgraphConfig, MixgraphKind};
use crate::op::Op;
use crate::value_data::ValueData;
use crate::value_size::ValueSize;
use crate::ycsb::{FieldLengthDistribution, Ycsb, YcsbConfig, YcsbWorkload};
use std::fmt;
use std::str::FromStr;

/// Any workload this crate generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Workload {
    /// A YCSB core workload or the load phase.
    Ycsb(YcsbWorkload),
    /// A db_bench benchmark.
    DbBench(DbBenchKind),
    /// A FAST'20 Mixgraph workload.
    Mixgraph(MixgraphKind),
}

/// The parameters every family understands.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkloadSpec {
    /// Records loaded / key-space size (YCSB `recordcount`, db_bench and Mixgraph `--num`).
    pub records: u64,
    /// Operations of a run phase (YCSB `operationcount`, db_bench `--reads`, Mixgraph operations). db_bench writes
    /// always write `records` keys, as db_bench's `--num` does.
    pub operations: u64,
    /// Value size. YCSB: one field of this size (a range becomes a uniform field length); db_bench: the value size;
    /// Mixgraph: ignored (its value sizes are generalized Pareto).
    pub value_size: ValueSize,
    /// Key size in bytes; `None` keeps each family's own (YCSB "user" + the key number, about 23 B; db_bench 16 B;
    /// Mixgraph 48 B). YCSB reaches it with its `zeropadding` (key_size - 4 digits after "user": exact when the key
    /// number has no more digits, which hashed keys never have from 24 B up); db_bench and Mixgraph with their
    /// `--key_size`.
    pub key_size: Option<usize>,
    /// The values' bytes: the workload's own, or zeros (the same stream otherwise; see [`ValueData`]).
    pub values: ValueData,
}

impl Workload {
    /// Every accepted name.
    pub const ACCEPTED: &'static str =
        "load, a, b, c, d, e, f, core (YCSB); fillseq, fillrandom, overwrite, readrandom, \
         readseq, seekrandom, fillzipfian (db_bench); all_random, all_dist, prefix_random, prefix_dist (Mixgraph)";

    /// Every workload, in the order of [`Workload::ACCEPTED`].
    pub fn all() -> Vec<Workload> {
        YcsbWorkload::ALL
            .into_iter()
            .map(Workload::Ycsb)
            .chain(DbBenchKind::ALL.into_iter().map(Workload::DbBench))
            .chain(MixgraphKind::ALL.into_iter().map(Workload::Mixgraph))
            .collect()
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Ycsb(w) => w.name(),
            Workload::DbBench(k) => k.name(),
            Workload::Mixgraph(k) => k.name(),
        }
    }

    /// The op stream for `spec`, every random choice from `seed`.
    pub fn build(self, spec: &WorkloadSpec, seed: u64) -> Result<Box<dyn Iterator<Item = Op> + Send>, WorkloadError> {
        Ok(match self {
            Workload::Ycsb(w) => Box::new(Ycsb::new(spec.ycsb_config(w)?, seed)?),
            Workload::DbBench(k) => {
                let mut c = DbBenchConfig::new(k, spec.records);
                c.reads = Some(spec.operations);
                c.value_size = spec.value_size;
                if let Some(k) = spec.key_size {
                    c.key_size = k;
                }
                spec.values.apply(Box::new(DbBench::new(c, seed)?))
            }
            Workload::Mixgraph(k) => {
                let mut c = MixgraphConfig::fast20(k, spec.records, spec.operations);
                if let Some(k) = spec.key_size {
                    c.key_size = k;
                }
                spec.values.apply(Box::new(Mixgraph::new(c, seed)?))
            }
        })
    }
}

impl WorkloadSpec {
    /// YCSB workload `w` for these parameters: the core workload's definition with one field of
    /// the value size (uniform lengths for a size range), the key size as zero padding.
    pub fn ycsb_config(&self, w: YcsbWorkload) -> Result<YcsbConfig, WorkloadError> {
        let mut c = YcsbConfig::core(w, self.records, self.operations).with_record_size(self.value_size.max());
        if let ValueSize::Uniform { min, .. } = self.value_size {
            c.min_field_length = min;
            c.field_length_distribution = FieldLengthDistribution::Uniform;
        }
        if let Some(k) = self.key_size {
            if !(5..=MAX_KEY_SIZE).contains(&k) {
                return Err(WorkloadError::invalid("key_size", k, "5..=1024 bytes for YCSB (\"user\" + a digit)"));
            }
            c.zero_padding = (k - 4) as u32;
        }
        // YCSB draws its values from the stream its keys come from: the generator skips the
        // draws of zero values rather than making bytes to throw away.
        c.values = self.values;
        Ok(c)
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Workload {
    type Err = WorkloadError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if let Ok(w) = s.parse::<YcsbWorkload>() {
            return Ok(Workload::Ycsb(w));
        }
        if let Ok(k) = s.parse::<DbBenchKind>() {
            return Ok(Workload::DbBench(k));
        }
        if let Ok(k) = s.parse::<MixgraphKind>() {
            return Ok(Workload::Mixgraph(k));
        }
        Err(WorkloadError::UnknownName {
            kind: "workload",
            name: s.to_string(),
            accepted: Workload::ACCEPTED.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        for w in Workload::all() {
            assert_eq!(w.name().parse::<Workload>().unwrap(), w);
            assert!(Workload::ACCEPTED.contains(w.name()));
        }
        assert_eq!("A".parse::<Workload>().unwrap(), Workload::Ycsb(YcsbWorkload::A));
        assert_eq!("workloadc".parse::<Workload>().unwrap(), Workload::Ycsb(YcsbWorkload::C));
        assert_eq!("all-random".parse::<Workload>().unwrap(), Workload::Mixgraph(MixgraphKind::AllRandom));
    }

    #[test]
    fn unknown_name_lists_accepted() {
        let e = "g".parse::<Workload>().unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("`g`") && msg.contains("fillrandom") && msg.contains("prefix_dist"), "{msg}");
        assert!(matches!(e, WorkloadError::UnknownName { kind: "workload", .. }));
    }

    #[test]
    fn build_every_workload() {
        let spec = WorkloadSpec {
            records: 1000,
            operations: 50,
            value_size: ValueSize::Fixed(256),
            key_size: None,
            values: ValueData::Generated,
        };
        for w in Workload::all() {
            let ops: Vec<Op> = w.build(&spec, 1).unwrap().collect();
            assert!(!ops.is_empty(), "{w}");
            if let Workload::Ycsb(_) | Workload::DbBench(_) = w {
                for op in &ops {
                    if let Some(v) = op.value() {
                        assert_eq!(v.len(), 256, "{w}");
                    }
                }
            }
        }
        let spec = WorkloadSpec { value_size: ValueSize::Uniform { min: 100, max: 1024 }, ..spec };
        let ops: Vec<Op> = "load".parse::<Workload>().unwrap().build(&spec, 2).unwrap().collect();
        assert_eq!(ops.len(), 1000);
        assert!(ops.iter().all(|o| (100..=1024).contains(&o.value().map_or(0, <[u8]>::len))));
    }

    #[test]
    fn zero_values_keep_every_key_and_length_of_the_generated_stream() {
        // Uniform lengths, so a wrongly skipped draw shifts every later key and length.
        let generated = WorkloadSpec {
            records: 300,
            operations: 400,
            value_size: ValueSize::Uniform { min: 1, max: 700 },
            key_size: None,
            values: ValueData::Generated,
        };
        let zeros = WorkloadSpec { values: ValueData::Zeros, ..generated };
        for w in Workload::all() {
            let want: Vec<Op> = w.build(&generated, 5).unwrap().map(Op::zero_value).collect();
            let got: Vec<Op> = w.build(&zeros, 5).unwrap().collect();
            assert_eq!(got, want, "{w}");
            if let Workload::Ycsb(YcsbWorkload::Load | YcsbWorkload::A) = w {
                assert!(got.iter().any(|o| o.value().is_some_and(|v| !v.is_empty())), "{w} writes values");
            }
        }
    }

    #[test]
    fn key_size_sets_every_familys_keys() {
        let spec = WorkloadSpec {
            records: 500,
            operations: 50,
            value_size: ValueSize::Fixed(64),
            key_size: Some(397),
            values: ValueData::Generated,
        };
        for w in ["load", "a", "fillrandom", "readrandom", "all_random"] {
            let ops: Vec<Op> = w.parse::<Workload>().unwrap().build(&spec, 3).unwrap().collect();
            assert!(!ops.is_empty(), "{w}");
            assert!(ops.iter().all(|o| o.key().len() == 397), "{w}: every key is 397 B");
        }
        let ycsb: Vec<Op> = "load".parse::<Workload>().unwrap().build(&spec, 3).unwrap().collect();
        assert!(ycsb[0].key().starts_with(b"user000"), "YCSB pads with zeros after \"user\"");
        for bad in [Some(0), Some(4), Some(1025)] {
            let e = "load".parse::<Workload>().unwrap().build(&WorkloadSpec { key_size: bad, ..spec }, 3).err();
            assert!(e.is_some_and(|e| e.to_string().contains("key_size")), "{bad:?}");
        }
        let e = "fillrandom".parse::<Workload>().unwrap().build(&WorkloadSpec { key_size: Some(0), ..spec }, 3).err();
        assert!(e.is_some_and(|e| e.to_string().contains("key_size")));
    }
}

//! Workload generators for flashkv: YCSB, LevelDB db_bench, RocksDB Mixgraph, and value-size distributions; and
//! the readers of recorded workloads (block traces, key-value traces).
//!
//! Contract: the crate is pure. It opens no files (a trace is read from a reader the caller gives), keeps no global state, and draws every random choice from a
//! caller-given seed (or caller-given `rand::Rng`), so the same parameters and seed give bit-identical streams on every
//! machine (floating-point functions come from the pure-Rust `libm`, not the platform's). Bad parameters come back as
//! [`WorkloadError`] naming the field and the accepted values; nothing panics on bad input.
//!
//! Every generator yields [`Op`]s (see [`op`] for their meaning).

pub mod block_trace;
pub mod db_bench;
pub mod error;
pub mod fnv;
pub mod kv_trace;
pub mod mixgraph;
pub mod mt19937;
pub mod op;
pub mod park_miller;
pub mod rng;
pub mod rocksdb_trace;
mod trace_lines;
pub mod value_data;
pub mod value_size;
pub mod workload;
pub mod ycsb;
pub mod zipfian;

pub use error::WorkloadError;
pub use op::{Op, OpKind};
pub use value_data::ValueData;
pub use value_size::{SizeClass, SizeProfile, ValueSize};
pub use workload::{Workload, WorkloadSpec};
pub use ycsb::{Ycsb, YcsbConfig, YcsbProperties, YcsbWorkload};

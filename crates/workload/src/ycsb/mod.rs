//! YCSB core workloads: the load phase and workloads A-F, as `site.ycsb.workloads.CoreWorkload` defines them, and
//! YCSB's properties (a property file, `-p` overrides) over them ([`YcsbProperties`]).
//!
//! Contract:
//! - Operation choice is YCSB's `DiscreteGenerator` over the non-zero proportions in YCSB's order (read, update,
//!   insert, scan, read-modify-write), normalised.
//! - Keys are `"user"` + zero padding + decimal key number, the key number hashed with [`crate::fnv::fnvhash64`]
//!   first unless `insert_order` is `Ordered` (YCSB's `buildKeyName`).
//! - Load inserts key numbers `insert_start..insert_start + insert_count` in order (YCSB's `CounterGenerator`).
//!   Run-phase inserts take numbers from `record_count` up (YCSB's `AcknowledgedCounterGenerator`); reads, updates,
//!   scans and read-modify-writes draw a key number from the request distribution and redraw while it is above the
//!   last acknowledged insert. The stream is consumed in order, so an insert is acknowledged as soon as it has been
//!   handed out (YCSB acknowledges after the store returns; with one client thread that is the same order).
//! - Request distributions: `zipfian` is YCSB's `ScrambledZipfianGenerator` over
//!   `insert_start ..= insert_start + insert_count + expectednewkeys` with
//!   `expectednewkeys = (int)(operation_count * insertproportion * 2)`; `latest` is `SkewedLatestGenerator`;
//!   `uniform` and `hotspot` as YCSB's generators (with unbiased integer draws instead of `abs(nextLong) % n`).
//! - A value is the concatenation of its fields' bytes, in field order, with no field names or length prefixes (a
//!   YCSB binding would add its own framing; we leave that to the store so that value sizes are exactly
//!   `field_count x field_length`). Insert writes all fields; update and read-modify-write write one field chosen
//!   uniformly (all fields when `write_all_fields`). Field bytes are printable (`' '` + 5 to 7 random bits), six bytes
//!   per 32-bit draw, as YCSB's `RandomByteIterator` builds them.
//! - For key-value experiments that want a total record size (256 B, 1 KiB, 4 KiB), use
//!   [`YcsbConfig::with_record_size`]: one field of that many bytes, so that an update rewrites the whole record, as
//!   YCSB's LevelDB/RocksDB bindings do when they store a record as one value.
//! - Same configuration and seed: the identical operation stream on every machine.

mod config;
mod generator;
mod keys;
mod properties;

pub use config::{
    FieldLengthDistribution, InsertOrder, Phase, Proportions, RequestDistribution, ScanLengthDistribution, YcsbConfig,
    YcsbWorkload,
};
pub use generator::Ycsb;
pub use keys::{build_key_name, fill_random_printable};
pub use properties::YcsbProperties;

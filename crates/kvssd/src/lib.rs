//! kvssd: key-value SSDs simulated on flashsim's NAND media layer, with no file system below.
//!
//! - [`KvDevice`]: the interface of a key-value SSD in the spirit of the Samsung KV-SSD API
//!   (store / retrieve / delete / exist). Every call takes the simulated time at which the request
//!   arrives and returns the time at which it completes, so the caller measures response times.
//! - [`Plsc`]: the PLSC-tree of seed 002 (parallel log level 0, single compaction into level 1,
//!   a global hash index in device DRAM), an FTL of its own on [`flashsim::Media`].
//! - [`LsmInDevice`]: seed 002's baseline, LevelDB integrated into the device (seven levels,
//!   leveled compaction, a bloom filter per SST in DRAM, whole-SST reads), an FTL of its own on
//!   the same media layer.
//! - [`Kvftl`]: KVFTL of seed 004 (power-of-two partitions in partitioned blocks, page buffers,
//!   partition-based GC) and its revised variants SP / NP / WS ([`Variant`]), with its tables in
//!   RAM or cached under a RAM budget.
//! - [`DftlKv`]: seed 004's baseline, a page-level DFTL altered for key-value pairs (a page per
//!   started page of a value, KGTD, sequential LPAs), with a cached mapping table under a RAM
//!   budget: of single entries carrying value size and key id (the seed's reading), or of whole
//!   translation pages.
//!
//! PLSC, the LSM and DFTL-KV share their physical layer (`flash`: per-plane space, greedy GC, the
//! on-flash record); KVFTL manages its partitioned blocks itself. KVFTL caches its tables' entries
//! (`mapping`, on flashsim's [`flashsim::MappingCache`]); KVFTL and DFTL-KV share the mapping
//! statistics ([`MappingStats`]) and the space statistics ([`SpaceUse`], [`UnitsPerValue`]): one
//! mechanism, many policies.
//!
//! [`conformance`] holds the suite every design passes (the `KvDevice` contract, against a
//! `HashMap` model), for this crate's designs and plug-ins alike.
//!
//! Like flashsim, everything here is deterministic: no randomness, no wall clock, and no iteration
//! over hash maps where the order could change a result.

pub mod conformance;
mod device;
pub mod dftl_kv;
mod error;
mod flash;
pub mod kvftl;
pub mod lsm_in_device;
mod mapping;
pub mod plsc;
mod space_use;

pub use device::{Completed, DeviceWork, FtlWork, KvDevice};
pub use dftl_kv::{DftlKv, DftlKvConfig, DftlKvStats};
pub use error::{Inconsistency, KvError, RecordError, Result};
pub use kvftl::{Kvftl, KvftlConfig, KvftlStats, Variant};
pub use lsm_in_device::{LsmConfig, LsmInDevice, LsmStats, SstInfo};
pub use mapping::MappingStats;
pub use plsc::{GcScope, Plsc, PlscConfig, PlscStats, UstPlanes};
pub use space_use::{SpaceUse, UnitsPerValue};

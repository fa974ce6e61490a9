//! flashsim: NAND flash media, timing, and a block-interface SSD with exact accounting.
//!
//! The simulator is deterministic (no randomness, no wall clock; the same calls give bit-identical
//! state and counters) and runs in simulated time: every operation takes its issue time and returns
//! its completion time (see [`timing`]). [`BlockSsd`] is a page-mapped FTL with over-provisioning,
//! write frontiers, TRIM, greedy / cost-benefit / FIFO GC, an optional DFTL mapping cache, and
//! `remap(src, dst, len)` with a remap log that keeps GC and power-loss recovery correct.

mod bits;
pub mod config;
pub mod counters;
mod dftl;
pub mod error;
mod gc;
pub mod geometry;
pub mod latency;
mod planes;
pub mod preset;
mod recovery;
mod remap_log;
mod ssd;
mod store;
pub mod theory;
pub mod timing;
mod translation;

pub use config::{GcPolicy, MappingMode, SsdConfig};
pub use counters::{Counters, FlashReport};
pub use error::{FlashError, Result};
pub use geometry::{Geometry, PageAddr};
pub use latency::{HostOp, Latencies, LatencySummary};
pub use preset::Preset;
pub use remap_log::NvramUsage;
pub use ssd::BlockSsd;
pub use store::DataMode;
pub use timing::{Nanos, Timing};

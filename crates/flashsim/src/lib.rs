//! flashsim: simulated NAND flash devices with exact accounting, in simulated time.
//!
//! - [`media`]: the NAND array every device drives: geometry, the die / channel timeline, block and
//!   page states, OOB, wear, page contents, counters per [`Cause`] and latency histograms.
//! - Devices are FTLs on it. [`Ftl`]: what a block-interface SSD offers (a plug-in FTL implements
//!   it); [`BlockSsd`], the built-in one: a block-interface SSD (page-mapped FTL, greedy /
//!   cost-benefit / FIFO GC with a device-wide reserve, TRIM, `remap` with a remap log, an optional
//!   DFTL mapping cache, power-cut recovery). [`ZonedSsd`]: an NVMe ZNS SSD (zone states, open and
//!   active limits, zone append, reset; no device GC), its zones striped over the planes.
//! - [`clock`]: the host side's simulated time ([`SimClock`]: lanes, foreground and background,
//!   run in lockstep so that their requests reach the devices in simulated-time order), for
//!   whatever drives a device: a file system, an engine, a key-value device.
//!
//! The simulator is deterministic (no randomness, and the wall clock decides nothing: the clock
//! reads it only to choose between spinning and sleeping; the same calls give bit-identical
//! state and counters) and runs in simulated time: every operation takes its issue time and returns
//! its completion time (see [`timing`]).

mod bits;
pub mod cause;
pub mod clock;
pub mod error;
pub mod ftl;
pub mod geometry;
pub mod latency;
pub mod media;
pub mod overrides;
pub mod preset;
mod ssd;
pub mod theory;
pub mod timing;
mod zero_runs;
pub mod zoned;

pub use cause::{Cause, HostLabel};
pub use clock::{Lane, LaneTime, SimClock, Wait};
pub use error::{FlashError, Inconsistency, Result};
pub use ftl::Ftl;
pub use geometry::{Geometry, PageAddr};
pub use latency::{HostOp, Latencies, LatencySummary};
pub use media::{CauseCounts, CauseReport, DataMode, FlashCounters, Media, MediaConfig, PageWrite, Wear};
pub use overrides::GeometryOverrides;
pub use preset::Preset;
pub use ssd::dftl::{Cmt as MappingCache, CmtKey as MappingKey, TranslationIo};
pub use ssd::remap_log::NvramUsage;
pub use ssd::{
    BlockSsd, Candidate, Counters, FlashReport, FtlCounters, GcDestination, GcPolicy, MappingMode, SsdConfig,
    VictimPolicy,
};
pub use timing::{Nanos, OpKind, Timeline, Timing, Traced};
pub use zoned::{ZoneInfo, ZoneState, ZonedConfig, ZonedSsd};

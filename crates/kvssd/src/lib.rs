//! kvssd: key-value SSDs simulated on flashsim's NAND media layer, with no file system below.
//!
//! - [`KvDevice`]: the interface of a key-value SSD in the spirit of the Samsung KV-SSD API
//!   (store / retrieve / delete / exist). Every call takes the simulated time at which the request
//!   arrives and returns the time at which it completes, so the caller measures response times.
//! - [`Plsc`]: the PLSC-tree of seed 002 (parallel log level 0, single compaction into level 1,
//!   a global hash index in device DRAM), an FTL of its own on [`flashsim::Media`].
//!
//! Like flashsim, everything here is deterministic: no randomness, no wall clock, and no iteration
//! over hash maps where the order could change a result.

mod device;
mod error;
pub mod plsc;

pub use device::{Completed, KvDevice};
pub use error::{KvError, Result};
pub use plsc::{Plsc, PlscConfig, PlscStats};

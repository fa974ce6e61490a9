//! The host the engine runs in: what it asks of durability. Its page cache and its CPU join this
//! section when the simulator models them; a key-value SSD has no host-side engine, so nothing
//! here applies to one.

use serde::{Deserialize, Serialize};

/// The host of a run (`[host]`; the command line's `--sync`).
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostSpec {
    /// Sync every write (the write-ahead log is on the device before a put returns).
    #[arg(long)]
    pub sync: bool,
}

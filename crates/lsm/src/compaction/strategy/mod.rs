//! Compaction strategies: one trait, one file per strategy. A strategy only looks and decides: from
//! a version and the compaction pointers it computes its own scores, says whether work is due,
//! chooses the inputs, the level a flushed memtable goes to, and where outputs are cut and placed
//! (the write hint that a zoned file system turns into a zone). It does no I/O and changes nothing;
//! the job in [`super::job`] runs whatever [`Compaction`] it returns. (Pebble's picker, which
//! computes its own scores, and fjall's `CompactionStrategy::choose`, which returns a choice, are
//! the models.)
//!
//! - [`Leveled`]: LevelDB's leveled compaction.
//! - [`LifetimeLeveling`]: seed 003's lifetime-leveling for zoned SSDs (compaction pointers, every
//!   next-level SST between two pointers taken, outputs split at pointers, short-lived SSTs marked
//!   for the T-zone).
//! - [`Gear`]: GearDB's gear compaction (compaction windows; keys in the next level's window
//!   pass on down in the same compaction).

mod gear;
pub mod inputs;
mod leveled;
mod lifetime_leveling;
mod shape;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

pub use gear::{placement_windows, Gear, FIRST_WINDOWED_LEVEL, WINDOWS_PER_LEVEL};
pub use leveled::{level_targets, Leveled};
pub use lifetime_leveling::LifetimeLeveling;
pub use shape::TreeShape;

use super::Compaction;
use crate::error::Error;
use crate::version::Version;

/// What a strategy may look at.
pub struct PickContext<'a> {
    pub version: &'a Arc<Version>,
    /// Per level, the compaction pointer the strategy left there last time (an internal key;
    /// empty: none). The MANIFEST keeps them across restarts.
    pub compact_pointers: &'a [Vec<u8>],
    pub shape: TreeShape,
}

/// A compaction strategy; see the module documentation.
pub trait CompactionStrategy: Send + Sync + fmt::Debug {
    /// The strategy's name, as `Options::compaction` and the CLI spell it.
    fn name(&self) -> &'static str;

    /// Per level (all but the last), how far over its limit the level is in this strategy's
    /// terms: 1.0 or more means a compaction of it is due.
    fn scores(&self, version: &Version, shape: &TreeShape) -> Vec<f64>;

    /// Whether [`CompactionStrategy::choose`] would return something (the scheduler asks before
    /// waking a worker, so this must be cheap).
    fn needs_compaction(&self, version: &Version, shape: &TreeShape) -> bool {
        self.scores(version, shape).iter().any(|&s| s >= 1.0) || version.seek_compaction().is_some()
    }

    /// The compaction to run next, if any is due.
    fn choose(&self, ctx: &PickContext) -> Option<Compaction>;

    /// A compaction of `level` limited to the user-key range [begin, end] (`compact_range`), if
    /// that level has files there.
    fn choose_range(
        &self,
        ctx: &PickContext,
        level: usize,
        begin: Option<&[u8]>,
        end: Option<&[u8]>,
    ) -> Option<Compaction>;

    /// The level a flushed memtable holding user keys [lo, hi] goes to.
    fn flush_level(&self, version: &Version, shape: &TreeShape, lo: &[u8], hi: &[u8]) -> usize {
        let _ = (version, shape, lo, hi);
        0
    }
}

/// The strategies by name: what `Options::compaction` holds. A strategy of one's own (a plug-in,
/// selected by name through the lab's registry) is [`CompactionStyle::Custom`]; it has no
/// serialized form (the lab names it), so serializing options that hold one is an error.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CompactionStyle {
    /// LevelDB's leveled compaction.
    #[default]
    Leveled,
    /// GearDB's gear compaction.
    Gear,
    /// Lifetime-leveling (seed 003).
    LifetimeLeveling,
    /// A strategy of one's own.
    #[serde(skip)]
    Custom(CustomStrategy),
}

/// A strategy of one's own, known by its name: two are the same when their names are.
#[derive(Clone)]
pub struct CustomStrategy(pub Arc<dyn CompactionStrategy>);

impl fmt::Debug for CustomStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CustomStrategy({})", self.0.name())
    }
}

impl PartialEq for CustomStrategy {
    fn eq(&self, other: &CustomStrategy) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for CustomStrategy {}

impl std::hash::Hash for CustomStrategy {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.name().hash(h)
    }
}

impl CompactionStyle {
    /// The built-in strategies' names.
    pub const NAMES: [&'static str; 3] = ["leveled", "gear", "ll"];

    pub fn name(&self) -> &'static str {
        match self {
            CompactionStyle::Leveled => "leveled",
            CompactionStyle::Gear => "gear",
            CompactionStyle::LifetimeLeveling => "ll",
            CompactionStyle::Custom(s) => s.0.name(),
        }
    }

    /// The strategy itself.
    pub fn strategy(&self) -> Arc<dyn CompactionStrategy> {
        match self {
            CompactionStyle::Leveled => Arc::new(Leveled),
            CompactionStyle::Gear => Arc::new(Gear),
            CompactionStyle::LifetimeLeveling => Arc::new(LifetimeLeveling),
            CompactionStyle::Custom(s) => Arc::clone(&s.0),
        }
    }
}

impl fmt::Display for CompactionStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for CompactionStyle {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "leveled" => Ok(CompactionStyle::Leveled),
            "gear" => Ok(CompactionStyle::Gear),
            "ll" | "lifetime-leveling" => Ok(CompactionStyle::LifetimeLeveling),
            other => Err(Error::UnknownName {
                option: "compaction",
                name: other.to_string(),
                accepted: &CompactionStyle::NAMES,
            }),
        }
    }
}

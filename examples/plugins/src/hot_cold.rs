//! Hot-cold zone placement: two streams of SST zones, by expected lifetime. Level 0 and level 1
//! SSTs, rewritten soon, share the hot zones; deeper levels, rewritten rarely, share the cold
//! ones; the WAL and the metadata keep zones of their own, as in every built-in placement. A
//! middle ground between `shared` (one stream) and `per-level` (a stream per level) with two
//! active zones for SSTs.

use storage::fs::WriteHint;
use storage::zone::{Choice, OpenZone, ZoneAllocator, ZoneClass};

#[derive(Clone, Copy, Debug, Default)]
pub struct HotCold;

impl ZoneAllocator for HotCold {
    fn name(&self) -> &str {
        "hot-cold"
    }

    fn class(&self, hint: WriteHint) -> ZoneClass {
        match (hint, hint.level()) {
            (WriteHint::Wal, _) => ZoneClass::Wal,
            (_, None) => ZoneClass::Metadata,
            // The class is the stream's key: level 0 names the hot stream, level 2 the cold one.
            (_, Some(0 | 1)) => ZoneClass::Level(0),
            (_, Some(_)) => ZoneClass::Level(2),
        }
    }

    fn stream_per_file(&self) -> bool {
        false
    }

    /// A stream that fills its zone takes a new empty one.
    fn choose(&self, _: ZoneClass, _: &[OpenZone], _: bool) -> Choice {
        Choice::NewZone
    }
}

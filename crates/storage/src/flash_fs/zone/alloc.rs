//! Zone placement: which zones a file's data goes to. A policy ([`ZoneAllocator`]) names a file's
//! placement class from its write hint, says whether each file writes a stream of its own, and,
//! when a stream needs a zone, picks an open zone to continue in or asks for a new empty one.
//! The file system does the rest (finishing a zone to free an active-zone token, taking the first
//! empty zone, host GC), the same way for every policy.
//!
//! Policies ([`AllocPolicy`]):
//! - `Shared`: one stream of zones for every SST, whatever its level (LevelDB on ZNS as is: seed
//!   003's BL and GC baselines); SSTs interleave in the zone being written. The WAL and the
//!   metadata files (manifest, CURRENT, unhinted files) have zones of their own, as LevelDB ports
//!   to zoned drives keep logs and metadata out of the SST zones: a manifest that grows for the
//!   whole run, one synced page at a time, would otherwise pin a page in nearly every zone.
//! - `PerLevel`: zones dedicated per class: the WAL, metadata files (manifest, CURRENT, unhinted
//!   files), each LSM level (from `WriteHint::level()`; a flush is level 0, a move goes to its
//!   level's zones), and short-lived SSTs in a class of their own (the T-zone). Each class appends
//!   to its own current zone and takes the first empty zone when that fills (the LL fork's rule):
//!   seed 003's LS, Gear and LL rows.
//! - `PerWindow`: `PerLevel`, and an SST whose hint names a window of its level
//!   ([`WriteHint::Window`]) goes to zones of that window: no zone holds SSTs of two windows (or a
//!   window's SSTs and other SSTs of the level), so that once the strategy has compacted a
//!   window's SSTs away its zones hold nothing live and are reset whole. Which window an SST
//!   belongs to is the compaction strategy's choice (gear's key-range placement windows: an
//!   alternative reading of GearDB's layout, which the zns-ll repro does not use); the file system
//!   only keeps windows apart, in as many streams as there are windows being written. Under the
//!   other policies a window hint is a compaction hint of its level.
//! - `Lifetime`: ZenFS's allocator. A file's lifetime comes from its hint (WAL short; flush, L0 and
//!   L1 medium; L2 long; deeper extreme; manifest and unhinted files "not set"); a zone takes the
//!   lifetime of the file that opened it. Each file writes a stream of its own, and a zone is
//!   written by one file at a time. When a file needs a zone, ZenFS's `GetBestOpenZoneMatch` /
//!   `AllocateIOZone` rule applies: among the open (partly written, not busy) zones, the one with
//!   the smallest lifetime difference (`zone - file` when the zone lives longer; 50 when equal; 100
//!   when shorter; for "not set" files 0 for a "not set" zone and 100 otherwise; on a tie, the
//!   later zone in zone order). A difference under 50 takes that zone. Otherwise a new empty zone
//!   is opened if an active-zone token is free; without a token a same-lifetime zone (50) is
//!   still used; failing both, the fullest active zone is finished to free a token and an empty
//!   zone opened (ZenFS's `FinishCheapestIOZone`). Not modelled: ZenFS's finish threshold, its
//!   reserved open token for the WAL, and its sparse WAL format.

use std::sync::Arc;

use crate::fs::WriteHint;

/// Where files of a class go: the unit of placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ZoneClass {
    /// Every SST (the `Shared` policy).
    Shared,
    Wal,
    /// Manifest, CURRENT and unhinted files.
    Metadata,
    /// SSTs of an LSM level (flush = level 0; moves to their level).
    Level(u8),
    /// SSTs of one window of a level (the `PerWindow` policy).
    Window {
        level: u8,
        window: u8,
    },
    /// Short-lived SSTs (lifetime-leveling's T-zone).
    TZone,
    /// A ZenFS write-lifetime class.
    Lifetime(Lifetime),
}

/// ZenFS's write-lifetime hints (RocksDB's `WriteLifeTimeHint`), with their numeric order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lifetime {
    NotSet = 0,
    Short = 2,
    Medium = 3,
    Long = 4,
    Extreme = 5,
}

impl Lifetime {
    /// The lifetime of a file written with `hint`.
    pub fn of(hint: WriteHint) -> Lifetime {
        match (hint, hint.level()) {
            (WriteHint::Wal, _) => Lifetime::Short,
            (_, Some(0 | 1)) => Lifetime::Medium,
            (_, Some(2)) => Lifetime::Long,
            (_, Some(_)) => Lifetime::Extreme,
            (_, None) => Lifetime::NotSet,
        }
    }
}

/// ZenFS's lifetime difference of putting a file of lifetime `file` in a zone of lifetime `zone`.
pub fn lifetime_diff(zone: Lifetime, file: Lifetime) -> u32 {
    const NOT_GOOD: u32 = 100;
    const COULD_BE_WORSE: u32 = 50;
    if file == Lifetime::NotSet {
        return if zone == file { 0 } else { NOT_GOOD };
    }
    match (zone as u32, file as u32) {
        (z, f) if z > f => z - f,
        (z, f) if z == f => COULD_BE_WORSE,
        _ => NOT_GOOD,
    }
}

/// A partly written zone that no stream is writing: a candidate to continue in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenZone {
    pub zone: u32,
    pub class: ZoneClass,
    pub free_pages: u64,
}

/// What a policy answers when a stream needs a zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choice {
    /// Continue in this open zone.
    Reuse(u32),
    /// Open a new (empty) zone for the class, finishing a zone first if no active token is free.
    NewZone,
}

/// A placement policy: the built-in ones below, or one of one's own ([`AllocPolicy::Custom`], a
/// plug-in selected by name through the lab's registry).
pub trait ZoneAllocator: Send + Sync + std::fmt::Debug {
    /// The policy's name (`--zone-policy NAME`).
    fn name(&self) -> &str;

    /// The placement class of a file written with `hint`.
    fn class(&self, hint: WriteHint) -> ZoneClass;

    /// Whether each file writes a stream of its own (a zone written by one file at a time), rather
    /// than sharing its class's stream.
    fn stream_per_file(&self) -> bool;

    /// Where a stream of `class` continues, given the open zones no stream is writing and whether
    /// an active-zone token is free.
    fn choose(&self, class: ZoneClass, open: &[OpenZone], token_free: bool) -> Choice;
}

/// The placement policies ZoneFs offers.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AllocPolicy {
    #[default]
    Shared,
    PerLevel,
    PerWindow,
    Lifetime,
    /// A policy of one's own.
    Custom(CustomAllocator),
}

/// A placement policy of one's own, known by its name: two are the same when their names are.
#[derive(Clone)]
pub struct CustomAllocator(pub Arc<dyn ZoneAllocator>);

impl std::fmt::Debug for CustomAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CustomAllocator({})", self.0.name())
    }
}

impl PartialEq for CustomAllocator {
    fn eq(&self, other: &CustomAllocator) -> bool {
        self.0.name() == other.0.name()
    }
}

impl Eq for CustomAllocator {}

impl AllocPolicy {
    pub const NAMES: [&'static str; 4] = ["shared", "per-level", "per-window", "lifetime"];

    pub fn name(&self) -> &str {
        match self {
            AllocPolicy::Shared => "shared",
            AllocPolicy::PerLevel => "per-level",
            AllocPolicy::PerWindow => "per-window",
            AllocPolicy::Lifetime => "lifetime",
            AllocPolicy::Custom(a) => a.0.name(),
        }
    }

    pub fn parse(s: &str) -> Option<AllocPolicy> {
        match s {
            "shared" => Some(AllocPolicy::Shared),
            "per-level" => Some(AllocPolicy::PerLevel),
            "per-window" => Some(AllocPolicy::PerWindow),
            "lifetime" => Some(AllocPolicy::Lifetime),
            _ => None,
        }
    }

    /// The allocator that implements the policy.
    pub fn allocator(&self) -> Arc<dyn ZoneAllocator> {
        match self {
            AllocPolicy::Shared => Arc::new(SharedAlloc),
            AllocPolicy::PerLevel => Arc::new(PerLevelAlloc { windows: false }),
            AllocPolicy::PerWindow => Arc::new(PerLevelAlloc { windows: true }),
            AllocPolicy::Lifetime => Arc::new(LifetimeAlloc),
            AllocPolicy::Custom(a) => Arc::clone(&a.0),
        }
    }
}

#[derive(Debug)]
struct SharedAlloc;

impl ZoneAllocator for SharedAlloc {
    fn name(&self) -> &str {
        "shared"
    }
    fn class(&self, hint: WriteHint) -> ZoneClass {
        match (hint, hint.level()) {
            (WriteHint::Wal, _) => ZoneClass::Wal,
            (_, None) => ZoneClass::Metadata,
            (_, Some(_)) => ZoneClass::Shared,
        }
    }
    fn stream_per_file(&self) -> bool {
        false
    }
    fn choose(&self, _: ZoneClass, _: &[OpenZone], _: bool) -> Choice {
        Choice::NewZone
    }
}

/// `PerLevel`, and with `windows` `PerWindow`.
#[derive(Debug)]
struct PerLevelAlloc {
    windows: bool,
}

impl ZoneAllocator for PerLevelAlloc {
    fn name(&self) -> &str {
        if self.windows {
            "per-window"
        } else {
            "per-level"
        }
    }
    fn class(&self, hint: WriteHint) -> ZoneClass {
        match hint {
            WriteHint::Wal => ZoneClass::Wal,
            WriteHint::ShortLived { .. } => ZoneClass::TZone,
            WriteHint::Window { output_level, window } if self.windows => {
                ZoneClass::Window { level: output_level, window }
            }
            h => h.level().map_or(ZoneClass::Metadata, ZoneClass::Level),
        }
    }
    fn stream_per_file(&self) -> bool {
        false
    }
    fn choose(&self, _: ZoneClass, _: &[OpenZone], _: bool) -> Choice {
        Choice::NewZone
    }
}

#[derive(Debug)]
struct LifetimeAlloc;

impl ZoneAllocator for LifetimeAlloc {
    fn name(&self) -> &str {
        "lifetime"
    }
    fn class(&self, hint: WriteHint) -> ZoneClass {
        ZoneClass::Lifetime(Lifetime::of(hint))
    }
    fn stream_per_file(&self) -> bool {
        true
    }
    fn choose(&self, class: ZoneClass, open: &[OpenZone], token_free: bool) -> Choice {
        let ZoneClass::Lifetime(file) = class else { return Choice::NewZone };
        let mut best: Option<(u32, u32)> = None; // (diff, zone)
        for z in open {
            let ZoneClass::Lifetime(zone) = z.class else { continue };
            let diff = lifetime_diff(zone, file);
            if diff <= best.map_or(100, |b| b.0) {
                best = Some((diff, z.zone));
            }
        }
        match best {
            Some((diff, zone)) if diff < 50 => Choice::Reuse(zone),
            Some((50, zone)) if !token_free => Choice::Reuse(zone),
            _ => Choice::NewZone,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(zone: u32, l: Lifetime) -> OpenZone {
        OpenZone { zone, class: ZoneClass::Lifetime(l), free_pages: 10 }
    }

    #[test]
    fn lifetimes_follow_the_hints() {
        assert_eq!(Lifetime::of(WriteHint::Wal), Lifetime::Short);
        assert_eq!(Lifetime::of(WriteHint::Flush), Lifetime::Medium);
        assert_eq!(Lifetime::of(WriteHint::Compaction { output_level: 1 }), Lifetime::Medium);
        assert_eq!(Lifetime::of(WriteHint::Compaction { output_level: 2 }), Lifetime::Long);
        assert_eq!(Lifetime::of(WriteHint::Move { output_level: 5 }), Lifetime::Extreme);
        assert_eq!(Lifetime::of(WriteHint::Manifest), Lifetime::NotSet);
        assert_eq!(lifetime_diff(Lifetime::Extreme, Lifetime::Medium), 2);
        assert_eq!(lifetime_diff(Lifetime::Medium, Lifetime::Medium), 50);
        assert_eq!(lifetime_diff(Lifetime::Short, Lifetime::Medium), 100);
        assert_eq!(lifetime_diff(Lifetime::NotSet, Lifetime::NotSet), 0);
        assert_eq!(lifetime_diff(Lifetime::Long, Lifetime::NotSet), 100);
    }

    #[test]
    fn zenfs_rule_prefers_the_closest_longer_lifetime_then_a_new_zone_then_an_equal_one() {
        let a = LifetimeAlloc;
        let medium = ZoneClass::Lifetime(Lifetime::Medium);
        let zones = [open(1, Lifetime::Extreme), open(2, Lifetime::Long), open(3, Lifetime::Short)];
        assert_eq!(a.choose(medium, &zones, true), Choice::Reuse(2), "Long is the closest longer lifetime");
        let same = [open(4, Lifetime::Medium), open(5, Lifetime::Short)];
        assert_eq!(a.choose(medium, &same, true), Choice::NewZone, "a free token opens a new zone");
        assert_eq!(a.choose(medium, &same, false), Choice::Reuse(4), "without a token, the equal lifetime");
        assert_eq!(a.choose(medium, &[open(6, Lifetime::Short)], false), Choice::NewZone);
        let ties = [open(7, Lifetime::Long), open(8, Lifetime::Long)];
        assert_eq!(a.choose(medium, &ties, true), Choice::Reuse(8), "ties go to the later zone, as ZenFS");
    }

    #[test]
    fn per_window_keeps_windows_apart_and_the_other_policies_read_a_window_as_its_level() {
        let w = |window| WriteHint::Window { output_level: 3, window };
        let a = PerLevelAlloc { windows: true };
        assert_eq!(a.class(w(0)), ZoneClass::Window { level: 3, window: 0 });
        assert_eq!(a.class(w(1)), ZoneClass::Window { level: 3, window: 1 });
        assert_eq!(a.class(WriteHint::Compaction { output_level: 3 }), ZoneClass::Level(3));
        assert_eq!(a.class(WriteHint::Flush), ZoneClass::Level(0));
        assert_eq!(PerLevelAlloc { windows: false }.class(w(1)), ZoneClass::Level(3));
        assert_eq!(SharedAlloc.class(w(1)), ZoneClass::Shared);
        assert_eq!(Lifetime::of(w(1)), Lifetime::Extreme);
        assert_eq!(
            AllocPolicy::parse("per-window").map(|p| p.allocator().name().to_string()).as_deref(),
            Some("per-window")
        );
    }

    #[test]
    fn per_level_classes() {
        let a = PerLevelAlloc { windows: false };
        assert_eq!(a.class(WriteHint::Flush), ZoneClass::Level(0));
        assert_eq!(a.class(WriteHint::Move { output_level: 3 }), ZoneClass::Level(3));
        assert_eq!(a.class(WriteHint::ShortLived { output_level: 3 }), ZoneClass::TZone);
        assert_eq!(a.class(WriteHint::None), ZoneClass::Metadata);
        assert_eq!(SharedAlloc.class(WriteHint::Wal), ZoneClass::Wal);
        assert_eq!(SharedAlloc.class(WriteHint::Manifest), ZoneClass::Metadata);
        assert_eq!(SharedAlloc.class(WriteHint::Flush), ZoneClass::Shared);
        assert_eq!(SharedAlloc.class(WriteHint::Compaction { output_level: 5 }), ZoneClass::Shared);
    }
}

//! The store a run drives: the LSM engine on the device's file system (`lsm`, with its options),
//! or a key-value SSD design that is its own device (`plsc`, `lsm-in-device`, `kvftl`, ...).
//!
//! One struct is the command line's engine flags, an experiment file's `[engine]` table and the
//! `engine` object of a run's JSON; [`EngineSpec::resolve`] turns it into the engine's options or
//! the design with its parameters, and holds every rule between them: RemapCom needs aligned
//! blocks, and a key-value FTL parameter applies only to the designs that have it.

use kvssd::dftl_kv::DftlCache;
use kvssd::{GcScope, UstPlanes, Variant};
use serde::{Deserialize, Serialize};

use super::flat::{self, Flat};
use super::named::{parser, serde_name, serde_name_opt, Bytes, NameError, Named};
use super::names::EngineName;
use crate::error::{LabError, Result};

impl Named for EngineName {
    fn parse_name(text: &str) -> Result<EngineName, NameError> {
        match EngineName::BUILT_IN.into_iter().find(|e| e.as_str() == text.trim()) {
            Some(e) => Ok(e),
            None => {
                crate::plugins::registry().kv_ssd_name(text.trim()).map(EngineName::Plugin).map_err(NameError::from)
            }
        }
    }
    fn name(&self) -> String {
        self.as_str().to_string()
    }
}

/// RAM for a key-value FTL's mapping tables: a size, or unlimited (every table in RAM, no mapping
/// I/O).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MappingRam {
    #[default]
    Unlimited,
    Bytes(u64),
}

impl Named for MappingRam {
    fn parse_name(text: &str) -> Result<MappingRam, NameError> {
        match text.trim() {
            "unlimited" => Ok(MappingRam::Unlimited),
            t => Bytes::parse_name(t).map(|b| MappingRam::Bytes(b.0)).map_err(|e| format!("{e}, or unlimited").into()),
        }
    }
    fn name(&self) -> String {
        match self {
            MappingRam::Unlimited => "unlimited".into(),
            MappingRam::Bytes(b) => Bytes(*b).name(),
        }
    }
}

impl Named for DftlCache {
    fn parse_name(text: &str) -> Result<DftlCache, NameError> {
        DftlCache::from_name(text.trim()).ok_or_else(|| {
            format!("unknown DFTL cache '{}'; accepted: {}", text.trim(), DftlCache::NAMES.join(", ")).into()
        })
    }
    fn name(&self) -> String {
        DftlCache::name(*self).into()
    }
}

impl Named for GcScope {
    fn parse_name(text: &str) -> Result<GcScope, NameError> {
        GcScope::from_name(text.trim()).ok_or_else(|| {
            format!("unknown GC scope '{}'; accepted: {}", text.trim(), GcScope::NAMES.join(", ")).into()
        })
    }
    fn name(&self) -> String {
        GcScope::name(*self).into()
    }
}

impl Named for UstPlanes {
    fn parse_name(text: &str) -> Result<UstPlanes, NameError> {
        UstPlanes::from_name(text.trim()).ok_or_else(|| {
            format!("unknown UST planes '{}'; accepted: {}", text.trim(), UstPlanes::NAMES.join(", ")).into()
        })
    }
    fn name(&self) -> String {
        UstPlanes::name(*self).into()
    }
}

/// Readings of a key-value design that experiments compare, beside its parameters: what
/// DFTL-KV's cached mapping table holds, whether KVFTL reads partitions still in a page buffer
/// from the buffer, where PLSC counts its GC threshold and which planes its USTs take (each its
/// default unless the specification names it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvReadings {
    pub dftl_cache: DftlCache,
    pub buffer_reads: bool,
    pub gc_scope: GcScope,
    pub ust_planes: UstPlanes,
}

impl Default for KvReadings {
    fn default() -> Self {
        KvReadings {
            dftl_cache: DftlCache::Entries,
            buffer_reads: true,
            gc_scope: GcScope::default(),
            ust_planes: UstPlanes::default(),
        }
    }
}

impl MappingRam {
    fn budget(self) -> Option<u64> {
        match self {
            MappingRam::Unlimited => None,
            MappingRam::Bytes(b) => Some(b),
        }
    }
}

/// The engine of a run (`--engine` and its options; `[engine]`). The LSM engine's options
/// ([`lsm::OptionOverrides`], embedded: their fields are this table's) left out keep its
/// profile's defaults.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
// Read by `flat::deserialize` (the `Deserialize` impl below), which refuses unknown fields.
#[serde(remote = "Self", default, deny_unknown_fields)]
// `--compaction` takes a plug-in's strategy too, which only the lab's registry knows.
#[command(mut_arg("compaction", |a| a.value_parser(parser::<lsm::CompactionStyle>)))]
pub struct EngineSpec {
    /// The engine: lsm (the LSM engine on --fs) or a key-value SSD design: plsc (the PLSC-tree,
    /// seed 002), lsm-in-device (seed 002's baseline: LevelDB inside the device; -striped spreads
    /// an SST's pages over every plane), kvftl, kvftl-sp, kvftl-np, kvftl-ws (seed 004's KVFTL and
    /// its variants), dftl-kv (seed 004's baseline), or a plug-in's design; a device is --preset
    /// at --capacity, with no file system.
    #[arg(long = "engine", value_name = "ENGINE", default_value = "lsm", value_parser = parser::<EngineName>)]
    #[serde(with = "serde_name")]
    pub name: EngineName,
    /// The LSM engine's defaults: flashkv (LevelDB's, with RocksDB's level-0 write triggers, slow
    /// at 20 files and stop at 36, and flushes on a lane of their own) or leveldb (LevelDB 1.23's throughout, which the seeds' repros
    /// pin). The options below override it.
    #[arg(long, default_value = "flashkv", value_parser = parser::<lsm::Profile>)]
    #[serde(with = "serde_name", skip_serializing_if = "is_flashkv")]
    pub profile: lsm::Profile,
    // The LSM engine's options: flags and fields of their own, owned by the engine.
    #[command(flatten)]
    #[serde(flatten, skip_deserializing)]
    pub lsm: lsm::OptionOverrides,
    /// kvftl-sp: the smallest partition (a power of two; the paper's evaluation: 4KiB).
    #[arg(long, value_parser = parser::<Bytes>)]
    #[serde(with = "serde_name_opt")]
    pub min_partition: Option<Bytes>,
    /// kvftl-np: the most partitions of one value (the paper's evaluation: 3).
    #[arg(long)]
    pub max_partitions: Option<u8>,
    /// kvftl-ws: the most bytes a value may waste in its last partition (the paper's evaluation:
    /// 2KiB).
    #[arg(long, value_parser = parser::<Bytes>)]
    #[serde(with = "serde_name_opt")]
    pub max_waste: Option<Bytes>,
    /// kvftl and dftl-kv: RAM for the mapping tables (e.g. 512KiB), or unlimited (the default:
    /// every table in RAM, no mapping I/O); at least one entry (14 B for dftl-kv's entries, 8 B
    /// for kvftl's), or one page for dftl-kv's pages.
    #[arg(long, value_parser = parser::<MappingRam>)]
    #[serde(with = "serde_name_opt")]
    pub mapping_ram: Option<MappingRam>,
    /// dftl-kv: what its cached mapping table holds under --mapping-ram: entries (the default,
    /// the seed's reading: single map entries, over the seed's GTD of 208 translation pages) or
    /// pages (whole translation pages over full ones: issue 28's reading).
    #[arg(long, value_parser = parser::<DftlCache>)]
    #[serde(with = "serde_name_opt", default, skip_serializing_if = "Option::is_none")]
    pub dftl_cache: Option<DftlCache>,
    /// kvftl and its variants: false charges a page read for each partition a get finds still in
    /// a page buffer (an experiment; by default it is read from the buffer).
    #[arg(long)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_reads: Option<bool>,
    /// plsc: where its GC threshold (30 % of the pages free) is counted: device (the default, the
    /// seed's words) or plane (SSDSim's code: a plane below 30 % of its own pages free).
    #[arg(long, value_parser = parser::<GcScope>)]
    #[serde(with = "serde_name_opt", default, skip_serializing_if = "Option::is_none")]
    pub gc_scope: Option<GcScope>,
    /// plsc: which planes a UST's pages take: rotating (the default: after the previous UST's) or
    /// aligned (page i of every UST on the i-th plane, as an L0 UST's are).
    #[arg(long, value_parser = parser::<UstPlanes>)]
    #[serde(with = "serde_name_opt", default, skip_serializing_if = "Option::is_none")]
    pub ust_planes: Option<UstPlanes>,
}

impl Serialize for EngineSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        EngineSpec::serialize(self, s)
    }
}

impl<'de> Deserialize<'de> for EngineSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<EngineSpec, D::Error> {
        flat::deserialize(d)
    }
}

impl Flat for EngineSpec {
    type Part = lsm::OptionOverrides;
    const PART_AT: usize = 2;
    const READ_BY_LAB: &'static [&'static str] = &["compaction"];

    fn own<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<EngineSpec, D::Error> {
        EngineSpec::deserialize(d)
    }

    fn part_mut(&mut self) -> &mut lsm::OptionOverrides {
        &mut self.lsm
    }

    /// `compaction`: a built-in strategy or a plug-in's, by the lab's registry.
    fn read_part_field(
        part: &mut lsm::OptionOverrides,
        key: &str,
        value: &serde_json::Value,
    ) -> std::result::Result<(), String> {
        match key {
            "compaction" => {
                part.compaction = serde_name::deserialize(value).map_err(|e| e.to_string())?;
                Ok(())
            }
            other => Err(format!("{other} is lsm's to read")),
        }
    }
}

/// A key-value SSD design with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KvDesign {
    /// The PLSC-tree (seed 002).
    Plsc,
    /// Seed 002's baseline: LevelDB inside the device, each SST consulted read whole. `filters`:
    /// a bloom filter per SST in DRAM and an SST's pages spread over every plane, as PLSC's USTs
    /// are (the default since issue 28); false: no filters and an SST's pages in one plane (our
    /// reading before issue 28).
    LsmInDevice { filters: bool },
    /// KVFTL (seed 004) with its value partitioner's variant; its PartitionPtrTables cached in
    /// `mapping_ram` bytes (`None`: every table in RAM, no mapping I/O).
    Kvftl { variant: Variant, mapping_ram: Option<u64> },
    /// Seed 004's baseline: a page-level DFTL whose map entries carry value size and key id, its
    /// cached mapping table (of entries, or of whole translation pages: `KvReadings`) in
    /// `mapping_ram` bytes (`None`: the whole map in RAM).
    DftlKv { mapping_ram: Option<u64> },
    /// A plug-in's design (`crate::plugins`), by its registered name.
    Plugin(&'static str),
}

impl KvDesign {
    pub fn name(self) -> &'static str {
        match self {
            KvDesign::Plsc => "plsc",
            KvDesign::LsmInDevice { filters: true } => "lsm-in-device",
            KvDesign::LsmInDevice { filters: false } => "lsm-in-device-one-plane",
            KvDesign::Kvftl { variant, .. } => variant.name(),
            KvDesign::DftlKv { .. } => "dftl-kv",
            KvDesign::Plugin(name) => name,
        }
    }
}

impl From<KvDesign> for EngineSpec {
    /// The specification that resolves to `design` (its parameters given explicitly).
    fn from(design: KvDesign) -> EngineSpec {
        let ram = |r: Option<u64>| r.map(MappingRam::Bytes);
        match design {
            KvDesign::Plsc => EngineSpec::kv(EngineName::Plsc),
            KvDesign::Plugin(name) => EngineSpec::kv(EngineName::Plugin(name)),
            KvDesign::LsmInDevice { filters: true } => EngineSpec::kv(EngineName::LsmInDevice),
            KvDesign::LsmInDevice { filters: false } => EngineSpec::kv(EngineName::LsmInDeviceOnePlane),
            KvDesign::DftlKv { mapping_ram } => {
                EngineSpec { mapping_ram: ram(mapping_ram), ..EngineSpec::kv(EngineName::DftlKv) }
            }
            KvDesign::Kvftl { variant, mapping_ram } => {
                let base = EngineSpec { mapping_ram: ram(mapping_ram), ..EngineSpec::default() };
                match variant {
                    Variant::Pure => EngineSpec { name: EngineName::Kvftl, ..base },
                    Variant::SmallestPartition { min_p } => {
                        EngineSpec { name: EngineName::KvftlSp, min_partition: Some(Bytes(1 << min_p)), ..base }
                    }
                    Variant::MaxPartitions { n } => {
                        EngineSpec { name: EngineName::KvftlNp, max_partitions: Some(n), ..base }
                    }
                    Variant::MaxWaste { bytes } => {
                        EngineSpec { name: EngineName::KvftlWs, max_waste: Some(Bytes(bytes)), ..base }
                    }
                }
            }
        }
    }
}

/// What a resolved engine specification runs.
#[derive(Clone, Debug)]
pub enum Engine {
    /// The LSM engine with these options (boxed: they outweigh the other variants tenfold).
    Lsm {
        options: Box<lsm::Options>,
    },
    Kv(KvDesign),
}

fn is_flashkv(p: &lsm::Profile) -> bool {
    *p == lsm::Profile::Flashkv
}

fn invalid(field: &str, reason: impl Into<String>) -> LabError {
    LabError::invalid(format!("engine.{field}"), reason)
}

impl EngineSpec {
    /// The key-value SSD `name`.
    pub fn kv(name: EngineName) -> EngineSpec {
        EngineSpec { name, ..EngineSpec::default() }
    }

    /// Whether the engine is a key-value SSD (a device with no file system below it).
    pub fn is_kv_ssd(&self) -> bool {
        self.name != EngineName::Lsm
    }

    /// The engine this specification runs; errors name the field that is wrong or does not apply.
    pub fn resolve(&self) -> Result<Engine> {
        let design = match self.name {
            EngineName::Lsm => None,
            EngineName::Plsc => Some(KvDesign::Plsc),
            EngineName::LsmInDevice => Some(KvDesign::LsmInDevice { filters: true }),
            EngineName::LsmInDeviceOnePlane => Some(KvDesign::LsmInDevice { filters: false }),
            EngineName::DftlKv => Some(KvDesign::DftlKv { mapping_ram: self.ram() }),
            EngineName::Kvftl => Some(self.kvftl(Variant::Pure)?),
            EngineName::KvftlSp => Some(self.kvftl(Variant::SP)?),
            EngineName::KvftlNp => Some(self.kvftl(Variant::NP)?),
            EngineName::KvftlWs => Some(self.kvftl(Variant::WS)?),
            EngineName::Plugin(name) => Some(KvDesign::Plugin(name)),
        };
        self.check_applies(design)?;
        match design {
            Some(d) => Ok(Engine::Kv(d)),
            None => Ok(Engine::Lsm { options: Box::new(self.lsm_options()?) }),
        }
    }

    fn ram(&self) -> Option<u64> {
        self.mapping_ram.unwrap_or_default().budget()
    }

    /// The readings a key-value design is built with: the given ones, else the defaults.
    pub fn readings(&self) -> KvReadings {
        let d = KvReadings::default();
        KvReadings {
            dftl_cache: self.dftl_cache.unwrap_or(d.dftl_cache),
            buffer_reads: self.buffer_reads.unwrap_or(d.buffer_reads),
            gc_scope: self.gc_scope.unwrap_or(d.gc_scope),
            ust_planes: self.ust_planes.unwrap_or(d.ust_planes),
        }
    }

    /// KVFTL with `variant` (the paper's parameter) and the given parameter applied.
    fn kvftl(&self, variant: Variant) -> Result<KvDesign> {
        let variant = match variant {
            Variant::SmallestPartition { .. } => match self.min_partition {
                None => variant,
                Some(b) if !b.0.is_power_of_two() => {
                    return Err(invalid(
                        "min_partition",
                        format!("{} is not a power of two (partitions are 2^p bytes)", b.0),
                    ))
                }
                Some(b) => Variant::SmallestPartition { min_p: b.0.trailing_zeros() as u8 },
            },
            Variant::MaxPartitions { .. } => match self.max_partitions {
                None => variant,
                Some(0) => return Err(invalid("max_partitions", "must be at least 1")),
                Some(n) => Variant::MaxPartitions { n },
            },
            Variant::MaxWaste { .. } => self.max_waste.map_or(variant, |b| Variant::MaxWaste { bytes: b.0 }),
            Variant::Pure => variant,
        };
        Ok(KvDesign::Kvftl { variant, mapping_ram: self.ram() })
    }

    /// A key-value FTL parameter given to a design that does not have it is an error.
    fn check_applies(&self, design: Option<KvDesign>) -> Result<()> {
        let kvftl = |v: fn(&Variant) -> bool| matches!(design, Some(KvDesign::Kvftl { variant, .. }) if v(&variant));
        for (field, given, applies) in [
            ("min_partition", self.min_partition.is_some(), kvftl(|v| matches!(v, Variant::SmallestPartition { .. }))),
            ("max_partitions", self.max_partitions.is_some(), kvftl(|v| matches!(v, Variant::MaxPartitions { .. }))),
            ("max_waste", self.max_waste.is_some(), kvftl(|v| matches!(v, Variant::MaxWaste { .. }))),
            (
                "mapping_ram",
                self.mapping_ram.is_some(),
                matches!(design, Some(KvDesign::Kvftl { .. } | KvDesign::DftlKv { .. })),
            ),
            ("dftl_cache", self.dftl_cache.is_some(), matches!(design, Some(KvDesign::DftlKv { .. }))),
            ("buffer_reads", self.buffer_reads.is_some(), kvftl(|_| true)),
            ("gc_scope", self.gc_scope.is_some(), matches!(design, Some(KvDesign::Plsc))),
            ("ust_planes", self.ust_planes.is_some(), matches!(design, Some(KvDesign::Plsc))),
        ] {
            if given && !applies {
                return Err(invalid(field, format!("does not apply to engine {}", self.name.as_str())));
            }
        }
        Ok(())
    }

    /// The LSM engine's options: the profile's with the given ones applied, errors naming the
    /// given option as this specification's field.
    pub fn lsm_options(&self) -> Result<lsm::Options> {
        let base = lsm::Options { create_if_missing: true, ..lsm::Options::profile(self.profile) };
        self.lsm.apply(base).map_err(|e| invalid(e.field, e.reason()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::named::ByteCount;

    /// The default overrides changed by `change`.
    fn over(change: impl FnOnce(&mut lsm::OptionOverrides)) -> lsm::OptionOverrides {
        let mut o = lsm::OptionOverrides::default();
        change(&mut o);
        o
    }

    #[test]
    fn remapping_aligns_blocks() {
        let Engine::Lsm { options, .. } =
            EngineSpec { lsm: over(|o| o.remap = lsm::RemapMode::Base), ..EngineSpec::default() }.resolve().unwrap()
        else {
            panic!("an LSM engine")
        };
        assert!(options.align_blocks);
        let Engine::Lsm { options, .. } = EngineSpec::default().resolve().unwrap() else { panic!("an LSM engine") };
        assert!(!options.align_blocks);
    }

    #[test]
    fn every_design_is_a_specification() {
        for d in [
            KvDesign::Plsc,
            KvDesign::LsmInDevice { filters: true },
            KvDesign::LsmInDevice { filters: false },
            KvDesign::DftlKv { mapping_ram: Some(4096) },
            KvDesign::Kvftl { variant: Variant::SmallestPartition { min_p: 10 }, mapping_ram: None },
            KvDesign::Kvftl { variant: Variant::MaxPartitions { n: 5 }, mapping_ram: Some(1 << 20) },
            KvDesign::Kvftl { variant: Variant::MaxWaste { bytes: 1 << 13 }, mapping_ram: None },
        ] {
            let Engine::Kv(back) = EngineSpec::from(d).resolve().unwrap() else { panic!("{d:?}") };
            assert_eq!(back, d);
        }
    }

    #[test]
    fn engine_option_errors_name_the_specifications_field() {
        let spec = EngineSpec {
            lsm: over(|o| (o.l0_compaction_trigger, o.l0_slowdown_writes_trigger) = (Some(9), Some(8))),
            ..EngineSpec::default()
        };
        let e = spec.resolve().unwrap_err().to_string();
        assert!(e.starts_with("engine.l0_slowdown_writes_trigger: 8 is invalid"), "{e}");
    }

    #[test]
    fn the_profile_sets_the_defaults_and_the_given_options_override_it() {
        let triggers = |spec: EngineSpec| {
            let o = spec.lsm_options().unwrap();
            (o.l0_slowdown_writes_trigger, o.l0_stop_writes_trigger)
        };
        assert_eq!(triggers(EngineSpec::default()), (20, 36));
        let leveldb = EngineSpec { profile: lsm::Profile::LevelDb, ..EngineSpec::default() };
        assert_eq!(triggers(leveldb.clone()), (8, 12));
        assert_eq!(
            triggers(EngineSpec { lsm: over(|o| o.l0_stop_writes_trigger = Some(16)), ..leveldb.clone() }),
            (8, 16)
        );
        let rate = |spec: EngineSpec| spec.lsm_options().unwrap().delayed_write_rate;
        assert_eq!(rate(EngineSpec::default()), None);
        assert_eq!(
            rate(EngineSpec {
                lsm: over(|o| o.delayed_write_rate = Some(ByteCount(16 << 20))),
                ..EngineSpec::default()
            }),
            Some(16 << 20)
        );
        assert_eq!(
            rate(EngineSpec { lsm: over(|o| o.delayed_write_rate = Some(ByteCount(0))), ..EngineSpec::default() }),
            None
        );
        assert_eq!(
            rate(EngineSpec { lsm: over(|o| o.delayed_write_rate = Some(ByteCount(1 << 20))), ..leveldb.clone() }),
            Some(1 << 20)
        );
        assert!(!serde_json::to_string(&leveldb).unwrap().contains("delayed_write_rate"));
        let lane = |spec: EngineSpec| spec.lsm_options().unwrap().flush_lane;
        assert!(lane(EngineSpec::default()) && !lane(leveldb.clone()));
        assert!(!lane(EngineSpec { lsm: over(|o| o.flush_lane = Some(false)), ..EngineSpec::default() }));
        assert!(lane(EngineSpec { lsm: over(|o| o.flush_lane = Some(true)), ..leveldb.clone() }));
        assert!(!serde_json::to_string(&leveldb).unwrap().contains("flush_lane"));
        let sync = |spec: EngineSpec| spec.lsm_options().unwrap().sync_closed_wal;
        assert!(!sync(EngineSpec::default()) && sync(leveldb.clone()));
        assert!(sync(EngineSpec { lsm: over(|o| o.sync_closed_wal = Some(true)), ..EngineSpec::default() }));
        assert!(!sync(EngineSpec { lsm: over(|o| o.sync_closed_wal = Some(false)), ..leveldb.clone() }));
        assert!(!serde_json::to_string(&leveldb).unwrap().contains("sync_closed_wal"));
        let layout = |spec: EngineSpec| spec.lsm_options().unwrap().filter_layout;
        assert_eq!(layout(EngineSpec::default()), lsm::FilterLayout::PerTable);
        assert_eq!(layout(leveldb.clone()), lsm::FilterLayout::PerBlock);
        let per_block =
            EngineSpec { lsm: over(|o| o.filter_layout = Some(lsm::FilterLayout::PerBlock)), ..EngineSpec::default() };
        assert_eq!(layout(per_block.clone()), lsm::FilterLayout::PerBlock);
        let json = serde_json::to_string(&per_block).unwrap();
        assert!(json.contains(r#""filter_layout":"per_block""#), "{json}");
        assert_eq!(serde_json::from_str::<EngineSpec>(&json).unwrap().lsm.filter_layout, per_block.lsm.filter_layout);
        assert!(!serde_json::to_string(&leveldb).unwrap().contains("filter_layout"));
        // Only a profile other than the default is written out, so older specifications read the same.
        assert!(!serde_json::to_string(&EngineSpec::default()).unwrap().contains("profile"));
        let json = serde_json::to_string(&leveldb).unwrap();
        assert!(json.contains(r#""profile":"leveldb""#), "{json}");
        assert_eq!(serde_json::from_str::<EngineSpec>(&json).unwrap(), leveldb);
        let e = serde_json::from_str::<EngineSpec>(r#"{"profile":"rocksdb"}"#).unwrap_err().to_string();
        assert!(e.contains("flashkv, leveldb"), "{e}");
    }

    #[test]
    fn design_parameters_apply_to_their_designs_only() {
        let ws = EngineSpec { max_waste: Some(Bytes(4096)), ..EngineSpec::kv(EngineName::KvftlWs) };
        assert!(matches!(
            ws.resolve().unwrap(),
            Engine::Kv(KvDesign::Kvftl { variant: Variant::MaxWaste { bytes: 4096 }, mapping_ram: None })
        ));
        let np = EngineSpec { max_waste: Some(Bytes(4096)), ..EngineSpec::kv(EngineName::KvftlNp) };
        assert_eq!(np.resolve().unwrap_err().to_string(), "engine.max_waste: does not apply to engine kvftl-np");
        let sp = EngineSpec { min_partition: Some(Bytes(3000)), ..EngineSpec::kv(EngineName::KvftlSp) };
        assert!(sp.resolve().unwrap_err().to_string().contains("not a power of two"));
        let lsm = EngineSpec { mapping_ram: Some(MappingRam::Bytes(1 << 20)), ..EngineSpec::default() };
        assert!(lsm.resolve().is_err());
        let ws = EngineSpec { dftl_cache: Some(DftlCache::Pages), ..EngineSpec::kv(EngineName::KvftlWs) };
        assert_eq!(ws.resolve().unwrap_err().to_string(), "engine.dftl_cache: does not apply to engine kvftl-ws");
        let dftl = EngineSpec { buffer_reads: Some(false), ..EngineSpec::kv(EngineName::DftlKv) };
        assert_eq!(dftl.resolve().unwrap_err().to_string(), "engine.buffer_reads: does not apply to engine dftl-kv");
        let kvftl = EngineSpec { gc_scope: Some(GcScope::Plane), ..EngineSpec::kv(EngineName::Kvftl) };
        assert_eq!(kvftl.resolve().unwrap_err().to_string(), "engine.gc_scope: does not apply to engine kvftl");
        let lsm = EngineSpec { ust_planes: Some(UstPlanes::Aligned), ..EngineSpec::kv(EngineName::LsmInDevice) };
        assert!(lsm.resolve().unwrap_err().to_string().starts_with("engine.ust_planes: does not apply"));
        let plsc = EngineSpec {
            gc_scope: Some(GcScope::Plane),
            ust_planes: Some(UstPlanes::Aligned),
            ..EngineSpec::kv(EngineName::Plsc)
        };
        assert!(plsc.resolve().is_ok());
        assert_eq!((plsc.readings().gc_scope, plsc.readings().ust_planes), (GcScope::Plane, UstPlanes::Aligned));
        let json = serde_json::to_string(&plsc).unwrap();
        assert!(json.contains(r#""gc_scope":"plane""#) && json.contains(r#""ust_planes":"aligned""#), "{json}");
    }

    #[test]
    fn readings_default_to_the_seeds_and_are_written_only_when_given() {
        let dftl = EngineSpec::kv(EngineName::DftlKv);
        let seeds = KvReadings {
            dftl_cache: DftlCache::Entries,
            buffer_reads: true,
            gc_scope: GcScope::Device,
            ust_planes: UstPlanes::Rotating,
        };
        assert_eq!(dftl.readings(), seeds);
        let json = serde_json::to_string(&dftl).unwrap();
        assert!(!json.contains("dftl_cache") && !json.contains("buffer_reads") && !json.contains("gc_scope"), "{json}");
        let pages = EngineSpec { dftl_cache: Some(DftlCache::Pages), ..dftl };
        pages.resolve().unwrap();
        let json = serde_json::to_string(&pages).unwrap();
        assert!(json.contains(r#""dftl_cache":"pages""#), "{json}");
        assert_eq!(serde_json::from_str::<EngineSpec>(&json).unwrap(), pages);
        let e = serde_json::from_str::<EngineSpec>(r#"{"name":"dftl-kv","dftl_cache":"lines"}"#).unwrap_err();
        assert!(e.to_string().contains("accepted: entries, pages"), "{e}");
        let off = EngineSpec { buffer_reads: Some(false), ..EngineSpec::kv(EngineName::Kvftl) };
        assert!(off.resolve().is_ok() && !off.readings().buffer_reads);
    }
}

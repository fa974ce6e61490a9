//! Plug-ins: a researcher's own policies, selected by name like the built-in ones, without
//! editing flashkv's sources. A crate of one's own depends on flashkv's crates, implements an
//! extension point's trait in a file, registers it in a [`Registry`], and runs flashkv's command
//! line with it (`lab::cli::main(registry)`): its binary is flashkv with the plug-ins in, and the
//! CLI, experiment files, result folders and Python (pointed at that binary with `FLASHKV_BIN`)
//! select them by name. See docs/extending.md.
//!
//! Contract:
//! - A registry is installed once per process, before any name is parsed ([`install`]); without
//!   one, only the built-in names exist.
//! - A registered name may not shadow a built-in one, nor another registered one (an error
//!   naming it, at registration).
//! - An unknown name's error lists the built-in names and the registered ones.
//!
//! Extension points: a GC victim policy of the simulated block SSD ([`flashsim::VictimPolicy`]),
//! a compaction strategy of the engine ([`lsm::compaction::strategy::CompactionStrategy`]), a
//! zone placement of the zoned file system ([`storage::zone::ZoneAllocator`]), a whole FTL on the
//! media layer ([`flashsim::Ftl`], built from the device's [`SsdConfig`]) and a key-value SSD
//! design ([`kvssd::KvDevice`], built from the device's [`MediaConfig`]). The last two register
//! a constructor under a name, as a device is built anew for every run.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use flashsim::{Ftl, GcPolicy, MediaConfig, SsdConfig, VictimPolicy};
use kvssd::KvDevice;
use lsm::compaction::strategy::{CompactionStrategy, CustomStrategy};
use lsm::CompactionStyle;
use storage::zone::{CustomAllocator, ZoneAllocator};
use storage::AllocPolicy;

use crate::error::LabError;
use crate::spec::{EngineName, FtlName};

/// A registration that cannot be, or a name that names nothing.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("{kind} '{name}' is already {what}; give the plug-in a name of its own")]
    Taken { kind: &'static str, name: String, what: &'static str },
    #[error("a plug-in registry is already installed in this process; install one, before parsing any name")]
    Installed,
    /// A name that is neither built in nor registered; `accepted` lists both, built-in first.
    #[error("unknown {kind} '{name}'; accepted: {}", .accepted.join(", "))]
    Unknown { kind: &'static str, name: String, accepted: Vec<String> },
}

/// Builds a plug-in FTL on a device configuration (geometry, timings, spare factor, GC policy
/// and reserve, where pages are kept: what `[device]` and the device flags give).
pub type FtlBuilder = dyn Fn(&SsdConfig) -> flashsim::Result<Box<dyn Ftl>> + Send + Sync;

/// Builds a plug-in key-value SSD on a NAND array's configuration.
pub type KvSsdBuilder = dyn Fn(&MediaConfig) -> kvssd::Result<Box<dyn KvDevice + Send>> + Send + Sync;

/// The plug-ins of a binary, by extension point and name.
pub struct Registry {
    gc_policies: Plugins<dyn VictimPolicy>,
    strategies: Plugins<dyn CompactionStrategy>,
    zone_policies: Plugins<dyn ZoneAllocator>,
    ftls: Plugins<FtlBuilder>,
    kv_ssds: Plugins<KvSsdBuilder>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("gc_policies", &self.gc_policies.names())
            .field("strategies", &self.strategies.names())
            .field("zone_policies", &self.zone_policies.names())
            .field("ftls", &self.ftls.names())
            .field("kv_ssds", &self.kv_ssds.names())
            .finish()
    }
}

impl Default for Registry {
    fn default() -> Registry {
        Registry {
            gc_policies: Plugins::new("GC policy"),
            strategies: Plugins::new("compaction strategy"),
            // "unknown policy 'x'", as ZoneFs's placements have always been named in errors.
            zone_policies: Plugins::new("policy"),
            ftls: Plugins::new("FTL"),
            kv_ssds: Plugins::new("engine"),
        }
    }
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Whether nothing is registered (the `flashkv` binary's own registry).
    pub fn is_empty(&self) -> bool {
        self.gc_policies.by_name.is_empty()
            && self.strategies.by_name.is_empty()
            && self.zone_policies.by_name.is_empty()
            && self.ftls.by_name.is_empty()
            && self.kv_ssds.by_name.is_empty()
    }

    /// Registers a GC victim policy under its name (`--gc NAME`, `[device] gc = "NAME"`).
    pub fn gc_policy(&mut self, policy: impl VictimPolicy + 'static) -> Result<&mut Registry, PluginError> {
        let built_in = GcPolicy::parse(policy.name()).is_ok();
        self.gc_policies.add(policy.name().to_string(), built_in, Arc::new(policy))?;
        Ok(self)
    }

    /// Registers a compaction strategy under its name (`--compaction NAME`, `[engine] compaction`).
    pub fn compaction_strategy(
        &mut self,
        strategy: impl CompactionStrategy + 'static,
    ) -> Result<&mut Registry, PluginError> {
        let built_in = strategy.name().parse::<CompactionStyle>().is_ok();
        self.strategies.add(strategy.name().to_string(), built_in, Arc::new(strategy))?;
        Ok(self)
    }

    /// Registers a zone placement under its name (`--zone-policy NAME`, `[device] zone_policy`).
    pub fn zone_allocator(&mut self, policy: impl ZoneAllocator + 'static) -> Result<&mut Registry, PluginError> {
        let built_in = AllocPolicy::parse(policy.name()).is_some();
        self.zone_policies.add(policy.name().to_string(), built_in, Arc::new(policy))?;
        Ok(self)
    }

    /// Registers a whole FTL under `name` (`--ftl NAME`, `[device] ftl = "NAME"`): `build` makes
    /// one on the device's configuration for every run on a simulated block SSD (`fs = sim`,
    /// the `pages` and `block-trace` workloads).
    pub fn ftl(
        &mut self,
        name: &str,
        build: impl Fn(&SsdConfig) -> flashsim::Result<Box<dyn Ftl>> + Send + Sync + 'static,
    ) -> Result<&mut Registry, PluginError> {
        let built_in = FtlName::BUILT_IN.contains(&name);
        self.ftls.add(name.to_string(), built_in, Arc::new(build))?;
        Ok(self)
    }

    /// Registers a key-value SSD design under `name` (`--engine NAME`, `[engine] name = "NAME"`):
    /// `build` makes one on the NAND array the device specification gives (preset, geometry,
    /// capacity, timings) for every run.
    pub fn kv_ssd(
        &mut self,
        name: &str,
        build: impl Fn(&MediaConfig) -> kvssd::Result<Box<dyn KvDevice + Send>> + Send + Sync + 'static,
    ) -> Result<&mut Registry, PluginError> {
        let built_in = EngineName::BUILT_IN.iter().any(|e| e.as_str() == name);
        self.kv_ssds.add(name.to_string(), built_in, Arc::new(build))?;
        Ok(self)
    }

    /// The GC policy called `name`: a built-in one or a registered one; an unknown name's error
    /// lists both.
    pub fn gc(&self, name: &str) -> Result<GcPolicy, PluginError> {
        GcPolicy::parse(name).or_else(|_| self.gc_policies.get(name, &GcPolicy::NAMES).map(GcPolicy::Scored))
    }

    /// The compaction strategy called `name`: a built-in one or a registered one; an unknown
    /// name's error lists both.
    pub fn compaction(&self, name: &str) -> Result<CompactionStyle, PluginError> {
        name.parse::<CompactionStyle>().or_else(|_| {
            let s = self.strategies.get(name, &CompactionStyle::NAMES)?;
            Ok(CompactionStyle::Custom(CustomStrategy(s)))
        })
    }

    /// The zone placement called `name`: a built-in one or a registered one; an unknown name's
    /// error lists both.
    pub fn zone_policy(&self, name: &str) -> Result<AllocPolicy, PluginError> {
        match AllocPolicy::parse(name) {
            Some(p) => Ok(p),
            None => Ok(AllocPolicy::Custom(CustomAllocator(self.zone_policies.get(name, &AllocPolicy::NAMES)?))),
        }
    }

    /// The FTL called `name` (a registered one by its name as the registry holds it); an unknown
    /// name's error lists the built-in and the registered ones.
    pub fn ftl_name(&'static self, name: &str) -> Result<FtlName, PluginError> {
        if FtlName::BUILT_IN.contains(&name) {
            return Ok(FtlName::Page);
        }
        self.ftls.key(name, &FtlName::BUILT_IN).map(FtlName::Plugin)
    }

    /// A new FTL called `name` (registered) on `cfg`.
    pub fn build_ftl(&self, name: &str, cfg: &SsdConfig) -> crate::error::Result<Box<dyn Ftl>> {
        let build =
            self.ftls.get(name, &FtlName::BUILT_IN).map_err(|e| LabError::invalid("device.ftl", e.to_string()))?;
        Ok(build(cfg)?)
    }

    /// The registered key-value SSD design called `name`, as the registry holds its name; an
    /// unknown name's error lists the built-in engines and the registered designs.
    pub fn kv_ssd_name(&'static self, name: &str) -> Result<&'static str, PluginError> {
        let built_in: Vec<&str> = EngineName::BUILT_IN.iter().map(|e| e.as_str()).collect();
        self.kv_ssds.key(name, &built_in)
    }

    /// A new key-value SSD of the registered design `name` on `media`.
    pub fn build_kv_ssd(&self, name: &str, media: &MediaConfig) -> crate::error::Result<Box<dyn KvDevice + Send>> {
        let build = self.kv_ssds.get(name, &[]).map_err(|e| LabError::invalid("engine.name", e.to_string()))?;
        Ok(build(media)?)
    }
}

/// One extension point's plug-ins, by name.
struct Plugins<T: ?Sized> {
    /// What they are, in errors.
    kind: &'static str,
    by_name: BTreeMap<String, Arc<T>>,
}

impl<T: ?Sized> Plugins<T> {
    fn new(kind: &'static str) -> Plugins<T> {
        Plugins { kind, by_name: BTreeMap::new() }
    }

    /// Adds `plugin` as `name`, unless the name is `built_in` or taken.
    fn add(&mut self, name: String, built_in: bool, plugin: Arc<T>) -> Result<(), PluginError> {
        if built_in {
            return Err(PluginError::Taken { kind: self.kind, name, what: "built in" });
        }
        match self.by_name.entry(name) {
            Entry::Vacant(free) => {
                free.insert(plugin);
                Ok(())
            }
            Entry::Occupied(taken) => {
                Err(PluginError::Taken { kind: self.kind, name: taken.key().clone(), what: "registered" })
            }
        }
    }

    /// The plug-in called `name`; an unknown name's error lists the `built_in` names, then the
    /// registered ones.
    fn get(&self, name: &str, built_in: &[&str]) -> Result<Arc<T>, PluginError> {
        self.by_name.get(name).cloned().ok_or_else(|| self.unknown(name, built_in))
    }

    /// The name of the plug-in called `name`, as held here (a registry installed for the process
    /// lends it for the process's life).
    fn key<'a>(&'a self, name: &str, built_in: &[&str]) -> Result<&'a str, PluginError> {
        self.by_name.get_key_value(name).map(|(k, _)| k.as_str()).ok_or_else(|| self.unknown(name, built_in))
    }

    fn unknown(&self, name: &str, built_in: &[&str]) -> PluginError {
        let accepted = built_in.iter().map(|n| n.to_string()).chain(self.by_name.keys().cloned()).collect();
        PluginError::Unknown { kind: self.kind, name: name.to_string(), accepted }
    }

    fn names(&self) -> Vec<&str> {
        self.by_name.keys().map(String::as_str).collect()
    }
}

static INSTALLED: OnceLock<Registry> = OnceLock::new();

/// Makes `registry` the process's plug-ins.
pub fn install(registry: Registry) -> Result<(), PluginError> {
    INSTALLED.set(registry).map_err(|_| PluginError::Installed)
}

/// The process's plug-ins (none unless [`install`]ed).
pub fn registry() -> &'static Registry {
    INSTALLED.get_or_init(Registry::new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashsim::Candidate;

    #[derive(Debug)]
    struct Oldest;
    impl VictimPolicy for Oldest {
        fn name(&self) -> &str {
            "oldest"
        }
        fn score(&self, c: &Candidate) -> f64 {
            c.age as f64
        }
    }

    #[derive(Debug)]
    struct Named(&'static str);
    impl VictimPolicy for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn score(&self, _: &Candidate) -> f64 {
            0.0
        }
    }

    #[test]
    fn names_resolve_to_built_in_then_registered_policies() {
        let mut r = Registry::new();
        r.gc_policy(Oldest).unwrap();
        assert_eq!(r.gc("oldest").unwrap().name(), "oldest");
        assert_eq!(r.gc("greedy").unwrap(), GcPolicy::Greedy);
        match r.gc("lru").unwrap_err() {
            PluginError::Unknown { kind, name, accepted } => {
                assert_eq!((kind, name.as_str()), ("GC policy", "lru"));
                assert_eq!(accepted, ["greedy", "cost-benefit", "fifo", "oldest"]);
            }
            e => panic!("not an unknown name: {e:?}"),
        }
        let e = r.gc("lru").unwrap_err().to_string();
        assert!(e.contains("greedy, cost-benefit, fifo, oldest"), "{e}");
        assert!(r.gc_policy(Named("greedy")).unwrap_err().to_string().contains("already built in"));
        assert!(r.gc_policy(Named("oldest")).unwrap_err().to_string().contains("already registered"));
    }

    #[test]
    fn compaction_strategies_resolve_the_same_way() {
        #[derive(Debug)]
        struct Mine;
        impl CompactionStrategy for Mine {
            fn name(&self) -> &'static str {
                "mine"
            }
            fn scores(&self, v: &lsm::version::Version, o: &lsm::compaction::strategy::TreeShape) -> Vec<f64> {
                lsm::compaction::strategy::Leveled.scores(v, o)
            }
            fn choose(&self, ctx: &lsm::compaction::strategy::PickContext) -> Option<lsm::compaction::Compaction> {
                lsm::compaction::strategy::Leveled.choose(ctx)
            }
            fn choose_range(
                &self,
                ctx: &lsm::compaction::strategy::PickContext,
                level: usize,
                begin: Option<&[u8]>,
                end: Option<&[u8]>,
            ) -> Option<lsm::compaction::Compaction> {
                lsm::compaction::strategy::Leveled.choose_range(ctx, level, begin, end)
            }
        }
        let mut r = Registry::new();
        r.compaction_strategy(Mine).unwrap();
        assert_eq!(r.compaction("mine").unwrap().name(), "mine");
        assert_eq!(r.compaction("ll").unwrap(), CompactionStyle::LifetimeLeveling);
        assert!(r.compaction("tiered").unwrap_err().to_string().contains("leveled, gear, ll, mine"));
        assert!(r.compaction_strategy(Mine).unwrap_err().to_string().contains("already registered"));
    }

    #[test]
    fn ftls_and_kv_ssds_register_constructors_under_names_of_their_own() {
        let mut r = Registry::new();
        let media = flashsim::SsdConfig::from_preset(flashsim::Preset::Femu, Some(64 << 20)).unwrap().media;
        r.ftl("page-again", |cfg| Ok(Box::new(flashsim::BlockSsd::new(cfg.clone())?))).unwrap();
        r.kv_ssd("plsc-again", |m| Ok(Box::new(kvssd::Plsc::new(kvssd::PlscConfig::new(m.clone()))?))).unwrap();
        let cfg = flashsim::SsdConfig {
            media: media.clone(),
            ..flashsim::SsdConfig::new(media.geometry.clone(), media.timing.clone())
        };
        assert_eq!(r.build_ftl("page-again", &cfg).unwrap().name(), "page");
        assert_eq!(r.build_kv_ssd("plsc-again", &media).unwrap().name(), "plsc");
        let e = r.build_ftl("hybrid", &cfg).unwrap_err().to_string();
        assert!(e.contains("device.ftl") && e.contains("accepted: page, page-again"), "{e}");
        let e = r.build_kv_ssd("nope", &media).err().unwrap().to_string();
        assert!(e.contains("engine.name") && e.contains("plsc-again"), "{e}");
        let taken = r.ftl("page", |cfg| Ok(Box::new(flashsim::BlockSsd::new(cfg.clone())?))).unwrap_err();
        assert!(taken.to_string().contains("already built in"), "{taken}");
        let taken = r.kv_ssd("dftl-kv", |m| Ok(Box::new(kvssd::Plsc::new(kvssd::PlscConfig::new(m.clone()))?)));
        assert!(taken.unwrap_err().to_string().contains("already built in"));
    }

    #[test]
    fn zone_placements_resolve_the_same_way() {
        /// One stream for every file, under a name.
        #[derive(Debug)]
        struct OneStream(&'static str);
        impl ZoneAllocator for OneStream {
            fn name(&self) -> &str {
                self.0
            }
            fn class(&self, _: storage::WriteHint) -> storage::ZoneClass {
                storage::ZoneClass::Shared
            }
            fn stream_per_file(&self) -> bool {
                false
            }
            fn choose(&self, _: storage::ZoneClass, _: &[storage::zone::OpenZone], _: bool) -> storage::zone::Choice {
                storage::zone::Choice::NewZone
            }
        }
        let mut r = Registry::new();
        r.zone_allocator(OneStream("one-stream")).unwrap();
        assert_eq!(r.zone_policy("one-stream").unwrap().name(), "one-stream");
        assert_eq!(r.zone_policy("per-level").unwrap(), AllocPolicy::PerLevel);
        assert!(r.zone_policy("per-file").unwrap_err().to_string().contains("lifetime, one-stream"));
        assert!(r.zone_allocator(OneStream("shared")).unwrap_err().to_string().contains("already built in"));
    }
}

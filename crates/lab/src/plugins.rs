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
//! Extension points so far: a GC victim policy of the simulated block SSD
//! ([`flashsim::VictimPolicy`]), a compaction strategy of the engine
//! ([`lsm::compaction::strategy::CompactionStrategy`]) and a zone placement of the zoned file
//! system ([`storage::zone::ZoneAllocator`]).

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use flashsim::{GcPolicy, VictimPolicy};
use lsm::compaction::strategy::{CompactionStrategy, CustomStrategy};
use lsm::CompactionStyle;
use storage::zone::{CustomAllocator, ZoneAllocator};
use storage::AllocPolicy;

/// A registration that cannot be.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("{kind} '{name}' is already {what}; give the plug-in a name of its own")]
    Taken { kind: &'static str, name: String, what: &'static str },
    #[error("a plug-in registry is already installed in this process; install one, before parsing any name")]
    Installed,
}

/// The plug-ins of a binary, by extension point and name.
#[derive(Debug)]
pub struct Registry {
    gc_policies: Plugins<dyn VictimPolicy>,
    strategies: Plugins<dyn CompactionStrategy>,
    zone_policies: Plugins<dyn ZoneAllocator>,
}

impl Default for Registry {
    fn default() -> Registry {
        Registry {
            gc_policies: Plugins::new("GC policy"),
            strategies: Plugins::new("compaction strategy"),
            // "unknown policy 'x'", as ZoneFs's placements have always been named in errors.
            zone_policies: Plugins::new("policy"),
        }
    }
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
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

    /// The GC policy called `name`: a built-in one or a registered one; an unknown name's error
    /// lists both.
    pub fn gc(&self, name: &str) -> Result<GcPolicy, String> {
        GcPolicy::parse(name).or_else(|_| self.gc_policies.get(name, &GcPolicy::NAMES).map(GcPolicy::Scored))
    }

    /// The compaction strategy called `name`: a built-in one or a registered one; an unknown
    /// name's error lists both.
    pub fn compaction(&self, name: &str) -> Result<CompactionStyle, String> {
        name.parse::<CompactionStyle>().or_else(|_| {
            let s = self.strategies.get(name, &CompactionStyle::NAMES)?;
            Ok(CompactionStyle::Custom(CustomStrategy(s)))
        })
    }

    /// The zone placement called `name`: a built-in one or a registered one; an unknown name's
    /// error lists both.
    pub fn zone_policy(&self, name: &str) -> Result<AllocPolicy, String> {
        match AllocPolicy::parse(name) {
            Some(p) => Ok(p),
            None => Ok(AllocPolicy::Custom(CustomAllocator(self.zone_policies.get(name, &AllocPolicy::NAMES)?))),
        }
    }
}

/// One extension point's plug-ins, by name.
#[derive(Debug)]
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
    fn get(&self, name: &str, built_in: &[&str]) -> Result<Arc<T>, String> {
        self.by_name.get(name).cloned().ok_or_else(|| {
            let names: Vec<&str> = built_in.iter().copied().chain(self.by_name.keys().map(String::as_str)).collect();
            format!("unknown {} '{name}'; accepted: {}", self.kind, names.join(", "))
        })
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
        let e = r.gc("lru").unwrap_err();
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
            fn scores(&self, v: &lsm::version::Version, o: &lsm::Options) -> Vec<f64> {
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
        assert!(r.compaction("tiered").unwrap_err().contains("leveled, gear, ll, mine"));
        assert!(r.compaction_strategy(Mine).unwrap_err().to_string().contains("already registered"));
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
        assert!(r.zone_policy("per-file").unwrap_err().contains("lifetime, one-stream"));
        assert!(r.zone_allocator(OneStream("shared")).unwrap_err().to_string().contains("already built in"));
    }
}

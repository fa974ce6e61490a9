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
//! ([`flashsim::VictimPolicy`]).

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use flashsim::{GcPolicy, VictimPolicy};

/// A registration that cannot be.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("{kind} '{name}' is already {what}; give the plug-in a name of its own")]
    Taken { kind: &'static str, name: String, what: &'static str },
    #[error("a plug-in registry is already installed in this process; install one, before parsing any name")]
    Installed,
}

/// The plug-ins of a binary, by extension point and name.
#[derive(Debug, Default)]
pub struct Registry {
    gc_policies: BTreeMap<String, Arc<dyn VictimPolicy>>,
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers a GC victim policy under its name (`--gc NAME`, `[device] gc = "NAME"`).
    pub fn gc_policy(&mut self, policy: impl VictimPolicy + 'static) -> Result<&mut Registry, PluginError> {
        let name = policy.name().to_string();
        let taken = |what| Err(PluginError::Taken { kind: "GC policy", name: name.clone(), what });
        if GcPolicy::NAMES.contains(&name.as_str()) {
            return taken("built in");
        }
        if self.gc_policies.contains_key(&name) {
            return taken("registered");
        }
        self.gc_policies.insert(name, Arc::new(policy));
        Ok(self)
    }

    /// The GC policy called `name`: a built-in one or a registered one; an unknown name's error
    /// lists both.
    pub fn gc(&self, name: &str) -> Result<GcPolicy, String> {
        if let Ok(p) = GcPolicy::parse(name) {
            return Ok(p);
        }
        match self.gc_policies.get(name) {
            Some(p) => Ok(GcPolicy::Scored(Arc::clone(p))),
            None => {
                let names: Vec<&str> =
                    GcPolicy::NAMES.iter().copied().chain(self.gc_policies.keys().map(String::as_str)).collect();
                Err(format!("unknown GC policy '{name}'; accepted: {}", names.join(", ")))
            }
        }
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
}

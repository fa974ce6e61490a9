//! The lab's errors. Every function of the lab that can fail returns [`LabError`]; a lower layer's
//! error keeps its type inside (flash, file system, engine, key-value SSD, workload), and what the
//! user gave wrong names its field in the user's terms: the TOML path of an experiment file
//! (`device.zone_size`), or with [`LabError::in_flags`] the command line's flag (`--zone-size`).

use std::path::PathBuf;

/// A field of the run specification, by its path in an experiment file (`section.field`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field(pub String);

impl Field {
    pub fn new(path: impl Into<String>) -> Field {
        Field(path.into())
    }

    /// The command-line flag of the field: its last path segment with hyphens (`device.zone_size`
    /// is `--zone-size`), but for the fields whose flag is spelled otherwise.
    pub fn flag(&self) -> String {
        match self.0.as_str() {
            "engine.name" => "--engine".into(),
            "engine.block_size" => "--table-block-size".into(),
            "workload.name" => "--workload".into(),
            "workload.operations" => "--ops".into(),
            "workload.ycsb" => "-p".into(),
            "workload.ycsb_file" => "-P".into(),
            "host.cores" => "--host-cores".into(),
            path if path.starts_with("host.cpu") => "--cpu".into(),
            path => format!("--{}", path.rsplit('.').next().unwrap_or(path).replace('_', "-")),
        }
    }
}

/// How an error names its field: as an experiment file's path, or as a flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Spelling {
    #[default]
    Path,
    Flag,
}

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A value the user gave (a flag, a field of an experiment file or a Python dict) is wrong.
    #[error("{}: {reason}", match .spelling { Spelling::Path => .field.0.clone(), Spelling::Flag => .field.flag() })]
    Invalid { field: Field, reason: String, spelling: Spelling },

    /// An experiment file or dict that is not one (TOML syntax, a section that is not a table).
    #[error("{0}")]
    Experiment(String),

    #[error("{}: cannot {what}: {source}", .path.display())]
    Io { path: PathBuf, what: &'static str, source: std::io::Error },

    #[error(transparent)]
    Flash(#[from] flashsim::FlashError),

    #[error(transparent)]
    Fs(#[from] storage::FsError),

    #[error(transparent)]
    Engine(#[from] lsm::Error),

    #[error(transparent)]
    KvSsd(#[from] kvssd::KvError),

    #[error(transparent)]
    Workload(#[from] workload::WorkloadError),

    /// What an engine cannot do (a key-value SSD has no scans, no content digest, no fresh
    /// database short of a format).
    #[error("{engine}: {what}")]
    Unsupported { engine: String, what: String },

    #[error(transparent)]
    Cache(#[from] CacheError),

    #[error(transparent)]
    Report(#[from] crate::report::ReportError),

    /// A run of a batch failed; `label` says which.
    #[error("{label}: {source}")]
    Run { label: String, source: Box<LabError> },

    /// A repro's report needs a run that failed (or that its plan lacks).
    #[error("{key}: {why}")]
    MissingRun { key: String, why: String },

    /// A run carried out in another process (a Ray worker) failed there; its message.
    #[error("{0}")]
    Remote(String),

    /// Ray could not be started or ended early.
    #[error("ray: {0}")]
    Ray(String),

    #[error("{what}: {source}")]
    Json { what: String, source: serde_json::Error },

    /// A repro that cannot run here (a tool or a privilege it needs is missing).
    #[error("{0}")]
    Unavailable(String),
}

pub type Result<T, E = LabError> = std::result::Result<T, E>;

impl LabError {
    /// An invalid value of `field` (an experiment file's path).
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> LabError {
        LabError::Invalid { field: Field::new(field), reason: reason.into(), spelling: Spelling::Path }
    }

    /// The same error naming its field as the command line's flag.
    pub fn in_flags(self) -> LabError {
        match self {
            LabError::Invalid { field, reason, .. } => LabError::Invalid { field, reason, spelling: Spelling::Flag },
            LabError::Run { label, source } => LabError::Run { label, source: Box::new(source.in_flags()) },
            other => other,
        }
    }

    /// An I/O error on `path` while doing `what`.
    pub fn io(path: impl Into<PathBuf>, what: &'static str) -> impl FnOnce(std::io::Error) -> LabError {
        let path = path.into();
        move |source| LabError::Io { path, what, source }
    }

    /// A JSON error while doing `what`.
    pub fn json(what: impl Into<String>) -> impl FnOnce(serde_json::Error) -> LabError {
        let what = what.into();
        move |source| LabError::Json { what, source }
    }
}

impl From<storage::EnvError> for LabError {
    fn from(e: storage::EnvError) -> LabError {
        LabError::Engine(lsm::Error::from(e))
    }
}

/// Errors of the run cache (`crate::run_cache`): where, and what the file system said.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("{path}: cannot {what}: {source}")]
    Io { path: PathBuf, what: &'static str, source: std::io::Error },
    #[error("{path}: a cached run that cannot be read back ({source})")]
    Corrupt { path: PathBuf, source: serde_json::Error },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_named_as_the_user_gave_them() {
        let e = LabError::invalid("device.zone_size", "1.5 MiB is not a multiple of the 1 MiB erase block");
        assert_eq!(e.to_string(), "device.zone_size: 1.5 MiB is not a multiple of the 1 MiB erase block");
        assert!(e.in_flags().to_string().starts_with("--zone-size: "));
        assert_eq!(Field::new("workload.operations").flag(), "--ops");
        assert_eq!(Field::new("engine.name").flag(), "--engine");
    }
}

//! Errors of the engine. Each names what was wrong and where (file and offset for corruption);
//! the engine never panics on bad input or bad data.

use std::sync::Arc;

use storage::{EnvError, FsError};

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// Stored data failed a check: a checksum mismatch, a bad magic number, a malformed record.
    #[error("corruption in {file} at offset {offset}: {what}")]
    Corruption { file: String, offset: u64, what: String },

    /// A bad argument or option; the message names the field.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("key of {len} bytes exceeds the limit of {limit} bytes")]
    KeyTooLarge { len: usize, limit: usize },

    #[error("value of {len} bytes exceeds the limit of {limit} bytes")]
    ValueTooLarge { len: usize, limit: usize },

    /// The file system failed (it names the path and operation), including a full device.
    #[error(transparent)]
    Fs(Arc<FsError>),

    /// Opening a directory that holds no database without `create_if_missing`, or a database whose
    /// CURRENT names a missing MANIFEST.
    #[error("no database in '{dir}': {what}")]
    NotFound { dir: String, what: String },

    #[error("database in '{dir}' already exists (error_if_exists is set)")]
    AlreadyExists { dir: String },

    /// A background flush or compaction failed earlier; writes are refused until the database is
    /// reopened (reads still work). The original error is kept.
    #[error("writes stopped after a background error: {0}")]
    Background(Arc<Error>),

    #[error("the database is closed")]
    Closed,

    /// The Env could not schedule the work: a thread the host refused, or in simulation a wait
    /// that no lane could ever end.
    #[error(transparent)]
    Env(Arc<EnvError>),
}

impl From<FsError> for Error {
    fn from(e: FsError) -> Self {
        Error::Fs(Arc::new(e))
    }
}

impl From<EnvError> for Error {
    fn from(e: EnvError) -> Self {
        Error::Env(Arc::new(e))
    }
}

impl Error {
    pub fn corruption(file: impl Into<String>, offset: u64, what: impl Into<String>) -> Error {
        Error::Corruption { file: file.into(), offset, what: what.into() }
    }

    /// Whether this is (or wraps) a corruption error.
    pub fn is_corruption(&self) -> bool {
        match self {
            Error::Corruption { .. } => true,
            Error::Background(e) => e.is_corruption(),
            _ => false,
        }
    }
}

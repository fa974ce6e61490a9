//! The crate's error type.
//!
//! Contract: every constructor that takes parameters validates them and returns a [`WorkloadError`] that names the
//! offending field and says which values are accepted; nothing in this crate panics on bad input.

use thiserror::Error;

/// A bad workload parameter or an unknown workload name.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorkloadError {
    /// A numeric or structural parameter is outside the range the generator accepts.
    #[error("invalid {field} = {value}: accepted values are {accepted}")]
    InvalidParameter {
        /// The parameter's name, as the caller knows it (e.g. `items`, `theta`, `value_size`).
        field: &'static str,
        /// The rejected value, rendered as text.
        value: String,
        /// A human-readable description of what is accepted.
        accepted: &'static str,
    },
    /// A name (workload, distribution) that is not one of the known ones.
    #[error("unknown {kind} `{name}`: accepted values are {accepted}")]
    UnknownName {
        /// What kind of name it was (e.g. `workload`, `value-size distribution`).
        kind: &'static str,
        /// The name given.
        name: String,
        /// The accepted names, comma separated.
        accepted: String,
    },
    /// A YCSB property whose value is not accepted, or a `-p` argument that is not `name=value`.
    #[error("YCSB property {key}: {message}")]
    Property {
        /// The property as given (`name=value`).
        key: String,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// A line of a trace that is not what its format says a line is.
    #[error("line {line}: {message}")]
    TraceLine {
        /// The line number, from 1.
        line: usize,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A record of a binary trace that is not what its format says a record is.
    #[error("record {record} (byte {offset}): {message}")]
    TraceRecord {
        /// The record number, from 1 (the header).
        record: usize,
        /// The byte offset at which the record starts.
        offset: u64,
        /// What is wrong and what was expected.
        message: String,
    },
    /// An error on a line of a YCSB property file.
    #[error("{file}, line {line}: {error}")]
    PropertyLine {
        /// The file as the caller names it.
        file: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong on it.
        error: Box<WorkloadError>,
    },
}

impl WorkloadError {
    /// Shorthand used by the validators.
    pub(crate) fn invalid(field: &'static str, value: impl ToString, accepted: &'static str) -> Self {
        WorkloadError::InvalidParameter { field, value: value.to_string(), accepted }
    }
}

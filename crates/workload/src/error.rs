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
}

impl WorkloadError {
    /// Shorthand used by the validators.
    pub(crate) fn invalid(field: &'static str, value: impl ToString, accepted: &'static str) -> Self {
        WorkloadError::InvalidParameter { field, value: value.to_string(), accepted }
    }
}

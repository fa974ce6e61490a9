//! Versions of the LSM tree and the MANIFEST that persists them.

pub mod edit;
pub mod set;
#[allow(clippy::module_inception)]
pub mod version;

pub use edit::VersionEdit;
pub use set::{max_bytes_for_level, VersionSet};
pub use version::{FileMeta, Version};

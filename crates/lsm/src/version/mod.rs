//! Versions of the LSM tree and the MANIFEST that persists them.

pub mod edit;
pub mod set;
#[allow(clippy::module_inception)]
pub mod version;

pub use edit::VersionEdit;
pub use set::VersionSet;
pub use version::{FileMeta, Version};

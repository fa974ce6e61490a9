//! lsm: a LevelDB-class LSM-tree key-value engine, crash-safe, over any [`storage::Fs`].

pub mod coding;
pub mod crc;
pub mod error;
pub mod key;

pub use error::{Error, Result};

//! `KvDevice`: what a key-value SSD offers its host, in the spirit of the Samsung KV-SSD API
//! (`store`, `retrieve`, `delete`, `exist`).
//!
//! Contract, for every device:
//! - Every request takes `at`, the simulated time at which it arrives, and returns the time at which
//!   it completes (never earlier than `at`); the response time is the difference. Nothing sleeps.
//! - `retrieve` returns the value of the last `store` of the key that no `delete` followed, byte
//!   for byte, or `None`. `exist` answers the same question without returning the value.
//! - A key must be 1 to `max_key_size()` bytes and a value 0 to `max_value_size()` bytes; anything
//!   else is a typed error ([`KvError::EmptyKey`], [`KvError::KeyTooLarge`],
//!   [`KvError::ValueTooLarge`]) and changes nothing.
//! - Every flash operation the device performs is counted in its media's [`FlashCounters`], under
//!   its cause (host data, the device's own compaction, GC).
//! - What survives a power cut is each device's to state (see its module docs).

use flashsim::{FlashCounters, Media, Nanos};

use crate::error::{KvError, Result};

/// A request's completion time and its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completed<T> {
    /// Simulated time at which the request completed.
    pub done: Nanos,
    pub value: T,
}

/// A key-value SSD.
pub trait KvDevice {
    /// The design's name in results (`plsc`, ...).
    fn name(&self) -> &str;

    /// Largest key accepted, in bytes.
    fn max_key_size(&self) -> usize;

    /// Largest value accepted, in bytes.
    fn max_value_size(&self) -> usize;

    /// Stores `value` under `key`, replacing any earlier value.
    fn store(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>>;

    /// The value stored under `key`, if any.
    fn retrieve(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>>;

    /// Removes `key`; `true` when it was there.
    fn delete(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>>;

    /// Whether a value is stored under `key`.
    fn exist(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>>;

    /// The design and its main parameters, for reports.
    fn describe(&self) -> String;

    /// The NAND array under the device (counters per cause, wear, latency histograms).
    fn media(&self) -> &Media;

    /// What the NAND did so far, in total and per cause.
    fn counters(&self) -> &FlashCounters {
        self.media().counters()
    }
}

/// Checks a key against a device's limit (shared by every device).
pub(crate) fn check_key(key: &[u8], max: usize) -> Result<()> {
    if key.is_empty() {
        return Err(KvError::EmptyKey { max });
    }
    if key.len() > max {
        return Err(KvError::KeyTooLarge { len: key.len(), max });
    }
    Ok(())
}

/// Checks a value against a device's limit.
pub(crate) fn check_value(value: &[u8], max: usize) -> Result<()> {
    if value.len() > max {
        return Err(KvError::ValueTooLarge { len: value.len(), max });
    }
    Ok(())
}

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
//!   [`KvError::ValueTooLarge`]) and changes nothing. The trait's own methods check this, once for
//!   every design, before the design's `*_valid` methods run.
//! - Every flash operation the device performs is counted in its media's [`FlashCounters`], under
//!   its cause (host data, the device's own compaction, GC).
//! - What survives a power cut is each device's to state (see its module docs).
//! - [`crate::conformance`] checks this contract, the same cases for every design.

use flashsim::{FlashCounters, Media, Nanos};
use serde::{Deserialize, Serialize};

use crate::error::{Inconsistency, KvError, Result};
use crate::mapping::MappingStats;
use crate::space_use::{SpaceUse, UnitsPerValue};

/// A request's completion time and its result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completed<T> {
    /// Simulated time at which the request completed.
    pub done: Nanos,
    pub value: T,
}

/// A device's own work, in the terms every design shares (results and reports show it beside the
/// flash counters): the write-buffer flushes, the compactions, GC, and the simulated time the puts
/// that set them off waited for them (seed 002's Fig. 6: put time with and without compaction).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceWork {
    pub flushes: u64,
    /// Compactions, by the level the design counts them at (PLSC: the victim's; LSM: the output).
    pub compactions_by_level: Vec<u64>,
    /// Simulated time from the end of each flush to the end of the compactions it set off, summed.
    pub compaction_ns: u64,
    /// Victim blocks GC erased, and the valid pages it moved.
    pub gc_runs: u64,
    pub gc_moved_pages: u64,
    /// Simulated time of GC's runs, summed (runs overlap across dies; not a waiting time).
    pub gc_ns: u64,
    /// Simulated time puts waited, beyond their flush, for the compactions and GC it set off (the
    /// difference between seed 002's Fig. 6b and 6a).
    pub held_ns: u64,
    /// Reads answered from the device's DRAM (write buffer, memtable or page buffers) with no
    /// flash read.
    pub dram_hits: u64,
    /// Whole SSTs read per get (`retrieve`), memtable hits included as 0: the LSM in the device
    /// only; `None` for the other designs or before any get.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssts_read_per_get: Option<f64>,
    /// A key-value FTL's own figures (KVFTL, DFTL-KV); `None` for the other designs.
    pub ftl: Option<FtlWork>,
}

/// What a key-value FTL reports beyond [`DeviceWork`] (seed 004's measures).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FtlWork {
    /// Value bytes over the bytes of the units (partitions, pages) holding them.
    pub space: SpaceUse,
    /// Units (partitions, pages) per put value.
    pub units_per_value: UnitsPerValue,
    /// Mapping-table cache hits, misses, loads and stores under the RAM budget, and their time.
    pub mapping: MappingStats,
    /// RAM of the tables that always stay in it (KVFTL: the KVHeadTable; DFTL-KV: KGTD + GTD).
    pub static_ram_bytes: u64,
    /// RAM the cached tables would take if all of them were in RAM at the end (KVFTL: the
    /// PartitionPtrTable entries of every partitioned block x 8 B; DFTL-KV: the translation pages
    /// holding a mapped LPA x the page size, as its CMT caches whole pages).
    #[serde(default)]
    pub table_ram_bytes: u64,
}

/// A key-value SSD.
///
/// A design implements the `*_valid` methods, which get keys and values already within its
/// limits; hosts call [`store`](KvDevice::store), [`retrieve`](KvDevice::retrieve),
/// [`delete`](KvDevice::delete) and [`exist`](KvDevice::exist), which check them first, so the
/// limits are checked in one place, before the design does anything (and a refused request
/// costs no simulated time and changes nothing).
pub trait KvDevice {
    /// The design's name in results (`plsc`, ...).
    fn name(&self) -> &str;

    /// Largest key accepted, in bytes.
    fn max_key_size(&self) -> usize;

    /// Largest value accepted, in bytes.
    fn max_value_size(&self) -> usize;

    /// Stores `value` under `key`, replacing any earlier value.
    fn store(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>> {
        check_key(key, self.max_key_size())?;
        check_value(value, self.max_value_size())?;
        self.store_valid(at, key, value)
    }

    /// The value stored under `key`, if any.
    fn retrieve(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>> {
        check_key(key, self.max_key_size())?;
        self.retrieve_valid(at, key)
    }

    /// Removes `key`; a key that holds no value is [`KvError::KeyNotFound`] (the KV-SSD API's
    /// "key does not exist"), which says when the device found out.
    fn delete(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<()>> {
        check_key(key, self.max_key_size())?;
        self.delete_valid(at, key)
    }

    /// Whether a value is stored under `key`.
    fn exist(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>> {
        check_key(key, self.max_key_size())?;
        self.exist_valid(at, key)
    }

    /// [`store`](KvDevice::store) of a key and value within the limits.
    fn store_valid(&mut self, at: Nanos, key: &[u8], value: &[u8]) -> Result<Completed<()>>;

    /// [`retrieve`](KvDevice::retrieve) of a key within the limits.
    fn retrieve_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<Option<Vec<u8>>>>;

    /// [`delete`](KvDevice::delete) of a key within the limits.
    fn delete_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<()>>;

    /// [`exist`](KvDevice::exist) of a key within the limits.
    fn exist_valid(&mut self, at: Nanos, key: &[u8]) -> Result<Completed<bool>>;

    /// Programs what the device holds in DRAM only (a write buffer, a memtable, page buffers),
    /// from `at`, as a power-fail flush would; returns when it is done. A design that buffers
    /// nothing has nothing to do (the default).
    fn flush(&mut self, at: Nanos) -> Result<Nanos> {
        Ok(at)
    }

    /// Checks the device's structures against each other and against the media, for tests (the
    /// conformance suite, [`crate::conformance`], runs it after its cases). A design without a
    /// check of its own passes (the default).
    fn check(&self) -> std::result::Result<(), Inconsistency> {
        Ok(())
    }

    /// The design and its main parameters, for reports.
    fn describe(&self) -> String;

    /// The NAND array under the device (counters per cause, wear, latency histograms).
    fn media(&self) -> &Media;

    /// The device's own work so far.
    fn work(&self) -> DeviceWork;

    /// What the NAND did so far, in total and per cause.
    fn counters(&self) -> &FlashCounters {
        self.media().counters()
    }
}

/// Checks a key against a device's limit: 1 to `max` bytes.
fn check_key(key: &[u8], max: usize) -> Result<()> {
    if key.is_empty() {
        return Err(KvError::EmptyKey { max });
    }
    if key.len() > max {
        return Err(KvError::KeyTooLarge { len: key.len(), max });
    }
    Ok(())
}

/// Checks a value against a device's limit: at most `max` bytes.
fn check_value(value: &[u8], max: usize) -> Result<()> {
    if value.len() > max {
        return Err(KvError::ValueTooLarge { len: value.len(), max });
    }
    Ok(())
}

//! Errors of the key-value devices: bad input, bad configuration, a full device, bytes on flash
//! that do not decode, and failures of the media below. Each names what was wrong and the limit.
//! Two findings have types of their own, as they are reported apart from a request: a record's
//! bytes that do not decode ([`RecordError`], wrapped with the UST or SST they were in) and what a
//! device's consistency check finds ([`Inconsistency`]).

use flashsim::{FlashError, Nanos};

/// Result alias for the key-value devices.
pub type Result<T> = std::result::Result<T, KvError>;

/// What can go wrong when configuring or driving a key-value device.
#[derive(Debug, thiserror::Error)]
pub enum KvError {
    /// A key of zero bytes: a key-value SSD names every pair by a non-empty key.
    #[error("empty key: keys must be 1 to {max} bytes")]
    EmptyKey { max: usize },

    /// A key longer than the device accepts.
    #[error("key too large: {len} bytes exceeds the maximum key size of {max} bytes")]
    KeyTooLarge { len: usize, max: usize },

    /// A value longer than the device accepts.
    #[error("value too large: {len} bytes exceeds the maximum value size of {max} bytes")]
    ValueTooLarge { len: usize, max: usize },

    /// A delete of a key that holds no value (as the KV-SSD API's "key does not exist"). `done` is
    /// when the device had found out, so a caller can still account the lookup's time.
    #[error("delete: no value is stored under key {key}")]
    KeyNotFound { key: String, done: Nanos },

    /// A configuration parameter out of range; `field` names it.
    #[error("invalid configuration: {field}: {reason}")]
    InvalidConfig { field: &'static str, reason: String },

    /// No free page can be made: every reclaimable page holds live data.
    #[error("device full: no free page on plane {plane} for {op}, and no block there holds an invalid page")]
    DeviceFull { op: &'static str, plane: u32 },

    /// No free block can be made for a partitioned FTL (KVFTL): GC found no block whose
    /// reclamation would gain space. `op` names what needed the blocks.
    #[error(
        "device full: {op} needs {needed} free blocks, {free} are free and no block holds an invalid partition or page"
    )]
    NoFreeBlock { op: &'static str, needed: usize, free: usize },

    /// A record read from flash does not match what the device's index says is there.
    #[error("corrupt record in UST {utid} at byte {offset}: {reason}")]
    Corrupt { utid: u32, offset: u32, reason: String },

    /// An SST's records, read from flash, do not decode.
    #[error("corrupt SST {sst}: {reason}")]
    CorruptSst { sst: u32, reason: String },

    /// The device's own structures disagree (a bug in the device, reported rather than hidden).
    #[error("inconsistent device state: {reason}")]
    Inconsistent { reason: String },

    /// The media refused a command or failed (an FTL bug or a backing-file error).
    #[error("flash: {0}")]
    Flash(#[from] FlashError),
}

/// Bytes that do not decode as a record of the on-flash format (`flash/record.rs`); the caller
/// says where they were (UST or SST and offset).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Fewer bytes than a record's key-length field.
    #[error("{left} bytes left, a record header needs {header}")]
    ShortHeader { left: usize, header: usize },
    /// A key length of zero: no record has one (an empty key is refused at the interface).
    #[error("key length 0")]
    EmptyKey,
    /// The key, or the value-length field after it, runs past the bytes given.
    #[error("key of {key_len} bytes runs past the {left} bytes left")]
    KeyPastEnd { key_len: usize, left: usize },
    /// The value runs past the bytes given.
    #[error("value of {value_len} bytes runs past the {left} bytes left")]
    ValuePastEnd { value_len: usize, left: usize },
}

/// What a device's consistency check (`check()`, for tests) found: two of its structures, or a
/// structure and the media, that disagree. `what` names the structure (UST, SST, block, key, LPA)
/// and both sides.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{device}: inconsistent state: {what}")]
pub struct Inconsistency {
    /// The design checked (`plsc`, `lsm-in-device`, `kvftl`, `dftl-kv`, ...).
    pub device: &'static str,
    pub what: String,
}

/// Checks a media configuration; a bad field is a [`KvError::InvalidConfig`] naming it (as
/// `media.<field>`'s own name, e.g. `page_size`).
pub(crate) fn media_config(media: &flashsim::MediaConfig) -> Result<()> {
    media.validate().map_err(|e| match e {
        FlashError::InvalidConfig { field, reason } => KvError::InvalidConfig { field, reason },
        e => KvError::Flash(e),
    })
}

impl KvError {
    /// The error of a delete that found no value under `key` at `done` (the key shown as text,
    /// bytes outside printable ASCII escaped, at most 64 of them).
    pub fn key_not_found(key: &[u8], done: Nanos) -> KvError {
        let shown: String = key.iter().take(64).flat_map(|&b| std::ascii::escape_default(b)).map(char::from).collect();
        let more = if key.len() > 64 { format!("... ({} bytes)", key.len()) } else { String::new() };
        KvError::KeyNotFound { key: format!("'{shown}'{more}"), done }
    }
}

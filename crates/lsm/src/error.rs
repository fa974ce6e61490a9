//! Errors of the engine. Each names what was wrong and where (file and offset for corruption);
//! the engine never panics on bad input or bad data.
//!
//! Contract: a bad argument or option is a variant of its own whose fields say what is wrong as data
//! (the option by its field name in [`crate::Options`], the value given, what is accepted), so a
//! caller or a test matches on the variant and its fields, never on the message. Every message is
//! one line; a caller may prefix it with the option's name in its own terms (a flag, a TOML path).

use std::fmt;
use std::sync::Arc;

use storage::{EnvError, FsError};

pub type Result<T> = std::result::Result<T, Error>;

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// Stored data failed a check: a checksum mismatch, a bad magic number, a malformed record.
    #[error("corruption in {file} at offset {offset}: {what}")]
    Corruption { file: String, offset: u64, what: String },

    /// An option outside what the engine accepts ([`crate::Options::validate`]).
    #[error("{option}: {value} is invalid; accepted: {accepted}")]
    InvalidOption {
        /// The option's field name in [`crate::Options`].
        option: &'static str,
        /// The value given, as text.
        value: String,
        accepted: Accepted,
    },

    /// A name that is none of an option's names (parsing `remap`, `compaction`, `wal_recovery_mode`).
    #[error("{option}: unknown name '{name}'; accepted: {}", .accepted.join(", "))]
    UnknownName { option: &'static str, name: String, accepted: &'static [&'static str] },

    /// A MANIFEST written by an engine that orders keys another way: reading it would return wrong
    /// answers, so the database is refused.
    #[error("{manifest}: database uses comparator {found}, this engine has {expected}")]
    ComparatorMismatch { manifest: String, found: String, expected: &'static str },

    /// A key handed to a table builder that is shorter than an internal key's 8-byte tag.
    #[error("table key of {len} bytes is not an internal key; accepted: at least 8 bytes (user key + tag)")]
    NotInternalKey { len: usize },

    /// A table entry larger than a block can address (lengths are varint32, offsets fixed32).
    #[error("table entry of {key_len} + {value_len} bytes exceeds the limit of {limit} bytes")]
    EntryTooLarge { key_len: usize, value_len: usize, limit: usize },

    /// A table key (added or the first of a cloned block) not strictly after the previous one in
    /// internal-key order; both are internal keys.
    #[error(
        "table keys out of order: {:?} after {:?}",
        String::from_utf8_lossy(.key),
        String::from_utf8_lossy(.previous)
    )]
    KeysOutOfOrder { key: Vec<u8>, previous: Vec<u8> },

    /// A table builder called after `finish` or `abandon`.
    #[error("table builder used after finish or abandon")]
    TableBuilderClosed,

    /// A data block that `TableBuilder::add_cloned_block` cannot place: block `offset` of `file`.
    #[error("cannot clone the block at offset {offset} of {file}: {problem}")]
    BadClonedBlock { file: String, offset: u64, problem: CloneProblem },

    /// A data block index at or past the table's number of data blocks.
    #[error("no data block {block} in {file}, which has {blocks}")]
    NoSuchBlock { file: String, block: usize, blocks: usize },

    /// `VersionSet::prepare` while a prepared edit is still out being written (one at a time).
    #[error("a version edit is already being written")]
    EditInProgress,

    /// `VersionSet::commit` of a prepared edit that was never written, with no error to report.
    #[error("a version edit was committed unwritten")]
    EditNotWritten,

    /// A version edit that would make two SSTs of a level >= 1 overlap. Only a bug can cause it;
    /// the edit is refused rather than let lookups there miss data.
    #[error("internal error: a version edit would make SSTs {first} and {second} overlap in level {level}")]
    LevelsOverlap { level: usize, first: u64, second: u64 },

    /// A compaction entry attributed to an input the compaction does not have (a bug in the merge).
    #[error("remapcom: entry of input {input} but the compaction has {inputs} inputs")]
    NoSuchInput { input: usize, inputs: usize },

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

/// What an option accepts, in [`Error::InvalidOption`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Accepted {
    /// A number no smaller than this.
    AtLeast(u64),
    /// A number no smaller than another option's value (the L0 triggers are ordered).
    AtLeastOption { option: &'static str, value: u64 },
    /// Only `value` while the other option `option` is `is`: the two do not go together.
    OnlyWhile { value: &'static str, option: &'static str, is: &'static str },
}

impl fmt::Display for Accepted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Accepted::AtLeast(n) => write!(f, "at least {n}"),
            Accepted::AtLeastOption { option, value } => write!(f, "at least {option} ({value})"),
            Accepted::OnlyWhile { value, option, is } => write!(f, "only {value} while {option} is {is}"),
        }
    }
}

/// Why a block cannot be cloned, in [`Error::BadClonedBlock`]. The block is never placed; all but
/// `UnalignedTable` are found before anything is written (that one after the open block is closed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloneProblem {
    /// The table being built does not align its blocks, so a cloned block would break its layout.
    #[error("the table is built without align_blocks")]
    TableNotAligned,
    /// The block does not start at a multiple of the clone unit.
    #[error("the offset is not a multiple of the clone unit ({unit} bytes)")]
    Misaligned { unit: u64 },
    /// The handle's size is not the size of the parsed block handed over with it.
    #[error("the handle says {handle_size} bytes, the parsed block holds {block_size}")]
    SizeMismatch { handle_size: u64, block_size: u64 },
    /// The parsed block holds no entry (it would give the index no key).
    #[error("the block holds no entries")]
    Empty,
    /// The block's end (trailer and padding included) is past the largest file offset.
    #[error("the block's {size} bytes end past the largest file offset")]
    TooLarge { size: u64 },
    /// The table being built does not end at a multiple of the clone unit (it did not start at one).
    #[error("table {table} ends at {at}, not a multiple of the clone unit ({unit} bytes)")]
    UnalignedTable { table: String, at: u64, unit: u64 },
    /// The keys' summary holds hashes for another filter layout than the table's: its filter
    /// would miss the block's keys.
    #[error("the block's key hashes are for {keys} filters, the table builds {table} ones")]
    FilterLayout { keys: &'static str, table: &'static str },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_and_name_what_was_wrong() {
        let clone = Error::BadClonedBlock {
            file: "000007.ldb".into(),
            offset: 8193,
            problem: CloneProblem::Misaligned { unit: 4096 },
        };
        assert_eq!(
            clone.to_string(),
            "cannot clone the block at offset 8193 of 000007.ldb: the offset is not a multiple of the clone unit \
             (4096 bytes)"
        );
        let order = Error::KeysOutOfOrder { key: b"a\x01\0\0\0\0\0\0\0".to_vec(), previous: b"b".to_vec() };
        assert_eq!(order.to_string(), r#"table keys out of order: "a\u{1}\0\0\0\0\0\0\0" after "b""#);
        let option = Error::InvalidOption { option: "num_levels", value: "1".into(), accepted: Accepted::AtLeast(2) };
        assert_eq!(option.to_string(), "num_levels: 1 is invalid; accepted: at least 2");
        for e in [clone, order, option, Error::EditInProgress, Error::NoSuchInput { input: 3, inputs: 2 }] {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}

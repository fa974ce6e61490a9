//! What WAL replay at open kept and dropped, per WAL, under the database's
//! [`WalRecoveryMode`]: damage inside a WAL, breaks in the chain of WALs ([`WalBreak`]), and the
//! files set aside in `lost/` instead of deleted. Nothing is dropped silently: the report is returned by
//! [`crate::Db::recovery_report`], kept in [`crate::DbStats::recovery`] (and the `leveldb.stats`
//! property), and written to the database's info log (`LOG`) when anything was dropped.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::wal::Problem;

/// What WAL replay does with damage (RocksDB's `WALRecoveryMode`, by its names). A *tail* is a
/// problem with nothing valid after it; *corruption* has valid records after it (see
/// [`crate::wal::LogReader`]). An *incomplete* tail (the file ends inside a record, or zeros
/// follow) is what a crash during an unsynced append leaves; a *damaged* tail is a complete
/// record whose checksum, length or type is wrong: it was written whole, so it may have been
/// acknowledged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum WalRecoveryMode {
    /// An incomplete tail is dropped; any damaged record, at the tail or not, fails the open.
    TolerateCorruptedTailRecords,
    /// Any problem, even an incomplete tail, fails the open.
    AbsoluteConsistency,
    /// The default (as RocksDB's): replay stops at the first problem; what came before is kept,
    /// nothing after it (in that WAL or a later one) is applied, so the database is the state of a
    /// moment in the write order. What was dropped is reported.
    #[default]
    PointInTime,
    /// Damaged regions are skipped and every readable record after them is applied (LevelDB's
    /// behaviour without `paranoid_checks`); what was skipped is reported.
    SkipAnyCorruptedRecords,
}

impl WalRecoveryMode {
    pub const NAMES: [&'static str; 4] =
        ["tolerate_corrupted_tail", "absolute_consistency", "point_in_time", "skip_any_corrupted"];

    pub fn name(self) -> &'static str {
        match self {
            WalRecoveryMode::TolerateCorruptedTailRecords => Self::NAMES[0],
            WalRecoveryMode::AbsoluteConsistency => Self::NAMES[1],
            WalRecoveryMode::PointInTime => Self::NAMES[2],
            WalRecoveryMode::SkipAnyCorruptedRecords => Self::NAMES[3],
        }
    }

    /// Whether this mode refuses `problem` (found in a WAL; `tail` says nothing valid follows it).
    pub(crate) fn refuses(self, problem: &Problem, tail: bool) -> bool {
        let incomplete = problem.reason.is_incomplete_write();
        match self {
            WalRecoveryMode::AbsoluteConsistency => true,
            WalRecoveryMode::TolerateCorruptedTailRecords => !(tail && incomplete),
            WalRecoveryMode::PointInTime | WalRecoveryMode::SkipAnyCorruptedRecords => false,
        }
    }

    /// Whether this mode opens a database whose WAL chain breaks (a WAL's tail lost, later WALs
    /// holding writes) by stopping at the break, or skipping it: then a memtable switch may leave
    /// the old WAL unsynced (`db::write`). The modes that refuse a break have it synced instead,
    /// so that an ordinary crash does not stop their open.
    pub(crate) fn stops_at_breaks(self) -> bool {
        matches!(self, WalRecoveryMode::PointInTime | WalRecoveryMode::SkipAnyCorruptedRecords)
    }

    /// Whether this mode refuses `b`; `at_end` says no WAL follows it (an empty last WAL is what a
    /// crash right after the WAL was created leaves, like an incomplete tail).
    pub(crate) fn refuses_break(self, b: &WalBreak, at_end: bool) -> bool {
        match self {
            WalRecoveryMode::AbsoluteConsistency => true,
            WalRecoveryMode::TolerateCorruptedTailRecords => !(at_end && matches!(b, WalBreak::Empty { .. })),
            WalRecoveryMode::PointInTime | WalRecoveryMode::SkipAnyCorruptedRecords => false,
        }
    }

    /// The error for a refused break: the WAL, what is lost, and how to open anyway.
    pub(crate) fn break_refusal(self, b: &WalBreak) -> Error {
        Error::corruption(
            b.file(),
            0,
            format!(
                "{b}; wal_recovery_mode {} refuses it (point_in_time keeps the writes before it, \
                 skip_any_corrupted every readable record; `flashkv repair` rebuilds from every file found)",
                self.name()
            ),
        )
    }

    /// The error for a refused problem: the WAL, the offset, and how to open anyway.
    pub(crate) fn refusal(self, problem: &Problem) -> Error {
        Error::corruption(
            problem.file.clone(),
            problem.offset,
            format!(
                "{} ({} bytes); wal_recovery_mode {} refuses it (point_in_time keeps the records before it, \
                 skip_any_corrupted every readable record)",
                problem.reason,
                problem.bytes,
                self.name()
            ),
        )
    }
}

impl fmt::Display for WalRecoveryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WalRecoveryMode {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let modes = [
            WalRecoveryMode::TolerateCorruptedTailRecords,
            WalRecoveryMode::AbsoluteConsistency,
            WalRecoveryMode::PointInTime,
            WalRecoveryMode::SkipAnyCorruptedRecords,
        ];
        modes.into_iter().find(|m| m.name() == s).ok_or_else(|| Error::UnknownName {
            option: "wal_recovery_mode",
            name: s.to_string(),
            accepted: &WalRecoveryMode::NAMES,
        })
    }
}

/// One WAL's replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalReplay {
    pub file: String,
    /// Records (write batches) applied.
    pub records_applied: u64,
    /// Readable records not applied (after point-in-time replay stopped).
    pub records_dropped: u64,
    /// Bytes of those records, plus the bytes of every damaged region and of the tail.
    pub bytes_dropped: u64,
    /// The damaged regions and the tail, in file order.
    pub problems: Vec<Problem>,
}

/// Writes that the chain of WALs should hold and does not (see `db::replay`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WalBreak {
    /// The WAL the MANIFEST names is not there: the writes from sequence `from` (to `to`, when a
    /// later WAL says where they end) are lost.
    Missing { file: String, from: u64, to: Option<u64> },
    /// The WAL has no header: it was emptied, or a crash came before anything in it was synced.
    /// Whatever it held is lost.
    Empty { file: String },
    /// The WAL starts at sequence `to + 1`, but the files before it hold writes only up to
    /// `from - 1`: writes `from..=to` are in no file.
    Gap { file: String, from: u64, to: u64 },
}

impl WalBreak {
    /// The WAL the break is about.
    pub fn file(&self) -> &str {
        match self {
            WalBreak::Missing { file, .. } | WalBreak::Empty { file } | WalBreak::Gap { file, .. } => file,
        }
    }
}

impl fmt::Display for WalBreak {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WalBreak::Missing { file, from, to: Some(to) } if to >= from => {
                write!(f, "{file}, the WAL the MANIFEST names, is missing: writes {from} to {to} are lost")
            }
            // The next WAL starts right after the MANIFEST's last sequence: no later write is
            // missing, but writes up to that sequence that were still only in this WAL are.
            WalBreak::Missing { file, from, to: Some(_) } => write!(
                f,
                "{file}, the WAL the MANIFEST names, is missing: the next WAL starts at sequence {from}, right after \
                 the MANIFEST's last sequence {}, so no later write is lost, but any write up to {} that only it held is",
                from - 1,
                from - 1
            ),
            WalBreak::Missing { file, from, to: None } => {
                write!(f, "{file}, the WAL the MANIFEST names, is missing: any writes from sequence {from} on are lost")
            }
            WalBreak::Empty { file } => {
                write!(f, "{file} is empty (no header): any writes it held are lost")
            }
            WalBreak::Gap { file, from, to } => {
                write!(f, "{file} starts at sequence {}, but no file holds writes {from} to {to}", to + 1)
            }
        }
    }
}

/// The replay of every WAL at the last open.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    pub mode: WalRecoveryMode,
    pub wals: Vec<WalReplay>,
    /// Breaks in the chain of WALs, in the order met.
    pub breaks: Vec<WalBreak>,
    /// Files moved to `lost/` instead of deleted: WALs whose records were dropped, and (on a
    /// salvaging open) SSTs the MANIFEST does not name.
    pub set_aside: Vec<String>,
}

impl RecoveryReport {
    /// Nothing was dropped.
    pub fn is_clean(&self) -> bool {
        self.breaks.is_empty()
            && self.set_aside.is_empty()
            && self.wals.iter().all(|w| w.records_dropped == 0 && w.bytes_dropped == 0 && w.problems.is_empty())
    }

    pub fn records_applied(&self) -> u64 {
        self.wals.iter().map(|w| w.records_applied).sum()
    }

    pub fn records_dropped(&self) -> u64 {
        self.wals.iter().map(|w| w.records_dropped).sum()
    }

    pub fn bytes_dropped(&self) -> u64 {
        self.wals.iter().map(|w| w.bytes_dropped).sum()
    }
}

impl fmt::Display for RecoveryReport {
    /// One line per WAL that lost something, or one line saying nothing was lost.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_clean() {
            return write!(
                f,
                "WAL recovery ({}): {} records from {} WAL(s), nothing dropped",
                self.mode,
                self.records_applied(),
                self.wals.len()
            );
        }
        let mut first = true;
        let mut line = |f: &mut fmt::Formatter<'_>| -> fmt::Result {
            if !std::mem::take(&mut first) {
                writeln!(f)?;
            }
            write!(f, "WAL recovery ({}): ", self.mode)
        };
        for b in &self.breaks {
            line(f)?;
            write!(f, "{b}")?;
        }
        for w in self.wals.iter().filter(|w| w.bytes_dropped > 0 || !w.problems.is_empty()) {
            line(f)?;
            write!(
                f,
                "{}: {} records applied, {} readable records and {} bytes dropped",
                w.file, w.records_applied, w.records_dropped, w.bytes_dropped
            )?;
            for p in &w.problems {
                write!(f, "; at offset {}: {} ({} bytes)", p.offset, p.reason, p.bytes)?;
            }
        }
        if !self.set_aside.is_empty() {
            line(f)?;
            write!(f, "kept aside in lost/ (not deleted): {}", self.set_aside.join(", "))?;
        }
        Ok(())
    }
}

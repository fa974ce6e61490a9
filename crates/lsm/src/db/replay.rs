//! The WAL chain and its replay at open.
//!
//! Each WAL starts with a header: an empty write batch whose sequence is the first one the WAL
//! will hold (written when the WAL is created, durable with its first synced write). Every write
//! up to the MANIFEST's last sequence is in an SST or in the WAL the MANIFEST names (its log
//! number), and each later WAL continues the sequence where the one before it ended. Replay checks
//! that chain as it goes, so writes that no file holds any more are found and reported, not
//! silently skipped ([`WalBreak`]):
//! - the WAL the MANIFEST names is missing (deleted, or the MANIFEST lost the edits that moved
//!   past it);
//! - a WAL is empty (no header: emptied, or a crash before anything in it was synced);
//! - a WAL starts after a sequence number the WALs before it never reached.
//!
//! A WAL written before headers existed starts with a write batch, whose sequence serves the same
//! check. What each break means for the open is `Options::wal_recovery_mode`'s, as for damage
//! inside a WAL ([`WalRecoveryMode`]).

use storage::Fs;

use super::recovery_report::{RecoveryReport, WalBreak, WalRecoveryMode, WalReplay};
use super::{DbInner, DbState};
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::filename;
use crate::key::SequenceNumber;
use crate::memtable::MemTable;
use crate::version::VersionEdit;
use crate::wal::{LogReader, LogWriter, ReadMode};

/// Starts a WAL in `file` whose first write will have sequence `first`: writes its header.
pub(super) fn start_wal(file: Box<dyn storage::WritableFile>, first: SequenceNumber) -> Result<LogWriter> {
    let mut header = WriteBatch::new();
    header.set_sequence(first);
    let mut wal = LogWriter::new(file);
    wal.add_record(header.data())?;
    Ok(wal)
}

/// The first sequence number WAL `path` holds or, by its header, will hold; `None` when it has no
/// readable record (empty, or damaged from its start).
pub(super) fn first_sequence(fs: &dyn Fs, path: &str) -> Result<Option<SequenceNumber>> {
    let mut reader = LogReader::new(fs.open(path)?, ReadMode::PointInTime);
    match reader.next_record()? {
        Some(record) => Ok(Some(WriteBatch::from_data(record, path, reader.last_record_offset())?.sequence())),
        None => Ok(None),
    }
}

/// The break at the chain's start, if any: the WAL the MANIFEST names is missing, or the first WAL
/// found starts after the MANIFEST's last sequence + 1. `logs` are the WALs to replay, in order.
pub(super) fn start_break(
    fs: &dyn Fs,
    dir: &str,
    log_number: u64,
    last_sequence: SequenceNumber,
    logs: &[u64],
) -> Result<Option<WalBreak>> {
    if log_number != 0 && !logs.contains(&log_number) {
        let next = match logs.first() {
            Some(&n) => first_sequence(fs, &filename::log_name(dir, n))?,
            None => None,
        };
        return Ok(Some(WalBreak::Missing {
            file: filename::log_name(dir, log_number),
            from: last_sequence + 1,
            to: next.map(|s| s.saturating_sub(1)),
        }));
    }
    let Some(&first) = logs.first() else { return Ok(None) };
    let file = filename::log_name(dir, first);
    Ok(match first_sequence(fs, &file)? {
        Some(s) if s > last_sequence + 1 => Some(WalBreak::Gap { file, from: last_sequence + 1, to: s - 1 }),
        _ => None,
    })
}

/// What replay produced: the report, the edit adding the SSTs it flushed, the last sequence.
pub(super) struct Replayed {
    pub report: RecoveryReport,
    pub edit: VersionEdit,
    pub last_sequence: SequenceNumber,
}

/// Replays WALs `logs` (in order) into memtables, flushed to level-0 SSTs as they fill and at the
/// end. `start` is the break at the chain's start ([`start_break`]), already judged by the caller.
pub(super) fn replay(inner: &DbInner, st: &mut DbState, logs: &[u64], start: Option<WalBreak>) -> Result<Replayed> {
    let fs = inner.fs();
    let dir = &inner.dir;
    let o = &inner.options;
    let mode = o.wal_recovery_mode;
    let mut edit = VersionEdit::default();
    let mut max_seq = st.versions.last_sequence;
    // The next sequence the chain must hold: every write before it is in an SST or a WAL read.
    let mut next = st.versions.last_sequence + 1;
    let mut report = RecoveryReport { mode, ..RecoveryReport::default() };
    let mut mem = MemTable::new();
    // Point in time: set at the first problem; nothing after it is applied, but the records
    // still readable after it are counted as dropped.
    let mut stopped = false;
    if let Some(b) = start {
        if mode.refuses_break(&b, logs.is_empty()) {
            return Err(mode.break_refusal(&b));
        }
        stopped |= mode == WalRecoveryMode::PointInTime;
        report.breaks.push(b);
    }
    for (i, &n) in logs.iter().enumerate() {
        let path = filename::log_name(dir, n);
        let last_wal = i + 1 == logs.len();
        // The lenient reader reads everything readable; the mode decides what is applied.
        let mut reader = LogReader::new(fs.open(&path)?, ReadMode::Lenient);
        let mut wal = WalReplay { file: path.clone(), ..WalReplay::default() };
        let mut first = true;
        loop {
            let seen = reader.problems().len();
            let record = reader.next_record()?;
            // A problem met while reading towards a record lies before it.
            if let Some(p) = reader.problems()[seen..].first() {
                if mode.refuses(p, false) {
                    return Err(mode.refusal(p));
                }
                stopped |= mode == WalRecoveryMode::PointInTime;
            }
            let Some(record) = record else { break };
            let offset = reader.last_record_offset();
            let batch = WriteBatch::from_data(record, &path, offset)?;
            let seq = batch.sequence();
            if std::mem::take(&mut first) && i > 0 && seq > next {
                // A WAL after the first starts beyond what the ones before it held.
                let b = WalBreak::Gap { file: path.clone(), from: next, to: seq - 1 };
                if mode.refuses_break(&b, false) {
                    return Err(mode.break_refusal(&b));
                }
                stopped |= mode == WalRecoveryMode::PointInTime;
                report.breaks.push(b);
            }
            if batch.count() == 0 {
                // A header (or an empty write): it holds no write.
                next = next.max(seq);
                continue;
            }
            if stopped {
                wal.records_dropped += 1;
                wal.bytes_dropped += batch.data().len() as u64;
                continue;
            }
            batch.insert_into(&mem)?;
            let end = seq + batch.count() as u64 - 1;
            max_seq = max_seq.max(end);
            next = next.max(end + 1);
            wal.records_applied += 1;
            if mem.approximate_memory_usage() > o.write_buffer_size {
                let full = std::mem::take(&mut mem);
                flush_recovered(inner, st, &full, &mut edit)?;
            }
        }
        if first && reader.problems().is_empty() && reader.tail().is_none() {
            // Not even a header: emptied, or created just before a crash that lost it.
            let b = WalBreak::Empty { file: path.clone() };
            if mode.refuses_break(&b, last_wal) {
                return Err(mode.break_refusal(&b));
            }
            stopped |= mode == WalRecoveryMode::PointInTime && !last_wal;
            report.breaks.push(b);
        }
        if let Some(tail) = reader.tail() {
            if mode.refuses(tail, true) {
                return Err(mode.refusal(tail));
            }
        }
        wal.problems = reader.problems().iter().chain(reader.tail()).cloned().collect();
        wal.problems.sort_by_key(|p| p.offset);
        wal.bytes_dropped += wal.problems.iter().map(|p| p.bytes).sum::<u64>();
        // A point-in-time replay that stopped in this WAL applies nothing of later ones; nor
        // does one that met a tail here, since a later WAL's writes come after the lost ones.
        stopped |= mode == WalRecoveryMode::PointInTime && !wal.problems.is_empty();
        report.wals.push(wal);
    }
    if !mem.is_empty() {
        flush_recovered(inner, st, &mem, &mut edit)?;
    }
    Ok(Replayed { report, edit, last_sequence: max_seq })
}

/// Writes a memtable rebuilt from the WAL to a level-0 SST and records it in `edit`.
fn flush_recovered(inner: &DbInner, st: &mut DbState, mem: &MemTable, edit: &mut VersionEdit) -> Result<()> {
    let number = st.versions.new_file_number();
    st.pending_outputs.insert(number);
    let r = inner.write_table(number, mem, storage::env::Lane::Foreground);
    st.pending_outputs.remove(&number);
    let (size, smallest, largest) = r?;
    if size > 0 {
        edit.add_file(0, number, size, smallest, largest);
        let l = st.stats.level_mut(0);
        l.bytes_written += size;
        l.files_written += 1;
        st.stats.flush_bytes += size;
    }
    Ok(())
}

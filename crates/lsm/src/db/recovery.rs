//! Opening a database: the lock, CURRENT and the MANIFEST, replay of the WALs newer than the
//! MANIFEST's log number into memtables (flushed to SSTs as they fill, and at the end), a fresh
//! WAL and MANIFEST, and removal of what is obsolete.
//!
//! What WAL replay does with damage is `Options::wal_recovery_mode` ([`WalRecoveryMode`]: fail
//! the open with an error naming the WAL and offset, stop at the damage, or skip it); whatever the
//! mode, what was dropped is in the [`RecoveryReport`] (file, offset, reason, records and bytes),
//! kept in the stats and written to the info log (`LOG`) when anything was dropped.

use std::sync::Arc;

use storage::WriteHint;

use super::DbInner;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::memtable::MemTable;
use crate::version::VersionEdit;
use crate::wal::{LogReader, LogWriter, ReadMode};

use super::recovery_report::{RecoveryReport, WalRecoveryMode, WalReplay};

/// Recovers the database; returns the fresh WAL that new writes go to.
pub(super) fn open(inner: &Arc<DbInner>) -> Result<LogWriter> {
    let fs = inner.fs();
    let dir = &inner.dir;
    let o = &inner.options;
    fs.create_dir_all(dir)?;
    let lock = fs.lock(&filename::lock_name(dir))?;
    let mut st = inner.lock();
    st.lock = Some(lock);
    let exists = fs.exists(&filename::current_name(dir))?;
    if exists && o.error_if_exists {
        return Err(Error::AlreadyExists { dir: dir.clone() });
    }
    if !exists {
        if !o.create_if_missing {
            return Err(Error::NotFound {
                dir: dir.clone(),
                what: "CURRENT is missing (create_if_missing is off)".into(),
            });
        }
        st.versions.create_new()?;
    }
    st.versions.recover()?;

    // Every SST the version names must exist; WALs at or after the log number hold writes the
    // SSTs do not.
    let names = fs.list(dir)?;
    let mut expected = st.versions.live_files();
    let mut logs = Vec::new();
    for name in &names {
        match filename::parse(name) {
            Some(FileKind::Table(n)) => {
                expected.remove(&n);
                st.versions.mark_file_number_used(n);
            }
            Some(FileKind::Log(n)) => {
                st.versions.mark_file_number_used(n);
                if n >= st.versions.log_number || n == st.versions.prev_log_number {
                    logs.push(n);
                }
            }
            _ => {}
        }
    }
    if let (Some(missing), Some(tail)) = (expected.iter().next(), &st.versions.manifest_tail) {
        // The cut edit is the one that replaced them: it was written whole and acted on, and has
        // been cut since.
        return Err(Error::corruption(
            tail.file.clone(),
            tail.offset,
            format!(
                "the MANIFEST's last record is cut ({}, {} bytes), and {} SST(s) that the edits before it \
                 name are gone (first: {}): the cut edit is the one that replaced them",
                tail.reason,
                tail.bytes,
                expected.len(),
                filename::table_name(dir, *missing)
            ),
        ));
    }
    if let Some(missing) = expected.iter().next() {
        return Err(Error::corruption(
            filename::table_name(dir, *missing),
            0,
            format!("{} SST(s) named by the MANIFEST are missing", expected.len()),
        ));
    }
    logs.sort_unstable();

    let mut edit = VersionEdit::default();
    let mut max_seq = st.versions.last_sequence;
    let mode = o.wal_recovery_mode;
    let mut report = RecoveryReport { mode, wals: Vec::new() };
    let mut mem = MemTable::new();
    // Point in time: set at the first problem; nothing after it is applied, but the records
    // still readable after it are counted as dropped.
    let mut stopped = false;
    for &n in &logs {
        let path = filename::log_name(dir, n);
        // The lenient reader reads everything readable; the mode decides what is applied.
        let mut reader = LogReader::new(fs.open(&path)?, ReadMode::Lenient);
        let mut wal = WalReplay { file: path.clone(), ..WalReplay::default() };
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
            if stopped {
                wal.records_dropped += 1;
                wal.bytes_dropped += record.len() as u64;
                continue;
            }
            let offset = reader.last_record_offset();
            let batch = WriteBatch::from_data(record, &path, offset)?;
            let seq = batch.sequence();
            for (i, op) in batch.iter().enumerate() {
                let op = op?;
                mem.add(seq + i as u64, op.kind, op.key, op.value);
            }
            if batch.count() > 0 {
                max_seq = max_seq.max(seq + batch.count() as u64 - 1);
            }
            wal.records_applied += 1;
            if mem.approximate_memory_usage() > o.write_buffer_size {
                let full = std::mem::take(&mut mem);
                flush_recovered(inner, &mut st, &full, &mut edit)?;
            }
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
        flush_recovered(inner, &mut st, &mem, &mut edit)?;
    }
    st.versions.last_sequence = max_seq;
    if !report.is_clean() {
        write_info_log(&**fs, dir, &report)?;
    }
    st.stats.recovery = report;

    // A fresh WAL for new writes; the replayed ones are obsolete once the edit is durable.
    let number = st.versions.new_file_number();
    let wal_path = filename::log_name(dir, number);
    let file = fs.create_with_hint(&wal_path, WriteHint::Wal)?;
    fs.sync_dir(dir)?;
    let wal = LogWriter::new(file);
    st.wal_number = number;
    edit.log_number = Some(number);
    edit.prev_log_number = Some(0);
    if !edit.new_files.is_empty() {
        fs.sync_dir(dir)?;
    }
    st.versions.log_and_apply(&mut edit)?;
    let current = st.versions.current();
    st.live_versions.push(Arc::downgrade(&current));
    st.wal_numbers.insert(number);
    inner.delete_unreferenced_files(&mut st);
    Ok(wal)
}

/// Writes a memtable rebuilt from the WAL to a level-0 SST and records it in `edit`.
fn flush_recovered(inner: &DbInner, st: &mut super::DbState, mem: &MemTable, edit: &mut VersionEdit) -> Result<()> {
    let number = st.versions.new_file_number();
    st.pending_outputs.insert(number);
    let r = inner.write_table(number, mem);
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

/// Writes `report` to the database's info log, `LOG` (the previous one kept as `LOG.old`, as
/// LevelDB does at each open).
fn write_info_log(fs: &dyn storage::Fs, dir: &str, report: &RecoveryReport) -> Result<()> {
    let log = filename::join(dir, "LOG");
    if fs.exists(&log)? {
        fs.rename(&log, &filename::join(dir, "LOG.old"))?;
    }
    storage::write_all(fs, &log, format!("{report}\n").as_bytes(), true)?;
    Ok(())
}

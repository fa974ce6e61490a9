//! Opening a database: the lock, CURRENT and the MANIFEST, replay of the WALs newer than the
//! MANIFEST's log number into memtables (flushed to SSTs as they fill, and at the end), a fresh
//! WAL and MANIFEST, and removal of what is obsolete.
//!
//! An open never deletes a file it cannot account for. SSTs the MANIFEST does not name are
//! leftovers of a crash between writing a file and recording it only when the WALs still hold
//! every write since the MANIFEST's state (`db::replay`); when they do not, the MANIFEST lost
//! edits after those SSTs were made, and the open fails naming the MANIFEST and the SSTs, unless
//! `Options::salvage` asks to set them aside in `lost/`. A WAL whose readable records replay
//! dropped is set aside too. `create_if_missing` refuses a directory that holds a database
//! without its CURRENT; `Db::repair` rebuilds one.
//!
//! What WAL replay does with damage is `Options::wal_recovery_mode` ([`WalRecoveryMode`]: fail
//! the open with an error naming the WAL and offset, stop at the damage, or skip it); whatever the
//! mode, what was dropped is in the [`RecoveryReport`] (file, offset, reason, records and bytes),
//! kept in the stats and written to the info log (`LOG`) when anything was dropped.

use std::collections::BTreeSet;
use std::sync::Arc;

use storage::WriteHint;

use super::recovery_report::{RecoveryReport, WalBreak};
use super::{replay, DbInner};
use crate::error::{Error, Result};
use crate::filename::{self, FileKind};
use crate::version::VersionSet;
use crate::wal::LogWriter;

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
        refuse_a_database_without_current(&**fs, dir)?;
        st.versions.create_new()?;
    }
    st.versions.recover()?;
    let found = scan(&**fs, dir, &mut st.versions)?;
    check_tables_present(dir, &st.versions, &found)?;

    let (log_number, last_sequence) = (st.versions.log_number, st.versions.last_sequence);
    let start = replay::start_break(&**fs, dir, log_number, last_sequence, &found.logs)?;
    let mut set_aside = Vec::new();
    if matches!(start, Some(WalBreak::Missing { .. } | WalBreak::Gap { .. })) && !found.orphans.is_empty() {
        // SSTs the MANIFEST does not name, and the writes before them in no WAL: the MANIFEST
        // lost the edits that named them. Opening would delete them as leftovers.
        let manifest = filename::manifest_name(dir, st.versions.manifest_number);
        if !o.salvage {
            return Err(lost_manifest_tail(&manifest, start.as_ref(), dir, &found.orphans));
        }
        for &n in &found.orphans {
            set_aside.push(move_to_lost(&**fs, dir, &filename::table_name(dir, n))?);
        }
    }
    let replay::Replayed { mut report, mut edit, last_sequence } = replay::replay(inner, &mut st, &found.logs, start)?;
    st.versions.last_sequence = last_sequence;

    // A fresh WAL for new writes; the replayed ones are obsolete once the edit is durable.
    let number = st.versions.new_file_number();
    let wal_path = filename::log_name(dir, number);
    let file = inner.options.create_file(&**fs, &wal_path, WriteHint::Wal)?;
    fs.sync_dir(dir)?;
    let wal = replay::start_wal(file, last_sequence + 1)?;
    st.wal_number = number;
    edit.log_number = Some(number);
    edit.prev_log_number = Some(0);
    if !edit.new_files.is_empty() {
        fs.sync_dir(dir)?;
    }
    st.versions.log_and_apply(&mut edit)?;
    // A WAL whose readable records were dropped, or that is damaged, is kept aside, not deleted.
    for w in report
        .wals
        .iter()
        .filter(|w| w.records_dropped > 0 || w.problems.iter().any(|p| !p.reason.is_incomplete_write()))
    {
        set_aside.push(move_to_lost(&**fs, dir, &w.file)?);
    }
    report.set_aside = set_aside;
    if !report.is_clean() {
        write_info_log(&**fs, dir, &report)?;
    }
    st.stats.recovery = report;
    let current = st.versions.current();
    st.live_versions.push(Arc::downgrade(&current));
    st.wal_numbers.insert(number);
    inner.delete_unreferenced_files(&mut st);
    Ok(wal)
}

/// The files of `dir` measured against the recovered version.
struct Found {
    /// WALs to replay (at or after the log number), in order.
    logs: Vec<u64>,
    /// SSTs the version names that are not there.
    missing: BTreeSet<u64>,
    /// SSTs there that the version does not name.
    orphans: Vec<u64>,
}

fn scan(fs: &dyn storage::Fs, dir: &str, versions: &mut VersionSet) -> Result<Found> {
    let live = versions.live_files();
    let mut missing = live.clone();
    let (mut logs, mut orphans) = (Vec::new(), Vec::new());
    for name in &fs.list(dir)? {
        match filename::parse(name) {
            Some(FileKind::Table(n)) => {
                missing.remove(&n);
                versions.mark_file_number_used(n);
                if !live.contains(&n) {
                    orphans.push(n);
                }
            }
            Some(FileKind::Log(n)) => {
                versions.mark_file_number_used(n);
                // WALs at or after the log number hold writes the SSTs do not.
                if n >= versions.log_number || n == versions.prev_log_number {
                    logs.push(n);
                }
            }
            _ => {}
        }
    }
    logs.sort_unstable();
    orphans.sort_unstable();
    Ok(Found { logs, missing, orphans })
}

/// Every SST the version names must exist.
fn check_tables_present(dir: &str, versions: &VersionSet, found: &Found) -> Result<()> {
    let Some(missing) = found.missing.iter().next() else { return Ok(()) };
    if let Some(tail) = &versions.manifest_tail {
        // The cut edit is the one that replaced them: it was written whole and acted on, and has
        // been cut since.
        return Err(Error::corruption(
            tail.file.clone(),
            tail.offset,
            format!(
                "the MANIFEST's last record is cut ({}, {} bytes), and {} SST(s) that the edits before it \
                 name are gone (first: {}): the cut edit is the one that replaced them; {REPAIR}",
                tail.reason,
                tail.bytes,
                found.missing.len(),
                filename::table_name(dir, *missing)
            ),
        ));
    }
    Err(Error::corruption(
        filename::table_name(dir, *missing),
        0,
        format!("{} SST(s) named by the MANIFEST are missing; {REPAIR}", found.missing.len()),
    ))
}

/// What a user can do about a MANIFEST that does not match the files.
const REPAIR: &str = "`flashkv repair` (`Db::repair`) rebuilds the database from every SST and WAL found";

/// The error for a MANIFEST that lost edits after files were made from them.
fn lost_manifest_tail(manifest: &str, start: Option<&WalBreak>, dir: &str, orphans: &[u64]) -> Error {
    let why = start.map(|b| b.to_string()).unwrap_or_default();
    Error::corruption(
        manifest,
        0,
        format!(
            "the MANIFEST has lost edits: {why}, and {} SST(s) it does not name are there ({}); opening \
             would roll the database back and delete them. Open with `salvage` to set them aside in lost/ \
             and open the MANIFEST's state, or rebuild the database from every SST and WAL with \
             `flashkv repair` (`Db::repair`)",
            orphans.len(),
            list(orphans.iter().map(|&n| filename::table_name(dir, n)))
        ),
    )
}

/// Up to five names, then how many more.
pub(super) fn list(names: impl Iterator<Item = String>) -> String {
    let names: Vec<String> = names.collect();
    let shown = names.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    match names.len() {
        n if n > 5 => format!("{shown} and {} more", n - 5),
        _ => shown,
    }
}

/// `create_if_missing` makes a database only where none is. SSTs, WALs or a MANIFEST past the
/// first (a crash while creating a database can leave the first) without CURRENT are a database
/// that lost CURRENT, and a new one would delete its files.
fn refuse_a_database_without_current(fs: &dyn storage::Fs, dir: &str) -> Result<()> {
    let (mut manifests, mut wals, mut tables) = (Vec::new(), Vec::new(), Vec::new());
    for name in fs.list(dir)? {
        match filename::parse(&name) {
            Some(FileKind::Manifest(n)) if n > 1 => manifests.push(name),
            Some(FileKind::Log(_)) => wals.push(name),
            Some(FileKind::Table(_)) => tables.push(name),
            _ => {}
        }
    }
    let groups: Vec<String> = [("MANIFEST", manifests), ("WAL", wals), ("SST", tables)]
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, mut names)| {
            names.sort();
            format!("{} {what}(s): {}", names.len(), list(names.into_iter()))
        })
        .collect();
    if groups.is_empty() {
        return Ok(());
    }
    Err(Error::corruption(
        filename::current_name(dir),
        0,
        format!(
            "CURRENT is missing, but {dir} holds a database ({}); create_if_missing would replace it. \
             Rebuild it with `flashkv repair` (`Db::repair`), or remove the files",
            groups.join("; ")
        ),
    ))
}

/// Moves `path` into the database's `lost/` directory (made if needed); returns the new path.
pub(super) fn move_to_lost(fs: &dyn storage::Fs, dir: &str, path: &str) -> Result<String> {
    let lost = filename::lost_dir(dir);
    fs.create_dir_all(&lost)?;
    let name = path.rsplit('/').next().unwrap_or(path);
    // A file kept from an earlier open keeps its place: this one takes the next free name.
    let mut to = filename::join(&lost, name);
    let mut n = 1;
    while fs.exists(&to)? {
        to = filename::join(&lost, &format!("{name}.{n}"));
        n += 1;
    }
    fs.rename(path, &to)?;
    fs.sync_dir(&lost)?;
    fs.sync_dir(dir)?;
    Ok(to)
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

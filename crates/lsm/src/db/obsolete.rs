//! The deletion of files no version needs any more: after every job, the SSTs an edit removed
//! once no live version or running job reads them, and the WALs older than the live log; at
//! open, whatever a crash left in the directory.

use super::{DbInner, DbState};
use crate::filename::{self, FileKind};

impl DbInner {
    /// Takes the queued files no live version or running job needs any more (SSTs an edit
    /// removed, WALs older than the live log number) off the books and returns their paths, for
    /// [`DbInner::remove_files`] once the lock is released. Costs nothing when nothing is queued
    /// (this runs after every job; the directory is only scanned at open).
    pub(crate) fn take_obsolete_files(&self, st: &mut DbState) -> Vec<String> {
        let mut doomed = Vec::new();
        let log_number = st.versions.log_number;
        let prev = st.versions.prev_log_number;
        let old_logs: Vec<u64> = st.wal_numbers.iter().copied().filter(|&n| n < log_number && n != prev).collect();
        for n in old_logs {
            st.wal_numbers.remove(&n);
            doomed.push(filename::log_name(&self.dir, n));
        }
        if st.obsolete_tables.is_empty() {
            return doomed;
        }
        st.live_versions.retain(|w| w.strong_count() > 0);
        let mut live = st.versions.live_files();
        for v in st.live_versions.iter().filter_map(|w| w.upgrade()) {
            live.extend(v.files.iter().flatten().map(|f| f.number));
        }
        let dead: Vec<u64> = st.obsolete_tables.iter().copied().filter(|n| !live.contains(n)).collect();
        for n in dead {
            st.obsolete_tables.remove(&n);
            self.table_cache.evict(n);
            doomed.push(filename::table_name(&self.dir, n));
        }
        doomed
    }

    /// Removes files taken by [`DbInner::take_obsolete_files`] (best effort: a file left behind is
    /// removed by the scan at the next open). Call without the lock: unlinking a large file takes a
    /// while.
    pub(crate) fn remove_files(&self, paths: &[String]) {
        for p in paths {
            let _ = self.fs().remove(p);
        }
    }

    /// Scans the directory and removes every file of ours that nothing needs (at open: files left
    /// by a crash between writing and installing, old WALs and MANIFESTs).
    pub(crate) fn delete_unreferenced_files(&self, st: &mut DbState) {
        let mut live = st.versions.live_files();
        live.extend(st.pending_outputs.iter().copied());
        let Ok(names) = self.fs().list(&self.dir) else { return };
        for name in names {
            let keep = match filename::parse(&name) {
                Some(FileKind::Log(n)) => {
                    n >= st.versions.log_number || n == st.versions.prev_log_number || n == st.wal_number
                }
                Some(FileKind::Manifest(n)) => n >= st.versions.manifest_number,
                Some(FileKind::Table(n)) => live.contains(&n),
                Some(FileKind::Temp(n)) => st.pending_outputs.contains(&n),
                Some(FileKind::Current) | Some(FileKind::Lock) | None => true,
            };
            if !keep {
                if let Some(FileKind::Table(n)) = filename::parse(&name) {
                    self.table_cache.evict(n);
                }
                let _ = self.fs().remove(&filename::join(&self.dir, &name));
            }
        }
    }
}

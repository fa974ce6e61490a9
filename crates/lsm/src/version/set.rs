//! The version set: the current version, the counters that must survive restarts (next file
//! number, last sequence, live WAL number, compaction pointers), and the MANIFEST that records
//! every change as a version edit.
//!
//! Durability: an edit is applied only after it is appended to the MANIFEST and synced; a new
//! MANIFEST starts with a snapshot of the whole state and becomes live when CURRENT (replaced by
//! a synced temporary file, a rename and a directory sync) names it. Recovery reads CURRENT, then
//! replays the MANIFEST it names; a record that fails its checksum is a Corruption error naming the
//! MANIFEST and offset (a torn last record, from a crash during an append, is ignored: that edit
//! was never acknowledged).

use std::collections::BTreeSet;
use std::sync::Arc;

use storage::{Fs, WriteHint};

use super::edit::{VersionEdit, COMPARATOR_NAME};
use super::version::{FileMeta, Version};
use crate::error::{Error, Result};
use crate::filename;
use crate::key::{compare_internal, SequenceNumber};
use crate::options::Options;
use crate::wal::{LogReader, LogWriter, ReadMode};

pub struct VersionSet {
    fs: Arc<dyn Fs>,
    dir: String,
    options: Options,
    current: Arc<Version>,
    pub next_file_number: u64,
    pub manifest_number: u64,
    pub last_sequence: SequenceNumber,
    pub log_number: u64,
    pub prev_log_number: u64,
    /// Per level: the largest key of the last compaction there; the next one starts after it.
    pub compact_pointers: Vec<Vec<u8>>,
    /// The MANIFEST's last record, when recovery dropped it as torn or damaged (an edit that was
    /// never acknowledged, unless the files it replaced are gone: see `db::recovery`).
    pub manifest_tail: Option<crate::wal::Problem>,
    manifest: Option<LogWriter>,
    /// A prepared edit is out being written (its MANIFEST writer with it).
    writing: bool,
}

/// Where a prepared edit goes: the live MANIFEST, or a new one that starts with a snapshot.
enum Target {
    Live { number: u64, writer: LogWriter },
    New { number: u64, snapshot: Vec<u8> },
}

/// A version edit prepared under the engine's lock, to be written without it and then committed;
/// see [`VersionSet::prepare`].
pub struct ManifestWrite {
    fs: Arc<dyn Fs>,
    /// How a new MANIFEST is created (direct I/O or not).
    options: Options,
    dir: String,
    record: Vec<u8>,
    target: Target,
    /// After a successful write: the MANIFEST's number and writer.
    written: Option<(u64, LogWriter)>,
    version: Version,
    pointers: Vec<Vec<u8>>,
    log_number: u64,
    prev_log_number: u64,
}

impl ManifestWrite {
    /// The MANIFEST the edit went to, once written.
    pub fn manifest_number(&self) -> Option<u64> {
        self.written.as_ref().map(|(n, _)| *n)
    }

    /// Appends the record and syncs the MANIFEST; a new MANIFEST is created with its snapshot first
    /// and made live through CURRENT (and removed again if any of that fails).
    pub fn write(&mut self) -> Result<()> {
        let (fs, dir) = (&*self.fs, self.dir.as_str());
        match std::mem::replace(&mut self.target, Target::New { number: 0, snapshot: Vec::new() }) {
            Target::Live { number, writer: mut w } => {
                w.add_record(&self.record).and_then(|()| w.sync())?;
                self.written = Some((number, w));
            }
            Target::New { number, snapshot } => {
                let path = filename::manifest_name(dir, number);
                let r = (|| -> Result<LogWriter> {
                    let mut w = LogWriter::new(self.options.create_file(fs, &path, WriteHint::Manifest)?);
                    w.add_record(&snapshot)?;
                    w.add_record(&self.record)?;
                    w.sync()?;
                    set_current(fs, dir, number)?;
                    Ok(w)
                })();
                match r {
                    Ok(w) => self.written = Some((number, w)),
                    Err(e) => {
                        let _ = fs.remove(&path);
                        return Err(e);
                    }
                }
            }
        }
        Ok(())
    }
}

impl VersionSet {
    pub fn new(fs: Arc<dyn Fs>, dir: &str, options: &Options) -> VersionSet {
        VersionSet {
            fs,
            dir: dir.to_string(),
            current: Arc::new(Version::empty(options.num_levels)),
            options: options.clone(),
            next_file_number: 2,
            manifest_number: 0,
            last_sequence: 0,
            log_number: 0,
            prev_log_number: 0,
            compact_pointers: vec![Vec::new(); options.num_levels],
            manifest_tail: None,
            manifest: None,
            writing: false,
        }
    }

    pub fn current(&self) -> Arc<Version> {
        Arc::clone(&self.current)
    }

    /// The current version, borrowed (no reference count touched).
    pub fn current_ref(&self) -> &Version {
        &self.current
    }

    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }

    /// Makes sure `n` is never handed out again (a file found during recovery).
    pub fn mark_file_number_used(&mut self, n: u64) {
        self.next_file_number = self.next_file_number.max(n + 1);
    }

    /// Writes the MANIFEST of a new, empty database and points CURRENT at it.
    pub fn create_new(&mut self) -> Result<()> {
        let mut edit = VersionEdit {
            comparator: Some(COMPARATOR_NAME.into()),
            log_number: Some(0),
            next_file_number: Some(2),
            last_sequence: Some(0),
            ..Default::default()
        };
        self.manifest_number = 1;
        let path = filename::manifest_name(&self.dir, 1);
        let mut w = LogWriter::new(self.options.create_file(&*self.fs, &path, WriteHint::Manifest)?);
        edit.next_file_number = Some(2);
        w.add_record(&edit.encode())?;
        w.sync()?;
        set_current(&*self.fs, &self.dir, 1)?;
        self.next_file_number = 2;
        Ok(())
    }

    /// Reads CURRENT and the MANIFEST it names. Returns whether the MANIFEST should be rewritten
    /// (always: a fresh MANIFEST is written at the next `log_and_apply`, as LevelDB does without
    /// reuse_logs).
    pub fn recover(&mut self) -> Result<()> {
        let current_path = filename::current_name(&self.dir);
        let current = match storage::read_all(&*self.fs, &current_path) {
            Ok(c) => c,
            Err(e) if e.is_not_found() => {
                return Err(Error::NotFound { dir: self.dir.clone(), what: "CURRENT is missing".into() })
            }
            Err(e) => return Err(e.into()),
        };
        let name = std::str::from_utf8(&current)
            .ok()
            .and_then(|s| s.strip_suffix('\n'))
            .filter(|s| filename::parse(s).is_some_and(|k| matches!(k, filename::FileKind::Manifest(_))))
            .ok_or_else(|| Error::corruption(&current_path, 0, "CURRENT does not name a MANIFEST"))?
            .to_string();
        let manifest_path = filename::join(&self.dir, &name);
        let file = match self.fs.open(&manifest_path) {
            Ok(f) => f,
            Err(e) if e.is_not_found() => {
                return Err(Error::NotFound {
                    dir: self.dir.clone(),
                    what: format!("CURRENT names {name}, which is missing"),
                })
            }
            Err(e) => return Err(e.into()),
        };
        // A torn final record is an unacknowledged edit; damage before the end is corruption.
        let mut reader = LogReader::new(file, ReadMode::Paranoid);
        let mut builder = Builder::new(&self.current);
        let (mut log_number, mut prev_log, mut next_file, mut last_seq) = (None, None, None, None);
        while let Some(record) = reader.next_record()? {
            let offset = reader.last_record_offset();
            let edit = VersionEdit::decode(&record, &manifest_path, offset, self.options.num_levels)?;
            if let Some(c) = &edit.comparator {
                if c != COMPARATOR_NAME {
                    return Err(Error::ComparatorMismatch {
                        manifest: manifest_path,
                        found: c.clone(),
                        expected: COMPARATOR_NAME,
                    });
                }
            }
            builder.apply(&edit, &mut self.compact_pointers);
            log_number = edit.log_number.or(log_number);
            prev_log = edit.prev_log_number.or(prev_log);
            next_file = edit.next_file_number.or(next_file);
            last_seq = edit.last_sequence.or(last_seq);
        }
        self.manifest_tail = reader.tail().cloned();
        // Every edit is synced before it is acted on: a last record written whole and damaged
        // since may have been acted on (LevelDB fails here too); a cut one was never complete.
        if let Some(t) = reader.tail().filter(|t| !t.reason.is_incomplete_write()) {
            return Err(Error::corruption(
                &manifest_path,
                t.offset,
                format!("the MANIFEST's last record is damaged: {} ({} bytes)", t.reason, t.bytes),
            ));
        }
        let missing = |what: &str| Error::corruption(&manifest_path, 0, format!("no {what} entry in the MANIFEST"));
        self.next_file_number = next_file.ok_or_else(|| missing("next file number"))?;
        self.log_number = log_number.ok_or_else(|| missing("log number"))?;
        self.last_sequence = last_seq.ok_or_else(|| missing("last sequence"))?;
        self.prev_log_number = prev_log.unwrap_or(0);
        self.manifest_number = filename::parse(&name)
            .and_then(|k| if let filename::FileKind::Manifest(n) = k { Some(n) } else { None })
            .unwrap_or(0);
        self.mark_file_number_used(self.manifest_number);
        self.mark_file_number_used(self.log_number);
        self.current = Arc::new(builder.build());
        Ok(())
    }

    /// Appends `edit` to the MANIFEST (starting a new one with a full snapshot if needed), syncs it,
    /// and installs the resulting version: [`VersionSet::prepare`], [`ManifestWrite::write`] and
    /// [`VersionSet::commit`] in one go.
    pub fn log_and_apply(&mut self, edit: &mut VersionEdit) -> Result<()> {
        let mut write = self.prepare(edit)?;
        let r = write.write();
        self.commit(write, r)
    }

    /// Builds the version `edit` leads to and the MANIFEST record(s) for it, and takes the MANIFEST
    /// writer out until [`VersionSet::commit`]: the engine writes the record with its lock released
    /// (as LevelDB does), so writes go on during the sync. One edit at a time: a second `prepare`
    /// before the commit is refused.
    pub fn prepare(&mut self, edit: &mut VersionEdit) -> Result<ManifestWrite> {
        if self.writing {
            return Err(Error::EditInProgress);
        }
        if edit.log_number.is_none() {
            edit.log_number = Some(self.log_number);
        }
        if edit.prev_log_number.is_none() {
            edit.prev_log_number = Some(self.prev_log_number);
        }
        edit.next_file_number = Some(self.next_file_number);
        edit.last_sequence = Some(self.last_sequence);
        let mut pointers = self.compact_pointers.clone();
        let mut builder = Builder::new(&self.current);
        builder.apply(edit, &mut pointers);
        let version = builder.build();
        check_levels(&version)?;
        let target = match self.manifest.take() {
            Some(writer) => Target::Live { number: self.manifest_number, writer },
            None => {
                let number = self.new_file_number();
                edit.next_file_number = Some(self.next_file_number);
                Target::New { number, snapshot: self.snapshot_edit().encode() }
            }
        };
        self.writing = true;
        Ok(ManifestWrite {
            fs: Arc::clone(&self.fs),
            options: self.options.clone(),
            dir: self.dir.clone(),
            record: edit.encode(),
            target,
            written: None,
            version,
            pointers,
            log_number: edit.log_number.unwrap_or(self.log_number),
            prev_log_number: edit.prev_log_number.unwrap_or(self.prev_log_number),
        })
    }

    /// Installs a prepared edit whose write ended with `result` (an error from the write, or from
    /// anything the caller did with it, such as syncing the directory first). On success the new
    /// version is current; on failure nothing changes except that the next edit starts a new
    /// MANIFEST (the old one may end in a partial record).
    pub fn commit(&mut self, write: ManifestWrite, result: Result<()>) -> Result<()> {
        self.writing = false;
        let ManifestWrite { written, version, pointers, log_number, prev_log_number, .. } = write;
        let (number, writer) = match (result, written) {
            (Ok(()), Some(w)) => w,
            (Err(e), _) => return Err(e),
            (Ok(()), None) => return Err(Error::EditNotWritten),
        };
        self.manifest = Some(writer);
        self.manifest_number = number;
        self.current = Arc::new(version);
        self.compact_pointers = pointers;
        self.log_number = log_number;
        self.prev_log_number = prev_log_number;
        Ok(())
    }

    /// An edit that recreates the whole current state (the first record of a new MANIFEST).
    fn snapshot_edit(&self) -> VersionEdit {
        let mut e = VersionEdit { comparator: Some(COMPARATOR_NAME.into()), ..Default::default() };
        for (level, key) in self.compact_pointers.iter().enumerate() {
            if !key.is_empty() {
                e.compact_pointers.push((level, key.clone()));
            }
        }
        for (level, files) in self.current.files.iter().enumerate() {
            for f in files {
                e.add_file(level, f.number, f.size, f.smallest.clone(), f.largest.clone());
            }
        }
        e
    }

    /// Numbers of every file some version still uses.
    pub fn live_files(&self) -> BTreeSet<u64> {
        self.current.files.iter().flatten().map(|f| f.number).collect()
    }

    pub fn dir(&self) -> &str {
        &self.dir
    }
}

/// Refuses a version whose level 1 or deeper holds overlapping files: lookups there read one file
/// per level, so an overlap would hide data. Only a bug can cause one; installing it would turn the
/// bug into wrong answers, so the edit fails instead (and the engine stops writing).
fn check_levels(v: &Version) -> Result<()> {
    for (level, files) in v.files.iter().enumerate().skip(1) {
        for pair in files.windows(2) {
            if let [a, b] = pair {
                if compare_internal(&a.largest, &b.smallest) != std::cmp::Ordering::Less {
                    return Err(Error::LevelsOverlap { level, first: a.number, second: b.number });
                }
            }
        }
    }
    Ok(())
}

/// Replaces CURRENT with one naming MANIFEST-`number`, atomically and durably.
fn set_current(fs: &dyn Fs, dir: &str, number: u64) -> Result<()> {
    let tmp = filename::temp_name(dir, number);
    let contents = format!("MANIFEST-{number:06}\n");
    let r = storage::write_all(fs, &tmp, contents.as_bytes(), true)
        .and_then(|()| fs.rename(&tmp, &filename::current_name(dir)))
        .and_then(|()| fs.sync_dir(dir));
    if r.is_err() {
        let _ = fs.remove(&tmp);
    }
    Ok(r?)
}

/// Applies edits to a base version.
struct Builder {
    levels: Vec<Vec<Arc<FileMeta>>>,
}

impl Builder {
    fn new(base: &Version) -> Builder {
        Builder { levels: base.files.clone() }
    }

    fn apply(&mut self, edit: &VersionEdit, pointers: &mut [Vec<u8>]) {
        for (level, key) in &edit.compact_pointers {
            if let Some(p) = pointers.get_mut(*level) {
                *p = key.clone();
            }
        }
        for &(level, number) in &edit.deleted_files {
            if let Some(files) = self.levels.get_mut(level) {
                files.retain(|f| f.number != number);
            }
        }
        for f in &edit.new_files {
            if let Some(files) = self.levels.get_mut(f.level) {
                files.retain(|x| x.number != f.number);
                files.push(Arc::new(FileMeta::new(f.number, f.size, f.smallest.clone(), f.largest.clone())));
            }
        }
    }

    fn build(mut self) -> Version {
        for (level, files) in self.levels.iter_mut().enumerate() {
            if level == 0 {
                // Level 0 in flush order: lookups sort by number anyway, compactions take them all.
                files.sort_by_key(|f| f.number);
            } else {
                files.sort_by(|a, b| compare_internal(&a.smallest, &b.smallest));
            }
        }
        let mut v = Version::empty(self.levels.len());
        v.files = self.levels;
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueKind};

    fn new_set(fs: &Arc<dyn Fs>) -> VersionSet {
        fs.create_dir_all("db").unwrap();
        let mut vs = VersionSet::new(Arc::clone(fs), "db", &Options::default());
        vs.create_new().unwrap();
        vs
    }

    #[test]
    fn a_second_edit_before_the_first_is_committed_is_refused() {
        let fs: Arc<dyn Fs> = Arc::new(storage::MemFs::new());
        let mut vs = new_set(&fs);
        let first = vs.prepare(&mut VersionEdit::default()).unwrap();
        assert!(matches!(vs.prepare(&mut VersionEdit::default()), Err(Error::EditInProgress)));
        // Committing the first (with its write's error) frees the set for the next edit.
        let _ = vs.commit(first, Err(Error::Closed));
        vs.log_and_apply(&mut VersionEdit::default()).unwrap();
    }

    #[test]
    fn committing_an_unwritten_edit_is_refused() {
        let fs: Arc<dyn Fs> = Arc::new(storage::MemFs::new());
        let mut vs = new_set(&fs);
        let k = |s: &str| internal_key(s.as_bytes(), 1, ValueKind::Value);
        let mut edit = VersionEdit::default();
        edit.add_file(1, 10, 100, k("a"), k("f"));
        let write = vs.prepare(&mut edit).unwrap();
        assert!(matches!(vs.commit(write, Ok(())), Err(Error::EditNotWritten)));
        assert_eq!(vs.current().num_files(1), 0, "the unwritten edit was not installed");
    }

    #[test]
    fn a_manifest_of_another_comparator_is_refused() {
        let fs: Arc<dyn Fs> = Arc::new(storage::MemFs::new());
        let mut vs = new_set(&fs);
        let mut edit = VersionEdit { comparator: Some("other.Comparator".into()), ..Default::default() };
        vs.log_and_apply(&mut edit).unwrap();
        let mut reopened = VersionSet::new(Arc::clone(&fs), "db", &Options::default());
        match reopened.recover() {
            Err(Error::ComparatorMismatch { manifest, found, expected }) => {
                assert_eq!(manifest, filename::manifest_name("db", vs.manifest_number));
                assert_eq!((found.as_str(), expected), ("other.Comparator", COMPARATOR_NAME));
            }
            other => panic!("expected ComparatorMismatch, got {other:?}"),
        }
    }

    #[test]
    fn an_edit_that_would_overlap_files_in_a_deep_level_is_refused() {
        let fs: Arc<dyn Fs> = Arc::new(storage::MemFs::new());
        let mut vs = new_set(&fs);
        let k = |s: &str| internal_key(s.as_bytes(), 1, ValueKind::Value);
        let mut edit = VersionEdit::default();
        edit.add_file(1, 10, 100, k("a"), k("f"));
        edit.add_file(0, 11, 100, k("c"), k("d"));
        vs.log_and_apply(&mut edit).unwrap();
        let mut overlapping = VersionEdit::default();
        overlapping.add_file(1, 12, 100, k("e"), k("h"));
        let err = vs.log_and_apply(&mut overlapping).unwrap_err();
        assert!(matches!(err, Error::LevelsOverlap { level: 1, first: 10, second: 12 }), "{err:?}");
        assert_eq!(vs.current().num_files(1), 1, "the refused edit changed nothing");
        // Level 0 may overlap, and the set still takes edits.
        let mut l0 = VersionEdit::default();
        l0.add_file(0, 13, 100, k("c"), k("z"));
        vs.log_and_apply(&mut l0).unwrap();
        assert_eq!(vs.current().num_files(0), 2);
    }
}

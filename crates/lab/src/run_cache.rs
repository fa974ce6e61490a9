//! Finished runs kept in a result folder (`runs/`), so that an interrupted repro resumes where it
//! stopped: a run whose file is there is read back instead of run again.
//!
//! A run is deterministic given its [`RunSpec`] and the program that runs it, so a cached run is
//! only taken when both match: each file holds the spec as text (its `Debug` form without the
//! fields that are `None`, compared whole, not just through the file name's hash) and a digest of
//! the running executable. A rebuilt `flashkv` therefore starts afresh instead of mixing results
//! of two versions of the model. Leaving out the `None` fields keeps a spec's text when a build
//! adds an optional parameter: the runs of an older build stay readable by `--report-only`
//! (files written before that rule are found by their label and compared the same way).
//! The cached result is the run's `RunResult` as JSON (floats round-trip exactly), so a resumed
//! repro writes a byte-identical results.json; its wall-clock timing is the original run's.
//!
//! A run that failed leaves its error beside them (`<label>-<hash>.failed.json`), so that a report
//! rebuilt without running anything gives the failure as it was (a device full at 20 GiB) rather
//! than "not there". A resumed batch still runs it again: a failure may be the machine's (memory,
//! disk), not the model's, and the run's success replaces the record.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::CacheError;
use crate::result::{RunResult, Timing};
use crate::spec::RunSpec;

/// The folder of finished runs inside a result folder.
pub const DIR: &str = "runs";

/// A result folder's finished runs.
#[derive(Clone, Debug)]
pub struct RunCache {
    dir: PathBuf,
    /// Digest of the executable the runs were made by.
    build: String,
    /// Opened to read the runs of any build, to rebuild a report: nothing is run or stored.
    read_only: bool,
}

/// One cached run, as stored.
#[derive(Serialize, Deserialize)]
struct Entry {
    label: String,
    build: String,
    spec: String,
    result: RunResult,
    timing: Timing,
}

/// One failed run, as stored: what it failed with.
#[derive(Serialize, Deserialize)]
struct Failure {
    label: String,
    build: String,
    spec: String,
    error: String,
}

impl RunCache {
    /// The cache in `out/runs` (created on the first run stored). `fresh` deletes what it holds.
    pub fn open(out: &Path, fresh: bool) -> Result<RunCache, CacheError> {
        let dir = out.join(DIR);
        if fresh {
            match fs::remove_dir_all(&dir) {
                Err(e) if e.kind() != ErrorKind::NotFound => {
                    return Err(CacheError::Io { path: dir, what: "delete", source: e })
                }
                _ => {}
            }
        }
        Ok(RunCache { dir, build: build_digest()?, read_only: false })
    }

    /// The finished runs in `out/runs`, whatever build made them, for a report rebuilt without
    /// running anything (`flashkv repro --report-only`: a report's code changed after hours of
    /// runs). The spec and label must still match.
    pub fn finished_runs(out: &Path) -> Result<RunCache, CacheError> {
        Ok(RunCache { dir: out.join(DIR), build: build_digest()?, read_only: true })
    }

    /// Whether the cache only serves finished runs (see [`RunCache::finished_runs`]).
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The finished run of `spec` labelled `label`, if this build stored one.
    pub fn get(&self, label: &str, spec: &RunSpec) -> Result<Option<(RunResult, Timing)>, CacheError> {
        let spec = spec_text(spec);
        let path = self.path(label, &spec);
        let mut candidates = vec![path.clone()];
        if !path.is_file() {
            candidates.extend(self.files_labelled(label)?);
        }
        for path in candidates {
            let text = match fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(e) => return Err(CacheError::Io { path, what: "read", source: e }),
            };
            let entry: Entry = serde_json::from_str(&text).map_err(|source| CacheError::Corrupt { path, source })?;
            if (self.read_only || entry.build == self.build)
                && without_none(&entry.spec) == spec
                && entry.label == label
            {
                return Ok(Some((entry.result, entry.timing)));
            }
        }
        Ok(None)
    }

    /// The error a run of `spec` labelled `label` failed with, by any build, if it failed last
    /// (see the module's doc).
    pub fn failure(&self, label: &str, spec: &RunSpec) -> Result<Option<String>, CacheError> {
        let spec = spec_text(spec);
        let path = self.failure_path(label, &spec);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(CacheError::Io { path, what: "read", source: e }),
        };
        let f: Failure = serde_json::from_str(&text).map_err(|source| CacheError::Corrupt { path, source })?;
        Ok((f.spec == spec && f.label == label).then_some(f.error))
    }

    /// The files whose names start with `label`'s slug: where an older build's run of it may be.
    fn files_labelled(&self, label: &str) -> Result<Vec<PathBuf>, CacheError> {
        let prefix = format!("{}-", slug(label));
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(CacheError::Io { path: self.dir.clone(), what: "list", source: e }),
        };
        let mut files = Vec::new();
        for e in entries {
            let e = e.map_err(|e| CacheError::Io { path: self.dir.clone(), what: "list", source: e })?;
            let name = e.file_name().to_string_lossy().into_owned();
            if name.strip_prefix(&prefix).is_some_and(|rest| rest.len() == 21 && rest.ends_with(".json")) {
                files.push(e.path());
            }
        }
        files.sort();
        Ok(files)
    }

    /// Stores the finished run of `spec`, and forgets an earlier failure of it.
    pub fn put(&self, label: &str, spec: &RunSpec, result: &RunResult, timing: &Timing) -> Result<(), CacheError> {
        if self.read_only {
            return Ok(());
        }
        let entry = Entry {
            label: label.to_string(),
            build: self.build.clone(),
            spec: spec_text(spec),
            result: result.clone(),
            timing: timing.clone(),
        };
        let path = self.path(label, &entry.spec);
        let failed = self.failure_path(label, &entry.spec);
        self.write(&path, &entry)?;
        match fs::remove_file(&failed) {
            Err(e) if e.kind() != ErrorKind::NotFound => {
                Err(CacheError::Io { path: failed, what: "delete", source: e })
            }
            _ => Ok(()),
        }
    }

    /// Stores the error the run of `spec` failed with (replacing an earlier one's).
    pub fn put_failure(&self, label: &str, spec: &RunSpec, error: &str) -> Result<(), CacheError> {
        if self.read_only {
            return Ok(());
        }
        let failure = Failure {
            label: label.to_string(),
            build: self.build.clone(),
            spec: spec_text(spec),
            error: error.to_string(),
        };
        self.write(&self.failure_path(label, &failure.spec), &failure)
    }

    /// Writes `value` at `path` whole, then renames it into place, so that an interrupted write
    /// leaves no half file behind.
    fn write(&self, path: &Path, value: &impl Serialize) -> Result<(), CacheError> {
        fs::create_dir_all(&self.dir).map_err(|e| CacheError::Io {
            path: self.dir.clone(),
            what: "create",
            source: e,
        })?;
        let tmp = path.with_extension("tmp");
        let text =
            serde_json::to_string(value).map_err(|source| CacheError::Corrupt { path: path.to_path_buf(), source })?;
        fs::write(&tmp, text).map_err(|e| CacheError::Io { path: tmp.clone(), what: "write", source: e })?;
        fs::rename(&tmp, path).map_err(|e| CacheError::Io {
            path: path.to_path_buf(),
            what: "rename into place",
            source: e,
        })
    }

    /// `runs/<label>-<hash of the spec's text>.json`, the label kept readable.
    fn path(&self, label: &str, spec: &str) -> PathBuf {
        let hash = fnv1a(format!("{label}\n{spec}").as_bytes());
        self.dir.join(format!("{}-{hash:016x}.json", slug(label)))
    }

    /// `runs/<label>-<hash of the spec's text>.failed.json`: a name an older build's label lookup
    /// passes over (see `files_labelled`).
    fn failure_path(&self, label: &str, spec: &str) -> PathBuf {
        self.path(label, spec).with_extension("failed.json")
    }
}

/// A label as a file name: ASCII letters, digits, `-` and `.` kept, anything else `_`.
fn slug(label: &str) -> String {
    label.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

/// A spec as the cache compares it: its `Debug` form without the fields that are `None`.
fn spec_text(spec: &RunSpec) -> String {
    without_none(&format!("{spec:?}"))
}

/// `text` (a `Debug` form) without its `name: None` fields: `A { x: None, y: 1, z: None }` reads
/// `A { y: 1 }`, and `A { x: None }` reads `A {}`.
fn without_none(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(": None") {
        let after = &rest[at + ": None".len()..];
        let name_start = rest[..at].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let before = &rest[..name_start];
        let ends_field = after.starts_with(", ") || after.starts_with(" }");
        let behind = if before.is_empty() { out.as_str() } else { before };
        let starts_field = behind.ends_with("{ ") || behind.ends_with(", ");
        if name_start == at || !ends_field || !starts_field {
            out.push_str(&rest[..at + ": None".len()]);
            rest = after;
            continue;
        }
        out.push_str(before);
        rest = match after.strip_prefix(", ") {
            Some(next) => next,
            None => {
                // The struct's last field: drop the separator written before it.
                let trimmed = out.trim_end_matches(", ").len();
                out.truncate(trimmed);
                if out.ends_with("{ ") {
                    out.truncate(out.len() - 1);
                    &after[1..]
                } else {
                    after
                }
            }
        };
    }
    out.push_str(rest);
    out
}

/// A digest of the running executable: a rebuilt binary may model differently.
fn build_digest() -> Result<String, CacheError> {
    let exe = std::env::current_exe().map_err(|e| CacheError::Io {
        path: PathBuf::from("the running executable"),
        what: "locate",
        source: e,
    })?;
    let bytes = fs::read(&exe).map_err(|e| CacheError::Io { path: exe, what: "read", source: e })?;
    Ok(format!("{:016x}-{}", fnv1a_words(&bytes), bytes.len()))
}

/// FNV-1a's steps over 8-byte words, then the last bytes one by one: a binary of tens of MB is
/// hashed on every start, and a byte at a time took a tenth of a second of it.
fn fnv1a_words(bytes: &[u8]) -> u64 {
    let words = bytes.chunks_exact(8);
    let tail = words.remainder();
    let h = words.fold(0xcbf2_9ce4_8422_2325u64, |h, w| {
        (h ^ u64::from_le_bytes(w.try_into().expect("8 bytes"))).wrapping_mul(0x0000_0100_0000_01b3)
    });
    tail.iter().fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// 64-bit FNV-1a.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn none_fields_are_left_out_wherever_they_stand() {
        assert_eq!(without_none("A { x: None, y: 1, z: None }"), "A { y: 1 }");
        assert_eq!(without_none("A { x: None }"), "A {}");
        assert_eq!(without_none("A { w: None, x: None, y: 1, z: None }"), "A { y: 1 }");
        assert_eq!(without_none("A { x: None, y: None }"), "A {}");
        assert_eq!(
            without_none("A { b: B { p: None, q: Some(2) }, c: None, d: [None, None] }"),
            "A { b: B { q: Some(2) }, d: [None, None] }"
        );
        assert_eq!(without_none("A { y: Some(None), z: \"x: None\" }"), "A { y: Some(None), z: \"x: None\" }");
        assert_eq!(without_none("A { y: 1 }"), "A { y: 1 }");
    }
}

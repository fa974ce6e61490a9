//! What can go wrong writing or rebuilding a result folder. Every error names the file (or the
//! figure) and what was being done with it, so its message alone tells the user where to look.

use std::fmt;
use std::path::{Path, PathBuf};

/// A file-system operation of the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    CreateDir,
    Read,
    Write,
    Remove,
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Op::CreateDir => "create directory",
            Op::Read => "read",
            Op::Write => "write",
            Op::Remove => "remove the old file",
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or directory could not be created, read, written or removed.
    #[error("{}: cannot {op}: {source}", .path.display())]
    Io {
        op: Op,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The folder given to `rebuild` has no results.json.
    #[error("{}: not found (a result folder holds the results.json that `flashkv run` writes)", .path.display())]
    NoResults { path: PathBuf },

    /// Text that is not a result set's JSON; `path` is the file it came from, if any.
    #[error("{}{what} at line {line}, column {column}: {message}", at(.path))]
    Json { path: Option<PathBuf>, what: &'static str, line: usize, column: usize, message: String },

    /// serde_json could not encode the set (not expected: the set is plain data).
    #[error("cannot encode the result set as JSON: {0}")]
    Encode(#[source] serde_json::Error),

    /// A result set of a later schema version than this build reads.
    #[error("{}schema version {version}: this flashkv reads result sets up to version {known}; a newer flashkv wrote it", at(.path))]
    Schema { path: Option<PathBuf>, version: u32, known: u32 },

    /// A figure id that cannot be a file name; `path` is the results.json it came from, if any.
    #[error(
        "{}figure {index} ({title:?}): id {id:?} is not a plain file name (use letters, digits, '-', '_', '.')",
        at(.path)
    )]
    FigureId { path: Option<PathBuf>, index: usize, title: String, id: String },

    /// Two figures with one id would write one file.
    #[error("{}figure {index}: id {id:?} is used by an earlier figure too", at(.path))]
    DuplicateFigureId { path: Option<PathBuf>, index: usize, id: String },

    /// A chart could not be drawn (`format` is "SVG" or "PNG").
    #[error("figure {figure:?}: cannot draw the {format} chart: {message}")]
    Chart { figure: String, format: &'static str, message: String },

    /// A markdown file without the block a generated table goes into.
    #[error(
        "{}: no block for {key:?}: put the lines `<!-- {key} -->` and `<!-- end {key} -->` where it goes",
        .path.display()
    )]
    NoBlock { path: PathBuf, key: String },

    /// The output folder's path is a file (or something else that is not a folder).
    #[error("{}: exists and is not a folder; a result folder goes there (choose another --out)", .dir.display())]
    NotAFolder { dir: PathBuf },

    /// The output folder cannot be created, or a file cannot be created in it (a read-only
    /// folder or file system, a parent that is a file, no permission).
    #[error("{}: cannot write a result folder there: {source} (choose another --out)", .dir.display())]
    NotWritable {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The output folder holds another experiment's results; writing would mix the two.
    #[error(
        "{}: holds the results of {existing:?}, not of {new:?}; write to another folder (--out) \
         or delete this one first",
        .dir.display()
    )]
    OtherResults { dir: PathBuf, existing: String, new: String },

    /// The output folder holds a results.json that is not a result set (so it is not ours to replace).
    #[error(
        "{}: its results.json is not a result set ({reason}); write to another folder (--out) \
         or delete this one first",
        .dir.display()
    )]
    ForeignResults { dir: PathBuf, reason: String },
}

impl ReportError {
    pub(crate) fn io(op: Op, path: &Path, source: std::io::Error) -> ReportError {
        ReportError::Io { op, path: path.to_path_buf(), source }
    }

    /// The same error, said of the file `path` (for problems found in a results.json).
    pub(crate) fn in_file(self, file: &Path) -> ReportError {
        let file = Some(file.to_path_buf());
        match self {
            ReportError::Json { what, line, column, message, .. } => {
                ReportError::Json { path: file, what, line, column, message }
            }
            ReportError::FigureId { index, title, id, .. } => ReportError::FigureId { path: file, index, title, id },
            ReportError::Schema { version, known, .. } => ReportError::Schema { path: file, version, known },
            ReportError::DuplicateFigureId { index, id, .. } => {
                ReportError::DuplicateFigureId { path: file, index, id }
            }
            other => other,
        }
    }
}

/// "path: " before a message about a file's contents, or nothing.
fn at(path: &Option<PathBuf>) -> String {
    path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default()
}

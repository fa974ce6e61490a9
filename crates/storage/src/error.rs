//! The error type of every file-system operation.
//!
//! Contract: every variant names the operation and the path it failed on (and the offset, length or block size
//! where those matter), so an error read in a log says what and where without a backtrace. Implementations map
//! host errors onto the specific variants (`ENOENT` -> [`FsError::NotFound`], `ENOSPC` -> [`FsError::NoSpace`], ...)
//! and keep [`FsError::Io`] for the rest.

use crate::io_class::IoClass;

/// `std::result::Result` with [`FsError`].
pub type Result<T> = std::result::Result<T, FsError>;

/// What went wrong in a file-system operation, and where.
#[derive(Debug, thiserror::Error)]
pub enum FsError {
    /// The file or directory does not exist (or its parent directory does not).
    #[error("{op}: {path}: not found")]
    NotFound { op: &'static str, path: String },

    /// The path already names something that the operation would have created.
    #[error("{op}: {path}: already exists")]
    AlreadyExists { op: &'static str, path: String },

    /// The path is not a valid relative '/'-separated name (see [`crate::path`]).
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },

    /// The path names a directory where a file was expected, or the other way round.
    #[error("{op}: {path}: is not a {expected}")]
    WrongKind { op: &'static str, path: String, expected: &'static str },

    /// `remove_dir` of a directory that still has entries.
    #[error("{op}: {path}: directory not empty")]
    DirNotEmpty { op: &'static str, path: String },

    /// An offset or length that must be a multiple of the block size is not.
    #[error("{op}: {path}: {what} {value} is not a multiple of the block size {block_size}")]
    Misaligned { op: &'static str, path: String, what: &'static str, value: u64, block_size: u64 },

    /// A range that must lie inside a file (or start no later than its end) does not.
    #[error("{op}: {path}: range {offset}+{len} is outside the file of {size} bytes")]
    OutOfRange { op: &'static str, path: String, offset: u64, len: u64, size: u64 },

    /// The file system cannot do this (for example share extents on ext4 or tmpfs).
    #[error("{op}: {path}: unsupported: {reason}")]
    Unsupported { op: &'static str, path: String, reason: String },

    /// The device or the file system is full.
    #[error("{op}: {path}: no space left on device ({detail})")]
    NoSpace { op: &'static str, path: String, detail: String },

    /// A read of an exact length found the end of the file first.
    #[error("{op}: {path}: unexpected end of file at offset {offset}: wanted {wanted} bytes, got {got}")]
    UnexpectedEof { op: &'static str, path: String, offset: u64, wanted: usize, got: usize },

    /// Another holder has the lock file.
    #[error("lock: {path}: already locked")]
    Locked { path: String },

    /// A handle opened before a simulated crash was used after it (the process that owned it is gone).
    #[error("{op}: {path}: handle is from before a simulated crash")]
    Crashed { op: &'static str, path: String },

    /// A fault that [`crate::FaultFs`] injected on purpose.
    #[error("{op}: {path}: injected {class} fault")]
    Injected { class: IoClass, op: &'static str, path: String },

    /// Options that the file system (or the device under it) cannot honour; `field` names the option.
    #[error("invalid options: {field}: {reason}")]
    InvalidOptions { field: &'static str, reason: String },

    /// Any other error from the host file system.
    #[error("{op}: {path}: {source}")]
    Io {
        op: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl FsError {
    /// Maps a host I/O error onto the most specific variant.
    pub fn from_io(op: &'static str, path: &str, err: std::io::Error) -> FsError {
        use std::io::ErrorKind;
        let path = path.to_string();
        match err.kind() {
            ErrorKind::NotFound => FsError::NotFound { op, path },
            ErrorKind::AlreadyExists => FsError::AlreadyExists { op, path },
            _ => match err.raw_os_error() {
                Some(code) if code == libc::ENOSPC || code == libc::EDQUOT => {
                    FsError::NoSpace { op, path, detail: err.to_string() }
                }
                Some(code) if code == libc::ENOTDIR => FsError::WrongKind { op, path, expected: "directory" },
                Some(code) if code == libc::EISDIR => FsError::WrongKind { op, path, expected: "file" },
                Some(code) if code == libc::ENOTEMPTY => FsError::DirNotEmpty { op, path },
                _ => FsError::Io { op, path, source: err },
            },
        }
    }

    /// True for [`FsError::NotFound`].
    pub fn is_not_found(&self) -> bool {
        matches!(self, FsError::NotFound { .. })
    }

    /// True for [`FsError::Unsupported`]: the caller may fall back (for example copy instead of clone).
    pub fn is_unsupported(&self) -> bool {
        matches!(self, FsError::Unsupported { .. })
    }

    /// True for [`FsError::NoSpace`].
    pub fn is_no_space(&self) -> bool {
        matches!(self, FsError::NoSpace { .. })
    }

    /// True for [`FsError::Injected`].
    pub fn is_injected(&self) -> bool {
        matches!(self, FsError::Injected { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_map_to_specific_variants() {
        let e = FsError::from_io("open", "a/b", std::io::Error::from_raw_os_error(libc::ENOENT));
        assert!(e.is_not_found());
        assert_eq!(e.to_string(), "open: a/b: not found");
        let e = FsError::from_io("append", "x", std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(e.is_no_space());
        let e = FsError::from_io("read", "x", std::io::Error::from_raw_os_error(libc::EIO));
        assert!(matches!(e, FsError::Io { op: "read", .. }));
    }
}

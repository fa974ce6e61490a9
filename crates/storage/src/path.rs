//! Names of files and directories inside an [`crate::Fs`].
//!
//! Contract: a path is a '/'-separated string relative to the root of the file system it is given to
//! (`PosixFs::new(root)` maps `"db/000005.sst"` to `root/db/000005.sst`). A valid path is not empty, is not
//! absolute, has no empty component (so no `"a//b"` and no trailing `'/'`), no `"."` or `".."` component and no NUL
//! byte. Directory arguments also accept `""`, meaning the root. A bare file name (the `name` of [`join`]) must not
//! contain a separator. Every implementation validates with these functions, so the same name is accepted or
//! rejected everywhere.

use crate::error::{FsError, Result};

/// Checks a path that names a file or directory (not the root).
pub fn validate(path: &str) -> Result<()> {
    let invalid = |reason| Err(FsError::InvalidPath { path: path.to_string(), reason });
    if path.is_empty() {
        return invalid("empty path");
    }
    if path.starts_with('/') {
        return invalid("absolute path; paths are relative to the file system root");
    }
    if path.contains('\0') {
        return invalid("contains a NUL byte");
    }
    for component in path.split('/') {
        match component {
            "" => return invalid("empty component ('//' or a trailing '/')"),
            "." | ".." => return invalid("'.' and '..' components are not allowed"),
            _ => {}
        }
    }
    Ok(())
}

/// Checks a path that names a directory: `""` (the root) or a valid path.
pub fn validate_dir(dir: &str) -> Result<()> {
    if dir.is_empty() {
        Ok(())
    } else {
        validate(dir)
    }
}

/// Checks a bare file name: a valid path with no separator.
pub fn validate_name(name: &str) -> Result<()> {
    if name.contains('/') {
        return Err(FsError::InvalidPath {
            path: name.to_string(),
            reason: "a file name must not contain the separator '/'",
        });
    }
    validate(name)
}

/// `dir` + `'/'` + `name`, where `dir` may be `""` (the root) and `name` must be a bare file name.
pub fn join(dir: &str, name: &str) -> Result<String> {
    validate_dir(dir)?;
    validate_name(name)?;
    if dir.is_empty() {
        Ok(name.to_string())
    } else {
        Ok(format!("{dir}/{name}"))
    }
}

/// The directory that holds `path` (`""` for a top-level entry). `path` should be valid.
pub fn parent(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[..i],
        None => "",
    }
}

/// The last component of `path`. `path` should be valid.
pub fn file_name(path: &str) -> &str {
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_relative_paths() {
        for p in ["a", "db/000001.log", "x/y/z", "LOCK", ".hidden", "a..b"] {
            assert!(validate(p).is_ok(), "{p}");
        }
        assert!(validate_dir("").is_ok());
    }

    #[test]
    fn rejects_bad_paths() {
        for p in ["", "/abs", "a//b", "a/", "./a", "a/../b", "..", "a\0b"] {
            let err = validate(p).expect_err(p);
            assert!(matches!(err, FsError::InvalidPath { ref path, .. } if path == p), "{p}: {err}");
        }
    }

    #[test]
    fn names_reject_separators() {
        assert!(validate_name("000001.sst").is_ok());
        assert!(matches!(validate_name("a/b"), Err(FsError::InvalidPath { .. })));
        assert!(join("db", "a/b").is_err());
        assert_eq!(join("db", "CURRENT").unwrap(), "db/CURRENT");
        assert_eq!(join("", "CURRENT").unwrap(), "CURRENT");
    }

    #[test]
    fn parent_and_file_name() {
        assert_eq!(parent("a/b/c"), "a/b");
        assert_eq!(parent("c"), "");
        assert_eq!(file_name("a/b/c"), "c");
        assert_eq!(file_name("c"), "c");
    }
}

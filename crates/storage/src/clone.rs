//! Range cloning: the argument checks every implementation shares, and the fallback that copies where the file
//! system cannot share extents.
//!
//! Contract: [`clone_or_copy`] first asks [`Fs::clone_range`]; on `Unsupported` it copies the bytes by appending
//! them to `dst` (possible only when `dst_offset` is the end of `dst`, which is how the engine uses it), and the
//! returned [`CloneOutcome`] counts cloned and copied bytes separately, so a caller (and a report) can tell a
//! remapped block from a rewritten one. Any other error is returned as is.

use crate::error::{FsError, Result};
use crate::fs::{CloneOutcome, Fs, RandomAccessFile};

/// Size of the chunks the copy fallback reads and appends, so a large range never sits in memory whole.
const COPY_CHUNK: u64 = 1 << 20;

/// Clones `len` bytes of `src` at `src_offset` into `dst` at `dst_offset`, or copies them (appending) where the
/// file system answers `Unsupported`; see the module contract.
pub fn clone_or_copy(
    fs: &dyn Fs,
    src: &str,
    src_offset: u64,
    dst: &str,
    dst_offset: u64,
    len: u64,
) -> Result<CloneOutcome> {
    match fs.clone_range(src, src_offset, dst, dst_offset, len) {
        Ok(()) => Ok(CloneOutcome::cloned(len)),
        Err(err) if err.is_unsupported() => {
            // Files are append-only, so the copy can only land at the end of `dst`.
            if fs.file_size(dst)? != dst_offset {
                return Err(err);
            }
            let reader = fs.open(src)?;
            let mut writer = fs.open_append(dst)?;
            copy_range(reader.as_ref(), src_offset, len, &mut |chunk| writer.append(chunk))?;
            writer.flush()?;
            Ok(CloneOutcome::copied(len))
        }
        Err(err) => Err(err),
    }
}

/// Reads `len` bytes of `reader` at `offset` in chunks and hands each to `sink`. The range must lie inside the
/// file (`UnexpectedEof` otherwise).
pub fn copy_range(
    reader: &dyn RandomAccessFile,
    offset: u64,
    len: u64,
    sink: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let mut buf = vec![0u8; COPY_CHUNK.min(len) as usize];
    let mut done = 0u64;
    while done < len {
        let n = COPY_CHUNK.min(len - done) as usize;
        reader.read_exact_at(offset + done, &mut buf[..n])?;
        sink(&buf[..n])?;
        done += n as u64;
    }
    Ok(())
}

/// Checks that the clone's offsets and length are multiples of `block_size`, naming the first that is not.
pub fn check_alignment(
    op: &'static str,
    block_size: u64,
    src: &str,
    src_offset: u64,
    dst: &str,
    dst_offset: u64,
    len: u64,
) -> Result<()> {
    let checks = [(src, "source offset", src_offset), (dst, "destination offset", dst_offset), (src, "length", len)];
    for (path, what, value) in checks {
        if block_size == 0 || value % block_size != 0 {
            return Err(FsError::Misaligned { op, path: path.to_string(), what, value, block_size });
        }
    }
    Ok(())
}

/// Checks that the source range lies inside `src` (of `src_size` bytes), that `dst_offset` is not past the end
/// of `dst` (of `dst_size` bytes), and that the files differ.
#[allow(clippy::too_many_arguments)]
pub fn check_ranges(
    op: &'static str,
    src: &str,
    src_offset: u64,
    src_size: u64,
    dst: &str,
    dst_offset: u64,
    dst_size: u64,
    len: u64,
) -> Result<()> {
    if src == dst {
        return Err(FsError::InvalidPath {
            path: src.to_string(),
            reason: "clone source and destination are the same file",
        });
    }
    let src_end = src_offset.checked_add(len);
    if !matches!(src_end, Some(end) if end <= src_size) {
        return Err(FsError::OutOfRange { op, path: src.to_string(), offset: src_offset, len, size: src_size });
    }
    if dst_offset > dst_size || dst_offset.checked_add(len).is_none() {
        return Err(FsError::OutOfRange { op, path: dst.to_string(), offset: dst_offset, len, size: dst_size });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_names_the_bad_argument() {
        assert!(check_alignment("clone_range", 4096, "a", 8192, "b", 4096, 4096).is_ok());
        let err = check_alignment("clone_range", 4096, "a", 0, "b", 100, 4096).unwrap_err();
        assert!(
            matches!(err, FsError::Misaligned { what: "destination offset", value: 100, ref path, .. } if path == "b")
        );
        let err = check_alignment("clone_range", 4096, "a", 0, "b", 0, 10).unwrap_err();
        assert!(matches!(err, FsError::Misaligned { what: "length", .. }));
    }

    #[test]
    fn ranges_must_fit() {
        assert!(check_ranges("c", "a", 0, 8192, "b", 0, 0, 8192).is_ok());
        assert!(matches!(check_ranges("c", "a", 4096, 8192, "b", 0, 0, 8192), Err(FsError::OutOfRange { .. })));
        assert!(matches!(check_ranges("c", "a", 0, 8192, "b", 4096, 0, 4096), Err(FsError::OutOfRange { .. })));
        assert!(matches!(check_ranges("c", "a", 0, 8192, "a", 0, 0, 4096), Err(FsError::InvalidPath { .. })));
    }

    #[test]
    fn outcome_adds() {
        let mut o = CloneOutcome::cloned(4096);
        o.add(CloneOutcome::copied(8192));
        assert_eq!(o, CloneOutcome { cloned_bytes: 4096, copied_bytes: 8192 });
        assert_eq!(o.total(), 12288);
    }
}

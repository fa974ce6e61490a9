//! FICLONERANGE: the Linux ioctl that makes a range of one file share the extents of a range of another.
//!
//! Contract: `Shared::clone_files` either shares the extents or returns `Unsupported` with the reason (and remembers a
//! file system that refuses for good), or another error for a real failure; it never copies. Callers check
//! alignment and ranges first, so an `EINVAL` here means the file system refused, not that we asked wrongly.

use std::fs::File;
#[cfg(target_os = "linux")]
use std::os::unix::io::AsRawFd;
use std::sync::atomic::Ordering;

use super::{Shared, CLONE_NO, CLONE_YES};
use crate::error::{FsError, Result};

/// `struct file_clone_range` from <linux/fs.h>.
#[cfg(target_os = "linux")]
#[repr(C)]
struct FileCloneRange {
    src_fd: i64,
    src_offset: u64,
    src_length: u64,
    dest_offset: u64,
}

/// `_IOW(0x94, 13, struct file_clone_range)`.
#[cfg(target_os = "linux")]
const FICLONERANGE: u64 = 0x4020_940d;

#[cfg(target_os = "linux")]
fn ficlonerange(src: &File, src_offset: u64, dst: &File, dst_offset: u64, len: u64) -> std::io::Result<()> {
    let arg =
        FileCloneRange { src_fd: i64::from(src.as_raw_fd()), src_offset, src_length: len, dest_offset: dst_offset };
    // SAFETY: both descriptors are open for the duration of the call and `arg` matches the kernel's layout.
    let rc = unsafe { libc::ioctl(dst.as_raw_fd(), FICLONERANGE as _, &arg as *const FileCloneRange) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn ficlonerange(_src: &File, _so: u64, _dst: &File, _do: u64, _len: u64) -> std::io::Result<()> {
    Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP))
}

/// A file open at an offset: one side of a clone.
pub(super) type At<'a> = (&'a File, u64);

impl Shared {
    /// Runs FICLONERANGE (unless clones are known to be refused) and maps a refusal to `Unsupported`.
    pub(super) fn clone_files(&self, op: &'static str, path: &str, src: At, dst: At, len: u64) -> Result<()> {
        if self.clone_state.load(Ordering::Relaxed) == CLONE_NO {
            return Err(unsupported(
                op,
                path,
                "the file system does not share extents (an earlier FICLONERANGE was refused as unsupported)".into(),
            ));
        }
        let Err(err) = ficlonerange(src.0, src.1, dst.0, dst.1, len) else {
            self.clone_state.store(CLONE_YES, Ordering::Relaxed);
            return Ok(());
        };
        let code = err.raw_os_error().unwrap_or(0);
        if code == libc::EOPNOTSUPP || code == libc::ENOTTY || code == libc::ENOSYS {
            self.clone_state.store(CLONE_NO, Ordering::Relaxed);
            return Err(unsupported(op, path, format!("the file system does not share extents ({err})")));
        }
        if code == libc::EXDEV {
            return Err(unsupported(op, path, format!("source and destination are on different file systems ({err})")));
        }
        if code == libc::EINVAL {
            return Err(unsupported(op, path, format!("FICLONERANGE refused the range ({err})")));
        }
        Err(FsError::from_io(op, path, err))
    }
}

fn unsupported(op: &'static str, path: &str, reason: String) -> FsError {
    FsError::Unsupported { op, path: path.to_string(), reason }
}

//! A real block device under a run (`fs = "xfs-loop"`): a fresh reflink XFS image on a loop
//! device in the system's temporary directory, the engine on a host directory in it, and the bytes
//! the kernel saw written to the device (`/sys/block/loopN/stat`) from the mount on. Every run
//! gets its own file system, so every run starts from the same empty device; the mount, the loop
//! device and the image go when the run ends. Needs root, xfsprogs and loop devices.
//!
//! The work folder (image and mount point) is made by the `tempfile` crate: a new folder of a
//! random name, created exclusively with mode 0700, never an existing folder or a link someone
//! else put there. It runs as root, and formats and truncates a file in that folder: a name
//! anyone could predict (the process id and a counter, as before) let another local user plant a
//! link there and have root format a file of their choosing.

use std::path::PathBuf;

use storage::loop_xfs::LoopXfs;
use tempfile::TempDir;

use crate::error::{LabError, Result};

/// The image's size when the device specification gives no capacity (XFS needs about 300 MB).
pub const DEFAULT_IMAGE: u64 = 1 << 30;

/// A mounted reflink XFS on a loop device, and the device's count of written bytes at the mount.
pub struct LoopDevice {
    xfs: Option<LoopXfs>,
    /// Removed with its contents when dropped, after the file system is unmounted (see `Drop`).
    work: TempDir,
    at_mount: u64,
}

/// A new work folder in the system's temporary directory (see the module's contract).
fn work_dir() -> Result<TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let temp = std::env::temp_dir();
    tempfile::Builder::new()
        .prefix("flashkv-xfs-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(&temp)
        .map_err(LabError::io(temp, "create a work folder in"))
}

impl LoopDevice {
    /// A fresh file system of `image_bytes` (`DeviceSpec::xfs_image_bytes`: XFS needs about 300 MB).
    pub fn new(image_bytes: u64) -> Result<LoopDevice> {
        if let Some(why) = LoopXfs::unavailable() {
            return Err(LabError::Unavailable(format!("fs xfs-loop needs a loop-mounted XFS: {why}")));
        }
        // From here on, Drop unmounts and removes what exists.
        let mut dev = LoopDevice { xfs: None, work: work_dir()?, at_mount: 0 };
        let xfs = LoopXfs::new(dev.work.path(), image_bytes).map_err(|e| LabError::Unavailable(e.to_string()))?;
        dev.xfs = Some(xfs);
        dev.at_mount = dev.bytes_written()?;
        Ok(dev)
    }

    /// Where the engine's directory goes.
    pub fn db_dir(&self) -> PathBuf {
        self.xfs().mount_point().join("db")
    }

    fn xfs(&self) -> &LoopXfs {
        self.xfs.as_ref().expect("a LoopDevice is mounted from new() to drop")
    }

    /// Bytes the device took since the mount, once the file system's dirty data is on it.
    pub fn written_since_mount(&self) -> Result<u64> {
        Ok(self.bytes_written()? - self.at_mount)
    }

    fn bytes_written(&self) -> Result<u64> {
        self.xfs().syncfs().map_err(|e| LabError::Unavailable(e.to_string()))?;
        self.xfs().bytes_written().map_err(|e| LabError::Unavailable(e.to_string()))
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        // Unmounted and detached first (LoopXfs's own Drop); the work folder and the image go
        // after this, when `work` is dropped.
        self.xfs = None;
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// Links planted at the names the work folder used to have (`<temp>/flashkv-xfs-<pid>-<n>`)
    /// are not used: the folder is a new one, a real folder of mode 0700, and nothing is written
    /// through a link. (No root needed: only the folder's choice is checked, not the mount.)
    #[test]
    fn the_work_folder_is_new_and_no_planted_link_is_followed() {
        let victim = tempfile::tempdir().unwrap();
        let temp = std::env::temp_dir();
        // Removed however the test ends: the links are in the shared temporary folder.
        struct Planted(Vec<PathBuf>);
        impl Drop for Planted {
            fn drop(&mut self) {
                for p in &self.0 {
                    let _ = std::fs::remove_file(p);
                }
            }
        }
        let planted = Planted((0..16).map(|n| temp.join(format!("flashkv-xfs-{}-{n}", std::process::id()))).collect());
        for p in &planted.0 {
            let _ = std::fs::remove_file(p);
            std::os::unix::fs::symlink(victim.path(), p).unwrap();
        }
        let works: Vec<TempDir> = (0..4).map(|_| work_dir().unwrap()).collect();
        for w in &works {
            let path = w.path();
            assert!(!planted.0.iter().any(|p| p == path), "{} is a planted link", path.display());
            let meta = std::fs::symlink_metadata(path).unwrap();
            assert!(meta.is_dir() && !meta.file_type().is_symlink(), "{}", path.display());
            assert_eq!(meta.permissions().mode() & 0o777, 0o700, "{}", path.display());
            assert!(path.file_name().unwrap().to_string_lossy().starts_with("flashkv-xfs-"));
            std::fs::write(path.join("xfs.img"), b"image").unwrap();
        }
        assert_eq!(std::fs::read_dir(victim.path()).unwrap().count(), 0, "written through a planted link");
        let paths: Vec<PathBuf> = works.iter().map(|w| w.path().to_path_buf()).collect();
        drop(works);
        assert!(paths.iter().all(|p| !p.exists()), "work folders are removed with the device");
    }
}

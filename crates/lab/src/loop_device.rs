//! A real block device under a run (`fs = "xfs-loop"`): a fresh reflink XFS image on a loop
//! device in the system's temporary directory, the engine on a host directory in it, and the bytes
//! the kernel saw written to the device (`/sys/block/loopN/stat`) from the mount on. Every run
//! gets its own file system, so every run starts from the same empty device; the mount, the loop
//! device and the image go when the run ends. Needs root, xfsprogs and loop devices.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use storage::loop_xfs::LoopXfs;

use crate::error::{LabError, Result};

/// The image's size when the device specification gives no capacity (XFS needs about 300 MB).
pub const DEFAULT_IMAGE: u64 = 1 << 30;

/// A mounted reflink XFS on a loop device, and the device's count of written bytes at the mount.
pub struct LoopDevice {
    xfs: Option<LoopXfs>,
    work: PathBuf,
    at_mount: u64,
}

impl LoopDevice {
    /// A fresh file system of `image_bytes` (`DeviceSpec::xfs_image_bytes`: XFS needs about 300 MB).
    pub fn new(image_bytes: u64) -> Result<LoopDevice> {
        if let Some(why) = LoopXfs::unavailable() {
            return Err(LabError::Unavailable(format!("fs xfs-loop needs a loop-mounted XFS: {why}")));
        }
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let work = std::env::temp_dir().join(format!("flashkv-xfs-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&work).map_err(LabError::io(&work, "create"))?;
        // From here on, Drop unmounts and removes what exists.
        let mut dev = LoopDevice { xfs: None, work, at_mount: 0 };
        let xfs = LoopXfs::new(&dev.work, image_bytes).map_err(LabError::Unavailable)?;
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
        self.xfs().syncfs().map_err(LabError::Unavailable)?;
        self.xfs().bytes_written().map_err(LabError::Unavailable)
    }
}

impl Drop for LoopDevice {
    fn drop(&mut self) {
        // Unmounted and detached first (LoopXfs's own Drop), then the image goes.
        self.xfs = None;
        let _ = std::fs::remove_dir_all(&self.work);
    }
}

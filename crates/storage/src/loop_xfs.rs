//! A real reflink-capable file system for tests and measurements: an XFS image (`mkfs.xfs -m
//! reflink=1`) on a loop device, mounted in a work directory, with the kernel's block statistics of
//! the loop device (`/sys/block/loopN/stat`, field 7 = 512-byte sectors written), which tell what
//! really reached the device.
//!
//! Needs root, xfsprogs (`mkfs.xfs`), util-linux (`losetup`, `mount`, `umount`) and loop devices;
//! [`LoopXfs::unavailable`] says why not when they are missing. The mount and the loop device are
//! released by `Drop`, even when the caller fails half way.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// What failed while making, measuring or syncing a loop-mounted XFS, and on which path, device
/// or command.
#[derive(Debug, thiserror::Error)]
pub enum LoopXfsError {
    /// A file operation on the work directory, the image or the kernel's statistics.
    #[error("{what} {}: {source}", .path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A tool that could not be started.
    #[error("{cmd}: {source}")]
    Spawn {
        cmd: String,
        #[source]
        source: std::io::Error,
    },
    /// A tool that ran and failed.
    #[error("{cmd} {args}: {status}: {stderr}")]
    Command { cmd: String, args: String, status: ExitStatus, stderr: String },
    /// A path the tools cannot be given.
    #[error("{} is not UTF-8", .path.display())]
    NotUtf8 { path: PathBuf },
    /// No loop device is attached (yet).
    #[error("no loop device")]
    NoDevice,
    /// The loop device's statistics without the sectors-written field.
    #[error("{}: no sectors-written field in '{stat}'", .path.display())]
    NoSectorsWritten { path: PathBuf, stat: String },
}

/// A mounted XFS image on a loop device.
pub struct LoopXfs {
    mnt: PathBuf,
    dev: Option<String>,
    mounted: bool,
}

impl LoopXfs {
    /// Why a loop-mounted XFS cannot be made here, if it cannot.
    pub fn unavailable() -> Option<String> {
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Some("not root (mounting a loop device needs root)".into());
        }
        for tool in ["mkfs.xfs", "losetup", "mount", "umount"] {
            if !on_path(tool) {
                return Some(format!("{tool} not found (apt-get install xfsprogs util-linux mount)"));
            }
        }
        if !Path::new("/dev/loop-control").exists() {
            return Some("no /dev/loop-control: loop devices are unavailable".into());
        }
        None
    }

    /// Creates a sparse image of `image_bytes` in `work_dir` (XFS needs at least 300 MB), formats it
    /// with reflink on and mounts it at `work_dir/mnt`.
    pub fn new(work_dir: &Path, image_bytes: u64) -> Result<LoopXfs, LoopXfsError> {
        let image = work_dir.join("xfs.img");
        let mnt = work_dir.join("mnt");
        std::fs::create_dir_all(&mnt).map_err(|source| LoopXfsError::Io {
            what: "mkdir",
            path: mnt.clone(),
            source,
        })?;
        File::create(&image).and_then(|f| f.set_len(image_bytes)).map_err(|source| LoopXfsError::Io {
            what: "image file",
            path: image.clone(),
            source,
        })?;
        let mut guard = LoopXfs { mnt, dev: None, mounted: false };
        let dev = run("losetup", &["--find", "--show", path_str(&image)?])?;
        guard.dev = Some(dev.trim().to_string());
        let dev = guard.device()?.to_string();
        run("mkfs.xfs", &["-q", "-f", "-m", "reflink=1", &dev])?;
        run("mount", &["-t", "xfs", &dev, path_str(&guard.mnt)?])?;
        guard.mounted = true;
        Ok(guard)
    }

    /// Where the file system is mounted.
    pub fn mount_point(&self) -> &Path {
        &self.mnt
    }

    pub fn device(&self) -> Result<&str, LoopXfsError> {
        self.dev.as_deref().ok_or(LoopXfsError::NoDevice)
    }

    /// 512-byte sectors written to the loop device so far.
    pub fn sectors_written(&self) -> Result<u64, LoopXfsError> {
        let dev = self.device()?;
        let name = dev.rsplit('/').next().unwrap_or(dev);
        let path = PathBuf::from(format!("/sys/block/{name}/stat"));
        let stat = std::fs::read_to_string(&path).map_err(|source| LoopXfsError::Io {
            what: "read",
            path: path.clone(),
            source,
        })?;
        stat.split_whitespace()
            .nth(6)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| LoopXfsError::NoSectorsWritten { path, stat: stat.trim().to_string() })
    }

    /// Bytes written to the loop device so far.
    pub fn bytes_written(&self) -> Result<u64, LoopXfsError> {
        Ok(self.sectors_written()? * 512)
    }

    /// Makes everything written to the mount reach the device (data, inodes and the XFS log).
    pub fn syncfs(&self) -> Result<(), LoopXfsError> {
        let io = |what, source| LoopXfsError::Io { what, path: self.mnt.clone(), source };
        let root = File::open(&self.mnt).map_err(|e| io("open", e))?;
        // SAFETY: the descriptor is open for the duration of the call.
        let rc = unsafe { libc::syncfs(root.as_raw_fd()) };
        if rc != 0 {
            return Err(io("syncfs", std::io::Error::last_os_error()));
        }
        Ok(())
    }
}

impl Drop for LoopXfs {
    fn drop(&mut self) {
        if self.mounted {
            let mnt = self.mnt.to_string_lossy().into_owned();
            if let Err(e) = run("umount", &[&mnt]) {
                eprintln!("umount failed ({e}); detaching lazily");
                let _ = run("umount", &["-l", &mnt]);
            }
        }
        if let Some(dev) = &self.dev {
            if let Err(e) = run("losetup", &["-d", dev]) {
                eprintln!("losetup -d {dev}: {e}");
            }
        }
    }
}

fn path_str(p: &Path) -> Result<&str, LoopXfsError> {
    p.to_str().ok_or_else(|| LoopXfsError::NotUtf8 { path: p.to_path_buf() })
}

fn run(cmd: &str, args: &[&str]) -> Result<String, LoopXfsError> {
    let out =
        Command::new(cmd).args(args).output().map_err(|source| LoopXfsError::Spawn { cmd: cmd.to_string(), source })?;
    if !out.status.success() {
        return Err(LoopXfsError::Command {
            cmd: cmd.to_string(),
            args: args.join(" "),
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn on_path(tool: &str) -> bool {
    let dirs = std::env::var("PATH").unwrap_or_default();
    let found = dirs.split(':').chain(["/sbin", "/usr/sbin"]).any(|d| Path::new(d).join(tool).is_file());
    found
}

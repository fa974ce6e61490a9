//! On a real reflink file system, `clone_range` shares extents instead of writing: a loop-mounted XFS image
//! (`mkfs.xfs -m reflink=1`) gets a 64 MiB file, and the kernel's block statistics of the loop device
//! (/sys/block/loopN/stat, field 7 = sectors written) show that cloning it wrote less than 1 % of what copying it
//! wrote. Then the conformance suite runs on the XFS mount, where clones really share extents.
//!
//! Needs root, xfsprogs (`mkfs.xfs`), util-linux (`losetup`, `mount`, `umount`) and loop devices; see
//! tests/setup-xfs.sh. Without them the test prints "skipped: <why>" and passes, unless FLASHKV_REQUIRE_XFS=1,
//! when it fails instead (CI sets it). The image, the loop device and the mount are always released, even when an
//! assertion fails, by the guard's `Drop`.

use std::fs::File;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use storage::conformance::{pattern, run_all};
use storage::{Fs, PosixFs};

const MIB: u64 = 1 << 20;
const CLONE_LEN: u64 = 64 * MIB;
/// XFS refuses file systems smaller than 300 MB; the image file is sparse, so this costs only what is written.
const IMAGE_LEN: u64 = 512 * MIB;

/// A loop device with a mounted XFS file system; `Drop` unmounts and detaches, in that order.
struct LoopXfs {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
    dev: Option<String>,
    mounted: bool,
}

impl LoopXfs {
    fn new() -> Result<LoopXfs, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let image = dir.path().join("xfs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).map_err(|e| format!("mkdir mount point: {e}"))?;
        File::create(&image).and_then(|f| f.set_len(IMAGE_LEN)).map_err(|e| format!("image file: {e}"))?;
        let mut guard = LoopXfs { _dir: dir, mnt, dev: None, mounted: false };
        let dev = run("losetup", &["--find", "--show", path_str(&image)?])?;
        guard.dev = Some(dev.trim().to_string());
        let dev = guard.device()?.to_string();
        run("mkfs.xfs", &["-q", "-f", "-m", "reflink=1", &dev])?;
        run("mount", &["-t", "xfs", &dev, path_str(&guard.mnt)?])?;
        guard.mounted = true;
        Ok(guard)
    }

    fn device(&self) -> Result<&str, String> {
        self.dev.as_deref().ok_or_else(|| "no loop device".to_string())
    }

    /// Field 7 of /sys/block/loopN/stat: 512-byte sectors written to the device so far.
    fn sectors_written(&self) -> u64 {
        let dev = self.device().expect("loop device");
        let name = dev.rsplit('/').next().expect("device name");
        let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).expect("read block stat");
        let fields: Vec<u64> = stat.split_whitespace().map(|f| f.parse().expect("numeric stat field")).collect();
        fields[6]
    }

    /// Makes everything written to the mount reach the device (data, inodes and the XFS log).
    fn syncfs(&self) {
        let root = File::open(&self.mnt).expect("open mount point");
        // SAFETY: the descriptor is open for the duration of the call.
        let rc = unsafe { libc::syncfs(root.as_raw_fd()) };
        assert_eq!(rc, 0, "syncfs: {}", std::io::Error::last_os_error());
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

fn path_str(p: &Path) -> Result<&str, String> {
    p.to_str().ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd).args(args).output().map_err(|e| format!("{cmd}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cmd} {}: {}: {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn on_path(tool: &str) -> bool {
    let dirs = std::env::var("PATH").unwrap_or_default();
    let found = dirs.split(':').chain(["/sbin", "/usr/sbin"]).any(|d| Path::new(d).join(tool).is_file());
    found
}

fn why_not() -> Option<String> {
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

fn skip(why: &str) {
    assert!(std::env::var("FLASHKV_REQUIRE_XFS").as_deref() != Ok("1"), "FLASHKV_REQUIRE_XFS=1 but: {why}");
    println!("skipped: {why}");
}

#[test]
fn reflink_clone_writes_under_one_percent_of_a_copy() {
    if let Some(why) = why_not() {
        return skip(&why);
    }
    let xfs = match LoopXfs::new() {
        Ok(x) => x,
        Err(why) => return skip(&format!("could not set up the loop-mounted XFS image: {why}")),
    };
    let fs = PosixFs::new(xfs.mnt.join("db")).expect("PosixFs on XFS");
    assert_eq!(fs.block_size(), 4096, "XFS block size");
    assert!(fs.supports_clone(), "XFS with reflink=1 must share extents");

    let chunk_len = 4 * MIB as usize;
    let mut w = fs.create("src.sst").expect("create src");
    for i in 0..CLONE_LEN / chunk_len as u64 {
        w.append(&pattern(i, chunk_len)).expect("append src");
    }
    w.sync().expect("sync src");
    drop(w);
    fs.sync_dir("").expect("sync_dir");
    xfs.syncfs();

    let before_clone = xfs.sectors_written();
    let mut w = fs.create("clone.sst").expect("create clone");
    let outcome = w.append_cloned("src.sst", 0, CLONE_LEN).expect("append_cloned");
    w.sync().expect("sync clone");
    drop(w);
    fs.sync_dir("").expect("sync_dir");
    xfs.syncfs();
    let clone_sectors = xfs.sectors_written() - before_clone;
    assert_eq!(outcome.cloned_bytes, CLONE_LEN, "the clone must not fall back to a copy: {outcome:?}");

    let before_copy = xfs.sectors_written();
    let src = fs.open("src.sst").expect("open src");
    let mut w = fs.create("copy.sst").expect("create copy");
    let mut buf = vec![0u8; chunk_len];
    for off in (0..CLONE_LEN).step_by(chunk_len) {
        src.read_exact_at(off, &mut buf).expect("read src");
        w.append(&buf).expect("append copy");
    }
    w.sync().expect("sync copy");
    drop(w);
    fs.sync_dir("").expect("sync_dir");
    xfs.syncfs();
    let copy_sectors = xfs.sectors_written() - before_copy;

    let pct = 100.0 * clone_sectors as f64 / copy_sectors as f64;
    println!(
        "64 MiB on XFS ({}): clone wrote {clone_sectors} sectors ({} bytes), \
         copy wrote {copy_sectors} sectors ({} bytes): {pct:.4} %",
        xfs.device().unwrap_or("?"),
        clone_sectors * 512,
        copy_sectors * 512
    );
    assert!(copy_sectors >= CLONE_LEN / 512, "the copy must reach the device: {copy_sectors} sectors");
    assert!(clone_sectors * 100 < copy_sectors, "clone wrote {pct:.3} % of a copy, not under 1 %");

    let clone = fs.open("clone.sst").expect("open clone");
    let mut got = vec![0u8; chunk_len];
    for (i, off) in (0..CLONE_LEN).step_by(chunk_len).enumerate() {
        clone.read_exact_at(off, &mut got).expect("read clone");
        assert!(got == pattern(i as u64, chunk_len), "clone differs from the source in chunk {i}");
    }

    // The same behavioural suite as everywhere, now where clones really share extents.
    let n = AtomicUsize::new(0);
    let mnt = xfs.mnt.clone();
    run_all(&|| {
        let root = mnt.join(format!("case{}", n.fetch_add(1, Ordering::Relaxed)));
        let fs = PosixFs::new(root).expect("PosixFs on XFS");
        assert!(fs.supports_clone(), "clones share extents here");
        Arc::new(fs) as Arc<dyn Fs>
    });
}

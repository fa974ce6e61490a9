//! On a real reflink file system, `clone_range` shares extents instead of writing: a loop-mounted XFS image
//! (`mkfs.xfs -m reflink=1`) gets a 64 MiB file, and the kernel's block statistics of the loop device
//! (/sys/block/loopN/stat, field 7 = sectors written) show that cloning it wrote less than 1 % of what copying it
//! wrote. Then the conformance suite runs on the XFS mount, where clones really share extents.
//!
//! Needs root, xfsprogs (`mkfs.xfs`), util-linux (`losetup`, `mount`, `umount`) and loop devices; see
//! tests/setup-xfs.sh. So the test is ignored by a plain `cargo test`, which lists it as ignored, and runs on request:
//! `cargo test --release -p storage --test xfs_reflink -- --ignored` (CI runs it so). Run so without those tools,
//! it prints "skipped: <why>" and passes, unless FLASHKV_REQUIRE_XFS=1, when it fails instead (CI sets it). The
//! image, the loop device and the mount are always released, even when an assertion fails, by the guard's `Drop`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use storage::conformance::{pattern, run_all};
use storage::loop_xfs::LoopXfs;
use storage::{Fs, PosixFs};

const MIB: u64 = 1 << 20;
const CLONE_LEN: u64 = 64 * MIB;
/// XFS refuses file systems smaller than 300 MB; the image file is sparse, so this costs only what is written.
const IMAGE_LEN: u64 = 512 * MIB;

fn skip(why: &str) {
    assert!(std::env::var("FLASHKV_REQUIRE_XFS").as_deref() != Ok("1"), "FLASHKV_REQUIRE_XFS=1 but: {why}");
    println!("skipped: {why}");
}

#[test]
#[ignore = "needs root, loop devices and xfsprogs (tests/setup-xfs.sh); run with --ignored (CI does)"]
fn reflink_clone_writes_under_one_percent_of_a_copy() {
    if let Some(why) = LoopXfs::unavailable() {
        return skip(&why);
    }
    let work = tempfile::tempdir().expect("tempdir");
    let xfs = match LoopXfs::new(work.path(), IMAGE_LEN) {
        Ok(x) => x,
        Err(why) => return skip(&format!("could not set up the loop-mounted XFS image: {why}")),
    };
    let fs = PosixFs::new(xfs.mount_point().join("db")).expect("PosixFs on XFS");
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
    xfs.syncfs().expect("syncfs");

    let before_clone = xfs.sectors_written().expect("block stat");
    let mut w = fs.create("clone.sst").expect("create clone");
    let outcome = w.append_cloned("src.sst", 0, CLONE_LEN).expect("append_cloned");
    w.sync().expect("sync clone");
    drop(w);
    fs.sync_dir("").expect("sync_dir");
    xfs.syncfs().expect("syncfs");
    let clone_sectors = xfs.sectors_written().expect("block stat") - before_clone;
    assert_eq!(outcome.cloned_bytes, CLONE_LEN, "the clone must not fall back to a copy: {outcome:?}");

    let before_copy = xfs.sectors_written().expect("block stat");
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
    xfs.syncfs().expect("syncfs");
    let copy_sectors = xfs.sectors_written().expect("block stat") - before_copy;

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
    let mnt = xfs.mount_point().to_path_buf();
    run_all(&|| {
        let root = mnt.join(format!("case{}", n.fetch_add(1, Ordering::Relaxed)));
        let fs = PosixFs::new(root).expect("PosixFs on XFS");
        assert!(fs.supports_clone(), "clones share extents here");
        Arc::new(fs) as Arc<dyn Fs>
    });
}

//! PosixFs specifics: run-time detection of clone support on the host's temporary directory (ext4 and tmpfs
//! refuse; XFS and Btrfs share), the copy fallback's accounting, and the mapping of host errors.

use storage::{clone_or_copy, read_all, write_all, Fs, FsError, PosixFs};

#[test]
fn clone_support_is_detected_and_the_fallback_says_what_happened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fs = PosixFs::new(dir.path()).expect("PosixFs");
    let bs = fs.block_size();
    let data: Vec<u8> = (0..4 * bs).map(|i| (i % 251) as u8).collect();
    write_all(&fs, "src", &data, true).unwrap();
    write_all(&fs, "dst", &[], true).unwrap();
    let supported = fs.supports_clone();
    match fs.clone_range("src", 0, "dst", 0, 2 * bs) {
        Ok(()) => assert!(supported, "a clone worked although the probe said it would not"),
        Err(FsError::Unsupported { op, path, reason }) => {
            assert!(!supported);
            assert_eq!((op, path.as_str()), ("clone_range", "dst"));
            println!("clone_range on this host's temporary directory: unsupported: {reason}");
            let outcome = clone_or_copy(&fs, "src", 0, "dst", 0, 2 * bs).unwrap();
            assert_eq!((outcome.cloned_bytes, outcome.copied_bytes), (0, 2 * bs));
        }
        Err(e) => panic!("clone_range: {e}"),
    }
    assert_eq!(read_all(&fs, "dst").unwrap(), &data[..2 * bs as usize]);
    // append_cloned falls back the same way, and reports it.
    let mut w = fs.open_append("dst").unwrap();
    let outcome = w.append_cloned("src", 2 * bs, 2 * bs).unwrap();
    assert_eq!(outcome.total(), 2 * bs);
    assert_eq!(outcome.cloned_bytes > 0, supported);
    w.sync().unwrap();
    drop(w);
    assert_eq!(read_all(&fs, "dst").unwrap(), data);
}

#[test]
fn paths_stay_under_the_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fs = PosixFs::new(dir.path().join("db")).expect("PosixFs");
    write_all(&fs, "CURRENT", b"x", true).unwrap();
    assert!(dir.path().join("db/CURRENT").is_file());
    assert!(matches!(fs.create("../escape"), Err(FsError::InvalidPath { .. })));
    assert!(matches!(fs.create("/etc/passwd"), Err(FsError::InvalidPath { .. })));
    assert!(!dir.path().join("escape").exists());
}

#[test]
fn host_errors_map_to_specific_variants() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fs = PosixFs::new(dir.path()).expect("PosixFs");
    fs.create_dir_all("d").unwrap();
    write_all(&fs, "d/f", b"x", true).unwrap();
    assert!(matches!(fs.remove_dir("d"), Err(FsError::DirNotEmpty { .. })));
    assert!(matches!(fs.remove("d"), Err(FsError::WrongKind { .. })));
    assert!(matches!(fs.create("d"), Err(FsError::WrongKind { .. })));
    assert!(matches!(fs.rename("d", "e"), Err(FsError::WrongKind { .. })));
    assert!(matches!(fs.list("d/f"), Err(FsError::WrongKind { .. })));
}

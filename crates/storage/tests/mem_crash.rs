//! MemFs crash semantics, one rule per test (the property test in crash_history.rs mixes them).

use storage::{read_all, write_all, Fs, FsError, MemFs};

fn synced(fs: &MemFs, path: &str, data: &[u8]) {
    write_all(fs, path, data, true).expect("write");
}

#[test]
fn unsynced_tail_is_dropped_and_synced_prefix_kept() {
    let fs = MemFs::new();
    let mut w = fs.create("log").unwrap();
    w.append(b"durable").unwrap();
    w.sync().unwrap();
    w.append(b" lost").unwrap();
    w.flush().unwrap();
    fs.sync_dir("").unwrap();
    assert_eq!(fs.synced_len("log").unwrap(), 7);
    fs.crash();
    assert_eq!(read_all(&fs, "log").unwrap(), b"durable");
    assert!(matches!(w.append(b"x"), Err(FsError::Crashed { .. })), "a writer from before the crash is dead");
}

#[test]
fn file_created_after_last_dir_sync_disappears() {
    let fs = MemFs::new();
    synced(&fs, "old", b"a");
    fs.sync_dir("").unwrap();
    synced(&fs, "new", b"b");
    fs.crash();
    assert!(fs.exists("old").unwrap());
    assert!(!fs.exists("new").unwrap(), "its data was synced but its directory entry was not");
}

#[test]
fn removed_file_comes_back_with_its_synced_content() {
    let fs = MemFs::new();
    let mut w = fs.create("f").unwrap();
    w.append(b"synced").unwrap();
    w.sync().unwrap();
    w.append(b"+unsynced").unwrap();
    fs.sync_dir("").unwrap();
    fs.remove("f").unwrap();
    fs.crash();
    assert_eq!(read_all(&fs, "f").unwrap(), b"synced");
}

#[test]
fn rename_is_undone_without_dir_sync_and_kept_with_it() {
    let fs = MemFs::new();
    synced(&fs, "CURRENT", b"MANIFEST-1");
    synced(&fs, "tmp", b"MANIFEST-2");
    fs.sync_dir("").unwrap();
    fs.rename("tmp", "CURRENT").unwrap();
    fs.crash();
    assert_eq!(read_all(&fs, "CURRENT").unwrap(), b"MANIFEST-1");
    assert_eq!(read_all(&fs, "tmp").unwrap(), b"MANIFEST-2");
    fs.rename("tmp", "CURRENT").unwrap();
    fs.sync_dir("").unwrap();
    fs.crash();
    assert_eq!(read_all(&fs, "CURRENT").unwrap(), b"MANIFEST-2");
    assert!(!fs.exists("tmp").unwrap());
}

#[test]
fn cross_directory_rename_is_atomic() {
    let fs = MemFs::new();
    fs.create_dir_all("a").unwrap();
    fs.create_dir_all("b").unwrap();
    synced(&fs, "a/f", b"x");
    fs.sync_dir("a").unwrap();
    fs.rename("a/f", "b/f").unwrap();
    fs.sync_dir("a").unwrap(); // only the source side
    fs.crash();
    assert!(!fs.exists("a/f").unwrap());
    assert_eq!(read_all(&fs, "b/f").unwrap(), b"x", "the destination side became durable with the source side");
}

#[test]
fn create_over_existing_reverts_to_old_file() {
    let fs = MemFs::new();
    synced(&fs, "f", b"old");
    fs.sync_dir("").unwrap();
    synced(&fs, "f", b"new!");
    fs.crash();
    assert_eq!(read_all(&fs, "f").unwrap(), b"old");
}

#[test]
fn clone_over_synced_bytes_is_undone_until_sync() {
    let fs = MemFs::new();
    synced(&fs, "src", &[1u8; 4096]);
    synced(&fs, "dst", &[2u8; 8192]);
    fs.sync_dir("").unwrap();
    fs.clone_range("src", 0, "dst", 4096, 4096).unwrap();
    assert_eq!(&read_all(&fs, "dst").unwrap()[4096..], &[1u8; 4096][..]);
    fs.crash();
    assert_eq!(read_all(&fs, "dst").unwrap(), vec![2u8; 8192], "an unsynced clone is not durable");
    fs.clone_range("src", 0, "dst", 4096, 4096).unwrap();
    fs.open_append("dst").unwrap().sync().unwrap();
    fs.crash();
    assert_eq!(&read_all(&fs, "dst").unwrap()[4096..], &[1u8; 4096][..]);
}

#[test]
fn locks_and_readers_do_not_survive_a_crash() {
    let fs = MemFs::new();
    let lock = fs.lock("LOCK").unwrap();
    synced(&fs, "f", b"data");
    fs.sync_dir("").unwrap();
    let r = fs.open("f").unwrap();
    fs.crash();
    let mut buf = [0u8; 4];
    assert!(matches!(r.read_at(0, &mut buf), Err(FsError::Crashed { .. })));
    let relock = fs.lock("LOCK").expect("the crash released the lock");
    drop(lock); // the stale guard must not release the new holder's lock
    assert!(matches!(fs.lock("LOCK"), Err(FsError::Locked { .. })));
    drop(relock);
}

#[test]
fn counters_and_capacity() {
    let fs = MemFs::builder().capacity(10_000).build();
    let mut w = fs.create("f").unwrap();
    w.append(&[0u8; 6000]).unwrap();
    w.sync().unwrap();
    w.append(&[0u8; 3000]).unwrap();
    match w.append(&[0u8; 2000]) {
        Err(FsError::NoSpace { path, .. }) => assert_eq!(path, "f"),
        other => panic!("expected NoSpace, got {other:?}"),
    }
    let stats = fs.stats();
    assert_eq!((stats.bytes_written, stats.bytes_synced, stats.syncs), (9000, 6000, 1));
    assert_eq!(fs.used_bytes(), 9000);
    fs.crash();
    drop(w); // a stale handle still holds its file's bytes, as an open descriptor holds an unlinked inode
    assert_eq!(fs.used_bytes(), 0, "the file was never in a synced directory");
    assert_eq!(fs.stats().crashes, 1);
}

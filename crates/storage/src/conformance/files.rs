//! Conformance cases for files and the namespace: reads, appends, reopening, errors, paths, renames, listing,
//! directories, locks, large files and concurrent readers.

use std::sync::Arc;

use super::{assert_same, ok, pattern, put, read};
use crate::error::{FsError, Result};
use crate::fs::{Fs, RandomAccessFile, WriteHint};
use crate::path;

pub(super) fn write_then_read(fs: Arc<dyn Fs>) {
    let mut w = ok(fs.create_with_hint("data", WriteHint::Wal), "create");
    let a = pattern(1, 1000);
    let b = pattern(2, 70_000);
    ok(w.append(&a), "append a");
    ok(w.append(&b), "append b");
    ok(w.append(&[]), "append empty");
    assert_eq!(w.len(), 71_000, "writer len counts buffered bytes");
    ok(w.flush(), "flush");
    assert_eq!(ok(fs.file_size("data"), "file_size"), 71_000);
    let want = [a, b].concat();
    assert_same("after flush", &read(&*fs, "data"), &want);
    ok(w.sync(), "sync");
    let r = ok(fs.open("data"), "open");
    assert_eq!(r.path(), "data");
    assert_eq!(ok(r.size(), "reader size"), 71_000);
    let mut buf = vec![0u8; 5000];
    ok(r.read_exact_at(999, &mut buf), "read_exact_at");
    assert_same("read_exact_at 999", &buf, &want[999..5999]);
    assert!(ok(fs.exists("data"), "exists"));
}

pub(super) fn short_reads_at_eof(fs: Arc<dyn Fs>) {
    put(&*fs, "f", &pattern(3, 100));
    let r = ok(fs.open("f"), "open");
    let mut buf = [0u8; 64];
    assert_eq!(ok(r.read_at(80, &mut buf), "read_at 80"), 20, "a read across the end is short");
    assert_eq!(&buf[..20], &pattern(3, 100)[80..]);
    assert_eq!(ok(r.read_at(100, &mut buf), "read_at 100"), 0, "a read at the end returns 0");
    assert_eq!(ok(r.read_at(1 << 40, &mut buf), "read_at far"), 0, "a read past the end returns 0");
    let err = r.read_exact_at(90, &mut buf).expect_err("read_exact_at across the end must fail");
    match err {
        FsError::UnexpectedEof { ref path, offset: 90, wanted: 64, got: 10, .. } if path == "f" => {}
        other => panic!("expected UnexpectedEof naming f at 90: {other}"),
    }
    put(&*fs, "empty", &[]);
    assert_eq!(ok(fs.file_size("empty"), "size of empty"), 0);
    assert_eq!(ok(ok(fs.open("empty"), "open empty").read_at(0, &mut buf), "read empty"), 0);
}

pub(super) fn reopen_append_and_truncate(fs: Arc<dyn Fs>) {
    let first = pattern(4, 10_000);
    put(&*fs, "log", &first);
    let mut w = ok(fs.open_append("log"), "open_append");
    assert_eq!(w.len(), 10_000, "open_append starts at the end");
    let more = pattern(5, 3000);
    ok(w.append(&more), "append");
    ok(w.sync(), "sync");
    drop(w);
    assert_same("after reopening for append", &read(&*fs, "log"), &[first, more].concat());
    let w = ok(fs.create("log"), "create over existing");
    assert_eq!(w.len(), 0);
    drop(w);
    assert_eq!(ok(fs.file_size("log"), "size after truncate"), 0, "create truncates");
    // Dropping a writer flushes what it buffered.
    let mut w = ok(fs.create("dropped"), "create dropped");
    ok(w.append(b"buffered"), "append");
    drop(w);
    assert_same("after drop", &read(&*fs, "dropped"), b"buffered");
}

fn expect_not_found<T>(r: Result<T>, what: &str, p: &str) {
    match r {
        Err(FsError::NotFound { ref path, .. }) if path == p => {}
        Err(e) => panic!("{what}: expected NotFound naming {p}, got {e}"),
        Ok(_) => panic!("{what}: expected NotFound naming {p}, got Ok"),
    }
}

/// An immutable open (which may map the file) reads what a plain open reads, and a shared read,
/// where the file system offers one, holds the same bytes, short at the end as `read_at`.
pub(super) fn immutable_reads(fs: Arc<dyn Fs>) {
    let data = pattern(4, 3 * 4096 + 100);
    put(&*fs, "t", &data);
    let r = ok(fs.open_immutable("t"), "open_immutable");
    assert_eq!(r.path(), "t");
    assert_eq!(ok(r.size(), "size"), data.len() as u64);
    for (offset, len) in [(0usize, 4096usize), (4000, 200), (3 * 4096, 4096), (data.len(), 10), (1 << 30, 10)] {
        let mut buf = vec![0u8; len];
        let got = ok(r.read_at(offset as u64, &mut buf), "read_at");
        let want = data.get(offset..).map_or(&[][..], |rest| &rest[..rest.len().min(len)]);
        assert_same(&format!("read_at {offset}+{len}"), &buf[..got], want);
        if let Some(shared) = r.read_shared(offset as u64, len) {
            assert_same(&format!("read_shared {offset}+{len}"), &shared, want);
        }
    }
    put(&*fs, "empty", &[]);
    let e = ok(fs.open_immutable("empty"), "open_immutable empty");
    assert_eq!(ok(e.read_at(0, &mut [0u8; 8]), "read empty"), 0);
    assert!(e.read_shared(0, 8).is_none_or(|b| b.is_empty()));
    expect_not_found(fs.open_immutable("nope"), "open_immutable", "nope");
}

pub(super) fn missing_files(fs: Arc<dyn Fs>) {
    expect_not_found(fs.open("nope"), "open", "nope");
    expect_not_found(fs.open_append("nope"), "open_append", "nope");
    expect_not_found(fs.file_size("nope"), "file_size", "nope");
    expect_not_found(fs.remove("nope"), "remove", "nope");
    expect_not_found(fs.rename("nope", "other"), "rename", "nope");
    expect_not_found(fs.list("nodir"), "list", "nodir");
    expect_not_found(fs.create("nodir/f"), "create in a missing directory", "nodir/f");
    let bs = fs.block_size();
    put(&*fs, "present", &vec![0u8; 2 * bs as usize]);
    expect_not_found(fs.clone_range("nope", 0, "present", 0, bs), "clone from missing", "nope");
    expect_not_found(fs.clone_range("present", 0, "nope", 0, bs), "clone to missing", "nope");
    assert!(!ok(fs.exists("nope"), "exists"));
    assert!(!ok(fs.exists("nodir/f"), "exists in missing dir"));
}

pub(super) fn invalid_paths(fs: Arc<dyn Fs>) {
    for bad in ["", "/abs", "a//b", "a/", "./a", "a/../b", "..", "nul\0"] {
        let check = |r: Result<()>, op: &str| match r {
            Err(FsError::InvalidPath { ref path, .. }) if path == bad => {}
            other => panic!("{op}({bad:?}): expected InvalidPath, got {:?}", other.err()),
        };
        check(fs.create(bad).map(|_| ()), "create");
        check(fs.open(bad).map(|_| ()), "open");
        check(fs.open_append(bad).map(|_| ()), "open_append");
        check(fs.file_size(bad).map(|_| ()), "file_size");
        check(fs.exists(bad).map(|_| ()), "exists");
        check(fs.remove(bad), "remove");
        check(fs.rename(bad, "x"), "rename from");
        check(fs.rename("x", bad), "rename to");
        check(fs.lock(bad).map(|_| ()), "lock");
        check(fs.clone_range(bad, 0, "x", 0, 0), "clone_range src");
        if !bad.is_empty() {
            check(fs.list(bad).map(|_| ()), "list");
            check(fs.sync_dir(bad), "sync_dir");
            check(fs.create_dir_all(bad), "create_dir_all");
        }
    }
    assert!(matches!(path::join("", "a/b"), Err(FsError::InvalidPath { .. })), "a name with a separator");
}

pub(super) fn rename(fs: Arc<dyn Fs>) {
    put(&*fs, "a", b"alpha");
    put(&*fs, "b", b"beta");
    let reader = ok(fs.open("a"), "open a");
    ok(fs.rename("a", "b"), "rename over existing");
    assert!(!ok(fs.exists("a"), "exists a"), "the source name is gone");
    assert_same("renamed", &read(&*fs, "b"), b"alpha");
    let mut buf = [0u8; 5];
    ok(reader.read_exact_at(0, &mut buf), "read through a reader opened before the rename");
    assert_eq!(&buf, b"alpha");
    ok(fs.create_dir_all("sub"), "create_dir_all");
    ok(fs.rename("b", "sub/c"), "rename into a directory");
    assert_same("moved", &read(&*fs, "sub/c"), b"alpha");
    assert_eq!(ok(fs.list(""), "list root"), vec!["sub".to_string()]);
    ok(fs.sync_dir(""), "sync_dir root");
    ok(fs.sync_dir("sub"), "sync_dir sub");
}

pub(super) fn remove_list_exists(fs: Arc<dyn Fs>) {
    assert!(ok(fs.list(""), "list empty").is_empty(), "a fresh file system is empty");
    for name in ["000003.sst", "000001.log", "CURRENT", "MANIFEST-000002"] {
        put(&*fs, name, name.as_bytes());
    }
    let want: Vec<String> = ["000001.log", "000003.sst", "CURRENT", "MANIFEST-000002"].map(String::from).to_vec();
    assert_eq!(ok(fs.list(""), "list"), want, "list is sorted");
    ok(fs.remove("000001.log"), "remove");
    assert!(!ok(fs.exists("000001.log"), "exists removed"));
    assert!(ok(fs.exists("CURRENT"), "exists kept"));
    assert_eq!(ok(fs.list(""), "list after remove").len(), 3);
    assert_eq!(ok(fs.file_size("CURRENT"), "size"), 7);
}

pub(super) fn directories(fs: Arc<dyn Fs>) {
    ok(fs.create_dir_all("db/archive"), "create_dir_all");
    ok(fs.create_dir_all("db/archive"), "create_dir_all again");
    ok(fs.create_dir_all("db"), "create_dir_all existing parent");
    assert!(ok(fs.exists("db"), "exists dir"));
    put(&*fs, "db/000001.log", b"wal");
    assert_eq!(ok(fs.list("db"), "list db"), vec!["000001.log".to_string(), "archive".to_string()]);
    ok(fs.sync_dir("db"), "sync_dir");
    match fs.remove_dir("db") {
        Err(FsError::DirNotEmpty { ref path, .. }) if path == "db" => {}
        other => panic!("remove_dir of a non-empty directory: expected DirNotEmpty, got {:?}", other.err()),
    }
    match fs.file_size("db") {
        Err(FsError::WrongKind { .. }) => {}
        other => panic!("file_size of a directory: expected WrongKind, got {other:?}"),
    }
    match fs.open("db") {
        Err(FsError::WrongKind { .. }) => {}
        Err(e) => panic!("open of a directory: expected WrongKind, got {e}"),
        Ok(_) => panic!("open of a directory: expected WrongKind, got Ok"),
    }
    ok(fs.remove_dir("db/archive"), "remove_dir empty");
    ok(fs.remove("db/000001.log"), "remove file");
    ok(fs.remove_dir("db"), "remove_dir now empty");
    assert!(!ok(fs.exists("db"), "exists removed dir"));
}

pub(super) fn lock_is_exclusive(fs: Arc<dyn Fs>) {
    let held = ok(fs.lock("LOCK"), "lock");
    assert_eq!(held.path(), "LOCK");
    assert!(ok(fs.exists("LOCK"), "lock file exists"));
    match fs.lock("LOCK") {
        Err(FsError::Locked { ref path }) if path == "LOCK" => {}
        Err(e) => panic!("second lock: expected Locked, got {e}"),
        Ok(_) => panic!("second lock: expected Locked, got Ok"),
    }
    let other = ok(fs.lock("OTHER"), "a different lock file");
    drop(held);
    let again = ok(fs.lock("LOCK"), "lock after release");
    drop((again, other));
}

pub(super) fn large_file(fs: Arc<dyn Fs>) {
    let total = 8 * 1024 * 1024 + 12345;
    let data = pattern(40, total);
    let mut w = ok(fs.create("big"), "create big");
    let mut at = 0;
    let mut step = 1usize;
    while at < total {
        step = (step * 7 + 13) % 150_000 + 1;
        let end = (at + step).min(total);
        ok(w.append(&data[at..end]), "append");
        at = end;
    }
    ok(w.sync(), "sync");
    drop(w);
    assert_eq!(ok(fs.file_size("big"), "size"), total as u64);
    let r = ok(fs.open("big"), "open big");
    let mut buf = vec![0u8; 70_000];
    for i in 0..64u64 {
        let off = (i * 2_654_435_761) % total as u64;
        let len = buf.len().min(total - off as usize);
        ok(r.read_exact_at(off, &mut buf[..len]), "read_exact_at");
        assert_same("random read of big", &buf[..len], &data[off as usize..off as usize + len]);
    }
    assert_same("all of big", &read(&*fs, "big"), &data);
}

pub(super) fn concurrent_readers(fs: Arc<dyn Fs>) {
    let data = Arc::new(pattern(50, 1 << 20));
    put(&*fs, "shared", &data);
    let reader: Arc<dyn RandomAccessFile> = Arc::from(ok(fs.open("shared"), "open shared"));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (reader, data) = (Arc::clone(&reader), Arc::clone(&data));
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 4096];
                for i in 0..300u64 {
                    let off = ((t * 7919 + i * 104_729) % (data.len() as u64 - 4096)) as usize;
                    reader.read_exact_at(off as u64, &mut buf).map_err(|e| e.to_string())?;
                    if buf[..] != data[off..off + 4096] {
                        return Err(format!("thread {t}: wrong bytes at {off}"));
                    }
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        match t.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => panic!("concurrent read: {e}"),
            Err(_) => panic!("a reader thread panicked"),
        }
    }
}

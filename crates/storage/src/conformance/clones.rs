//! Conformance cases for `clone_range` and `append_cloned`: the destination reads the source's bytes, later writes
//! to either file do not reach the other, misaligned or out-of-range arguments are refused with errors that name
//! them, and an `Unsupported` answer leaves the destination untouched so that the copy fallback can take over.

use std::sync::Arc;

use super::{assert_same, ok, pattern, put, read};
use crate::clone::clone_or_copy;
use crate::error::{FsError, Result};
use crate::fs::CloneOutcome;
use crate::fs::{Fs, WriteHint};

/// Clones (or copies where unsupported, checking the error), then checks independence of the two files.
pub(super) fn clone_range_semantics(fs: Arc<dyn Fs>) {
    let bs = fs.block_size();
    let n = bs as usize;
    let src_data = pattern(10, 4 * n);
    let dst_head = pattern(11, n);
    put(&*fs, "src", &src_data);
    put(&*fs, "dst", &dst_head);
    let outcome = match fs.clone_range("src", bs, "dst", bs, 2 * bs) {
        Ok(()) => CloneOutcome::cloned(2 * bs),
        Err(FsError::Unsupported { op: "clone_range", ref path, ref reason }) => {
            assert!(!reason.is_empty(), "Unsupported gives a reason");
            assert!(path == "dst" || path == "src", "Unsupported names a file: {path}");
            assert_same("dst after a refused clone", &read(&*fs, "dst"), &dst_head);
            ok(clone_or_copy(&*fs, "src", bs, "dst", bs, 2 * bs), "clone_or_copy fallback")
        }
        Err(e) => panic!("clone_range: {e}"),
    };
    assert_eq!(outcome.total(), 2 * bs, "the outcome accounts for every byte");
    let cloned = [dst_head.clone(), src_data[n..3 * n].to_vec()].concat();
    assert_same("dst after clone", &read(&*fs, "dst"), &cloned);
    assert_eq!(ok(fs.file_size("dst"), "dst size"), 3 * bs);
    // Later writes to either file do not reach the other.
    let mut w = ok(fs.open_append("src"), "open_append src");
    ok(w.append(&pattern(12, n + 17)), "append src");
    ok(w.sync(), "sync src");
    drop(w);
    let mut w = ok(fs.open_append("dst"), "open_append dst");
    ok(w.append(&pattern(13, 99)), "append dst");
    ok(w.sync(), "sync dst");
    drop(w);
    assert_same("src head after appends", &read(&*fs, "src")[..4 * n], &src_data);
    assert_same("dst head after appends", &read(&*fs, "dst")[..3 * n], &cloned);
    if outcome.cloned_bytes > 0 {
        // Overwrite the shared range in each file in turn by cloning other data over it.
        put(&*fs, "other", &pattern(14, 2 * n));
        ok(fs.clone_range("other", 0, "src", 2 * bs, bs), "clone over src");
        assert_same("dst after src overwritten", &read(&*fs, "dst")[..3 * n], &cloned);
        ok(fs.clone_range("other", bs, "dst", bs, bs), "clone over dst");
        let src_now = read(&*fs, "src");
        assert_same("src keeps block 1 after dst overwritten", &src_now[n..2 * n], &src_data[n..2 * n]);
        assert_same("src block 2 was overwritten", &src_now[2 * n..3 * n], &pattern(14, 2 * n)[..n]);
        assert_same("dst block 1 now from other", &read(&*fs, "dst")[n..2 * n], &pattern(14, 2 * n)[n..]);
    }
    let want_dst = read(&*fs, "dst");
    put(&*fs, "src", b"truncated");
    assert_same("dst after src truncated", &read(&*fs, "dst"), &want_dst);
    ok(fs.remove("src"), "remove src");
    assert_same("dst after src removed", &read(&*fs, "dst"), &want_dst);
}

pub(super) fn clone_range_errors(fs: Arc<dyn Fs>) {
    let bs = fs.block_size();
    put(&*fs, "s", &pattern(20, 3 * bs as usize));
    put(&*fs, "d", &pattern(21, bs as usize));
    let misaligned = |r: Result<()>, want_what: &str, want_path: &str| match r {
        Err(FsError::Misaligned { what, ref path, block_size, .. }) => {
            assert_eq!(what, want_what);
            assert_eq!(path, want_path);
            assert_eq!(block_size, bs);
        }
        other => panic!("expected Misaligned {want_what}, got {:?}", other.err()),
    };
    misaligned(fs.clone_range("s", 1, "d", 0, bs), "source offset", "s");
    misaligned(fs.clone_range("s", 0, "d", bs / 2, bs), "destination offset", "d");
    misaligned(fs.clone_range("s", 0, "d", 0, bs + 1), "length", "s");
    // Alignment is checked before existence.
    misaligned(fs.clone_range("missing", 3, "d", 0, bs), "source offset", "missing");
    match fs.clone_range("s", 2 * bs, "d", 0, 2 * bs) {
        Err(FsError::OutOfRange { ref path, size, .. }) if path == "s" => assert_eq!(size, 3 * bs),
        other => panic!("source range past the end: expected OutOfRange, got {:?}", other.err()),
    }
    match fs.clone_range("s", 0, "d", 2 * bs, bs) {
        Err(FsError::OutOfRange { ref path, .. }) if path == "d" => {}
        other => panic!("destination offset past the end: expected OutOfRange, got {:?}", other.err()),
    }
    assert!(fs.clone_range("s", 0, "s", bs, bs).is_err(), "a clone within one file is refused");
    match fs.clone_range("s", 0, "d", bs, 0) {
        Ok(()) | Err(FsError::Unsupported { .. }) => {}
        Err(e) => panic!("an empty clone: {e}"),
    }
    assert_eq!(ok(fs.file_size("d"), "d size"), bs, "failed clones change nothing");
}

pub(super) fn append_cloned(fs: Arc<dyn Fs>) {
    let bs = fs.block_size();
    let n = bs as usize;
    let src = pattern(30, 4 * n);
    put(&*fs, "in.sst", &src);
    let mut w = ok(fs.create_with_hint("out.sst", WriteHint::Compaction { output_level: 2 }), "create out");
    let head = pattern(31, n + 100);
    ok(w.append(&head), "append head");
    match w.append_cloned("in.sst", 0, bs) {
        Err(FsError::Misaligned { what: "destination offset", value, .. }) => assert_eq!(value, bs + 100),
        other => panic!("append_cloned at an unaligned length: expected Misaligned, got {other:?}"),
    }
    ok(w.append(&vec![0u8; n - 100]), "pad to a block");
    match w.append_cloned("in.sst", 0, bs - 1) {
        Err(FsError::Misaligned { what: "length", .. }) => {}
        other => panic!("append_cloned of a partial block: expected Misaligned, got {other:?}"),
    }
    let outcome = ok(w.append_cloned("in.sst", bs, 2 * bs), "append_cloned");
    assert_eq!(outcome.total(), 2 * bs);
    assert_eq!(w.len(), 4 * bs, "the writer's length advances by the clone");
    let tail = pattern(32, 333);
    ok(w.append(&tail), "append after clone");
    ok(w.sync(), "sync");
    drop(w);
    let mut want = head;
    want.resize(2 * n, 0);
    want.extend_from_slice(&src[n..3 * n]);
    want.extend_from_slice(&tail);
    assert_same("out.sst", &read(&*fs, "out.sst"), &want);
    assert_same("in.sst unchanged", &read(&*fs, "in.sst"), &src);
}

//! The behavioural suite every [`Fs`] implementation must pass: the same cases on PosixFs (in a temporary
//! directory), MemFs, FaultFs with injection off, and SimFs.
//!
//! Use: `storage::conformance::run_all(&|| Arc::new(MemFs::new()) as Arc<dyn Fs>)` in a test. Each case gets a
//! fresh, empty file system from the factory; `run_all` runs every case, prints one line per case and panics at the
//! end naming the cases that failed (a failing case does not hide the others). This is test code: cases panic on
//! a broken contract, with a message that names the case, the path and what was expected.

mod clones;
mod files;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use self::clones::{append_cloned, clone_range_errors, clone_range_semantics};
use self::files::{
    concurrent_readers, directories, immutable_reads, invalid_paths, large_file, lock_is_exclusive, missing_files,
    remove_list_exists, rename, reopen_append_and_truncate, short_reads_at_eof, write_then_read,
};
use crate::error::{FsError, Result};
use crate::fs::{read_all, write_all, Fs};

/// A named conformance case.
pub struct Case {
    /// What the case checks, as a short identifier.
    pub name: &'static str,
    /// Runs the case on a fresh file system; panics on failure.
    pub run: fn(Arc<dyn Fs>),
}

/// Every case, in the order `run_all` runs them.
pub const CASES: &[Case] = &[
    Case { name: "write_then_read", run: write_then_read },
    Case { name: "short_reads_at_eof", run: short_reads_at_eof },
    Case { name: "reopen_append_and_truncate", run: reopen_append_and_truncate },
    Case { name: "immutable_reads", run: immutable_reads },
    Case { name: "missing_files", run: missing_files },
    Case { name: "invalid_paths", run: invalid_paths },
    Case { name: "rename", run: rename },
    Case { name: "remove_list_exists", run: remove_list_exists },
    Case { name: "directories", run: directories },
    Case { name: "lock_is_exclusive", run: lock_is_exclusive },
    Case { name: "clone_range_semantics", run: clone_range_semantics },
    Case { name: "clone_range_errors", run: clone_range_errors },
    Case { name: "append_cloned", run: append_cloned },
    Case { name: "large_file", run: large_file },
    Case { name: "concurrent_readers", run: concurrent_readers },
];

/// Runs every case on fresh file systems from `make`; panics listing the failed cases.
pub fn run_all(make: &dyn Fn() -> Arc<dyn Fs>) {
    let mut failed = Vec::new();
    for case in CASES {
        let fs = make();
        let label = format!("{fs:?}");
        match catch_unwind(AssertUnwindSafe(|| (case.run)(fs))) {
            Ok(()) => eprintln!("conformance {} on {label}: ok", case.name),
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                eprintln!("conformance {} on {label}: FAILED: {msg}", case.name);
                failed.push(format!("{}: {msg}", case.name));
            }
        }
    }
    assert!(failed.is_empty(), "{} conformance case(s) failed:\n{}", failed.len(), failed.join("\n"));
}

/// Runs the case called `name`; panics if there is none.
pub fn run_one(name: &str, make: &dyn Fn() -> Arc<dyn Fs>) {
    let case = CASES.iter().find(|c| c.name == name);
    let case = case.unwrap_or_else(|| panic!("no conformance case named {name}"));
    (case.run)(make());
}

/// Checks that a file system with a capacity reports `NoSpace` (naming the file) before `limit` bytes have been
/// appended, and is usable again once the file is removed.
pub fn check_no_space(fs: &dyn Fs, limit: u64) {
    let chunk = pattern(7, 64 * 1024);
    let mut w = ok(fs.create("fill"), "create fill");
    let mut written = 0u64;
    let err = loop {
        match w.append(&chunk).and_then(|()| w.flush()) {
            Ok(()) => written += chunk.len() as u64,
            Err(e) => break e,
        }
        assert!(written <= limit, "no NoSpace after {written} bytes (limit {limit})");
    };
    assert!(matches!(err, FsError::NoSpace { ref path, .. } if path == "fill"), "expected NoSpace naming fill: {err}");
    drop(w);
    ok(fs.remove("fill"), "remove fill");
    ok(write_all(fs, "after", &chunk, true), "write after freeing space");
}

/// Deterministic bytes: the same (seed, len) always gives the same content, different seeds differ.
pub fn pattern(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn ok<T>(r: Result<T>, what: &str) -> T {
    r.unwrap_or_else(|e| panic!("{what}: {e}"))
}

fn read(fs: &dyn Fs, p: &str) -> Vec<u8> {
    ok(read_all(fs, p), &format!("read_all {p}"))
}

fn put(fs: &dyn Fs, p: &str, data: &[u8]) {
    ok(write_all(fs, p, data, true), &format!("write_all {p}"));
}

fn assert_same(what: &str, got: &[u8], want: &[u8]) {
    if got != want {
        let first = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
        panic!("{what}: {} bytes, expected {}; first difference at offset {first}", got.len(), want.len());
    }
}

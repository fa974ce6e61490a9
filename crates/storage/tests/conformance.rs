//! The behavioural suite on every implementation in this crate (SimFs is added the same way, by one line).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use storage::conformance::{check_no_space, run_all};
use storage::{FaultFs, Fs, MemFs, PosixFs};

#[test]
fn memfs() {
    run_all(&|| Arc::new(MemFs::new()) as Arc<dyn Fs>);
}

#[test]
fn memfs_16k_blocks() {
    run_all(&|| Arc::new(MemFs::builder().block_size(16 * 1024).build()) as Arc<dyn Fs>);
}

#[test]
fn memfs_without_clone_support_falls_back_to_copies() {
    run_all(&|| Arc::new(MemFs::builder().clone_support(false).build()) as Arc<dyn Fs>);
}

#[test]
fn faultfs_with_nothing_injected() {
    run_all(&|| Arc::new(FaultFs::new(Arc::new(MemFs::new()), 1)) as Arc<dyn Fs>);
}

#[test]
fn posixfs_in_a_temporary_directory() {
    let parent = tempfile::tempdir().expect("tempdir");
    let n = AtomicUsize::new(0);
    run_all(&|| {
        let root = parent.path().join(format!("case{}", n.fetch_add(1, Ordering::Relaxed)));
        Arc::new(PosixFs::new(root).expect("PosixFs::new")) as Arc<dyn Fs>
    });
}

#[test]
fn memfs_reports_no_space() {
    let fs = MemFs::builder().capacity(1 << 20).build();
    check_no_space(&fs, 1 << 20);
}

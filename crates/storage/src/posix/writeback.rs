//! Writeback hints off the writer's thread: a writer asks the kernel to start writing back what it
//! handed over (`sync_file_range(SYNC_FILE_RANGE_WRITE)`), so that a later `sync` waits for little;
//! issuing that call costs the caller the page submission work, so a helper thread (one per
//! `PosixFs`, started on first use, ended when the file system is dropped) issues it instead. A
//! hint only: nothing waits for it and failures are ignored (a later `sync` reports errors).

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};

struct Job {
    file: Arc<File>,
    offset: u64,
    len: u64,
}

#[derive(Default)]
pub(super) struct Writeback {
    /// `None` inside when the helper thread could not be started (hints are then issued inline).
    helper: OnceLock<Option<Sender<Job>>>,
    /// Bytes asked to be written back so far (what the tests look at).
    requested: AtomicU64,
}

impl Writeback {
    /// Starts writeback of `len` bytes of `file` from `offset`, without waiting.
    pub(super) fn start(&self, file: &Arc<File>, offset: u64, len: u64) {
        self.requested.fetch_add(len, Ordering::Relaxed);
        let helper = self.helper.get_or_init(|| {
            let (tx, rx) = channel::<Job>();
            let spawned = std::thread::Builder::new()
                .name("flashkv-writeback".into())
                .spawn(move || rx.into_iter().for_each(|job| sync_file_range(&job.file, job.offset, job.len)));
            spawned.ok().map(|_| tx)
        });
        let job = Job { file: Arc::clone(file), offset, len };
        if let Some(Err(failed)) = helper.as_ref().map(|tx| tx.send(job)) {
            let job = failed.0;
            sync_file_range(&job.file, job.offset, job.len);
        }
    }

    /// Bytes asked to be written back since the file system was made.
    #[cfg(test)]
    pub(super) fn requested(&self) -> u64 {
        self.requested.load(Ordering::Relaxed)
    }
}

#[cfg(target_os = "linux")]
fn sync_file_range(file: &File, offset: u64, len: u64) {
    use std::os::unix::io::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: a plain system call on an open descriptor (the job holds the file); it reads no memory of ours.
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE) };
}

#[cfg(not(target_os = "linux"))]
fn sync_file_range(_file: &File, _offset: u64, _len: u64) {}

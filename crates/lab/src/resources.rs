//! How many runs go in parallel: no more than the cores, no more than the memory available holds
//! at each run's estimate (`DeviceSpec::memory_estimate`), and, where devices spill page contents
//! to a file, a run starts only when its disk estimate (`DeviceSpec::disk_estimate`) fits beside
//! those in flight.

use std::path::Path;
use std::sync::{Condvar, Mutex};

/// Memory the system can give without swapping (`MemAvailable` of /proc/meminfo), when known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Bytes free for an unprivileged writer on the file system holding `dir`, when known.
pub fn available_disk(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is a NUL-terminated string and `s` a statvfs the call fills in.
    if unsafe { libc::statvfs(path.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some(s.f_bavail as u64 * s.f_frsize as u64)
}

/// Workers for `jobs` runs of at most `per_job` bytes of memory each, on `cores` cores with
/// `memory` bytes available (unknown: cores alone decide). Always at least one: a run that does
/// not fit is still tried, alone.
pub fn workers(jobs: usize, cores: usize, per_job: u64, memory: Option<u64>) -> usize {
    let by_memory = memory.map_or(usize::MAX, |m| (m / per_job.max(1)) as usize);
    jobs.min(cores).min(by_memory).max(1)
}

/// Disk for the runs' spill files: a run starts only when its estimate fits beside those of the
/// runs in flight, or when none is in flight (a run too big still runs, alone).
pub struct DiskGate {
    budget: Option<u64>,
    held: Mutex<u64>,
    freed: Condvar,
}

/// Disk kept free for everything else that writes there meanwhile.
pub const DISK_MARGIN: u64 = 2 << 30;

impl DiskGate {
    /// A gate over the disk holding `dir` (`None`: no limit): its free space now, less
    /// [`DISK_MARGIN`], is the budget.
    pub fn over(dir: Option<&Path>) -> DiskGate {
        DiskGate::new(dir.and_then(available_disk).map(|d| d.saturating_sub(DISK_MARGIN)))
    }

    /// A gate over `budget` bytes (unknown: no limit).
    pub fn new(budget: Option<u64>) -> DiskGate {
        DiskGate { budget, held: Mutex::new(0), freed: Condvar::new() }
    }

    /// The budget, if known.
    pub fn budget(&self) -> Option<u64> {
        self.budget
    }

    /// Waits until `need` bytes fit, and holds them until the returned guard drops.
    pub fn admit(&self, need: u64) -> DiskHold<'_> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(budget) = self.budget {
            while *held > 0 && *held + need > budget {
                held = self.freed.wait(held).unwrap_or_else(|e| e.into_inner());
            }
        }
        *held += need;
        DiskHold { gate: self, need }
    }
}

/// Disk held by a running run.
pub struct DiskHold<'a> {
    gate: &'a DiskGate,
    need: u64,
}

impl Drop for DiskHold<'_> {
    fn drop(&mut self) {
        let mut held = self.gate.held.lock().unwrap_or_else(|e| e.into_inner());
        *held -= self.need;
        self.gate.freed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_caps_the_workers() {
        const GIB: u64 = 1 << 30;
        assert_eq!(workers(10, 2, GIB, Some(24 * GIB)), 2, "cores decide");
        assert_eq!(workers(10, 8, 15 * GIB, Some(24 * GIB)), 1, "memory decides");
        assert_eq!(workers(10, 8, 5 * GIB, Some(24 * GIB)), 4);
        assert_eq!(workers(10, 8, 64 * GIB, Some(24 * GIB)), 1, "too big still runs, alone");
        assert_eq!(workers(1, 8, GIB, None), 1, "no more workers than jobs");
        assert_eq!(workers(0, 8, GIB, None), 1);
    }

    #[test]
    fn the_disk_gate_holds_a_run_back_until_its_spill_fits() {
        const GIB: u64 = 1 << 30;
        let gate = DiskGate::new(Some(60 * GIB));
        let big = gate.admit(40 * GIB);
        let small = gate.admit(10 * GIB);
        let started = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                let _second_big = gate.admit(40 * GIB);
                started.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!started.load(std::sync::atomic::Ordering::SeqCst), "40 + 10 + 40 GiB exceed 60");
            drop(big);
        });
        assert!(started.load(std::sync::atomic::Ordering::SeqCst), "it starts once the first big run ends");
        drop(small);
        // Alone, a run too big for the budget still runs.
        drop(gate.admit(100 * GIB));
        drop(DiskGate::new(None).admit(u64::MAX / 2));
    }

    #[test]
    fn this_machine_reports_its_disk() {
        assert!(available_disk(&std::env::temp_dir()).is_some_and(|d| d > 0));
        assert_eq!(available_disk(Path::new("/no/such/dir")), None);
    }

    #[test]
    fn this_machine_reports_its_memory() {
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|m| m > 0));
        }
    }
}

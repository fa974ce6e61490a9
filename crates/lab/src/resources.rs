//! How many runs go in parallel: no more than the cores, and no more than the memory available
//! holds at each run's estimate (`DeviceArgs::memory_estimate`).

/// Memory the system can give without swapping (`MemAvailable` of /proc/meminfo), when known.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Workers for `jobs` runs of at most `per_job` bytes each, on `cores` cores with `memory` bytes
/// available (unknown: cores alone decide). Always at least one: a run that does not fit is
/// still tried, alone.
pub fn workers(jobs: usize, cores: usize, per_job: u64, memory: Option<u64>) -> usize {
    let by_memory = memory.map_or(usize::MAX, |m| (m / per_job.max(1)) as usize);
    jobs.min(cores).min(by_memory).max(1)
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
    fn this_machine_reports_its_memory() {
        if cfg!(target_os = "linux") {
            assert!(available_memory().is_some_and(|m| m > 0));
        }
    }
}

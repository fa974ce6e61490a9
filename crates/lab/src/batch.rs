//! A batch of independent runs (a repro's, an experiment's): where they are carried out (this
//! machine's cores, sized to its memory and disk, or Ray), the result folder's cache of finished
//! runs, and progress lines with an estimate of the time left.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{LabError, Result};
use crate::resources::{self, DiskGate};
use crate::run_cache::RunCache;
use crate::runner::{run_plan, Outcome};
use crate::spec::{Plan, RunSpec};

/// How a batch of independent runs (a repro's, an experiment's) is carried out: where, progress
/// lines or not, and the result folder's cache of finished runs, if any.
#[derive(Clone, Debug, Default)]
pub struct Runner {
    pub progress: bool,
    pub cache: Option<RunCache>,
    pub executor: Executor,
}

impl Runner {
    /// Runs `specs` (see [`run_many`]) and numbers their progress lines from `first + 1`.
    pub fn run_many(&self, specs: &[(String, RunSpec)], first: usize) -> Result<Vec<Outcome>> {
        run_many(specs, first, self.progress, self.cache.as_ref(), &self.executor)
    }
}

/// Where the runs of a batch are carried out. Runs are deterministic, so every executor gives the
/// same results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Executor {
    /// In this process, as many at once as the cores, the memory and the disk allow, or `jobs` at
    /// once whatever the memory estimate says (`local=N`: for runs the estimate is known to
    /// overstate; the disk gate still holds).
    Local { jobs: Option<usize> },
    /// As Ray tasks, on the cluster at `address` or on a Ray started here (see [`crate::ray`]).
    Ray { address: Option<String> },
}

impl Default for Executor {
    fn default() -> Executor {
        Executor::Local { jobs: None }
    }
}

impl std::str::FromStr for Executor {
    type Err = crate::spec::named::NameError;
    fn from_str(s: &str) -> std::result::Result<Executor, Self::Err> {
        let unknown = || format!("unknown executor '{s}'; accepted: local, local=N, ray, ray=ADDRESS").into();
        match s {
            "local" => Ok(Executor::default()),
            "ray" => Ok(Executor::Ray { address: None }),
            other => match (other.strip_prefix("local="), other.strip_prefix("ray=")) {
                (Some(n), _) => match n.parse::<usize>() {
                    Ok(jobs) if jobs > 0 => Ok(Executor::Local { jobs: Some(jobs) }),
                    _ => Err(format!("executor '{s}': N in local=N is a number of runs at once, at least 1").into()),
                },
                (_, Some(a)) if !a.is_empty() => Ok(Executor::Ray { address: Some(a.to_string()) }),
                _ => Err(unknown()),
            },
        }
    }
}

/// Runs independent `specs` and returns their outcomes in the order given. Locally, as many run
/// in parallel as the cores and the available memory allow (each run's
/// `DeviceSpec::memory_estimate`), a run whose device spills to a file starting only when its disk
/// estimate fits (`DeviceSpec::disk_estimate`); on Ray, Ray schedules them.
/// A run `cache` holds is read back instead of run, and each run that finishes is stored in it
/// (see [`RunCache`]), so an interrupted caller resumes. `progress` prints a line as each run
/// starts and ends (numbered from `first + 1`) with an estimate of the time left. Runs are
/// deterministic, so the order they finish in changes nothing.
pub fn run_many(
    specs: &[(String, RunSpec)],
    first: usize,
    progress: bool,
    cache: Option<&RunCache>,
    executor: &Executor,
) -> Result<Vec<Outcome>> {
    let slots: Vec<Mutex<Option<Outcome>>> = specs.iter().map(|_| Mutex::new(None)).collect();
    let mut todo = Vec::new();
    for (i, (label, spec)) in specs.iter().enumerate() {
        match cache.map(|c| c.get(label, spec)).transpose() {
            Ok(Some(Some(done))) => *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(Ok(done)),
            Ok(_) => todo.push(i),
            // A cached run that cannot be read back is run again.
            Err(e) => {
                eprintln!("warning: {e}; running it again");
                todo.push(i);
            }
        }
    }
    // A report rebuilt from a folder's finished runs runs nothing: a run not there is failed.
    let (mut missing, mut failed_before) = (0, 0);
    if cache.is_some_and(|c| c.read_only()) {
        missing = todo.len();
        for i in todo.drain(..) {
            let (label, spec) = &specs[i];
            let why = match cache.map(|c| c.failure(label, spec)).transpose() {
                Ok(Some(Some(error))) => {
                    failed_before += 1;
                    format!("failed when it ran: {error}")
                }
                Ok(_) => "not among the result folder's finished runs (--report-only runs nothing)".to_string(),
                Err(e) => format!("not among the result folder's finished runs, and its failure cannot be read: {e}"),
            };
            *slots[i].lock().unwrap_or_else(|e| e.into_inner()) =
                Some(Err(LabError::MissingRun { key: label.clone(), why }));
        }
    }
    // Each run is planned once, here; one that cannot be is a failed run.
    let mut plans: Vec<Option<Plan>> = specs.iter().map(|_| None).collect();
    let mut unplanned = Vec::new();
    todo.retain(|&i| match specs[i].1.plan() {
        Ok(p) => {
            plans[i] = Some(p);
            true
        }
        Err(e) => {
            unplanned.push((i, e));
            false
        }
    });
    let work = |i: usize| plans[i].as_ref().map_or(0.0, |p| p.work);
    let eta = Mutex::new(Eta::new(todo.iter().map(|&i| work(i))));
    // What every finished run goes through, wherever it ran: the cache, the progress line, its slot.
    let finished = |i: usize, r: Outcome| {
        let (label, spec) = &specs[i];
        // Not kept, the run is still a result: a resumed batch would only run it again.
        let kept = match (cache, &r) {
            (Some(c), Ok((result, timing))) => c.put(label, spec, result, timing),
            (Some(c), Err(e)) => c.put_failure(label, spec, &e.to_string()),
            (None, _) => Ok(()),
        };
        if let Err(e) = kept {
            eprintln!("warning: {label}: {e}");
        }
        let r = r.map_err(|e| LabError::Run { label: label.clone(), source: Box::new(e) });
        if progress {
            let left = eta.lock().map(|mut e| e.finished(work(i))).unwrap_or_default();
            match &r {
                Ok((_, t)) => eprintln!("[{}] {label}: done in {:.1} s{left}", first + i + 1, t.wall_time_s),
                Err(e) => eprintln!("[{}] failed: {e}{left}", first + i + 1),
            }
        }
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(r);
        }
    };
    let cached = specs.len() - todo.len() - unplanned.len() - missing;
    let header = |how: String| {
        // A batch of one (a run planned alone) needs no header.
        if progress && specs.len() > 1 {
            if missing > 0 {
                let absent = match failed_before {
                    0 => format!("{missing} not there"),
                    n if n == missing => format!("{n} failed when they ran"),
                    n => format!("{missing} not there ({n} failed when they ran)"),
                };
                eprintln!(
                    "{} runs: {cached} read from the result folder, {absent} (they read \"failed\")",
                    specs.len()
                );
            } else if todo.is_empty() {
                eprintln!("{} runs, all done before (read from the result folder)", specs.len());
            } else {
                let before = if cached > 0 {
                    format!(" ({cached} already done, read from the result folder)")
                } else {
                    String::new()
                };
                eprintln!("{} runs{before}, {how}", specs.len());
            }
        }
    };
    for (i, e) in unplanned {
        if progress {
            eprintln!("[{}] failed: {e}", first + i + 1);
        }
        let failed = LabError::Run { label: specs[i].0.clone(), source: Box::new(e) };
        *slots[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(Err(failed));
    }
    match executor {
        Executor::Local { jobs } => {
            let plans: Vec<(usize, &Plan)> = todo.iter().filter_map(|&i| plans[i].as_ref().map(|p| (i, p))).collect();
            run_here(specs, &plans, first, *jobs, progress, &finished, header)?
        }
        Executor::Ray { address } => {
            let runs: Vec<(usize, &RunSpec)> = todo.iter().map(|&i| (i, &specs[i].1)).collect();
            header(format!("{} on Ray ({})", todo.len(), address.as_deref().unwrap_or("a Ray started here")));
            crate::ray::run(address.as_deref(), &runs, finished)?;
        }
    }
    Ok(slots
        .into_iter()
        .zip(specs)
        .map(|(slot, (label, _))| {
            slot.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(LabError::Run {
                    label: label.clone(),
                    source: Box::new(LabError::Remote("the run did not finish".into())),
                })
            })
        })
        .collect())
}

/// Runs the `plans` of `specs` (by index) on this machine's cores, sized to its memory and disk
/// (or `jobs` at once, sized to its disk only), passing each outcome to `finished`; `header`
/// prints the batch's line.
fn run_here(
    specs: &[(String, RunSpec)],
    todo: &[(usize, &Plan)],
    first: usize,
    jobs: Option<usize>,
    progress: bool,
    finished: &(dyn Fn(usize, Outcome) + Sync),
    header: impl Fn(String),
) -> Result<()> {
    let per_run = todo.iter().map(|(_, p)| p.memory).max().unwrap_or(0);
    let max_disk = todo.iter().map(|(_, p)| p.disk).max().unwrap_or(0);
    let spill_dir = todo.iter().find_map(|(_, p)| p.spill_dir.clone());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let memory = resources::available_memory();
    let workers = match jobs {
        Some(n) => n.min(todo.len()).max(1),
        None => resources::workers(todo.len(), cores, per_run, memory),
    };
    let gate = DiskGate::over(spill_dir.as_deref());
    let disk = match gate.budget() {
        Some(d) if max_disk > 0 => {
            format!("; {} GiB of disk for spill files, up to {} GiB per run", d >> 30, max_disk.div_ceil(1 << 30))
        }
        _ => String::new(),
    };
    let set = if jobs.is_some() { "as asked, " } else { "" };
    header(format!(
        "{workers} at a time ({set}{cores} cores, {} MiB available, up to {} MiB per run{disk})",
        memory.map_or("unknown".into(), |m| (m >> 20).to_string()),
        per_run >> 20
    ));
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&(i, plan)) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let hold = gate.admit(plan.disk);
                    if progress {
                        eprintln!("[{}] {}", first + i + 1, specs[i].0);
                    }
                    let r = run_plan(plan, false);
                    drop(hold);
                    finished(i, r);
                }
            });
        }
    });
    Ok(())
}

/// The time left of a batch of runs: the batch's pace so far (wall time since it began per unit
/// of finished work, the workers' overlap included) times the work left, each run weighing its
/// user data (`RunSpec::work`), so that small runs done first do not promise a short wait.
struct Eta {
    start: std::time::Instant,
    total: usize,
    done: usize,
    work_total: f64,
    work_done: f64,
}

impl Eta {
    fn new(work: impl Iterator<Item = f64>) -> Eta {
        let work: Vec<f64> = work.collect();
        Eta {
            start: std::time::Instant::now(),
            total: work.len(),
            done: 0,
            work_total: work.iter().sum(),
            work_done: 0.0,
        }
    }

    /// Counts a finished run of `work`; returns `" (3 of 12 runs done, about 25 min left)"`.
    fn finished(&mut self, work: f64) -> String {
        self.done += 1;
        self.work_done += work;
        if self.done == self.total {
            return format!(" ({} of {} runs done)", self.done, self.total);
        }
        let left = (self.work_total - self.work_done).max(0.0);
        let secs = self.start.elapsed().as_secs_f64() / self.work_done.max(1.0) * left;
        let human = if secs >= 3600.0 {
            format!("{:.1} h", secs / 3600.0)
        } else if secs >= 60.0 {
            format!("{:.0} min", secs / 60.0)
        } else {
            format!("{secs:.0} s")
        };
        format!(" ({} of {} runs done, about {human} left)", self.done, self.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn executors_parse() {
        assert_eq!("local".parse(), Ok(Executor::Local { jobs: None }));
        assert_eq!("local=2".parse(), Ok(Executor::Local { jobs: Some(2) }));
        assert_eq!("ray".parse(), Ok(Executor::Ray { address: None }));
        assert_eq!("ray=auto".parse(), Ok(Executor::Ray { address: Some("auto".into()) }));
        assert_eq!(
            "ray=".parse::<Executor>().unwrap_err().0,
            "unknown executor 'ray='; accepted: local, local=N, ray, ray=ADDRESS"
        );
        for bad in ["local=0", "local=two", "local="] {
            let e = bad.parse::<Executor>().unwrap_err().0;
            assert!(e.contains("is a number of runs at once, at least 1"), "{bad}: {e}");
        }
    }

    /// One fill of `records` 1 KiB KVs on a 64 MiB simulated SSD: 100,000 do not fit.
    fn fill(records: u64) -> Vec<(String, RunSpec)> {
        let text = format!(
            "title = \"t\"\n[device]\nfs = \"sim\"\ncapacity = \"64MiB\"\n\
             [workload]\nname = \"fillrandom\"\nrecords = {records}\nvalue_size = 1024\n"
        );
        crate::experiment::Experiment::parse(&text).expect("experiment").runs()
    }

    fn error(outcomes: &[Outcome]) -> String {
        outcomes[0].as_ref().expect_err("a failed run").to_string()
    }

    #[test]
    fn a_failed_run_is_recorded_for_the_report_and_run_again_on_resume() {
        let dir = tempfile::tempdir().expect("tempdir");
        let local = Executor::default();
        let cache = RunCache::open(dir.path(), false).expect("cache");
        let full = fill(100_000);
        let first = error(&run_many(&full, 0, false, Some(&cache), &local).expect("batch"));
        assert!(first.contains("no space left on device"), "{first}");

        // A report rebuilt without running gives the failure as it was, not "not there".
        let read_only = RunCache::finished_runs(dir.path()).expect("cache");
        let rebuilt = error(&run_many(&full, 0, false, Some(&read_only), &local).expect("batch"));
        assert!(rebuilt.contains("failed when it ran") && rebuilt.contains("no space left on device"), "{rebuilt}");
        let other = error(&run_many(&fill(1_000), 0, false, Some(&read_only), &local).expect("batch"));
        assert!(other.contains("not among the result folder's finished runs"), "another spec's record: {other}");

        // A resumed batch runs it again (a failure may be the machine's), and a run that then
        // finishes replaces the record.
        let again = error(&run_many(&full, 0, false, Some(&cache), &local).expect("batch"));
        assert!(again.contains("no space left on device") && !again.contains("failed when it ran"), "{again}");
        let small = fill(1_000);
        cache.put_failure(&small[0].0, &small[0].1, "killed").expect("record");
        let rebuilt = error(&run_many(&small, 0, false, Some(&read_only), &local).expect("batch"));
        assert!(rebuilt.contains("failed when it ran: killed"), "{rebuilt}");
        assert!(run_many(&small, 0, false, Some(&cache), &local).expect("batch")[0].is_ok());
        assert!(run_many(&small, 0, false, Some(&read_only), &local).expect("batch")[0].is_ok());
        let failures = std::fs::read_dir(dir.path().join(crate::run_cache::DIR))
            .expect("runs")
            .filter(|e| e.as_ref().expect("entry").file_name().to_string_lossy().ends_with(".failed.json"))
            .count();
        assert_eq!(failures, 1, "the full fill's record stays, the small one's is gone");
    }
}

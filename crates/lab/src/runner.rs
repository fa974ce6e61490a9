//! One run: a storage stack, the engine on it, and a workload's phases (a load or fill, then the
//! measured operations), measured into a [`RunResult`]. Every command and experiment goes through
//! here, so they all measure the same way.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use workload::db_bench::DbBenchKind;
use workload::mixgraph::{Mixgraph, MixgraphConfig, MixgraphFill};
pub use workload::ValueData;
use workload::{Op, ValueSize, Workload, WorkloadSpec, YcsbWorkload};

use crate::engine::{KvEngine, LsmEngine};
use crate::harness::{run_phase, PhaseResult};
use crate::kv_device::{KvDesign, KvDeviceEngine};
use crate::resources::{self, DiskGate};
use crate::result::{RunResult, Timing};
use crate::run_cache::RunCache;
use crate::stack::{Backend, DeviceArgs, Stack};

/// What a run gives back.
pub type Outcome = Result<(RunResult, Timing), String>;

/// Everything that defines a run. It serializes (as JSON) for runs carried out by another process,
/// a Ray worker for instance (see [`Executor`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunSpec {
    pub device: DeviceArgs,
    /// Engine options.
    pub engine: lsm::Options,
    /// A key-value SSD design instead of the LSM engine on a file system (`--engine plsc`); the
    /// device flags give its preset and capacity, and `engine` does not apply.
    pub kv: Option<KvDesign>,
    pub sync: bool,
    pub workload: Workload,
    /// Records loaded (YCSB), key space and writes (db_bench fills), keys filled (Mixgraph).
    pub records: u64,
    /// Operations of the run phase (0: load/fill only).
    pub operations: u64,
    pub value_size: ValueSize,
    /// What the values' bytes are (their sizes are `value_size`'s either way).
    pub values: ValueData,
    /// Key size; `None` keeps the workload's own.
    pub key_size: Option<usize>,
    pub seed: u64,
    /// Ends the run with a full scan into `RunResult::content_digest` (after the accounting is
    /// taken, so the scan's reads are not in it).
    pub digest: bool,
}

impl RunSpec {
    /// The run's weight in a batch's estimate of time left: the user bytes of its load and of
    /// its operations.
    pub fn work(&self) -> f64 {
        (self.records + self.operations) as f64 * self.record_bytes()
    }

    /// User data the run writes before its measured phase: every record (what a device holds
    /// live, for sizing its spill file).
    pub fn data_bytes(&self) -> u64 {
        (self.records as f64 * self.record_bytes()) as u64
    }

    /// Page contents the run's device keeps for its records: all their bytes, or with zero values
    /// in the compact store, about their keys and headers (two 64-byte granules per record).
    pub fn kept_bytes(&self) -> u64 {
        match self.values {
            ValueData::Generated => self.data_bytes(),
            ValueData::Zeros => self.records * (self.key_size.unwrap_or(24) as u64 + 128),
        }
    }

    /// A key (24 bytes when the workload keeps its own) and a mean value.
    fn record_bytes(&self) -> f64 {
        self.value_size.mean() + self.key_size.unwrap_or(24) as f64
    }
}

/// Runs `spec`. Phases are: YCSB load, then the workload; Mixgraph fill, then the mix; db_bench
/// fills alone, reads after a fillrandom. In simulation each phase ends when its background work
/// is done, so its cost is inside it.
pub fn run(spec: &RunSpec, progress: bool) -> Result<(RunResult, Timing), String> {
    let wall = std::time::Instant::now();
    if spec.records == 0 {
        return Err("records: must be at least 1".into());
    }
    let (stack, mut engine) = open(&spec.device, &spec.engine, spec.sync, spec.kv)?;
    let ws = WorkloadSpec {
        records: spec.records,
        operations: spec.operations.max(1),
        value_size: spec.value_size,
        key_size: spec.key_size,
        values: spec.values,
    };
    let settle = stack.simulated();
    let mut phases: Vec<PhaseResult> = Vec::new();
    let mut phase = |name: &str, ops: Box<dyn Iterator<Item = Op> + Send>, n: u64, engine: &mut dyn KvEngine| {
        run_phase(name, engine, &stack, ops, n, settle, progress).map(|p| phases.push(p))
    };
    let build = |w: Workload, seed: u64| w.build(&ws, seed).map_err(|e| e.to_string());
    match spec.workload {
        Workload::Ycsb(y) => {
            phase("load", build(Workload::Ycsb(YcsbWorkload::Load), spec.seed)?, spec.records, engine.as_mut())?;
            if y != YcsbWorkload::Load && spec.operations > 0 {
                phase(
                    &format!("run {}", y.name()),
                    build(spec.workload, spec.seed + 1)?,
                    spec.operations,
                    engine.as_mut(),
                )?;
            }
        }
        Workload::Mixgraph(k) => {
            let mut cfg = MixgraphConfig::fast20(k, spec.records, spec.operations.max(1));
            if let Some(k) = spec.key_size {
                cfg.key_size = k;
            }
            let fill = MixgraphFill::new(&cfg, spec.seed).map_err(|e| e.to_string())?;
            phase("fill", spec.values.apply(Box::new(fill)), spec.records, engine.as_mut())?;
            if spec.operations > 0 {
                let mix = Mixgraph::new(cfg, spec.seed + 1).map_err(|e| e.to_string())?;
                phase(
                    &format!("run {}", k.name()),
                    spec.values.apply(Box::new(mix)),
                    spec.operations,
                    engine.as_mut(),
                )?;
            }
        }
        Workload::DbBench(k) => {
            if !k.writes() {
                phase(
                    "fillrandom",
                    build(Workload::DbBench(DbBenchKind::FillRandom), spec.seed)?,
                    spec.records,
                    engine.as_mut(),
                )?;
            }
            let n = if k.writes() { spec.records } else { spec.operations.max(1) };
            phase(k.name(), build(spec.workload, spec.seed + 1)?, n, engine.as_mut())?;
        }
    }
    finish(spec.workload.name(), &spec.device, spec.kv, &stack, engine.as_mut(), phases, spec.digest, wall)
}

/// The store a run drives: the LSM engine on the device flags' file system, or the key-value SSD
/// `kv` names (its device is the flags' preset and capacity). Shared by every command.
pub fn open(
    device: &DeviceArgs,
    engine: &lsm::Options,
    sync: bool,
    kv: Option<KvDesign>,
) -> Result<(Stack, Box<dyn KvEngine>), String> {
    Ok(match kv {
        Some(design) => {
            let stack = Stack::kv_device(device, design)?;
            let Backend::Kv(dev) = &stack.backend else { unreachable!("a key-value SSD stack") };
            let clock = stack.clock.clone().expect("a key-value SSD runs in simulated time");
            let engine = KvDeviceEngine::new(Arc::clone(dev), clock);
            (stack, Box::new(engine))
        }
        None => {
            let stack = Stack::build(device)?;
            let options = lsm::Options { create_if_missing: true, ..engine.clone() };
            let engine = LsmEngine::open(storage::Env::new(stack.fs()?), options, sync)?;
            (stack, Box::new(engine))
        }
    })
}

/// The result of `phases` run on `engine` (and its content digest when asked), the engine closed,
/// and the wall-clock figures since `wall`. Shared by every command.
#[allow(clippy::too_many_arguments)]
pub fn finish(
    workload: &str,
    device: &DeviceArgs,
    kv: Option<KvDesign>,
    stack: &Stack,
    engine: &mut dyn KvEngine,
    phases: Vec<PhaseResult>,
    digest: bool,
    wall: std::time::Instant,
) -> Result<(RunResult, Timing), String> {
    // A key-value SSD has no engine statistics of the LSM's kind: its accounting is the device's.
    let stats = match kv {
        Some(_) => lsm::DbStats::default(),
        None => engine.stats().ok_or("the engine closed early")?,
    };
    let description = match kv {
        Some(d) => format!("simulated {} key-value SSD ({}){}", device.preset, d.name(), device.shape()),
        None => device.describe(),
    };
    let mut result = RunResult::collect(workload, engine.describe(), description, stack, phases, &stats);
    if digest {
        result.content_digest = Some(engine.content_digest()?);
    }
    engine.close()?;
    let wall_time_s = wall.elapsed().as_secs_f64();
    let nand_ops_per_wall_sec = stack.nand_ops().map(|n| n as f64 / wall_time_s.max(1e-9));
    Ok((result, Timing { wall_time_s, nand_ops_per_wall_sec }))
}

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
    pub fn run_many(&self, specs: &[(String, RunSpec)], first: usize) -> Result<Vec<Outcome>, String> {
        run_many(specs, first, self.progress, self.cache.as_ref(), &self.executor)
    }
}

/// Where the runs of a batch are carried out. Runs are deterministic, so every executor gives the
/// same results.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Executor {
    /// In this process, as many at once as the cores, the memory and the disk allow.
    #[default]
    Local,
    /// As Ray tasks, on the cluster at `address` or on a Ray started here (see [`crate::ray`]).
    Ray { address: Option<String> },
}

impl std::str::FromStr for Executor {
    type Err = String;
    fn from_str(s: &str) -> Result<Executor, String> {
        match s {
            "local" => Ok(Executor::Local),
            "ray" => Ok(Executor::Ray { address: None }),
            other => match other.strip_prefix("ray=") {
                Some(a) if !a.is_empty() => Ok(Executor::Ray { address: Some(a.to_string()) }),
                _ => Err(format!("unknown executor '{other}'; accepted: local, ray, ray=ADDRESS")),
            },
        }
    }
}

/// Runs independent `specs` and returns their outcomes in the order given. Locally, as many run
/// in parallel as the cores and the available memory allow (each run's
/// `DeviceArgs::memory_estimate`), a run whose device spills to a file starting only when its disk
/// estimate fits (`DeviceArgs::disk_estimate`); on Ray, Ray schedules them.
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
) -> Result<Vec<Outcome>, String> {
    let slots: Vec<Mutex<Option<Outcome>>> = specs.iter().map(|_| Mutex::new(None)).collect();
    let mut todo = Vec::new();
    for (i, (label, spec)) in specs.iter().enumerate() {
        match cache.map(|c| c.get(label, spec)).transpose() {
            Ok(Some(Some(done))) => *slots[i].lock().map_err(|_| "a run panicked")? = Some(Ok(done)),
            Ok(_) => todo.push(i),
            // A cached run that cannot be read back is run again.
            Err(e) => {
                eprintln!("warning: {e}; running it again");
                todo.push(i);
            }
        }
    }
    let eta = Mutex::new(Eta::new(todo.iter().map(|&i| specs[i].1.work())));
    // What every finished run goes through, wherever it ran: the cache, the progress line, its slot.
    let finished = |i: usize, r: Outcome| {
        let (label, spec) = &specs[i];
        let r = r.map_err(|e| format!("{label}: {e}"));
        // Not kept, the run is still a result: a resumed batch would only run it again.
        if let (Some(c), Ok((result, timing))) = (cache, &r) {
            if let Err(e) = c.put(label, spec, result, timing) {
                eprintln!("warning: {label}: {e}");
            }
        }
        if progress {
            let left = eta.lock().map(|mut e| e.finished(spec.work())).unwrap_or_default();
            match &r {
                Ok((_, t)) => eprintln!("[{}] {label}: done in {:.1} s{left}", first + i + 1, t.wall_time_s),
                Err(e) => eprintln!("[{}] failed: {e}{left}", first + i + 1),
            }
        }
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(r);
        }
    };
    let cached = specs.len() - todo.len();
    let header = |how: String| {
        // A batch of one (a run planned alone) needs no header.
        if progress && specs.len() > 1 {
            if todo.is_empty() {
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
    match executor {
        Executor::Local => run_here(specs, &todo, first, progress, &finished, header)?,
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
            slot.into_inner().ok().flatten().unwrap_or_else(|| Err(format!("{label}: the run did not finish")))
        })
        .collect())
}

/// Runs `specs[todo]` on this machine's cores, sized to its memory and disk, passing each outcome
/// to `finished`; `header` prints the batch's line.
fn run_here(
    specs: &[(String, RunSpec)],
    todo: &[usize],
    first: usize,
    progress: bool,
    finished: &(dyn Fn(usize, Outcome) + Sync),
    header: impl Fn(String),
) -> Result<(), String> {
    let (mut per_run, mut max_disk) = (0, 0);
    let mut disk_need = vec![0; specs.len()];
    let mut spill_dir = None;
    for &i in todo {
        let spec = &specs[i].1;
        per_run = per_run.max(spec.device.memory_estimate(spec.kept_bytes())?);
        let (disk, dir) = spec.device.disk_estimate(spec.data_bytes())?;
        disk_need[i] = disk;
        max_disk = max_disk.max(disk);
        spill_dir = spill_dir.or(dir);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let memory = resources::available_memory();
    let workers = resources::workers(todo.len(), cores, per_run, memory);
    let gate = DiskGate::over(spill_dir.as_deref());
    let disk = match gate.budget() {
        Some(d) if max_disk > 0 => {
            format!("; {} GiB of disk for spill files, up to {} GiB per run", d >> 30, max_disk.div_ceil(1 << 30))
        }
        _ => String::new(),
    };
    header(format!(
        "{workers} at a time ({cores} cores, {} MiB available, up to {} MiB per run{disk})",
        memory.map_or("unknown".into(), |m| (m >> 20).to_string()),
        per_run >> 20
    ));
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                while let Some(&i) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (label, spec) = &specs[i];
                    let hold = gate.admit(disk_need[i]);
                    if progress {
                        eprintln!("[{}] {label}", first + i + 1);
                    }
                    let r = run(spec, false);
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

    /// A run sent to another process (a Ray worker) is the same run: its spec survives JSON whole
    /// (the run cache compares the `Debug` text, which names every field).
    #[test]
    fn specs_survive_json_and_executors_parse() {
        let demo = crate::experiment::Experiment::parse(include_str!("../experiments/demo.toml")).unwrap();
        let mut runs = demo.runs().unwrap();
        runs[0].1.values = ValueData::Zeros;
        runs[1].1.kv = Some(KvDesign::DftlKv { mapping_ram: Some(4096) });
        for (label, spec) in &runs {
            let back: RunSpec = serde_json::from_str(&serde_json::to_string(spec).unwrap()).unwrap();
            assert_eq!(format!("{back:?}"), format!("{spec:?}"), "{label}");
        }
        assert_eq!("local".parse(), Ok(Executor::Local));
        assert_eq!("ray".parse(), Ok(Executor::Ray { address: None }));
        assert_eq!("ray=auto".parse(), Ok(Executor::Ray { address: Some("auto".into()) }));
        assert_eq!(
            "ray=".parse::<Executor>().unwrap_err(),
            "unknown executor 'ray='; accepted: local, ray, ray=ADDRESS"
        );
        assert!("zeros".parse::<ValueData>().is_ok() && "ones".parse::<ValueData>().is_err());
    }
}

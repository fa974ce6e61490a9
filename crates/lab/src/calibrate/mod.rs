//! `flashkv calibrate`: fits the host CPU cost model (`lsm::cpu`) on the machine it runs on.
//!
//! It runs db_bench shapes on the in-memory file system (wall clock: the CPU is real and nothing
//! waits for a device), values from 100 B to 16 KiB, fills, overwrites, random and sequential
//! reads and seeks, with and without Bloom filters, with a block cache that holds everything and
//! with larger blocks, at two sizes, in `--repeat` passes. Each run's two lanes are measured apart:
//! the foreground's CPU time is the calling thread's (the runner runs the workload on it), the
//! background's the rest of the process's (the engine's worker), each lane keeping its least CPU
//! over the passes. Each lane's CPU is regressed on the work the engine counted on that lane, term
//! by term, with non-negative least squares ([`nnls`]) weighted for relative error, so the fit
//! sees the lanes as simulation charges them. Every third run is held out of the fit and
//! predicted from it: the errors printed (per run and per lane) are the model's on runs it has
//! not seen.
//!
//! The result is a [`Calibration`] file: the coefficients as an experiment file's `[host]`
//! section takes them, with the date, the machine and the fit's quality.

pub mod nnls;

use std::path::PathBuf;

use lsm::cpu::{CpuCounts, CpuModel, Term};
use serde::Serialize;
use workload::ValueData;

use crate::error::{LabError, Result};
use crate::spec::host::{Calibration, FitInfo, HostCpu};
use crate::spec::named::parser;
use crate::spec::{Bytes, DeviceSpec, EngineSpec, FsKind, HostSpec, Named, RunSpec, WorkloadKind, WorkloadSpec};
use crate::table::Table;

#[derive(clap::Args, Debug, Clone)]
pub struct CalibrateArgs {
    /// Where to write the calibration (TOML: give it to `--cpu`, or copy its [host] section into
    /// an experiment file).
    #[arg(long, default_value = "calibration.toml")]
    pub out: PathBuf,
    /// Bytes of values each run writes (its fill; its reads visit as many keys); the runs are of two
    /// sizes, this and 2.5 times this.
    #[arg(long, default_value = "64MiB", value_parser = parser::<Bytes>)]
    pub data: Bytes,
    /// Runs every shape this many times, in passes over all of them, and keeps for each lane the
    /// run that used the least CPU (the others were slowed by what else the machine did).
    #[arg(long, default_value_t = 3, value_parser = crate::input::positive_count)]
    pub repeat: u64,
    /// Print the calibration and every run as JSON instead of tables.
    #[arg(long)]
    pub json: bool,
}

/// The value sizes calibrated over.
const VALUE_SIZES: [usize; 5] = [100, 400, 1024, 4096, 16384];

/// How a run shape departs from db_bench's defaults, so that more terms vary on their own: gets
/// that search every SST they consult, or read no block, and blocks built for fewer bytes. (A
/// memtable that holds a whole run was tried, to part inserts from their flushes' merges: its
/// inserts cost up to five times more than in a 4 MiB memtable, a cost no linear model of the
/// default engine should learn.)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tweak {
    None,
    /// No Bloom filter: every SST a get consults is searched.
    NoFilter,
    /// A block cache that holds everything: searches without reads.
    AllCached,
    /// 16 KiB data blocks: a quarter of the blocks for the same bytes.
    BigBlocks,
}

/// The run shapes at each value size.
const SHAPES: [(&str, Tweak); 9] = [
    ("fillseq", Tweak::None),
    ("fillrandom", Tweak::None),
    ("fillrandom,overwrite", Tweak::None),
    ("fillrandom,readrandom", Tweak::None),
    ("fillrandom,readrandom", Tweak::NoFilter),
    ("fillrandom,readrandom", Tweak::AllCached),
    ("fillrandom,readseq", Tweak::None),
    ("fillrandom,seekrandom", Tweak::None),
    ("fillrandom,overwrite", Tweak::BigBlocks),
];

impl Tweak {
    fn engine(self) -> EngineSpec {
        let d = lsm::OptionOverrides::default();
        let lsm = match self {
            Tweak::None => d,
            Tweak::NoFilter => lsm::OptionOverrides { bloom_bits_per_key: Some(0), ..d },
            Tweak::AllCached => lsm::OptionOverrides { block_cache: Some(Bytes(1 << 30)), ..d },
            Tweak::BigBlocks => lsm::OptionOverrides { block_size: Some(Bytes(16 << 10)), ..d },
        };
        EngineSpec { lsm, ..EngineSpec::default() }
    }

    fn label(self) -> &'static str {
        match self {
            Tweak::None => "",
            Tweak::NoFilter => ", no filter",
            Tweak::AllCached => ", all cached",
            Tweak::BigBlocks => ", 16 KiB blocks",
        }
    }
}

/// One lane of a measured run: the work it counted and the CPU it took.
#[derive(Clone, Debug, Serialize)]
pub struct LaneSample {
    pub counts: CpuCounts,
    pub cpu_s: f64,
    /// The fit's prediction.
    pub predicted_s: f64,
}

/// One measured run: its foreground (the calling thread: the workload's operations) and its
/// background (the engine's worker: flushes and compactions), measured apart so that the fit sees
/// each lane's work against that lane's CPU, as simulation charges it.
#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub label: String,
    pub foreground: LaneSample,
    pub background: LaneSample,
    /// Held out of the fit, to test it.
    pub held_out: bool,
}

impl Sample {
    pub fn lanes(&self) -> [&LaneSample; 2] {
        [&self.foreground, &self.background]
    }

    /// The run's CPU, measured and predicted.
    pub fn cpu_s(&self) -> f64 {
        self.foreground.cpu_s + self.background.cpu_s
    }

    pub fn predicted_s(&self) -> f64 {
        self.foreground.predicted_s + self.background.predicted_s
    }
}

/// What `calibrate` prints as JSON.
#[derive(Serialize)]
struct Report<'a> {
    calibration: &'a Calibration,
    samples: &'a [Sample],
}

/// The runs a calibration makes, labelled.
pub fn points(data: u64) -> Result<Vec<(String, RunSpec)>> {
    let mut out = Vec::new();
    for (scale, label) in [(2u64, ""), (5, " x2.5")] {
        for v in VALUE_SIZES {
            // db_bench keys are 16 bytes.
            let num = (data * scale / 2 / (v as u64 + 16)).max(100);
            for (benchmarks, tweak) in SHAPES {
                let kind = WorkloadKind::parse_name(benchmarks).map_err(|e| LabError::invalid("benchmarks", e.0))?;
                let workload = WorkloadSpec {
                    value_size: crate::spec::ValueSizeSpec::parse_name(&v.to_string())
                        .map_err(|e| LabError::invalid("value_size", e.0))?,
                    values: ValueData::Generated,
                    ..WorkloadSpec::new(kind, num, num)
                };
                let engine = tweak.engine();
                let device = DeviceSpec { fs: FsKind::Mem, ..DeviceSpec::default() };
                let spec = RunSpec {
                    host: HostSpec { cpu: HostCpu::Off, ..HostSpec::default() },
                    ..RunSpec::new(engine, device, workload)
                };
                out.push((format!("{benchmarks} {v} B{}{label}", tweak.label()), spec));
            }
        }
    }
    Ok(out)
}

/// CPU seconds (user + system) of `clock`: the process's or the calling thread's.
fn cpu_s(clock: libc::clockid_t) -> f64 {
    // SAFETY: clock_gettime writes the struct it is given and reads nothing else.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Runs `spec` and measures each lane's CPU time against the work it counted. The runner runs the
/// workload on this thread, so the foreground's CPU is this thread's; the background's is the rest
/// of the process's (on the in-memory file system the engine's worker is the only other thread).
fn measure(label: &str, spec: &RunSpec) -> Result<Sample> {
    let (process, thread) = (cpu_s(libc::CLOCK_PROCESS_CPUTIME_ID), cpu_s(libc::CLOCK_THREAD_CPUTIME_ID));
    let (r, _) = crate::runner::run(spec, false)?;
    let fg_s = cpu_s(libc::CLOCK_THREAD_CPUTIME_ID) - thread;
    let bg_s = (cpu_s(libc::CLOCK_PROCESS_CPUTIME_ID) - process - fg_s).max(0.0);
    let h = r
        .host
        .cpu
        .ok_or_else(|| LabError::invalid("calibrate", format!("{label}: the run counted no host CPU work")))?;
    let lane = |counts: CpuCounts, cpu_s: f64| LaneSample { counts, cpu_s, predicted_s: 0.0 };
    Ok(Sample {
        label: label.to_string(),
        foreground: lane(h.foreground, fg_s),
        background: lane(h.background, bg_s),
        held_out: false,
    })
}

/// A fitted model: coefficients in ns per unit.
pub struct Fit {
    pub model: CpuModel,
}

impl Fit {
    /// Predicted CPU seconds of work `counts`.
    pub fn predict(&self, counts: &CpuCounts) -> f64 {
        Term::ALL.iter().map(|&t| self.model.get(t) * counts.get(t) as f64).sum::<f64>() / 1e9
    }
}

/// A lane's CPU under which its relative error is not weighed more: a lane that did almost
/// nothing (the background of a run that never compacts) would otherwise weigh its noise most.
const FLOOR_S: f64 = 0.01;

/// Fits the model on `samples`' lanes, each lane of each run one equation: non-negative least
/// squares, each equation weighted by the inverse of its CPU time, so that the fit minimises
/// relative errors (a run of seconds would otherwise outweigh a hundred runs of milliseconds). No
/// per-run constant: what a run does besides the counted work (opening a database, its threads)
/// is small and is not charged in simulation.
pub fn fit(samples: &[&Sample]) -> Fit {
    let lanes: Vec<&LaneSample> = samples.iter().flat_map(|s| s.lanes()).collect();
    let weight = |l: &LaneSample| 1.0 / (l.cpu_s.max(FLOOR_S) * 1e9);
    let rows: Vec<Vec<f64>> =
        lanes.iter().map(|l| Term::ALL.iter().map(|&t| l.counts.get(t) as f64 * weight(l)).collect()).collect();
    let y: Vec<f64> = lanes.iter().map(|l| l.cpu_s * 1e9 * weight(l)).collect();
    let x = nnls::nnls(&rows, &y);
    let mut model = CpuModel::default();
    for (i, t) in Term::ALL.into_iter().enumerate() {
        model.set(t, x[i]);
    }
    Fit { model }
}

/// R squared of `fit` over `samples`' lanes.
fn r_squared(fit: &Fit, samples: &[&Sample]) -> f64 {
    let lanes: Vec<&LaneSample> = samples.iter().flat_map(|s| s.lanes()).collect();
    let mean = lanes.iter().map(|l| l.cpu_s).sum::<f64>() / lanes.len().max(1) as f64;
    let total: f64 = lanes.iter().map(|l| (l.cpu_s - mean).powi(2)).sum();
    let residual: f64 = lanes.iter().map(|l| (l.cpu_s - fit.predict(&l.counts)).powi(2)).sum();
    if total > 0.0 {
        1.0 - residual / total
    } else {
        0.0
    }
}

/// |predicted - measured| / measured.
fn error(predicted: f64, measured: f64) -> f64 {
    (predicted - measured).abs() / measured.max(1e-9)
}

/// Mean and largest of `errors`.
fn mean_max(errors: &[f64]) -> (f64, f64) {
    (errors.iter().sum::<f64>() / errors.len().max(1) as f64, errors.iter().copied().fold(0.0, f64::max))
}

/// Today as YYYY-MM-DD (UTC), from the system clock.
fn today() -> String {
    let days = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The machine: its CPU model and cores (from /proc/cpuinfo where there is one: the machine's,
/// not the ones this process may use).
fn machine() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = info
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or_else(|| std::env::consts::ARCH.to_string(), |m| m.trim().to_string());
    let cores = match info.lines().filter(|l| l.starts_with("processor")).count() {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    format!("{model}, {cores} cores")
}

/// `flashkv calibrate`.
pub fn run(args: &CalibrateArgs, progress: bool) -> Result<()> {
    let points = points(args.data.0)?;
    let mut samples: Vec<Sample> = Vec::with_capacity(points.len());
    // The repeats are passes over every shape rather than runs back to back: a shared machine's
    // slow spells last seconds to minutes, so a shape's runs are spread over the calibration.
    // Each lane keeps the run in which it used the least CPU (with that run's counts: a lane's
    // work and its CPU stay one observation).
    for pass in 0..args.repeat {
        for (i, (label, spec)) in points.iter().enumerate() {
            let s = measure(label, spec)?;
            if progress || !args.json {
                eprintln!(
                    "[pass {}/{}, {}/{}] {label}: {:.3} s of CPU",
                    pass + 1,
                    args.repeat,
                    i + 1,
                    points.len(),
                    s.cpu_s()
                );
            }
            match samples.get_mut(i) {
                None => samples.push(s),
                Some(kept) => {
                    if s.foreground.cpu_s < kept.foreground.cpu_s {
                        kept.foreground = s.foreground;
                    }
                    if s.background.cpu_s < kept.background.cpu_s {
                        kept.background = s.background;
                    }
                }
            }
        }
    }
    for (i, s) in samples.iter_mut().enumerate() {
        // Every third run is held out of the fit, rotating with the value size so that each shape
        // is fitted at some sizes and predicted at others.
        s.held_out = (i + i / SHAPES.len()) % 3 == 2;
    }
    let fitted: Vec<&Sample> = samples.iter().filter(|s| !s.held_out).collect();
    let f = fit(&fitted);
    let (r2, runs) = (r_squared(&f, &fitted), fitted.len());
    for s in &mut samples {
        for l in [&mut s.foreground, &mut s.background] {
            l.predicted_s = f.predict(&l.counts);
        }
    }
    let held_out: Vec<&Sample> = samples.iter().filter(|s| s.held_out).collect();
    let run_errors: Vec<f64> = held_out.iter().map(|s| error(s.predicted_s(), s.cpu_s())).collect();
    // A lane is judged where it did work worth measuring (see FLOOR_S).
    let lane_errors: Vec<f64> = held_out
        .iter()
        .flat_map(|s| s.lanes())
        .filter(|l| l.cpu_s >= FLOOR_S)
        .map(|l| error(l.predicted_s, l.cpu_s))
        .collect();
    let ((mean, max), (lane_mean, lane_max)) = (mean_max(&run_errors), mean_max(&lane_errors));
    let info = FitInfo {
        date: today(),
        machine: machine(),
        runs,
        held_out: run_errors.len(),
        r_squared: r2,
        held_out_error_mean: mean,
        held_out_error_max: max,
        held_out_lane_error_mean: lane_mean,
        held_out_lane_error_max: lane_max,
    };
    let calibration = Calibration::new(info, f.model);
    std::fs::write(&args.out, calibration.to_toml())
        .map_err(|e| LabError::invalid("out", format!("cannot write {}: {e}", args.out.display())))?;
    if args.json {
        let report = Report { calibration: &calibration, samples: &samples };
        println!("{}", serde_json::to_string_pretty(&report).map_err(|e| LabError::invalid("json", e.to_string()))?);
        return Ok(());
    }
    print!("{}", render(&calibration, &samples));
    println!("written: {}", args.out.display());
    Ok(())
}

/// The coefficients, the fit and the held-out runs as tables.
pub fn render(c: &Calibration, samples: &[Sample]) -> String {
    let fitted: Vec<&Sample> = samples.iter().filter(|s| !s.held_out).collect();
    let fitted_cpu: f64 = fitted.iter().map(|s| s.cpu_s()).sum();
    let mut t = Table::new(&["term", "ns per unit", "share of the fitted runs' CPU"]);
    for term in Term::ALL {
        let units: f64 = fitted.iter().flat_map(|s| s.lanes()).map(|l| l.counts.get(term) as f64).sum();
        t.row(vec![
            term.name().into(),
            format!("{:.3}", c.model().get(term)),
            format!("{:.1} %", 100.0 * units * c.model().get(term) / 1e9 / fitted_cpu.max(1e-9)),
        ]);
    }
    let i = &c.calibration;
    let mut out = format!("host CPU cost model, {} on {}\n\n{}", i.date, i.machine, t.render());
    out.push_str(&format!("\nfit: {} runs (a foreground and a background each), R² {:.4}\n\n", i.runs, i.r_squared));
    let pct = |p: f64, m: f64| format!("{:+.1} %", 100.0 * (p - m) / m.max(1e-9));
    let mut h = Table::new(&[
        "held-out run",
        "measured s",
        "predicted s",
        "error",
        "foreground s",
        "error",
        "background s",
        "error",
    ]);
    for s in samples.iter().filter(|s| s.held_out) {
        let (f, b) = (&s.foreground, &s.background);
        h.row(vec![
            s.label.clone(),
            format!("{:.3}", s.cpu_s()),
            format!("{:.3}", s.predicted_s()),
            pct(s.predicted_s(), s.cpu_s()),
            format!("{:.3}", f.cpu_s),
            pct(f.predicted_s, f.cpu_s),
            format!("{:.3}", b.cpu_s),
            pct(b.predicted_s, b.cpu_s),
        ]);
    }
    out.push_str(&h.render());
    out.push_str(&format!(
        "\nheld-out error: {:.1} % mean, {:.1} % max over {} runs; per lane (of at least {} ms of CPU) {:.1} % mean, \
         {:.1} % max\n",
        100.0 * i.held_out_error_mean,
        100.0 * i.held_out_error_max,
        i.held_out,
        FLOOR_S * 1e3,
        100.0 * i.held_out_lane_error_mean,
        100.0 * i.held_out_lane_error_max,
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calibration_runs_cover_every_term_in_memory() {
        let p = points(1 << 20).unwrap();
        assert_eq!(p.len(), 2 * VALUE_SIZES.len() * SHAPES.len());
        for (label, spec) in &p {
            assert_eq!(spec.device.fs, FsKind::Mem, "{label}");
            spec.plan().unwrap();
        }
    }

    #[test]
    fn today_is_a_date() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"), "{d}");
    }

    /// A fit recovers the costs of synthetic runs whose CPU is exactly a known model's, and the
    /// prediction of a run is its counts times the coefficients.
    #[test]
    fn a_fit_recovers_a_known_model() {
        let mut truth = CpuModel::default();
        for (i, t) in Term::ALL.into_iter().enumerate() {
            truth.set(t, 1.0 + 10.0 * i as f64);
        }
        let samples: Vec<Sample> = (0..60u64)
            .map(|i| {
                let mut c = CpuCounts::default();
                for (j, t) in Term::ALL.into_iter().enumerate() {
                    c.set(t, 1000 + (i * 7919 + j as u64 * 104_729) % 50_000 * (j as u64 + 1));
                }
                let lane =
                    |c: CpuCounts| LaneSample { counts: c, cpu_s: truth.cost_ps(&c) as f64 / 1e12, predicted_s: 0.0 };
                let mut bg = CpuCounts::default();
                bg.set(Term::KeyMerged, c.key_merged);
                bg.set(Term::BlockByte, c.block_byte);
                Sample { label: format!("s{i}"), foreground: lane(c), background: lane(bg), held_out: false }
            })
            .collect();
        let refs: Vec<&Sample> = samples.iter().collect();
        let f = fit(&refs);
        for t in Term::ALL {
            assert!((f.model.get(t) - truth.get(t)).abs() < 1e-3 * truth.get(t), "{}: {:?}", t.name(), f.model);
        }
        assert!(r_squared(&f, &refs) > 0.999_999);
    }

    /// Every entry a run inserts it also flushes, so `insert` (foreground) and `key_flushed`
    /// (background) always count the same in a whole run, and so do the bytes written and built:
    /// a fit of whole runs cannot price them apart. Measured lane by lane, it can.
    #[test]
    fn lanes_apart_price_terms_that_move_together_in_a_run() {
        let mut truth = CpuModel::default();
        for (t, ns) in
            [(Term::Insert, 300.0), (Term::WriteByte, 0.5), (Term::KeyFlushed, 40.0), (Term::BlockByte, 0.25)]
        {
            truth.set(t, ns);
        }
        let samples: Vec<Sample> = (1..=8u64)
            .map(|i| {
                let (n, v) = (10_000 * i, 100 * (9 - i));
                let (mut fg, mut bg) = (CpuCounts::default(), CpuCounts::default());
                (fg.insert, fg.write_byte) = (n, n * v);
                (bg.key_flushed, bg.block_byte) = (n, n * v);
                let lane =
                    |c: CpuCounts| LaneSample { counts: c, cpu_s: truth.cost_ps(&c) as f64 / 1e12, predicted_s: 0.0 };
                Sample { label: format!("s{i}"), foreground: lane(fg), background: lane(bg), held_out: false }
            })
            .collect();
        let f = fit(&samples.iter().collect::<Vec<_>>());
        for t in [Term::Insert, Term::WriteByte, Term::KeyFlushed, Term::BlockByte] {
            assert!((f.model.get(t) - truth.get(t)).abs() < 1e-3 * truth.get(t), "{}: {:?}", t.name(), f.model);
        }
    }
}

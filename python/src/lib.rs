//! `flashkv._native`: the Rust side of the Python package. Thin on purpose: every function calls
//! the lab or the lsm engine as the `flashkv` command does, so that a result from Python is the
//! command's, byte for byte. Errors become `flashkv.FlashkvError` with the Rust message.
//!
//! Long calls (a run, an experiment) release the GIL, so Python threads and Ray's workers go on.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use lab::batch::{Executor, Runner};
use lab::error::LabError;
use lab::experiment::Experiment;
use lab::runner::Outcome;
use lab::spec::{Bytes, DeviceSpec, Named, Preset, RunSpec, Storage, Store};
use lab::stack::Stack;
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

create_exception!(_native, FlashkvError, PyException, "An error from flashkv, with its message.");

fn error(e: impl ToString) -> PyErr {
    FlashkvError::new_err(e.to_string())
}

/// Runs one run given as the JSON of a `RunSpec` (as `flashkv.ray_runs` receives it) and returns
/// its outcome as JSON: `{"result", "timing"}`, or `{"error"}` when the run failed.
#[pyfunction]
fn run_spec(py: Python<'_>, spec_json: &str) -> PyResult<String> {
    let spec: RunSpec = serde_json::from_str(spec_json).map_err(|e| error(format!("run spec: {e}")))?;
    let outcome = py.allow_threads(|| lab::runner::run(&spec, false));
    serde_json::to_string(&lab::ray::Reply::from(outcome)).map_err(error)
}

/// The experiment-file text of an experiment given as JSON (a dict of the file's sections), for a
/// file that a flashkv binary of one's own runs.
#[pyfunction]
fn experiment_text(json: &str) -> PyResult<String> {
    Experiment::text_from_json(json).map_err(error)
}

/// How many experiments this process has read (`ParsedExperiment.from_json` and `from_text`
/// together): the tests check that `flashkv.run` reads its experiment once.
static PARSED: AtomicUsize = AtomicUsize::new(0);

#[pyfunction]
fn experiments_parsed() -> usize {
    PARSED.load(Ordering::Relaxed)
}

/// An experiment read once, every run's specification made and checked (as `flashkv run` reads
/// its file): its runs for other executors, its run here, and the result folder of outcomes from
/// elsewhere all come from this one reading.
#[pyclass(frozen, module = "flashkv")]
struct ParsedExperiment {
    experiment: Experiment,
    /// `(label, spec)` per point, in order: made when read, handed out and matched by `assemble`.
    runs: Vec<(String, RunSpec)>,
}

impl ParsedExperiment {
    fn new(experiment: lab::error::Result<Experiment>) -> PyResult<ParsedExperiment> {
        PARSED.fetch_add(1, Ordering::Relaxed);
        let experiment = experiment.map_err(error)?;
        let runs = experiment.runs();
        Ok(ParsedExperiment { experiment, runs })
    }
}

#[pymethods]
impl ParsedExperiment {
    /// An experiment given as JSON (a dict of the file's sections), read straight into the
    /// experiment: no file text is made.
    #[staticmethod]
    fn from_json(json: &str) -> PyResult<ParsedExperiment> {
        ParsedExperiment::new(Experiment::from_json(json))
    }

    /// An experiment file's text.
    #[staticmethod]
    fn from_text(text: &str) -> PyResult<ParsedExperiment> {
        ParsedExperiment::new(Experiment::parse(text))
    }

    #[getter]
    fn title(&self) -> &str {
        self.experiment.title()
    }

    /// The runs: `(label, spec JSON)` per point, in order (each `spec JSON` as `run_spec` takes it).
    fn runs(&self) -> PyResult<Vec<(String, String)>> {
        self.runs.iter().map(|(label, spec)| Ok((label.clone(), serde_json::to_string(spec).map_err(error)?))).collect()
    }

    /// Refuses `out` now, before any run, unless the experiment's result folder can be written there.
    fn check_folder(&self, out: PathBuf) -> PyResult<()> {
        lab::report::check_folder(&out, self.experiment.title()).map_err(error)
    }

    /// Runs the experiment as `flashkv run` does, its runs on `executor` ("local", "ray" or
    /// "ray=ADDRESS"), and writes its result folder `out`.
    #[pyo3(signature = (out, executor = "local", progress = false))]
    fn run(&self, py: Python<'_>, out: PathBuf, executor: &str, progress: bool) -> PyResult<()> {
        let executor: Executor = executor.parse().map_err(error)?;
        // A folder that cannot be written is refused before the runs, not after them.
        self.check_folder(out.clone())?;
        py.allow_threads(|| {
            let (set, timings) = self.experiment.run(&Runner { progress, cache: None, executor })?;
            lab::publish::write_folder(&out, &set, &timings)
        })
        .map_err(error)
    }

    /// Writes the result folder `out` from the outcomes of the runs, in the order of `runs`, each
    /// as `run_spec` returned it (wherever it ran).
    fn assemble(&self, outcomes: Vec<String>, out: PathBuf) -> PyResult<()> {
        if outcomes.len() != self.runs.len() {
            return Err(error(format!("{} outcomes for the experiment's {} runs", outcomes.len(), self.runs.len())));
        }
        // Named as the runner names a failed run.
        let outcomes = self
            .runs
            .iter()
            .zip(&outcomes)
            .map(|((label, _), o)| {
                let reply: lab::ray::Reply =
                    serde_json::from_str(o).map_err(|e| error(format!("{label}: outcome: {e}")))?;
                Ok(Outcome::from(reply).map_err(|e| LabError::Run { label: label.clone(), source: Box::new(e) }))
            })
            .collect::<PyResult<Vec<Outcome>>>()?;
        let (set, timings) = self.experiment.assemble(outcomes).map_err(error)?;
        lab::publish::write_folder(&out, &set, &timings).map_err(error)
    }

    fn __repr__(&self) -> String {
        format!("ParsedExperiment({:?}, {} runs)", self.experiment.title(), self.runs.len())
    }
}

/// The lsm engine, embedded: on a host directory (`Db.open`) or on a simulated SSD in memory
/// (`Db.simulated`). Keys and values are bytes.
#[pyclass(unsendable, module = "flashkv")]
struct Db {
    db: Option<lsm::Db>,
    env: storage::Env,
    dir: String,
    options: lsm::Options,
    /// The simulated device under a simulated database, kept alive with it.
    _stack: Option<Stack>,
    /// Write with `sync` (the write-ahead log synced at every write).
    sync: bool,
}

impl Db {
    fn db(&self) -> PyResult<&lsm::Db> {
        self.db.as_ref().ok_or_else(|| error("the database is closed"))
    }

    fn write_options(&self) -> lsm::WriteOptions {
        lsm::WriteOptions { sync: self.sync }
    }
}

#[pymethods]
impl Db {
    /// Opens (creating it if missing) the database in directory `path` of the host file system.
    #[staticmethod]
    #[pyo3(signature = (path, sync = false))]
    fn open(py: Python<'_>, path: PathBuf, sync: bool) -> PyResult<Db> {
        let env = storage::Env::new(Arc::new(storage::PosixFs::new(&path).map_err(error)?));
        let options = lsm::Options { create_if_missing: true, ..lsm::Options::default() };
        let db = py.allow_threads(|| lsm::Db::open(env.clone(), "", options.clone())).map_err(error)?;
        Ok(Db { db: Some(db), env, dir: String::new(), options, _stack: None, sync })
    }

    /// Opens a new database on a simulated SSD of `capacity` (the `--preset` devices of the
    /// command line), in simulated time; it lives as long as this object.
    #[staticmethod]
    #[pyo3(signature = (capacity = "1GiB", preset = "femu"))]
    fn simulated(capacity: &str, preset: &str) -> PyResult<Db> {
        let args = DeviceSpec {
            preset: Preset::parse_name(preset).map_err(|e| error(format!("preset: {e}")))?,
            capacity: Some(Bytes::parse_name(capacity).map_err(|e| error(format!("capacity: {e}")))?),
            store: Store::Memory,
            ..DeviceSpec::default()
        };
        let stack = Stack::build(&Storage::of(&args).map_err(error)?).map_err(error)?;
        // The simulated file system makes a simulated Env: the engine runs on its clock.
        let env = storage::Env::new(stack.fs().map_err(error)?);
        let options = lsm::Options { create_if_missing: true, ..lsm::Options::default() };
        let db = lsm::Db::open(env.clone(), "db", options.clone()).map_err(error)?;
        Ok(Db { db: Some(db), env, dir: "db".into(), options, _stack: Some(stack), sync: false })
    }

    fn put(&self, key: &[u8], value: &[u8]) -> PyResult<()> {
        self.db()?.put(&self.write_options(), key, value).map_err(error)
    }

    /// The value of `key`, or None.
    fn get<'py>(&self, py: Python<'py>, key: &[u8]) -> PyResult<Option<Bound<'py, PyBytes>>> {
        let v = self.db()?.get(&lsm::ReadOptions::default(), key).map_err(error)?;
        Ok(v.map(|v| PyBytes::new(py, &v)))
    }

    /// Deletes `key` (nothing happens when it is absent).
    fn delete(&self, key: &[u8]) -> PyResult<()> {
        self.db()?.delete(&self.write_options(), key).map_err(error)
    }

    /// Applies `ops` atomically: `(key, value)` puts and `(key, None)` deletes, in order.
    fn write_batch(&self, ops: Vec<(Vec<u8>, Option<Vec<u8>>)>) -> PyResult<()> {
        let mut batch = lsm::WriteBatch::new();
        for (k, v) in &ops {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
        self.db()?.write(&self.write_options(), batch).map_err(error)
    }

    /// The `(key, value)` pairs with `start <= key < end` in key order (either bound may be None).
    #[pyo3(signature = (start = None, end = None))]
    fn range(&self, start: Option<Vec<u8>>, end: Option<Vec<u8>>) -> PyResult<Range> {
        use std::ops::Bound;
        let lo = start.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let hi = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let it = self.db()?.scan(&lsm::ReadOptions::default(), lo, hi).map_err(error)?;
        Ok(Range { it })
    }

    /// Closes the database and opens it again (recovery from its files, as after a restart).
    fn reopen(&mut self, py: Python<'_>) -> PyResult<()> {
        if let Some(db) = self.db.take() {
            py.allow_threads(|| db.close()).map_err(error)?;
        }
        let (env, dir, options) = (self.env.clone(), self.dir.clone(), self.options.clone());
        self.db = Some(py.allow_threads(|| lsm::Db::open(env, &dir, options)).map_err(error)?);
        Ok(())
    }

    /// Closes the database (its data stays in its directory); later calls fail.
    fn close(&mut self, py: Python<'_>) -> PyResult<()> {
        match self.db.take() {
            Some(db) => py.allow_threads(|| db.close()).map_err(error),
            None => Ok(()),
        }
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __exit__(
        &mut self,
        py: Python<'_>,
        _t: Option<PyObject>,
        _v: Option<PyObject>,
        _tb: Option<PyObject>,
    ) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }
}

/// An iterator over a range of a [`Db`], yielding `(key, value)` bytes pairs.
#[pyclass(unsendable, module = "flashkv")]
struct Range {
    it: lsm::ScanIter,
}

#[pymethods]
impl Range {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)>> {
        match self.it.next() {
            Some(Ok((k, v))) => Ok(Some((PyBytes::new(py, &k), PyBytes::new(py, &v)))),
            Some(Err(e)) => Err(error(e)),
            None => Ok(None),
        }
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FlashkvError", m.py().get_type::<FlashkvError>())?;
    m.add_function(wrap_pyfunction!(run_spec, m)?)?;
    m.add_function(wrap_pyfunction!(experiment_text, m)?)?;
    m.add_function(wrap_pyfunction!(experiments_parsed, m)?)?;
    m.add_class::<ParsedExperiment>()?;
    m.add_class::<Db>()?;
    m.add_class::<Range>()?;
    Ok(())
}

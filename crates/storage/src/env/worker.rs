//! A background worker: one thread of an [`Env`] (in simulation, one background lane) that runs
//! jobs one at a time, LevelDB's background thread.
//!
//! The owner asks for its own work with [`Worker::request`] (coalesced: requests made while the
//! step runs give one more run), hands it one-off jobs with [`Worker::run`] (run before the next
//! step, while the caller waits for the result), waits for it to have nothing left with
//! [`Worker::wait_idle`], and ends it with [`Worker::stop`], which lets the running job finish.
//! Everything a scheduler must track (requested, busy, waiting, stopping) is the worker's; the
//! owner's state holds none of it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{Env, EnvError, Signal, Task, Wait};

type Job = Box<dyn FnOnce() + Send>;

/// One background thread running jobs one at a time.
pub struct Worker {
    env: Env,
    state: Mutex<State>,
    /// Any change of `state` that someone may wait for.
    changed: Signal,
    task: Mutex<Option<Task>>,
}

#[derive(Default)]
struct State {
    /// The step is due (again).
    requested: bool,
    /// Jobs handed in by `run`, oldest first.
    queued: VecDeque<Job>,
    /// A job or the step is running.
    busy: bool,
    /// The worker waits for work (only then does a request need a wake-up).
    waiting: bool,
    stop: bool,
    /// A job panicked and the worker ended: its callers get [`EnvError::Panicked`].
    panicked: bool,
}

/// Marks the worker idle when a job or the step ends, and stopped when one panics, so that no
/// caller waits forever for a thread that has gone.
struct Running<'a>(&'a Worker);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        let w = self.0;
        let mut st = w.env.lock(&w.state);
        st.busy = false;
        if std::thread::panicking() {
            st.panicked = true;
            st.stop = true;
            st.queued.clear();
        }
        w.env.notify_all(&w.changed);
    }
}

impl State {
    /// Why a stopped worker takes no more jobs.
    fn ended(&self) -> EnvError {
        if self.panicked {
            EnvError::Panicked
        } else {
            EnvError::Stopped
        }
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").finish_non_exhaustive()
    }
}

impl Worker {
    /// A worker on `env`, not started yet.
    pub fn new(env: &Env) -> Arc<Worker> {
        Arc::new(Worker {
            env: env.clone(),
            state: Mutex::new(State::default()),
            changed: Signal::new(),
            task: Mutex::new(None),
        })
    }

    /// Starts the worker's thread: it runs queued jobs, and `step` whenever it was requested,
    /// until [`Worker::stop`].
    pub fn start(self: &Arc<Self>, name: &str, mut step: impl FnMut() + Send + 'static) -> Result<(), EnvError> {
        let me = Arc::clone(self);
        let task = self.env.spawn(name, move || {
            while let Some(job) = me.next_job() {
                let _running = Running(&me);
                match job {
                    Some(job) => job(),
                    None => step(),
                }
            }
        })?;
        *self.task.lock().unwrap_or_else(|e| e.into_inner()) = Some(task);
        Ok(())
    }

    /// Waits for work: `Some(Some(job))` for a queued job, `Some(None)` for the step, `None` to
    /// end the thread.
    fn next_job(&self) -> Option<Option<Job>> {
        let mut st = self.env.lock(&self.state);
        loop {
            if st.stop {
                return None;
            }
            if let Some(job) = st.queued.pop_front() {
                st.busy = true;
                return Some(Some(job));
            }
            if st.requested {
                st.requested = false;
                st.busy = true;
                return Some(None);
            }
            st.waiting = true;
            let r = self.env.wait(&self.changed, st, Wait::Idle);
            // Nothing can ever wake a worker that no lane will ask again: it ends.
            st = r.ok()?;
            st.waiting = false;
        }
    }

    /// Asks for a run of the step (one more, if it is running now).
    pub fn request(&self) {
        let mut st = self.env.lock(&self.state);
        if !st.requested {
            st.requested = true;
            // A wake-up is a system call on real threads: a busy worker sees the request when its
            // job ends.
            if st.waiting {
                self.env.notify_all(&self.changed);
            }
        }
    }

    /// Runs `job` on the worker, before its next step, and waits for its result (the caller's
    /// time until then is a stall).
    pub fn run<R: Send + 'static>(&self, job: impl FnOnce() -> R + Send + 'static) -> Result<R, EnvError> {
        let slot = Arc::new(Mutex::new(None));
        let out = Arc::clone(&slot);
        let mut st = self.env.lock(&self.state);
        if st.stop {
            return Err(st.ended());
        }
        st.queued.push_back(Box::new(move || {
            let r = job();
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        }));
        self.env.notify_all(&self.changed);
        loop {
            if let Some(r) = slot.lock().unwrap_or_else(|e| e.into_inner()).take() {
                return Ok(r);
            }
            if st.stop && !st.busy {
                return Err(st.ended());
            }
            st = self.env.wait(&self.changed, st, Wait::Stall)?;
        }
    }

    /// Waits until the worker has no job queued, no step requested and nothing running.
    pub fn wait_idle(&self) -> Result<(), EnvError> {
        let mut st = self.env.lock(&self.state);
        while st.busy || st.requested || !st.queued.is_empty() {
            if st.panicked {
                return Err(EnvError::Panicked);
            }
            if st.stop && !st.busy {
                return Ok(());
            }
            st = self.env.wait(&self.changed, st, Wait::Stall)?;
        }
        Ok(())
    }

    /// Stops the worker: the running job finishes, queued ones are dropped, and the thread ends.
    /// Later calls do nothing.
    pub fn stop(&self) -> Result<(), EnvError> {
        {
            let mut st = self.env.lock(&self.state);
            st.stop = true;
            st.queued.clear();
            self.env.notify_all(&self.changed);
        }
        let task = self.task.lock().unwrap_or_else(|e| e.into_inner()).take();
        match task {
            Some(t) => t.join(),
            None => Ok(()),
        }
    }
}

//! `Env`, in LevelDB's sense: the file system, the clock and background scheduling an engine runs
//! with, as one value.
//!
//! [`Env::new`] makes the Env a file system calls for. A file system in simulated time (SimFs,
//! ZoneFs: [`Fs::clock`]) gives a *simulated* Env: its clock is the device's, and background work
//! runs on lanes of that clock in lockstep with the caller (`flashsim::clock`), so that every
//! lane's requests reach the device in simulated-time order and the same run gives the same
//! result on any machine. Any other file system (PosixFs, MemFs, FaultFs over them) gives a
//! *wall-clock* Env: real threads, condition variables and the wall clock.
//!
//! What the two modes do differently lives here and nowhere else: an engine written against
//! [`Env`] (its locks, [`Signal`]s, [`Env::spawn`], [`Env::sleep`], [`Env::now_nanos`], a
//! [`Worker`]) runs unchanged in both and never asks which it is in.
//!
//! Locks another lane may need are taken with [`Env::lock`]: in simulation the holder keeps the
//! turn until it releases them (a critical section, see `flashsim::clock`), so no lane ever waits
//! for a lock whose holder waits for the turn. Locks only one lane ever takes can be plain.
//!
//! A simulated Env has one foreground lane: the caller's operations must come from one thread at a
//! time (any thread; a run is deterministic when they come in a deterministic order). Threads
//! calling at once would share the foreground's time and turn.

mod worker;

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use flashsim::clock::{Critical, Lane, LaneHandle, LaneLocal, SimClock, Stuck, Wait};
pub use worker::Worker;

use crate::fs::Fs;

/// What an Env could not do.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// In simulation, a lane waited for something no other lane could ever do.
    #[error(transparent)]
    Stuck(#[from] Stuck),
    /// The host refused a thread.
    #[error("cannot start the thread '{name}': {source}")]
    Spawn {
        name: String,
        #[source]
        source: std::io::Error,
    },
    /// A job was handed to a worker that has stopped.
    #[error("the background worker has stopped")]
    Stopped,
    /// A job on the worker panicked: the worker has ended, and what the job was doing is lost.
    #[error("a background job panicked (the panic's message was printed where it happened)")]
    Panicked,
}

/// The file system, the clock and the scheduling of one engine (cloning shares them).
#[derive(Clone, Debug)]
pub struct Env {
    fs: Arc<dyn Fs>,
    sched: Scheduler,
}

/// The two ways time and threads go.
#[derive(Clone, Debug)]
enum Scheduler {
    /// Real threads; time is the wall clock since the Env was made.
    Threaded { origin: Instant },
    /// Lanes of a simulated clock in lockstep; time is the running lane's.
    Simulated(SimClock),
}

impl Env {
    /// The Env `fs` calls for: simulated on the clock of a file system in simulated time, else
    /// wall-clock with real threads.
    pub fn new(fs: Arc<dyn Fs>) -> Env {
        let sched = match fs.clock() {
            Some(c) => Scheduler::Simulated(c),
            None => Scheduler::Threaded { origin: Instant::now() },
        };
        Env { fs, sched }
    }

    pub fn fs(&self) -> &Arc<dyn Fs> {
        &self.fs
    }

    /// The simulated clock, for reports of where its lanes' time went; `None` on the wall clock.
    pub fn clock(&self) -> Option<&SimClock> {
        match &self.sched {
            Scheduler::Simulated(c) => Some(c),
            Scheduler::Threaded { .. } => None,
        }
    }

    /// The calling lane's time in simulation; wall-clock nanoseconds since the Env was made
    /// otherwise.
    pub fn now_nanos(&self) -> u64 {
        match &self.sched {
            Scheduler::Simulated(c) => c.now(),
            Scheduler::Threaded { origin } => origin.elapsed().as_nanos() as u64,
        }
    }

    /// Lets `d` pass for the calling lane (sleeps the thread on the wall clock), counted as `what`.
    pub fn sleep(&self, d: Duration, what: Wait) {
        match &self.sched {
            Scheduler::Simulated(c) => c.sleep(d.as_nanos() as u64, what),
            Scheduler::Threaded { .. } => std::thread::sleep(d),
        }
    }

    /// The calling lane computes for `ps` picoseconds, the time a host CPU model charges for its
    /// work (see `flashsim::clock`); nothing on the wall clock, where computing takes real time.
    pub fn compute(&self, ps: u64) {
        if let Scheduler::Simulated(c) = &self.sched {
            c.compute(ps);
        }
    }

    /// Makes `local`, a thread-local that the engine's work keeps, follow the lanes: in
    /// simulation the lanes share one OS thread (`flashsim::clock`); on the wall clock each
    /// thread has its own already, and nothing is done.
    pub fn lane_local(&self, local: &'static dyn LaneLocal) {
        if let Scheduler::Simulated(c) = &self.sched {
            c.lane_local(local);
        }
    }

    /// Locks `m`, a lock other lanes may need (see the module doc).
    pub fn lock<'a, T>(&self, m: &'a Mutex<T>) -> Guard<'a, T> {
        // The section is entered first and left last (field order), so the hand-over it owes
        // happens once the lock is free.
        let critical = self.critical();
        Guard { guard: m.lock().unwrap_or_else(|e| e.into_inner()), mutex: m, _critical: critical }
    }

    /// A critical section of the running lane; `None` on the wall clock.
    fn critical(&self) -> Option<Critical> {
        match &self.sched {
            Scheduler::Simulated(c) => Some(c.critical()),
            Scheduler::Threaded { .. } => None,
        }
    }

    /// Releases `guard`'s lock, waits until `signal` is notified, and locks it again; the time
    /// until then is counted as `what`. As with a condition variable, the caller checks its
    /// condition again in a loop. In simulation other lanes run meanwhile, and waiting for what no
    /// lane can do is [`EnvError::Stuck`].
    pub fn wait<'a, T>(&self, signal: &Signal, guard: Guard<'a, T>, what: Wait) -> Result<Guard<'a, T>, EnvError> {
        let Guard { guard, mutex, _critical } = guard;
        match &self.sched {
            Scheduler::Threaded { .. } => {
                let guard = signal.cv.wait(guard).unwrap_or_else(|e| e.into_inner());
                Ok(Guard { guard, mutex, _critical })
            }
            Scheduler::Simulated(c) => {
                drop(guard);
                c.block(signal.key, what)?;
                Ok(Guard { guard: mutex.lock().unwrap_or_else(|e| e.into_inner()), mutex, _critical })
            }
        }
    }

    /// Wakes whoever waits on `signal`.
    pub fn notify_all(&self, signal: &Signal) {
        match &self.sched {
            Scheduler::Simulated(c) => c.notify(signal.key),
            Scheduler::Threaded { .. } => signal.cv.notify_all(),
        }
    }

    /// Runs `f` on a background thread (in simulation, a background lane of the clock).
    pub fn spawn(&self, name: &str, f: impl FnOnce() + Send + 'static) -> Result<Task, EnvError> {
        let spawn_error = |source| EnvError::Spawn { name: name.to_string(), source };
        match &self.sched {
            Scheduler::Simulated(c) => Ok(Task::Lane(c.spawn(name, Lane::Background, f).map_err(spawn_error)?)),
            Scheduler::Threaded { .. } => {
                Ok(Task::Thread(std::thread::Builder::new().name(name.to_string()).spawn(f).map_err(spawn_error)?))
            }
        }
    }
}

/// A condition an Env's [`Env::wait`] waits for and [`Env::notify_all`] signals.
#[derive(Debug)]
pub struct Signal {
    cv: Condvar,
    /// The signal's name on a simulated clock.
    key: u64,
}

impl Default for Signal {
    fn default() -> Self {
        Signal::new()
    }
}

impl Signal {
    pub fn new() -> Signal {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Signal { cv: Condvar::new(), key: NEXT.fetch_add(1, Ordering::Relaxed) }
    }
}

/// A lock taken with [`Env::lock`]: the mutex's guard, and in simulation the critical section
/// around it.
pub struct Guard<'a, T> {
    guard: MutexGuard<'a, T>,
    mutex: &'a Mutex<T>,
    _critical: Option<Critical>,
}

impl<'a, T> Guard<'a, T> {
    /// Locks `m` in a critical section of `clock`: what [`Env::lock`] does in simulation, for a
    /// file system that has its clock but no Env.
    pub(crate) fn on_clock(clock: &SimClock, m: &'a Mutex<T>) -> Guard<'a, T> {
        let critical = Some(clock.critical());
        Guard { guard: m.lock().unwrap_or_else(|e| e.into_inner()), mutex: m, _critical: critical }
    }
}

impl<T> Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.guard
    }
}

impl<T> DerefMut for Guard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.guard
    }
}

/// A thread [`Env::spawn`] started.
#[derive(Debug)]
pub enum Task {
    Thread(JoinHandle<()>),
    Lane(LaneHandle),
}

impl Task {
    /// Waits for the thread to end (in simulation, blocks the calling lane until the task's lane
    /// has ended).
    pub fn join(self) -> Result<(), EnvError> {
        match self {
            // A panic on the thread has been printed there, and a worker's callers learn of it
            // from the worker (`EnvError::Panicked`).
            Task::Thread(h) => {
                let _ = h.join();
                Ok(())
            }
            Task::Lane(l) => Ok(l.join()?),
        }
    }
}

#[cfg(test)]
mod tests;

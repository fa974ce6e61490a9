//! Simulated time on the host side of a device, and the scheduler that keeps every lane's requests
//! in simulated-time order.
//!
//! A *lane* is a sequence of work with a current time of its own: the foreground (the caller's
//! operations), a background worker (an engine's flushes and compactions), any other task that
//! runs beside them. It lives beside the devices so that anything driving one (a file system, an
//! engine, a key-value device with no file system above it) runs in the same simulated time.
//!
//! The lanes run in lockstep: exactly one lane, the one holding the *turn*, runs at a time, and
//! the turn always goes to the runnable lane with the earliest time. A lane's time moves only when
//! it waits ([`SimClock::wait`]: a read's completion, a sync, a sleep) or blocks
//! ([`SimClock::block`]: a stall, an idle worker); once its time has moved, it hands the turn to
//! any runnable lane that is now earlier. A blocked lane wakes ([`SimClock::notify`]) at the
//! waker's time, never earlier. So when a lane issues a request at its time `t`, no lane can still
//! issue one before `t`: requests reach the devices in non-decreasing simulated time, and an
//! operation waits only for what was really queued ahead of it when it was issued (a die's
//! timeline is a busy-until time, exact under that order).
//!
//! Every lane of a clock runs on one OS thread, the one that drives the foreground: a spawned lane
//! is a stackful coroutine (`lane`), and handing the turn over is a switch of stacks, with no
//! spinning, sleeping or system call. Why lanes rather than background jobs rewritten as
//! resumable tasks: the same straight-line job code runs on real threads in wall-clock time and on
//! lanes here. Determinism holds because the turn changes hands only inside these calls, in an
//! order that depends on simulated times and lane numbers alone, never on the host's scheduling:
//! the rule above decides which lane runs next, and how the switch to it is made (a thread woken
//! until wave 4, a stack switched to since) cannot change what any lane sees, so a run's results
//! are byte for byte those of lanes on threads. State a lane keeps in a thread-local follows it
//! only if registered as a [`LaneLocal`] (`local`). (Wave 1 ran a background job inline to
//! completion and let it book the dies ahead of the foreground: a get then waited for a whole
//! compaction.)
//!
//! Ties: when the lane that is running and another runnable lane have the same time, the other
//! lane goes first (lowest lane number first); so a lane that is woken, or spawned, at the
//! running lane's time starts its work before the running lane goes on past that time.
//!
//! Critical sections: a lane that holds a lock another lane may need (a file system's state, an
//! engine's state) must not hand over the turn, or the next lane would block on that lock while
//! its holder waits for the turn. Inside a [`Critical`] section a lane's time still moves, but the
//! hand-over is owed and made when its last section ends. Requests the section issues after its
//! time moved can reach a device ahead of an earlier lane's: the one approximation left, kept small
//! by holding such locks around short work only (the media counts requests that arrive out of
//! order, `FlashCounters::out_of_order`).
//!
//! Every move of a lane's time says what the lane waited for ([`Wait`]), so a lane's time is the
//! time it started at plus its waits by kind ([`SimClock::spent`]): where the simulated seconds
//! went. (The foreground starts at 0; a spawned lane starts at its spawner's time.)
//!
//! The host's CPU: a lane that computes ([`SimClock::compute`], the time a host cost model charges
//! for the work it did) holds one of the host's cores for that long; its computing and its own
//! I/O are sequential, as on one thread. With no core count set every lane has a core of its
//! own; with [`SimClock::set_host_cores`] the lanes share that many cores, first come first
//! served, and a lane that finds them all busy waits ([`Wait::CpuQueue`]). Computations are given
//! in picoseconds; a lane's time moves by whole nanoseconds and carries the fraction to its next
//! computation, so its CPU time is exactly the sum of what it was charged, truncated once.
//!
//! A lane that blocks when no other lane can run gets [`Stuck`] back instead of waiting forever.

mod lane;
mod local;

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::timing::Nanos;
pub use lane::LaneHandle;
use lane::{LaneStack, Suspender};
pub use local::LaneLocal;

/// The clock's state stays consistent whatever a panicking holder did (each update is a few
/// assignments), so a poisoned lock is used as it is.
fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a lane is for, in reports: the caller's operations or background work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Foreground = 0,
    Background = 1,
}

/// What a lane's time was moved forward for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// A read of data (a file read, a block, an index).
    Read = 0,
    /// Data writes completing (a file's outstanding pages, waited for at `sync`).
    Write = 1,
    /// A file system's own metadata (its journal, at `sync`, create, rename, remove).
    Metadata = 2,
    /// A key-value SSD command, from submission to completion.
    Device = 3,
    /// The foreground waiting for background work (a stall or a slowdown).
    Stall = 4,
    /// A background lane idle, waiting for work.
    Idle = 5,
    /// A file system's own garbage collection (ZoneFs's zone GC).
    Gc = 6,
    /// The lane computing on a host core ([`SimClock::compute`]).
    Cpu = 7,
    /// The lane waiting for a free host core.
    CpuQueue = 8,
}

const WAITS: usize = 9;

/// A lane's time by what it waited for, in nanoseconds; the fields sum to the lane's time since it
/// started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneTime {
    pub read_ns: Nanos,
    pub write_ns: Nanos,
    pub metadata_ns: Nanos,
    pub device_ns: Nanos,
    pub stall_ns: Nanos,
    pub idle_ns: Nanos,
    pub gc_ns: Nanos,
    /// Computing on a host core (0 without a host CPU model).
    #[serde(default)]
    pub cpu_ns: Nanos,
    /// Waiting for a free host core.
    #[serde(default)]
    pub cpu_queue_ns: Nanos,
}

impl LaneTime {
    pub fn total_ns(&self) -> Nanos {
        self.read_ns
            + self.write_ns
            + self.metadata_ns
            + self.device_ns
            + self.stall_ns
            + self.idle_ns
            + self.gc_ns
            + self.cpu_ns
            + self.cpu_queue_ns
    }

    fn add(&mut self, w: &[Nanos; WAITS]) {
        self.read_ns += w[Wait::Read as usize];
        self.write_ns += w[Wait::Write as usize];
        self.metadata_ns += w[Wait::Metadata as usize];
        self.device_ns += w[Wait::Device as usize];
        self.stall_ns += w[Wait::Stall as usize];
        self.idle_ns += w[Wait::Idle as usize];
        self.gc_ns += w[Wait::Gc as usize];
        self.cpu_ns += w[Wait::Cpu as usize];
        self.cpu_queue_ns += w[Wait::CpuQueue as usize];
    }
}

/// Every lane was blocked: the one that asked to block would have waited forever.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("simulated time is stuck: a {role:?} lane blocked to wait for {what:?} while no other lane could run")]
pub struct Stuck {
    pub role: Lane,
    pub what: Wait,
}

/// What a blocked lane waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    /// A signal's [`SimClock::notify`].
    Signal(u64),
    /// The end of a lane.
    Exit(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Runnable,
    Blocked(Key, Wait),
    Exited,
}

#[derive(Debug)]
struct LaneState {
    role: Lane,
    now: Nanos,
    spent: [Nanos; WAITS],
    status: Status,
    /// While the lane is blocked: the critical sections it is inside (see `Shared::critical`).
    suspended: u32,
    /// The lane was woken because nothing else could run: its `block` fails with [`Stuck`].
    stuck: bool,
    /// Picoseconds of computation charged but not yet a whole nanosecond of the lane's time.
    cpu_carry_ps: u64,
    /// A spawned lane's stack while it is suspended (taken while it runs, dropped when it ends);
    /// `None` for the driving lane.
    stack: Option<LaneStack>,
    /// How a spawned lane switches back to the driver, once it has started.
    suspender: Option<Suspender>,
    /// The lane's copies of the lane-locals while it does not run (see `local`).
    locals: Vec<Box<dyn Any + Send>>,
}

impl LaneState {
    fn new(role: Lane, now: Nanos) -> LaneState {
        LaneState {
            role,
            now,
            spent: [0; WAITS],
            status: Status::Runnable,
            suspended: 0,
            stuck: false,
            cpu_carry_ps: 0,
            stack: None,
            suspender: None,
            locals: Vec::new(),
        }
    }

    fn advance(&mut self, t: Nanos, what: Wait) -> bool {
        if t <= self.now {
            return false;
        }
        self.spent[what as usize] += t - self.now;
        self.now = t;
        true
    }
}

#[derive(Debug)]
struct State {
    lanes: Vec<LaneState>,
    /// The lane that runs now.
    turn: usize,
    /// The host's cores, each as the time it is busy until; empty: a core per lane.
    cores: Vec<Nanos>,
    /// The thread-locals that follow the lanes ([`SimClock::lane_local`]).
    locals: Vec<&'static dyn LaneLocal>,
}

impl State {
    /// The runnable lane to run next: the earliest; on a tie, any lane before `running`, then the
    /// lowest number.
    fn pick(&self, running: Option<usize>) -> Option<usize> {
        self.lanes
            .iter()
            .enumerate()
            .filter(|(_, l)| l.status == Status::Runnable)
            .min_by_key(|(i, l)| (l.now, Some(*i) == running, *i))
            .map(|(i, _)| i)
    }

    /// Wakes every lane blocked on `key` at the running lane's time; whether any woke.
    fn wake(&mut self, key: Key) -> bool {
        let t = self.lanes[self.turn].now;
        let mut woke = false;
        for l in &mut self.lanes {
            if let Status::Blocked(k, what) = l.status {
                if k == key {
                    l.advance(t, what);
                    l.status = Status::Runnable;
                    woke = true;
                }
            }
        }
        woke
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    /// The running lane's time, as the running lane last left it (see `SimClock::now`).
    now: AtomicU64,
    /// Critical sections the running lane is inside: it may not hand over the turn. Only the
    /// running lane changes it (so entering and leaving a section takes no lock); a lane that
    /// blocks keeps its count in `LaneState::suspended`.
    critical: AtomicU32,
    /// The running lane's time moved, or it woke a lane, inside a critical section: it hands over
    /// when the last one ends.
    owed: AtomicBool,
}

/// Shared handle to the lanes and their times; cloning shares the clock. A new clock has one lane,
/// the foreground, at time 0: whatever thread drives the clock outside the lanes it spawned runs
/// as the foreground.
#[derive(Clone, Debug)]
pub struct SimClock {
    shared: Arc<Shared>,
}

impl Default for SimClock {
    fn default() -> Self {
        SimClock::new()
    }
}

impl SimClock {
    pub fn new() -> SimClock {
        SimClock {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    lanes: vec![LaneState::new(Lane::Foreground, 0)],
                    turn: 0,
                    cores: Vec::new(),
                    locals: Vec::new(),
                }),
                now: AtomicU64::new(0),
                critical: AtomicU32::new(0),
                owed: AtomicBool::new(false),
            }),
        }
    }

    /// The current time of the lane that runs now. Only the running lane runs, and only it moves
    /// its own time, so its time is kept where it can be read without the lock: set whenever it
    /// moves (`publish`) and whenever a lane gets the turn (`await_turn`, a lane's start).
    pub fn now(&self) -> Nanos {
        self.shared.now.load(Ordering::Relaxed)
    }

    /// Publishes the running lane's time for [`SimClock::now`].
    fn publish(&self, st: &State) {
        self.shared.now.store(st.lanes[st.turn].now, Ordering::Relaxed);
    }

    /// Moves the running lane forward to `t` (never backwards), the time spent waiting for `what`,
    /// then lets any runnable lane that is now earlier run first (at once, or when the lane leaves
    /// its critical sections).
    pub fn wait(&self, t: Nanos, what: Wait) {
        let mut st = lock(&self.shared.state);
        let me = st.turn;
        if st.lanes[me].advance(t, what) {
            self.publish(&st);
            self.hand_over(st);
        }
    }

    /// [`SimClock::wait`] for `d` from now.
    pub fn sleep(&self, d: Nanos, what: Wait) {
        let mut st = lock(&self.shared.state);
        let me = st.turn;
        let t = st.lanes[me].now + d;
        if st.lanes[me].advance(t, what) {
            self.publish(&st);
            self.hand_over(st);
        }
    }

    /// Lets the lanes share `cores` host cores (0: a core per lane, the default). Set before any
    /// lane computes.
    pub fn set_host_cores(&self, cores: usize) {
        lock(&self.shared.state).cores = vec![0; cores];
    }

    /// The running lane computes for `ps` picoseconds (see the module doc): it waits for a free
    /// host core if the cores are shared and all busy, then holds one that long.
    pub fn compute(&self, ps: u64) {
        let mut st = lock(&self.shared.state);
        let me = st.turn;
        let lane = &mut st.lanes[me];
        let total = lane.cpu_carry_ps + ps;
        lane.cpu_carry_ps = total % 1000;
        let d = total / 1000;
        if d == 0 {
            return;
        }
        let now = lane.now;
        let start = match st.cores.iter_mut().min_by_key(|busy| **busy) {
            Some(core) => {
                let start = now.max(*core);
                *core = start + d;
                start
            }
            None => now,
        };
        let lane = &mut st.lanes[me];
        lane.advance(start, Wait::CpuQueue);
        lane.advance(start + d, Wait::Cpu);
        self.publish(&st);
        self.hand_over(st);
    }

    /// The latest time of the lanes of `role` (the foreground's time, for the foreground).
    pub fn time(&self, role: Lane) -> Nanos {
        let st = lock(&self.shared.state);
        st.lanes.iter().filter(|l| l.role == role).map(|l| l.now).max().unwrap_or(0)
    }

    /// The time of the lanes of `role` so far by what they waited for, summed over those lanes.
    pub fn spent(&self, role: Lane) -> LaneTime {
        let st = lock(&self.shared.state);
        let mut t = LaneTime::default();
        for l in st.lanes.iter().filter(|l| l.role == role) {
            t.add(&l.spent);
        }
        t
    }

    /// Enters a critical section of the running lane (see the module doc): until the returned
    /// guard drops, the lane keeps the turn.
    pub fn critical(&self) -> Critical {
        self.shared.critical.fetch_add(1, Ordering::Relaxed);
        Critical { clock: self.clone() }
    }

    /// Blocks the running lane until a [`SimClock::notify`] of `signal`, the time until then
    /// spent waiting for `what`; other lanes run meanwhile. The caller holds no critical section's
    /// lock (its critical sections are suspended while it is blocked). Fails with [`Stuck`] when
    /// no other lane can run, or when the lane was woken only because nothing else could.
    pub fn block(&self, signal: u64, what: Wait) -> Result<(), Stuck> {
        let st = lock(&self.shared.state);
        self.block_on(st, Key::Signal(signal), what).map(drop)
    }

    /// Wakes every lane blocked on `signal`, at the running lane's time; a woken lane at the same
    /// time runs before the waker goes on.
    pub fn notify(&self, signal: u64) {
        let mut st = lock(&self.shared.state);
        if st.wake(Key::Signal(signal)) {
            self.hand_over(st);
        }
    }

    /// Hands the turn to an earlier (or, on a tie, preceding) runnable lane and waits for it to
    /// come back; inside a critical section, owes it instead.
    fn hand_over(&self, mut st: MutexGuard<'_, State>) {
        let me = st.turn;
        if self.shared.critical.load(Ordering::Relaxed) > 0 {
            self.shared.owed.store(true, Ordering::Relaxed);
            return;
        }
        self.shared.owed.store(false, Ordering::Relaxed);
        match st.pick(Some(me)) {
            Some(next) if next != me => {
                st.turn = next;
                drop(self.await_turn(st, me));
            }
            _ => {}
        }
    }

    /// Blocks the running lane on `key` (see [`SimClock::block`]).
    fn block_on<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        key: Key,
        what: Wait,
    ) -> Result<MutexGuard<'a, State>, Stuck> {
        let me = st.turn;
        let stuck = Stuck { role: st.lanes[me].role, what };
        st.lanes[me].status = Status::Blocked(key, what);
        let Some(next) = st.pick(None) else {
            st.lanes[me].status = Status::Runnable;
            return Err(stuck);
        };
        st.lanes[me].suspended = self.shared.critical.swap(0, Ordering::Relaxed);
        self.shared.owed.store(false, Ordering::Relaxed);
        st.turn = next;
        let mut st = self.await_turn(st, me);
        self.shared.critical.store(st.lanes[me].suspended, Ordering::Relaxed);
        if std::mem::take(&mut st.lanes[me].stuck) {
            return Err(stuck);
        }
        Ok(st)
    }

    /// Waits until `lane`, the running lane, which has given the turn away, has it again: a
    /// spawned lane switches to the driver's stack, the driver runs the lanes holding the turn
    /// (`lane`). The lane's lane-locals are put aside meanwhile.
    fn await_turn<'a>(&'a self, mut st: MutexGuard<'a, State>, lane: usize) -> MutexGuard<'a, State> {
        if st.turn == lane {
            return st;
        }
        let suspender = {
            let st = &mut *st;
            local::exchange(&st.locals, &mut st.lanes[lane]);
            st.lanes[lane].suspender
        };
        drop(st);
        match suspender {
            Some(s) => self.suspend(s),
            None => self.drive(lane),
        }
        let mut st = lock(&self.shared.state);
        let st_ = &mut *st;
        local::exchange(&st_.locals, &mut st_.lanes[lane]);
        self.publish(&st);
        st
    }
}

/// A critical section of the lane that entered it (see the module doc); dropping it leaves the
/// section, and makes the hand-over the lane owes once it has left them all.
#[must_use = "the section ends when the guard drops"]
#[derive(Debug)]
pub struct Critical {
    clock: SimClock,
}

impl Drop for Critical {
    fn drop(&mut self) {
        let shared = &self.clock.shared;
        if shared.critical.fetch_sub(1, Ordering::Relaxed) == 1 && shared.owed.load(Ordering::Relaxed) {
            let st = lock(&shared.state);
            if shared.critical.load(Ordering::Relaxed) == 0 {
                self.clock.hand_over(st);
            }
        }
    }
}

#[cfg(test)]
mod tests;

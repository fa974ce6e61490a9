//! Simulated time on the host side of a device: two lanes (foreground and background), each with
//! its own current time, and the lane that I/O is charged to now.
//!
//! It lives beside the devices so that anything driving one (a file system, an engine, a key-value
//! device with no file system above it) runs in the same simulated time. In simulation the engine
//! runs single-threaded: user operations run on the foreground lane, flushes and compactions on the
//! background lane (DESIGN.md, "Simulated time"). Each device operation is issued at the current
//! lane's time; a synchronous operation (a read, a sync) moves that lane's time to its completion.
//! Both lanes share the device's dies and channels, so background I/O reserved ahead in simulated
//! time delays later foreground I/O: the contention.
//!
//! Every move of a lane's time says what the lane waited for ([`Wait`]), so a lane's time is the
//! sum of its waits by kind ([`SimClock::spent`]): where the simulated seconds went.

use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};

use crate::timing::Nanos;

/// The clock's state stays consistent whatever a panicking holder did (each update is one
/// assignment), so a poisoned lock is used as it is.
fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A lane of simulated time.
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
    /// The background lane idle, waiting for work.
    Idle = 5,
    /// A file system's own garbage collection (ZoneFs's zone GC).
    Gc = 6,
}

const WAITS: usize = 7;

/// A lane's time by what it waited for, in nanoseconds; the fields sum to the lane's time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneTime {
    pub read_ns: Nanos,
    pub write_ns: Nanos,
    pub metadata_ns: Nanos,
    pub device_ns: Nanos,
    pub stall_ns: Nanos,
    pub idle_ns: Nanos,
    pub gc_ns: Nanos,
}

impl LaneTime {
    pub fn total_ns(&self) -> Nanos {
        self.read_ns + self.write_ns + self.metadata_ns + self.device_ns + self.stall_ns + self.idle_ns + self.gc_ns
    }
}

#[derive(Debug, Default)]
struct State {
    now: [Nanos; 2],
    current: usize,
    spent: [[Nanos; WAITS]; 2],
}

impl State {
    fn advance(&mut self, lane: usize, t: Nanos, what: Wait) {
        if t > self.now[lane] {
            self.spent[lane][what as usize] += t - self.now[lane];
            self.now[lane] = t;
        }
    }
}

/// Shared handle to the lanes' times; cloning shares the clock.
#[derive(Clone, Debug, Default)]
pub struct SimClock {
    state: Arc<Mutex<State>>,
}

impl SimClock {
    pub fn new() -> SimClock {
        SimClock::default()
    }

    /// The lane I/O is charged to now.
    pub fn lane(&self) -> Lane {
        if lock(&self.state).current == 0 {
            Lane::Foreground
        } else {
            Lane::Background
        }
    }

    /// Charges I/O to `lane` from now on; returns the lane that was current.
    pub fn set_lane(&self, lane: Lane) -> Lane {
        let mut s = lock(&self.state);
        let before = s.current;
        s.current = lane as usize;
        if before == 0 {
            Lane::Foreground
        } else {
            Lane::Background
        }
    }

    /// The current time of `lane`.
    pub fn time(&self, lane: Lane) -> Nanos {
        lock(&self.state).now[lane as usize]
    }

    /// The current time of the current lane.
    pub fn now(&self) -> Nanos {
        let s = lock(&self.state);
        s.now[s.current]
    }

    /// Moves `lane` forward to `t` (never backwards), the time spent waiting for `what`.
    pub fn advance(&self, lane: Lane, t: Nanos, what: Wait) {
        lock(&self.state).advance(lane as usize, t, what);
    }

    /// Moves the current lane forward to `t`, the time spent waiting for `what`.
    pub fn wait(&self, t: Nanos, what: Wait) {
        let mut s = lock(&self.state);
        let cur = s.current;
        s.advance(cur, t, what);
    }

    /// `lane`'s time so far by what it waited for.
    pub fn spent(&self, lane: Lane) -> LaneTime {
        let w = lock(&self.state).spent[lane as usize];
        LaneTime {
            read_ns: w[Wait::Read as usize],
            write_ns: w[Wait::Write as usize],
            metadata_ns: w[Wait::Metadata as usize],
            device_ns: w[Wait::Device as usize],
            stall_ns: w[Wait::Stall as usize],
            idle_ns: w[Wait::Idle as usize],
            gc_ns: w[Wait::Gc as usize],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_keep_their_own_time() {
        let c = SimClock::new();
        c.wait(10, Wait::Read);
        assert_eq!(c.set_lane(Lane::Background), Lane::Foreground);
        assert_eq!(c.now(), 0);
        c.wait(50, Wait::Write);
        c.advance(Lane::Background, 20, Wait::Idle);
        assert_eq!((c.time(Lane::Foreground), c.time(Lane::Background)), (10, 50));
        assert_eq!(c.lane(), Lane::Background);
    }

    #[test]
    fn a_lanes_time_is_the_sum_of_its_waits() {
        let c = SimClock::new();
        c.wait(10, Wait::Read);
        c.wait(5, Wait::Write); // in the past: no time spent
        c.advance(Lane::Foreground, 40, Wait::Stall);
        c.set_lane(Lane::Background);
        c.advance(Lane::Background, 30, Wait::Idle);
        c.wait(35, Wait::Metadata);
        c.wait(100, Wait::Device);
        let (f, b) = (c.spent(Lane::Foreground), c.spent(Lane::Background));
        assert_eq!(f, LaneTime { read_ns: 10, stall_ns: 30, ..LaneTime::default() });
        assert_eq!(b, LaneTime { idle_ns: 30, metadata_ns: 5, device_ns: 65, ..LaneTime::default() });
        assert_eq!((f.total_ns(), b.total_ns()), (c.time(Lane::Foreground), c.time(Lane::Background)));
    }
}

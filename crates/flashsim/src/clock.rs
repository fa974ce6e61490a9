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

use std::sync::{Arc, Mutex, MutexGuard};

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

#[derive(Debug, Default)]
struct State {
    now: [Nanos; 2],
    current: usize,
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

    /// Moves `lane` forward to `t` (never backwards).
    pub fn advance(&self, lane: Lane, t: Nanos) {
        let mut s = lock(&self.state);
        let n = &mut s.now[lane as usize];
        *n = (*n).max(t);
    }

    /// Moves the current lane forward to `t`.
    pub fn advance_current(&self, t: Nanos) {
        let mut s = lock(&self.state);
        let cur = s.current;
        s.now[cur] = s.now[cur].max(t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_keep_their_own_time() {
        let c = SimClock::new();
        c.advance_current(10);
        assert_eq!(c.set_lane(Lane::Background), Lane::Foreground);
        assert_eq!(c.now(), 0);
        c.advance_current(50);
        c.advance(Lane::Background, 20);
        assert_eq!((c.time(Lane::Foreground), c.time(Lane::Background)), (10, 50));
        assert_eq!(c.lane(), Lane::Background);
    }
}

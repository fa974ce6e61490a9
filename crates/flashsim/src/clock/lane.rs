//! Lanes on threads of their own: [`SimClock::spawn`] starts one, [`LaneThread::join`] waits in
//! simulated time for it to end.
//!
//! A spawned lane starts at its spawner's time and runs only when it has the turn; when its
//! function returns (or panics), the lane ends and passes the turn on. If nothing else can run
//! then, the earliest blocked lane is woken with [`Stuck`], so no thread waits forever.

use std::thread::JoinHandle;

use super::{lock, Key, Lane, LaneState, SimClock, Status, Stuck, Wait};

/// A lane running on its own thread.
#[derive(Debug)]
pub struct LaneThread {
    clock: SimClock,
    lane: usize,
    handle: Option<JoinHandle<()>>,
}

impl SimClock {
    /// Starts `f` on a new thread as a new lane of `role`, at the running lane's time. The new
    /// lane runs when the scheduler gives it the turn (at once if the running lane is in no
    /// critical section: it is at the same time, and a tie lets it go first).
    pub fn spawn(&self, name: &str, role: Lane, f: impl FnOnce() + Send + 'static) -> std::io::Result<LaneThread> {
        let lane = {
            let mut st = lock(&self.shared.state);
            let now = st.lanes[st.turn].now;
            st.lanes.push(LaneState::new(role, now));
            st.lanes.len() - 1
        };
        let clock = self.clone();
        let spawned = std::thread::Builder::new().name(name.to_string()).spawn(move || {
            drop(clock.await_turn(lock(&clock.shared.state), lane));
            let _end = End { clock, lane };
            f();
        });
        match spawned {
            Ok(handle) => {
                let st = lock(&self.shared.state);
                self.hand_over(st);
                Ok(LaneThread { clock: self.clone(), lane, handle: Some(handle) })
            }
            Err(e) => {
                lock(&self.shared.state).lanes[lane].status = Status::Exited;
                Err(e)
            }
        }
    }
}

impl LaneThread {
    /// Blocks the running lane until this lane has ended (its time until then is a stall), then
    /// joins its thread. Fails with [`Stuck`] if the lane is blocked and nothing can wake it.
    pub fn join(mut self) -> Result<(), Stuck> {
        let mut st = lock(&self.clock.shared.state);
        while st.lanes[self.lane].status != Status::Exited {
            st = self.clock.block_on(st, Key::Exit(self.lane), Wait::Stall)?;
        }
        drop(st);
        if let Some(h) = self.handle.take() {
            // A panic in the lane has already been reported on its thread.
            let _ = h.join();
        }
        Ok(())
    }
}

/// Ends a lane when its function returns or unwinds.
struct End {
    clock: SimClock,
    lane: usize,
}

impl Drop for End {
    fn drop(&mut self) {
        let mut st = lock(&self.clock.shared.state);
        st.lanes[self.lane].status = Status::Exited;
        if st.turn != self.lane {
            return;
        }
        st.wake(Key::Exit(self.lane));
        let next = st.pick(None).or_else(|| {
            // Nothing can run: wake the earliest blocked lane with `Stuck` rather than leave it
            // waiting forever.
            let i = st
                .lanes
                .iter()
                .enumerate()
                .filter(|(_, l)| matches!(l.status, Status::Blocked(..)))
                .min_by_key(|(i, l)| (l.now, *i))
                .map(|(i, _)| i)?;
            st.lanes[i].status = Status::Runnable;
            st.lanes[i].stuck = true;
            Some(i)
        });
        if let Some(n) = next {
            st.give_turn(n, &self.clock.shared);
        }
    }
}

//! Lanes as stackful coroutines: [`SimClock::spawn`] starts one, [`LaneHandle::join`] waits in
//! simulated time for it to end.
//!
//! A spawned lane runs on a stack of its own, on the thread that drives the clock (the
//! foreground's, or whichever thread calls the clock outside a spawned lane). The driving lane
//! hands the turn over by running the lane that holds it on that lane's stack ([`SimClock::drive`])
//! until the turn comes back; a spawned lane hands it over by switching back to the driver's stack
//! ([`SimClock::suspend`]), which then runs whichever lane holds the turn. A hand-over is a switch
//! of stacks: no lane spins, sleeps or waits for the operating system.
//!
//! A spawned lane starts at its spawner's time and runs only when it has the turn; when its
//! function returns (or panics), the lane ends and passes the turn on. If nothing else can run
//! then, the earliest blocked lane is woken with [`Stuck`], so no lane waits forever. A lane that
//! never ends (blocked for good when everything else has finished) keeps its stack until the
//! program ends, as a thread blocked for good would.

use std::panic::{catch_unwind, AssertUnwindSafe};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, Yielder};

use super::local::exchange;
use super::{lock, Key, Lane, LaneState, SimClock, Status, Stuck, Wait};

/// A lane's stack: what a thread's would be by default, reserved (not committed) memory.
const STACK_BYTES: usize = 2 << 20;

/// A spawned lane's coroutine: its stack and where it stopped.
pub(super) struct LaneStack(Coroutine<(), (), (), DefaultStack>);

// SAFETY: a coroutine is `!Send` because what its stack holds while it is suspended may be. A
// lane suspends only inside the clock's calls and outside critical sections, so it holds no lock
// another lane may take, and its function is `Send`. Its stack moves to another thread only when
// the caller moves the foreground's operations to another thread between two of them (the Env
// allows one thread at a time); the lane then resumes there.
unsafe impl Send for LaneStack {}

impl std::fmt::Debug for LaneStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LaneStack")
    }
}

/// Where a spawned lane switches back to the driver's stack: its coroutine's yielder.
#[derive(Clone, Copy, Debug)]
pub(super) struct Suspender(*const Yielder<(), ()>);

// SAFETY: the yielder lives on the lane's own stack for as long as the lane runs, and only the lane
// itself uses it (`SimClock::suspend`), on whatever thread runs the lane.
unsafe impl Send for Suspender {}

/// A spawned lane; joining it waits for its end.
#[derive(Debug)]
pub struct LaneHandle {
    clock: SimClock,
    lane: usize,
}

impl SimClock {
    /// Starts `f` as a new lane of `role` on a stack of its own, at the running lane's time. The
    /// new lane runs when the scheduler gives it the turn (at once if the running lane is in no
    /// critical section: it is at the same time, and a tie lets it go first). Fails only when the
    /// host refuses the stack's memory.
    pub fn spawn(&self, name: &str, role: Lane, f: impl FnOnce() + Send + 'static) -> std::io::Result<LaneHandle> {
        let stack = DefaultStack::new(STACK_BYTES)?;
        let mut st = lock(&self.shared.state);
        let lane = st.lanes.len();
        let clock = self.clone();
        let name = name.to_string();
        let co = Coroutine::with_stack(stack, move |yielder: &Yielder<(), ()>, ()| {
            {
                let mut st = lock(&clock.shared.state);
                st.lanes[lane].suspender = Some(Suspender(yielder));
                clock.publish(&st);
            }
            let _end = End { clock, lane };
            // The panic's message has been printed by the hook; the lane ends as if it returned,
            // and whoever waits for its work learns of it from that work (a worker's callers get
            // an error).
            if catch_unwind(AssertUnwindSafe(f)).is_err() {
                eprintln!("the simulated lane '{name}' ended with a panic");
            }
        });
        let now = st.lanes[st.turn].now;
        let mut state = LaneState::new(role, now);
        state.stack = Some(LaneStack(co));
        st.lanes.push(state);
        self.hand_over(st);
        Ok(LaneHandle { clock: self.clone(), lane })
    }

    /// The driving lane's side of a hand-over: runs the lanes that hold the turn, each on its
    /// stack until it hands the turn over or ends, until the turn comes back to `me`.
    pub(super) fn drive(&self, me: usize) {
        loop {
            let (lane, mut stack) = {
                let mut st = lock(&self.shared.state);
                let lane = st.turn;
                if lane == me {
                    return;
                }
                let stack = st.lanes[lane].stack.take();
                (lane, stack.expect("the turn went to a lane that is neither the driver nor suspended"))
            };
            stack.0.resume(());
            if !stack.0.done() {
                lock(&self.shared.state).lanes[lane].stack = Some(stack);
            }
        }
    }

    /// A spawned lane's side of a hand-over: switches to the driver's stack, and returns when the
    /// driver runs this lane again (when it has the turn).
    pub(super) fn suspend(&self, suspender: Suspender) {
        // SAFETY: `suspender` is the running lane's own yielder (see `Suspender`).
        unsafe { (*suspender.0).suspend(()) }
    }
}

impl LaneHandle {
    /// Blocks the running lane until this lane has ended (its time until then is a stall). Fails
    /// with [`Stuck`] if the lane is blocked and nothing can wake it.
    pub fn join(self) -> Result<(), Stuck> {
        let mut st = lock(&self.clock.shared.state);
        while st.lanes[self.lane].status != Status::Exited {
            st = self.clock.block_on(st, Key::Exit(self.lane), Wait::Stall)?;
        }
        Ok(())
    }
}

/// Ends a lane when its function returns.
struct End {
    clock: SimClock,
    lane: usize,
}

impl Drop for End {
    fn drop(&mut self) {
        let mut st = lock(&self.clock.shared.state);
        let st = &mut *st;
        // What the lane leaves in its lane-locals ends with it, as a thread's thread-locals do.
        exchange(&st.locals, &mut st.lanes[self.lane]);
        st.lanes[self.lane].status = Status::Exited;
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
            st.turn = n;
        }
    }
}

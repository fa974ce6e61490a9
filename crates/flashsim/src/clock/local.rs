//! Lane-locals: state that belongs to a lane as a thread-local belongs to a thread.
//!
//! The lanes of a clock take turns on one OS thread (see the module doc of `clock`), so a
//! thread-local that code running on a lane keeps (an engine's CPU work counted since its last
//! charge point) would be shared by every lane. A [`LaneLocal`] registered with
//! [`SimClock::lane_local`] makes it follow the lanes instead: when a lane hands the turn over, its
//! copy is put aside in a slot of its own and the thread's copy is left empty; when it gets the
//! turn back, its copy is put back. A lane therefore starts with an empty copy, as a new thread
//! does, and what a lane leaves when it ends is dropped with it.

use std::any::Any;

use super::{lock, LaneState, SimClock};

/// A thread-local of someone else's that must follow the lanes (see the module doc).
pub trait LaneLocal: Sync + std::fmt::Debug {
    /// An empty copy: a lane's slot before it first hands the turn over.
    fn new_slot(&self) -> Box<dyn Any + Send>;
    /// Exchanges the calling thread's copy with `slot` (which holds a value `new_slot` made).
    fn exchange(&self, slot: &mut (dyn Any + Send));
}

impl SimClock {
    /// Makes `local` follow the lanes of this clock (once however often it is asked). Register it
    /// before the lanes that use it run: a lane's copy is empty until its first hand-over after
    /// this.
    pub fn lane_local(&self, local: &'static dyn LaneLocal) {
        let mut st = lock(&self.shared.state);
        if !st.locals.iter().any(|l| std::ptr::addr_eq(*l, local)) {
            st.locals.push(local);
        }
    }
}

/// Exchanges the thread's copies of every registered lane-local with `lane`'s slots: its values
/// go aside when it hands the turn over, and come back when it has the turn again.
pub(super) fn exchange(locals: &[&'static dyn LaneLocal], lane: &mut LaneState) {
    for (i, local) in locals.iter().enumerate() {
        if lane.locals.len() == i {
            lane.locals.push(local.new_slot());
        }
        local.exchange(&mut *lane.locals[i]);
    }
}

//! What the NAND did: page reads, page programs, erases and busy time, in total and per cause.
//!
//! The media layer counts every operation twice: in the totals and in its cause's row. The two
//! are kept apart on purpose, so that the accounting identities (programs = the sum over causes,
//! busy time = the sum over causes = the dies' own busy time) are checks that can fail.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::cause::Cause;
use crate::timing::{Busy, Nanos};

/// One cause's share of the flash's work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CauseCounts {
    /// NAND pages read (a copyback counts one read and one program).
    pub reads: u64,
    /// NAND pages programmed.
    pub programs: u64,
    pub erases: u64,
    /// Time this cause's operations held their dies (see [`crate::timing::Busy`]).
    pub busy_ns: Nanos,
    /// Operations issued at a time earlier than one their die had already been given (see
    /// [`FlashCounters::out_of_order`]).
    pub out_of_order: u64,
}

impl CauseCounts {
    fn delta(&self, earlier: &CauseCounts) -> CauseCounts {
        CauseCounts {
            reads: self.reads - earlier.reads,
            programs: self.programs - earlier.programs,
            erases: self.erases - earlier.erases,
            busy_ns: self.busy_ns - earlier.busy_ns,
            out_of_order: self.out_of_order - earlier.out_of_order,
        }
    }

    fn is_zero(&self) -> bool {
        *self == CauseCounts::default()
    }
}

/// Raw event counts of a NAND array. `Copy`, so that a window of a run is `later.delta(&earlier)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlashCounters {
    /// NAND page reads of any cause.
    pub reads: u64,
    /// NAND page programs of any cause.
    pub programs: u64,
    /// Block erases of any cause.
    pub erases: u64,
    /// Page moves done by copyback inside a plane (no channel transfer); each is also one read and
    /// one program.
    pub copybacks: u64,
    /// Multi-plane commands issued (each covers two or more planes of one die).
    pub multi_plane_ops: u64,
    /// Busy time of every operation, summed over dies.
    pub busy_ns: Nanos,
    /// Operations issued at a simulated time earlier than an operation issued before them on the
    /// same die, and by how much, summed. Zero when every lane's requests reach the media in
    /// simulated-time order (`crate::clock`); an operation that arrives late may wait behind work
    /// that was issued after it in simulated time.
    pub out_of_order: u64,
    pub out_of_order_ns: Nanos,
    /// Die time lost to operations queued before their input was ready (see
    /// `crate::Timeline::arrive`).
    pub head_of_line_ns: Nanos,
    by_cause: [CauseCounts; Cause::COUNT],
}

impl Default for FlashCounters {
    fn default() -> Self {
        FlashCounters {
            reads: 0,
            programs: 0,
            erases: 0,
            copybacks: 0,
            multi_plane_ops: 0,
            busy_ns: 0,
            out_of_order: 0,
            out_of_order_ns: 0,
            head_of_line_ns: 0,
            by_cause: [CauseCounts::default(); Cause::COUNT],
        }
    }
}

impl FlashCounters {
    pub(crate) fn read(&mut self, cause: Cause, pages: u64, op: Busy) {
        self.count(cause, CauseCounts { reads: pages, busy_ns: op.busy, ..CauseCounts::default() }, op);
    }

    pub(crate) fn program(&mut self, cause: Cause, pages: u64, op: Busy) {
        self.count(cause, CauseCounts { programs: pages, busy_ns: op.busy, ..CauseCounts::default() }, op);
    }

    pub(crate) fn copyback(&mut self, cause: Cause, op: Busy) {
        self.copybacks += 1;
        self.count(cause, CauseCounts { reads: 1, programs: 1, busy_ns: op.busy, ..CauseCounts::default() }, op);
    }

    pub(crate) fn erase(&mut self, cause: Cause, op: Busy) {
        self.count(cause, CauseCounts { erases: 1, busy_ns: op.busy, ..CauseCounts::default() }, op);
    }

    /// Adds one operation (`served`: how the timeline served it) to the totals and to its
    /// cause's row.
    fn count(&mut self, cause: Cause, op: CauseCounts, served: Busy) {
        let late = served.late;
        self.head_of_line_ns += served.held;
        self.reads += op.reads;
        self.programs += op.programs;
        self.erases += op.erases;
        self.busy_ns += op.busy_ns;
        let out_of_order = (late > 0) as u64;
        self.out_of_order += out_of_order;
        self.out_of_order_ns += late;
        let c = &mut self.by_cause[cause.index()];
        c.reads += op.reads;
        c.programs += op.programs;
        c.erases += op.erases;
        c.busy_ns += op.busy_ns;
        c.out_of_order += out_of_order;
    }

    /// What happened between `earlier` and `self`.
    pub fn delta(&self, earlier: &FlashCounters) -> FlashCounters {
        let mut by_cause = [CauseCounts::default(); Cause::COUNT];
        for (i, slot) in by_cause.iter_mut().enumerate() {
            *slot = self.by_cause[i].delta(&earlier.by_cause[i]);
        }
        FlashCounters {
            reads: self.reads - earlier.reads,
            programs: self.programs - earlier.programs,
            erases: self.erases - earlier.erases,
            copybacks: self.copybacks - earlier.copybacks,
            multi_plane_ops: self.multi_plane_ops - earlier.multi_plane_ops,
            busy_ns: self.busy_ns - earlier.busy_ns,
            out_of_order: self.out_of_order - earlier.out_of_order,
            out_of_order_ns: self.out_of_order_ns - earlier.out_of_order_ns,
            head_of_line_ns: self.head_of_line_ns - earlier.head_of_line_ns,
            by_cause,
        }
    }

    /// One cause's counts.
    pub fn cause(&self, cause: Cause) -> CauseCounts {
        self.by_cause[cause.index()]
    }

    /// The causes that did anything, in index order (host labels, GC, mapping, device work).
    pub fn causes(&self) -> impl Iterator<Item = (Cause, CauseCounts)> + '_ {
        self.by_cause
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.is_zero())
            .filter_map(|(i, c)| Cause::from_index(i).map(|cause| (cause, *c)))
    }

    /// The sum of every cause that `keep` selects.
    pub fn sum(&self, keep: impl Fn(Cause) -> bool) -> CauseCounts {
        let mut s = CauseCounts::default();
        for (cause, c) in self.causes() {
            if keep(cause) {
                s.reads += c.reads;
                s.programs += c.programs;
                s.erases += c.erases;
                s.busy_ns += c.busy_ns;
                s.out_of_order += c.out_of_order;
            }
        }
        s
    }

    /// NAND operations of every kind (reads, programs, erases): the simulator's unit of work.
    pub fn nand_ops(&self) -> u64 {
        self.reads + self.programs + self.erases
    }

    /// Per-cause rows under the project's names, for results.
    pub fn by_cause_report(&self) -> Vec<CauseReport> {
        let total = self.busy_ns.max(1) as f64;
        self.causes()
            .map(|(cause, c)| CauseReport {
                cause: cause.to_string(),
                read_pages: c.reads,
                program_pages: c.programs,
                erases: c.erases,
                busy_s: c.busy_ns as f64 / 1e9,
                busy_share: c.busy_ns as f64 / total,
                out_of_order: c.out_of_order,
            })
            .collect()
    }
}

/// One cause's row in a result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CauseReport {
    /// `host`, `host.wal`, `host.compaction.L2`, `gc`, `mapping`, `device.compaction.L1`, ...
    pub cause: String,
    pub read_pages: u64,
    pub program_pages: u64,
    pub erases: u64,
    /// Seconds of die time (summed over dies, so it can exceed the elapsed simulated time).
    pub busy_s: f64,
    /// This cause's share of all die time.
    pub busy_share: f64,
    /// Operations of this cause that reached the flash out of simulated-time order.
    #[serde(default)]
    pub out_of_order: u64,
}

/// `gc 12.34 s (56 %)`: the cause's die time and share.
impl fmt::Display for CauseReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:.2} s ({:.0} %)", self.cause, self.busy_s, self.busy_share * 100.0)
    }
}

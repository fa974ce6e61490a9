//! The host's CPU in simulated time: the engine counts its work in cost terms as it does it
//! ([`count`]), and a cost model ([`CpuModel`]: nanoseconds per unit of each term, fitted on a
//! machine by regressing measured CPU time against these counts: `flashkv calibrate`) turns the
//! counts into time charged to the lane that did the work ([`storage::Env::compute`]).
//!
//! Counting is deterministic (units of work, never the wall clock) and always on, so a run on a
//! wall-clock Env (where CPU time is real and nothing is charged) reports the same counts a
//! calibration regresses against. Counts gather per lane (a thread-local that follows the lanes of
//! a simulated Env, [`PendingPerLane`]; a wall-clock Env's background worker is a thread of its own) and are charged at
//! the engine's charge points: each write, get and iterator seek when it starts or ends, and a
//! flush, a compaction or an iterator's steps every [`QUANTUM_PS`] of work as they go, so a
//! lane's computing and its own I/O interleave as on one thread, at most a quantum apart.
//!
//! Contract: what a lane is charged is exactly its counts times the model's coefficients in
//! picoseconds ([`CpuModel::picos`]), truncated to whole nanoseconds once over the lane's life
//! (`flashsim::clock`). A charge point drains the thread's counts, so work counted on a thread is
//! charged once, to the lane named at the charge point.

use std::any::Any;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use storage::env::{Env, Lane, LaneLocal};

/// Work is charged as it goes once this much of it (1 us at the model's rates) has gathered.
pub const QUANTUM_PS: u64 = 1_000_000;

/// Declares the cost terms once: the [`Term`] enum, the counts ([`CpuCounts`]) and the model's
/// coefficients ([`CpuModel`]), with the same names.
macro_rules! terms {
    ($( $(#[doc = $doc:literal])+ $variant:ident => $field:ident, )+) => {
        /// A unit of the engine's work that costs host CPU.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Term {
            $( $(#[doc = $doc])+ $variant, )+
        }

        impl Term {
            pub const ALL: [Term; TERMS] = [$(Term::$variant),+];

            /// The term's name in counts, models and reports.
            pub fn name(self) -> &'static str {
                match self {
                    $( Term::$variant => stringify!($field), )+
                }
            }
        }

        /// How many units of each term a lane (or a run) did.
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct CpuCounts {
            $( $(#[doc = $doc])+ #[serde(default)] pub $field: u64, )+
        }

        impl CpuCounts {
            pub fn get(&self, t: Term) -> u64 {
                match t {
                    $( Term::$variant => self.$field, )+
                }
            }

            pub fn set(&mut self, t: Term, v: u64) {
                match t {
                    $( Term::$variant => self.$field = v, )+
                }
            }
        }

        /// Nanoseconds of host CPU per unit of each term (a term left out costs nothing).
        #[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct CpuModel {
            $( #[serde(default)] pub $field: f64, )+
        }

        impl CpuModel {
            pub fn get(&self, t: Term) -> f64 {
                match t {
                    $( Term::$variant => self.$field, )+
                }
            }

            pub fn set(&mut self, t: Term, ns: f64) {
                match t {
                    $( Term::$variant => self.$field = ns, )+
                }
            }
        }
    };
}

/// The number of cost terms.
pub const TERMS: usize = 15;

terms! {
    /// An entry written: its memtable insert (the skiplist search), its share of the WAL record and
    /// the writer's locks. (Per batch and per entry are one term: the workloads write one entry
    /// per batch, so a calibration could not tell them apart.)
    Insert => insert,
    /// A node a memtable search steps to (an insert's, a get's, a seek's), or a walk in key order
    /// (a flush's, an iterator's) steps to when it is not the node inserted right after the one
    /// before: each is about a memory latency. Keys inserted in order are appended (no search)
    /// and walked in memory order (no jump).
    MemtableStep => memtable_step,
    /// A byte of a write batch: encoded, checksummed into the WAL, copied into the memtable.
    WriteByte => write_byte,
    /// A get: the memtables' lookups and the version's.
    Get => get,
    /// An SST a get consults: its filter and index.
    TableProbe => table_probe,
    /// A search inside a data block (a get's or a seek's).
    BlockSearch => block_search,
    /// A user iterator's seek (its merging iterator over every level positioned).
    Seek => seek,
    /// A user iterator's step.
    Next => next,
    /// A block read from a file (not from the block cache) and checksummed.
    BlockRead => block_read,
    /// A byte of such a block.
    ReadByte => read_byte,
    /// An entry written by a flush (taken from the memtable, appended to a table).
    KeyFlushed => key_flushed,
    /// An entry passed through a compaction's merge (parsed from its input block, compared,
    /// dropped or appended to a table).
    KeyMerged => key_merged,
    /// A data block built: closed, checksummed, indexed.
    BlockBuilt => block_built,
    /// A byte of keys and values copied into a data block being built.
    BlockByte => block_byte,
    /// A key hashed into a Bloom filter.
    FilterKey => filter_key,
}

impl CpuCounts {
    pub fn add(&mut self, other: &CpuCounts) {
        for t in Term::ALL {
            self.set(t, self.get(t) + other.get(t));
        }
    }

    pub fn is_zero(&self) -> bool {
        Term::ALL.iter().all(|&t| self.get(t) == 0)
    }
}

impl CpuModel {
    /// The coefficients in whole picoseconds per unit (negative ones count as 0).
    pub fn picos(&self) -> [u64; TERMS] {
        Term::ALL.map(|t| (self.get(t) * 1000.0).round().max(0.0) as u64)
    }

    /// Picoseconds `counts` cost under this model.
    pub fn cost_ps(&self, counts: &CpuCounts) -> u64 {
        cost(&self.picos(), &Term::ALL.map(|t| counts.get(t)))
    }

    /// The first term whose coefficient is not a finite, non-negative number.
    pub fn first_invalid(&self) -> Option<Term> {
        Term::ALL.into_iter().find(|&t| !(self.get(t).is_finite() && self.get(t) >= 0.0))
    }
}

fn cost(picos: &[u64; TERMS], counts: &[u64; TERMS]) -> u64 {
    picos.iter().zip(counts).map(|(p, n)| p * n).sum()
}

thread_local! {
    /// The work this thread counted since its last charge point.
    static PENDING: [Cell<u64>; TERMS] = const { [const { Cell::new(0) }; TERMS] };
}

/// The counts follow the lanes of a simulated Env, which share one OS thread: each lane keeps its
/// own, as each thread of a wall-clock Env does (`storage::Env::lane_local`).
#[derive(Debug)]
pub(crate) struct PendingPerLane;

pub(crate) static PENDING_PER_LANE: PendingPerLane = PendingPerLane;

impl LaneLocal for PendingPerLane {
    fn new_slot(&self) -> Box<dyn Any + Send> {
        Box::new([0u64; TERMS])
    }

    fn exchange(&self, slot: &mut (dyn Any + Send)) {
        let slot = slot.downcast_mut::<[u64; TERMS]>().expect("a slot made by new_slot");
        PENDING.with(|p| {
            for (cell, kept) in p.iter().zip(slot) {
                *kept = cell.replace(*kept);
            }
        });
    }
}

/// Counts `n` units of `t` on this thread.
#[inline]
pub fn count(t: Term, n: u64) {
    PENDING.with(|p| p[t as usize].set(p[t as usize].get() + n));
}

/// Takes this thread's counts (they are then zero).
fn take_pending() -> [u64; TERMS] {
    PENDING.with(|p| std::array::from_fn(|i| p[i].take()))
}

/// Forgets this thread's counts (work of an earlier database on the same thread).
pub(crate) fn discard_pending() {
    take_pending();
}

/// One database's CPU accounting: the model (if any) and what each lane was charged for.
#[derive(Debug)]
pub(crate) struct CpuMeter {
    picos: Option<[u64; TERMS]>,
    foreground: [AtomicU64; TERMS],
    background: [AtomicU64; TERMS],
}

impl CpuMeter {
    pub fn new(model: Option<&CpuModel>) -> CpuMeter {
        CpuMeter { picos: model.map(CpuModel::picos), foreground: Default::default(), background: Default::default() }
    }

    /// A charge point: the thread's counts go to `lane`'s, and their cost is charged to the
    /// running lane of `env` (nothing is charged on a wall-clock Env, whose CPU time is real).
    pub fn charge(&self, env: &Env, lane: Lane) {
        let counts = take_pending();
        let sums = match lane {
            Lane::Foreground => &self.foreground,
            Lane::Background => &self.background,
        };
        for (sum, n) in sums.iter().zip(counts) {
            if n > 0 {
                sum.fetch_add(n, Ordering::Relaxed);
            }
        }
        if let Some(p) = &self.picos {
            let ps = cost(p, &counts);
            if ps > 0 {
                env.compute(ps);
            }
        }
    }

    /// A charge point taken only once the thread's counts cost a [`QUANTUM_PS`] (work in
    /// progress: a merge, an iterator's steps).
    pub fn charge_due(&self, env: &Env, lane: Lane) {
        let due = match &self.picos {
            Some(p) => PENDING.with(|c| p.iter().zip(c).map(|(p, n)| p * n.get()).sum::<u64>()) >= QUANTUM_PS,
            None => false,
        };
        if due {
            self.charge(env, lane);
        }
    }

    /// What each lane was charged for so far: (foreground, background).
    pub fn counts(&self) -> (CpuCounts, CpuCounts) {
        let read = |sums: &[AtomicU64; TERMS]| {
            let mut c = CpuCounts::default();
            for t in Term::ALL {
                c.set(t, sums[t as usize].load(Ordering::Relaxed));
            }
            c
        };
        (read(&self.foreground), read(&self.background))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_have_distinct_names_in_order() {
        let names: Vec<&str> = Term::ALL.iter().map(|t| t.name()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), TERMS);
        assert_eq!(names[0], "insert");
        for (i, t) in Term::ALL.iter().enumerate() {
            assert_eq!(*t as usize, i);
        }
    }

    #[test]
    fn a_models_cost_is_counts_times_coefficients_in_picoseconds() {
        let mut m = CpuModel::default();
        m.set(Term::Insert, 100.25);
        m.set(Term::WriteByte, 0.5);
        m.set(Term::FilterKey, 12.0);
        let mut c = CpuCounts::default();
        c.set(Term::Insert, 3);
        c.set(Term::WriteByte, 1000);
        c.set(Term::Get, 7); // costs nothing in this model
        assert_eq!(m.cost_ps(&c), 3 * 100_250 + 1000 * 500);
        let text = serde_json::to_string(&m).unwrap();
        let back: CpuModel = serde_json::from_str(&text).unwrap();
        assert_eq!(back, m);
        assert!(serde_json::from_str::<CpuModel>(r#"{"inserts": 1.0}"#).is_err(), "an unknown term is refused");
        assert_eq!(m.first_invalid(), None);
        m.set(Term::Get, -1.0);
        assert_eq!(m.first_invalid(), Some(Term::Get));
    }

    #[test]
    fn a_charge_point_takes_the_threads_counts_once() {
        let env = Env::new(std::sync::Arc::new(storage::MemFs::new()));
        discard_pending();
        let meter = CpuMeter::new(None);
        count(Term::Insert, 2);
        count(Term::WriteByte, 40);
        meter.charge(&env, Lane::Foreground);
        count(Term::KeyMerged, 5);
        meter.charge(&env, Lane::Background);
        meter.charge(&env, Lane::Background);
        let (fg, bg) = meter.counts();
        assert_eq!((fg.insert, fg.write_byte, fg.key_merged), (2, 40, 0));
        assert_eq!((bg.insert, bg.key_merged), (0, 5));
    }
}

//! NAND timing parameters and the unit timeline that turns operations into simulated time.
//!
//! Time is a number of nanoseconds; nothing sleeps. Each die and each channel keeps the time until
//! which it is busy. An operation issued at time `t` starts when its units are free, occupies its
//! die for the array latency and its channel for the data transfer (page size x serial time per
//! byte), and returns its completion time. Operations on different dies and channels overlap.
//!
//! Model, per operation (`x` = transfer of one page over the channel):
//! - read: die busy `tR` (cell array to register), then `x` per page out over the channel; the die
//!   stays busy until its register has been drained.
//! - program: `x` per page in over the channel (the die must be free to accept data), then `tPROG`.
//! - erase: die busy `tBERS`; no transfer.
//! - copyback: read then program inside the die (`tR + tPROG`), no channel transfer.
//! - multi-plane variants: one array latency for up to `planes_per_die` pages on distinct planes of
//!   one die; the transfers stay serial on the channel.

use serde::Serialize;

use crate::cause::Cause;
use crate::error::{FlashError, Result};

/// Simulated nanoseconds.
pub type Nanos = u64;

/// Latencies of one NAND chip and its bus.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Timing {
    pub read_ns: Nanos,
    pub program_ns: Nanos,
    pub erase_ns: Nanos,
    /// Serial access time on the channel, in picoseconds per byte (10 ns/byte = 10_000).
    pub transfer_ps_per_byte: u64,
}

impl Timing {
    /// FEMU's default black-box SSD (seeds 000/001): 40 / 200 / 2000 us, no channel time.
    pub const FEMU: Timing =
        Timing { read_ns: 40_000, program_ns: 200_000, erase_ns: 2_000_000, transfer_ps_per_byte: 0 };
    /// SSDSim's default parameter file, which seed 002 says it kept: tR 20 us, tPROG 200 us,
    /// tBERS 1.5 ms, tRC = tWC = 25 ns per byte.
    pub const SSDSIM: Timing =
        Timing { read_ns: 20_000, program_ns: 200_000, erase_ns: 1_500_000, transfer_ps_per_byte: 25_000 };
    /// Seed 004's Table I chip: read 115 us, write 1600 us, erase 3 ms, serial access 10 ns per byte.
    pub const SEED004: Timing =
        Timing { read_ns: 115_000, program_ns: 1_600_000, erase_ns: 3_000_000, transfer_ps_per_byte: 10_000 };

    /// The named chips `--timing` accepts.
    pub const NAMES: [(&'static str, Timing); 3] =
        [("femu", Timing::FEMU), ("ssdsim", Timing::SSDSIM), ("seed004", Timing::SEED004)];

    /// A named chip (`femu`, `ssdsim`, `seed004`) or four latencies `READ/PROGRAM/ERASE/TRANSFER`,
    /// each a number with a unit (`ns`, `us`, `ms`; the transfer is per byte), e.g.
    /// `20us/200us/1.5ms/25ns`.
    pub fn parse(text: &str) -> Result<Timing> {
        let t = text.trim();
        if let Some((_, timing)) = Timing::NAMES.iter().find(|(n, _)| *n == t) {
            return Ok(timing.clone());
        }
        let names: Vec<&str> = Timing::NAMES.iter().map(|(n, _)| *n).collect();
        let bad = |why: String| FlashError::InvalidConfig {
            field: "timing",
            reason: format!(
                "'{t}': {why}; accepted: {} or READ/PROGRAM/ERASE/TRANSFER-PER-BYTE such as 20us/200us/1.5ms/25ns",
                names.join(", ")
            ),
        };
        let parts: Vec<&str> = t.split('/').collect();
        if parts.len() != 4 {
            return Err(bad(format!("{} latencies where 4 are needed", parts.len())));
        }
        let mut ps = [0u64; 4];
        for (slot, part) in ps.iter_mut().zip(&parts) {
            *slot =
                picoseconds(part).ok_or_else(|| bad(format!("'{part}' is not a time such as 25ns, 20us or 1.5ms")))?;
        }
        let timing = Timing {
            read_ns: ps[0] / 1000,
            program_ns: ps[1] / 1000,
            erase_ns: ps[2] / 1000,
            transfer_ps_per_byte: ps[3],
        };
        timing.validate().map_err(|e| bad(e.to_string()))?;
        Ok(timing)
    }

    /// `20us/200us/1.5ms/25ns`: the form [`Timing::parse`] reads.
    pub fn label(&self) -> String {
        let t = |ps: u64| {
            let (v, unit) = match ps {
                p if p >= 1_000_000_000 && p % 1_000_000 == 0 => (p as f64 / 1e9, "ms"),
                p if p >= 1_000_000 => (p as f64 / 1e6, "us"),
                p => (p as f64 / 1e3, "ns"),
            };
            format!("{v}{unit}")
        };
        format!(
            "{}/{}/{}/{}",
            t(self.read_ns * 1000),
            t(self.program_ns * 1000),
            t(self.erase_ns * 1000),
            t(self.transfer_ps_per_byte)
        )
    }

    pub fn validate(&self) -> Result<()> {
        if self.read_ns == 0 || self.program_ns == 0 || self.erase_ns == 0 {
            return Err(FlashError::InvalidConfig {
                field: "timing",
                reason: "read, program and erase latencies must be positive".into(),
            });
        }
        Ok(())
    }

    /// Channel time to move one page of `page_size` bytes.
    pub fn page_transfer_ns(&self, page_size: u32) -> Nanos {
        (page_size as u64 * self.transfer_ps_per_byte).div_ceil(1000)
    }
}

/// `25ns`, `20us`, `1.5ms` (a decimal number and a unit) in picoseconds.
fn picoseconds(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1e3,
        "us" => 1e6,
        "ms" => 1e9,
        _ => return None,
    };
    let v: f64 = number.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * scale).round() as u64)
}

/// What one operation did to its die: when it completed, and how long it held the die (from the
/// moment the die took it to completion: array time, its transfers, and any wait for the channel
/// while the die was held). Queueing before the die was free is not busy time. `late`: how much
/// earlier it arrived than the latest operation its die was given before it (0 in order).
/// `held`: how long its die stood free but kept for it, waiting for its input (see
/// [`Timeline::arrive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Busy {
    pub done: Nanos,
    pub busy: Nanos,
    pub late: Nanos,
    pub held: Nanos,
}

/// What kind of operation a [`Traced`] one was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Program,
    Erase,
    Copyback,
}

/// One operation as a timeline served it: what, why, when it was issued, where, and when it
/// completed (see `crate::Media::trace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Traced {
    pub kind: OpKind,
    pub cause: Cause,
    pub at: Nanos,
    pub die: u32,
    pub channel: u32,
    pub pages: u32,
    pub done: Nanos,
}

/// One die on the timeline.
#[derive(Clone, Copy, Debug, Default)]
struct Die {
    /// Busy until.
    free: Nanos,
    /// Busy time so far.
    busy: Nanos,
    /// The latest arrival time of its operations.
    latest: Nanos,
}

/// Busy-until times of every die and channel, and each die's total busy time.
///
/// A die's timeline is one busy-until time: an operation issued at `t` starts when the die is
/// free. That is first-come first-served, exact when each die's operations arrive in
/// non-decreasing issue time (what the host's lanes guarantee, `crate::clock`); an operation that
/// arrives late would queue behind work issued after it, so the timeline measures how late each
/// one is on its die.
#[derive(Clone, Debug)]
pub struct Timeline {
    dies: Vec<Die>,
    /// When the request being served arrived (see [`Timeline::arrive`]).
    arrival: Option<Nanos>,
    channel_free: Vec<Nanos>,
    read_ns: Nanos,
    program_ns: Nanos,
    erase_ns: Nanos,
    xfer_ns: Nanos,
}

impl Timeline {
    pub fn new(timing: &Timing, dies: u32, channels: u32, page_size: u32) -> Self {
        Timeline {
            dies: vec![Die::default(); dies as usize],
            arrival: None,
            channel_free: vec![0; channels as usize],
            read_ns: timing.read_ns,
            program_ns: timing.program_ns,
            erase_ns: timing.erase_ns,
            xfer_ns: timing.page_transfer_ns(page_size),
        }
    }

    /// Serves the operation `op` records, as it was issued (replaying a trace).
    pub fn replay(&mut self, op: &Traced) -> Busy {
        match op.kind {
            OpKind::Read => self.read(op.at, op.die, op.channel, op.pages),
            OpKind::Program => self.program(op.at, op.die, op.channel, op.pages),
            OpKind::Erase => self.erase(op.at, op.die),
            OpKind::Copyback => self.copyback(op.at, op.die),
        }
    }

    /// Reads `pages` pages (1, or up to planes-per-die for a multi-plane read) on `die`.
    pub fn read(&mut self, at: Nanos, die: u32, channel: u32, pages: u32) -> Busy {
        let start = at.max(self.dies[die as usize].free);
        let done = self.transfer(start + self.read_ns, channel, pages);
        self.hold(at, die, start, done)
    }

    /// Programs `pages` pages (1, or up to planes-per-die for a multi-plane program) on `die`.
    pub fn program(&mut self, at: Nanos, die: u32, channel: u32, pages: u32) -> Busy {
        let start = at.max(self.dies[die as usize].free);
        let done = self.transfer(start, channel, pages) + self.program_ns;
        self.hold(at, die, start, done)
    }

    /// Erases one block (or one block per plane, multi-plane) on `die`.
    pub fn erase(&mut self, at: Nanos, die: u32) -> Busy {
        let start = at.max(self.dies[die as usize].free);
        self.hold(at, die, start, start + self.erase_ns)
    }

    /// Copyback: read into the page register and program from it, without the channel.
    pub fn copyback(&mut self, at: Nanos, die: u32) -> Busy {
        let start = at.max(self.dies[die as usize].free);
        self.hold(at, die, start, start + self.read_ns + self.program_ns)
    }

    /// The operations given from now on belong to a request that arrived at `t`: they entered
    /// their dies' queues then, whatever later time their inputs are ready at (the `at` each
    /// operation takes: a program waiting for its read, an erase for its relocations, work after
    /// a foreground GC). Their order is judged by `t`; a die whose next operation is not ready
    /// yet waits for it (head of line, counted in [`Busy::held`]). A device calls this at each
    /// request; without it every operation arrives at its own `at`.
    pub fn arrive(&mut self, t: Nanos) {
        self.arrival = Some(t);
    }

    /// The time at which every unit is idle.
    pub fn all_idle_at(&self) -> Nanos {
        let d = self.dies.iter().map(|d| d.free).max().unwrap_or(0);
        let c = self.channel_free.iter().copied().max().unwrap_or(0);
        d.max(c)
    }

    /// Busy time summed over every die since the device was built.
    pub fn total_die_busy(&self) -> Nanos {
        self.dies.iter().map(|d| d.busy).sum()
    }

    fn hold(&mut self, at: Nanos, die: u32, start: Nanos, done: Nanos) -> Busy {
        let arrival = self.arrival.map_or(at, |a| a.min(at));
        let d = &mut self.dies[die as usize];
        // The die was free from `max(arrival, free)` but kept for this operation until its input
        // was ready.
        let held = start.saturating_sub(arrival.max(d.free));
        d.free = done;
        d.busy += done - start;
        let late = d.latest.saturating_sub(arrival);
        d.latest = d.latest.max(arrival);
        Busy { done, busy: done - start, late, held }
    }

    fn transfer(&mut self, ready: Nanos, channel: u32, pages: u32) -> Nanos {
        if self.xfer_ns == 0 {
            return ready;
        }
        let c = channel as usize;
        let start = ready.max(self.channel_free[c]);
        let done = start + self.xfer_ns * pages as u64;
        self.channel_free[c] = done;
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Timing {
        Timing { read_ns: 40_000, program_ns: 200_000, erase_ns: 2_000_000, transfer_ps_per_byte: 10_000 }
    }

    #[test]
    fn named_chips_and_explicit_latencies_parse_and_label_round_trips() {
        assert_eq!(Timing::parse("ssdsim").unwrap(), Timing::SSDSIM);
        let t = Timing::parse("20us/200us/1.5ms/25ns").unwrap();
        assert_eq!(t, Timing::SSDSIM);
        for (_, chip) in Timing::NAMES {
            assert_eq!(Timing::parse(&chip.label()).unwrap(), chip, "{}", chip.label());
        }
        assert_eq!(Timing::SEED004.label(), "115us/1.6ms/3ms/10ns");
        for bad in ["", "fast", "20us/200us/1.5ms", "20us/200us/1.5ms/25", "0us/200us/1.5ms/25ns", "1s/1us/1us/1ns"] {
            let e = Timing::parse(bad).unwrap_err().to_string();
            assert!(e.contains("timing") && e.contains("ssdsim"), "{bad}: {e}");
        }
    }

    #[test]
    fn transfer_time_is_page_size_times_serial_time() {
        assert_eq!(t().page_transfer_ns(16384), 163_840);
    }

    #[test]
    fn same_die_serialises_and_other_dies_overlap() {
        let mut tl = Timeline::new(&t(), 4, 4, 4096);
        let x = t().page_transfer_ns(4096);
        let a = tl.read(0, 0, 0, 1).done;
        let b = tl.read(0, 0, 0, 1).done;
        assert_eq!(a, 40_000 + x);
        assert_eq!(b, 2 * (40_000 + x));
        // A different die on a different channel starts at once.
        assert_eq!(tl.read(0, 1, 1, 1).done, 40_000 + x);
        // A different die on a busy channel overlaps the array time but waits for the bus.
        let mut tl = Timeline::new(&t(), 2, 1, 4096);
        let first = tl.read(0, 0, 0, 1).done;
        let second = tl.read(0, 1, 0, 1);
        assert_eq!(second.done, first + x);
        // The second die held its register while it waited for the bus.
        assert_eq!(second.busy, 40_000 + 2 * x);
        assert_eq!(tl.total_die_busy(), 2 * (40_000 + x) + x);
    }

    #[test]
    fn an_operation_issued_in_the_past_is_late_and_queues_behind_later_work() {
        let mut tl = Timeline::new(&t(), 1, 1, 4096);
        let x = t().page_transfer_ns(4096);
        let first = tl.read(1_000_000, 0, 0, 1);
        assert_eq!((first.late, first.done), (0, 1_000_000 + 40_000 + x));
        // Issued at 0 after an operation issued at 1 ms: first-come first-served makes it wait
        // for work that lies after it in simulated time, and the timeline says by how much.
        let late = tl.read(0, 0, 0, 1);
        assert_eq!(late.late, 1_000_000);
        assert_eq!(late.done, first.done + 40_000 + x);
        assert_eq!(tl.read(1_000_000, 0, 0, 1).late, 0, "the latest issue time itself is in order");
    }

    #[test]
    fn multi_plane_program_pays_one_array_latency() {
        let mut tl = Timeline::new(&t(), 1, 1, 4096);
        let x = t().page_transfer_ns(4096);
        assert_eq!(tl.program(0, 0, 0, 2).done, 2 * x + 200_000);
        assert_eq!(tl.erase(0, 0).done, 2 * x + 200_000 + 2_000_000);
        assert_eq!(tl.copyback(0, 0).done, 2 * x + 200_000 + 2_000_000 + 240_000);
        assert_eq!(tl.total_die_busy(), 2 * x + 200_000 + 2_000_000 + 240_000, "one die, never idle");
    }
}

//! Block trace replay (`workload.name = "block-trace"`): a recorded trace's requests on a
//! simulated block SSD alone, with no file system and no engine, as MQSim and SSDSim replay
//! MSR Cambridge, SNIA or blktrace traces.
//!
//! Contract:
//! - The device is first written sequentially, every user page once (`precondition`, as MQSim's
//!   preconditioning), unless switched off; then the trace's requests are issued in file order.
//! - A request covers the whole flash pages its bytes touch (a partial page is written whole, with
//!   no read-modify-write: our choice, as page-level simulators do); a discard unmaps the pages
//!   it covers whole. Bytes beyond the user space are an error naming the line, or with
//!   `addresses = "wrap"` wrap around it (modulo the user pages).
//! - Open loop: each request is issued at its trace time after the preconditioning (a time that
//!   goes backwards is issued at once). Closed loop: a request is issued when one of
//!   `queue_depth` slots frees, in simulated time.
//! - A request's latency is its last page's completion minus its issue time; the replay phase
//!   reports them per kind (read, write, trim) and over all requests. Its user bytes are the
//!   trace's write bytes; the device's host write bytes are the pages it was asked to write.

use std::collections::BTreeMap;
use std::io::BufReader;

use flashsim::{HostLabel, HostOp, Latencies, LatencySummary, Nanos};
use hdrhistogram::Histogram;
use workload::block_trace::{BlockOp, BlockRequest, BlockTrace};

use crate::error::LabError;
use crate::page_writes::{phase, Queue};
use crate::result::{Measured, PhaseResult, RunResult};
use crate::spec::{format_size, Addresses, BlockTracePlan, Plan, Replay};
use crate::table::Table;

/// Runs the trace replay `p` of `plan`.
pub fn run(plan: &Plan, p: &BlockTracePlan, progress: bool) -> Measured {
    let trace = &p.trace;
    let mut ssd = p.ftl.build(&p.ssd)?;
    let user = ssd.user_pages();
    let page = ssd.page_size() as u64;
    let mut queue = Queue::new(trace.queue_depth);
    let mut phases = Vec::new();
    let mut start = 0;
    if trace.precondition {
        let bar = crate::progress::bar(progress, user, "precondition");
        for lpn in 0..user {
            let at = queue.issue_time();
            queue.complete(ssd.write_no_data(at, lpn, 1, HostLabel::Unlabelled)?);
            if lpn % 65536 == 0 {
                bar.set_position(lpn);
            }
        }
        bar.finish_and_clear();
        start = queue.drain();
        phases.push(phase("precondition", user, page, (0, start), ssd.latencies().summary(HostOp::Write)));
        // The trace starts once the preconditioning is on the flash.
        queue = Queue::starting_at(trace.queue_depth, start);
    }
    let file = std::fs::File::open(&trace.file).map_err(LabError::io(&trace.file, "open the trace"))?;
    let located =
        |e: workload::WorkloadError| LabError::invalid("workload.trace.file", format!("{}, {e}", trace.file.display()));
    let bar = crate::progress::bar(progress, 0, "requests");
    let mut replayed = Replayed::default();
    let (mut last_issue, mut end) = (start, start);
    for request in BlockTrace::new(BufReader::new(file), trace.format) {
        let r = request.map_err(located)?;
        let (first, pages) = page_span(&r, page);
        let parts = match (first + pages <= user, trace.addresses) {
            (true, _) => vec![(first, pages)],
            (false, Addresses::Error) => {
                return Err(LabError::invalid(
                    "workload.trace.addresses",
                    format!(
                        "{}, line {}: bytes {}..{} exceed the device's {} bytes of user space; give a larger \
                         capacity, or let the addresses wrap (wrap)",
                        trace.file.display(),
                        r.line,
                        r.offset,
                        r.offset + r.size,
                        user * page
                    ),
                ))
            }
            (false, Addresses::Wrap) => wrap(first % user, pages.min(user), user),
        };
        let at = match trace.replay {
            Replay::Open => (start + r.time_ns).max(last_issue),
            Replay::Closed => queue.issue_time(),
        };
        last_issue = at;
        let mut done = at;
        for (lpn, n) in parts {
            let t = match r.op {
                BlockOp::Read => ssd.read_no_data(at, lpn, n, HostLabel::Unlabelled)?,
                BlockOp::Write => ssd.write_no_data(at, lpn, n, HostLabel::Unlabelled)?,
                BlockOp::Discard => ssd.trim(at, lpn, n)?,
            };
            done = done.max(t);
        }
        queue.complete(done);
        end = end.max(done);
        replayed.record(&r, done - at);
        if replayed.requests % 65536 == 0 {
            bar.set_position(replayed.requests);
        }
    }
    bar.finish_and_clear();
    let end = end.max(queue.drain());
    phases.push(replayed.phase(start, end));
    let all = ssd.counters();
    let result = RunResult::of_device(
        &plan.workload,
        "none: trace requests to the device".into(),
        plan.device.clone(),
        phases,
        ssd.report(),
        end,
        None,
    );
    Ok((result, Some(all.flash.nand_ops())))
}

/// A replay's tables: the device and trace, what the replay asked and what the flash did, then
/// the requests' latencies by kind.
pub fn render(r: &RunResult) -> String {
    let Some(replay) = r.phases.last() else { return crate::result::render(r) };
    let mut t = Table::new(&["metric", "value"]);
    let mut row = |k: &str, v: String| t.row(vec![k.into(), v]);
    row("device and trace", r.device.clone());
    row(
        "requests (replay)",
        format!(
            "{} in {:.3} simulated s ({:.0}/s); {} written, {} read",
            replay.ops,
            replay.elapsed_s,
            replay.ops_per_sec,
            format_size(replay.user_bytes),
            format_size(replay.read_bytes)
        ),
    );
    row("host writes (preconditioning included)", format_size(r.host.write_bytes));
    let wa = r.write_amplification().map_or("-".into(), |w| format!("{w:.3}"));
    row("write amplification (flash programs / host writes)", wa);
    if let Some(f) = &r.flash {
        row("erases", f.erases.to_string());
        row("gc copied pages", f.gc_copied_pages.to_string());
        row("copybacks", f.copybacks.to_string());
        let w = f.wear;
        row("wear (erases per block)", format!("{} / {:.1} / {}", w.min_erases, w.mean_erases, w.max_erases));
        let causes: Vec<String> = f.by_cause.iter().map(|c| c.to_string()).collect();
        row("flash time by cause", causes.join(", "));
    }
    let mut l = Table::new(&["requests", "count", "mean us", "p50 us", "p99 us", "p99.9 us", "max us"]);
    let kinds = replay.latency_by_kind.iter().map(|(k, s)| (k.as_str(), s));
    for (kind, s) in kinds.chain([("all", &replay.latency)]) {
        l.row(vec![
            kind.into(),
            s.count.to_string(),
            format!("{:.1}", s.mean_us),
            format!("{:.1}", s.p50_us),
            format!("{:.1}", s.p99_us),
            format!("{:.1}", s.p999_us),
            format!("{:.1}", s.max_us),
        ]);
    }
    format!("{}\n{}", t.render(), l.render())
}

/// The first flash page a request touches and how many.
fn page_span(r: &BlockRequest, page: u64) -> (u64, u64) {
    let first = r.offset / page;
    let last = (r.offset + r.size - 1) / page;
    (first, last - first + 1)
}

/// `pages` pages from `first`, wrapped around `user` pages: one range, or two.
fn wrap(first: u64, pages: u64, user: u64) -> Vec<(u64, u64)> {
    if first + pages <= user {
        vec![(first, pages)]
    } else {
        vec![(first, user - first), (0, pages - (user - first))]
    }
}

/// What the replay did: requests and bytes by kind, and latencies.
struct Replayed {
    requests: u64,
    write_bytes: u64,
    read_bytes: u64,
    by_kind: Latencies,
    all: Histogram<u64>,
}

impl Default for Replayed {
    fn default() -> Self {
        let mut all = Histogram::new(3).expect("3 significant figures is a valid histogram precision");
        all.auto(true);
        Replayed { requests: 0, write_bytes: 0, read_bytes: 0, by_kind: Latencies::new(), all }
    }
}

impl Replayed {
    fn record(&mut self, r: &BlockRequest, latency: Nanos) {
        self.requests += 1;
        let op = match r.op {
            BlockOp::Read => {
                self.read_bytes += r.size;
                HostOp::Read
            }
            BlockOp::Write => {
                self.write_bytes += r.size;
                HostOp::Write
            }
            BlockOp::Discard => HostOp::Trim,
        };
        self.by_kind.record(op, latency);
        // Auto-resizing: every u64 fits.
        let _ = self.all.record(latency.max(1));
    }

    /// The replay phase over the simulated span `from..to`.
    fn phase(&self, from: Nanos, to: Nanos) -> PhaseResult {
        let elapsed_s = to.saturating_sub(from) as f64 / 1e9;
        let ops = self.requests;
        let mut latency_by_kind = BTreeMap::new();
        for (name, op) in [("read", HostOp::Read), ("write", HostOp::Write), ("trim", HostOp::Trim)] {
            let s: LatencySummary = self.by_kind.summary(op);
            if s.count > 0 {
                latency_by_kind.insert(name.to_string(), s);
            }
        }
        PhaseResult {
            name: "replay".into(),
            ops,
            elapsed_s,
            ops_per_sec: if elapsed_s > 0.0 { ops as f64 / elapsed_s } else { 0.0 },
            micros_per_op: if ops > 0 { elapsed_s * 1e6 / ops as f64 } else { 0.0 },
            user_bytes: self.write_bytes,
            read_bytes: self.read_bytes,
            found: 0,
            scanned_records: 0,
            latency: flashsim::latency::summarize(&self.all),
            latency_by_kind,
            timeline: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use workload::block_trace::BlockOp;

    #[test]
    fn a_request_covers_the_pages_its_bytes_touch() {
        let r = |offset, size| BlockRequest { line: 1, time_ns: 0, op: BlockOp::Write, offset, size };
        assert_eq!(page_span(&r(0, 4096), 4096), (0, 1));
        assert_eq!(page_span(&r(4095, 2), 4096), (0, 2));
        assert_eq!(page_span(&r(8192, 512), 4096), (2, 1));
        assert_eq!(page_span(&r(4096, 12288), 4096), (1, 3));
        assert_eq!(wrap(8, 4, 10), [(8, 2), (0, 2)]);
        assert_eq!(wrap(2, 4, 10), [(2, 4)]);
    }
}

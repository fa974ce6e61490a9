//! The page-write workload (`workload.name = "pages"`): a simulated block SSD alone, with no file
//! system and no engine, filled sequentially, then overwritten one page at a time in a pattern
//! with a fixed queue depth (a new write issues when the oldest outstanding one completes, in
//! simulated time). Write amplification is measured over the overwrites after the warmup, which
//! is how GC steady state is reported in the literature; the result is a `RunResult` like every
//! other run's, with this measurement in its `ftl` section: the run's write amplification (the
//! `write_amplification` metric) is that interval's, and the whole run's flash and host write
//! amplifications are left out, since the phases' user bytes leave the warmup out.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use flashsim::theory::greedy_wa_limit;
use flashsim::{HostLabel, HostOp, LatencySummary, Nanos};
use rand::{Rng, SeedableRng};
use workload::zipfian::Zipfian;

use crate::error::LabError;
use crate::result::{FtlSummary, Measured, PhaseResult, RunResult};
use crate::spec::{Named, PageWritesPlan, Pattern, Plan};

/// Writes drawn ahead of the one being served (`Ftl::prefetch`).
const PREFETCH_AHEAD: u64 = 16;

/// Runs the page writes `p` of `plan`.
pub fn run(plan: &Plan, p: &PageWritesPlan, progress: bool) -> Measured {
    let pages = &p.pages;
    let config = &p.ssd;
    let mut ssd = p.ftl.build(config)?;
    let user = ssd.user_pages();
    let overwrites = (pages.writes * user as f64).round() as u64;
    let measure_from = (pages.warmup * overwrites as f64).round() as u64;
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(p.seed);
    let mut zipf = match pages.pattern {
        Pattern::Zipf(theta) => {
            Some(Zipfian::new(user, theta).map_err(|e| LabError::invalid("workload.pages.pattern", e.to_string()))?)
        }
        _ => None,
    };
    let bar = crate::progress::bar(progress, user + overwrites, "pages");
    let mut queue = Queue::new(pages.queue_depth);
    for lpn in 0..user {
        let at = queue.issue_time();
        queue.complete(ssd.write_no_data(at, lpn, 1, HostLabel::Unlabelled)?);
        if lpn % 65536 == 0 {
            bar.set_position(lpn);
        }
    }
    let fill_end = queue.issue_time();
    let fill_latency = ssd.latencies().summary(HostOp::Write);
    let (mut start, mut start_time) = (ssd.counters(), fill_end);
    let mut draw = |i: u64| match (&pages.pattern, zipf.as_mut()) {
        (Pattern::Seq, _) => i % user,
        (Pattern::Zipf(_), Some(z)) => z.next(&mut rng),
        _ => rng.next_u64() % user,
    };
    // The LPNs are drawn a few writes ahead (the same ones, in the same order), so that the FTL
    // can fetch their mapping while it serves the writes before (on a large device the map
    // misses the CPU's cache on every random page).
    let mut ahead: VecDeque<u64> = (0..overwrites.min(PREFETCH_AHEAD)).map(&mut draw).collect();
    for i in 0..overwrites {
        if i == measure_from {
            start = ssd.counters();
            start_time = queue.issue_time();
            ssd.reset_latencies();
        }
        if i + PREFETCH_AHEAD < overwrites {
            let next = draw(i + PREFETCH_AHEAD);
            ssd.prefetch(next);
            ahead.push_back(next);
        }
        let lpn = ahead.pop_front().expect("drawn ahead");
        let at = queue.issue_time();
        queue.complete(ssd.write_no_data(at, lpn, 1, HostLabel::Unlabelled)?);
        if i % 65536 == 0 {
            bar.set_position(user + i);
        }
    }
    bar.finish_and_clear();
    let end_time = queue.drain();
    let all = ssd.counters();
    let measured = all.delta(&start);
    let page = ssd.geometry().page_size as u64;
    let phases = vec![
        phase("fill", user, page, (0, fill_end), fill_latency),
        phase(
            "overwrite (measured)",
            measured.ftl.host_write_pages,
            page,
            (start_time, end_time),
            ssd.latencies().summary(HostOp::Write),
        ),
    ];
    let uniform = pages.pattern == Pattern::Uniform;
    let ftl = FtlSummary {
        pattern: pages.pattern.name(),
        capacity_writes: pages.writes,
        warmup: pages.warmup,
        queue_depth: pages.queue_depth,
        write_amplification: measured.write_amplification().unwrap_or(0.0),
        theory_write_amplification: uniform.then(|| greedy_wa_limit(config.spare_factor)),
        theory_write_amplification_effective: uniform.then(|| greedy_wa_limit(config.effective_spare_factor())),
        measured_spare_factor: ssd.measured_spare_factor(&measured),
        measured_host_write_pages: measured.ftl.host_write_pages,
        measured_nand_programs: measured.flash.programs,
        gc_runs: all.ftl.gc_runs,
        foreground_gc_runs: all.ftl.foreground_gc_runs,
        nvram: ssd.nvram(),
    };
    let result = RunResult::of_device(
        &plan.workload,
        "none: page writes to the device".into(),
        plan.device.clone(),
        phases,
        ssd.report(),
        end_time,
        Some(ftl),
    );
    Ok((result, Some(all.flash.nand_ops())))
}

/// A phase of `ops` page writes of `page` bytes over the simulated span `(from, to)`.
pub(crate) fn phase(
    name: &str,
    ops: u64,
    page: u64,
    (from, to): (Nanos, Nanos),
    latency: LatencySummary,
) -> PhaseResult {
    let elapsed_s = to.saturating_sub(from) as f64 / 1e9;
    PhaseResult {
        name: name.to_string(),
        ops,
        elapsed_s,
        ops_per_sec: if elapsed_s > 0.0 { ops as f64 / elapsed_s } else { 0.0 },
        micros_per_op: if ops > 0 { elapsed_s * 1e6 / ops as f64 } else { 0.0 },
        user_bytes: ops * page,
        read_bytes: 0,
        found: 0,
        scanned_records: 0,
        latency: latency.clone(),
        latency_by_kind: BTreeMap::from([("write".to_string(), latency)]),
        timeline: Vec::new(),
    }
}

/// Fixed queue depth in simulated time: each new request is issued when a slot frees.
pub(crate) struct Queue {
    depth: usize,
    outstanding: BinaryHeap<Reverse<Nanos>>,
    last_issue: Nanos,
}

impl Queue {
    pub(crate) fn new(depth: u32) -> Self {
        Queue::starting_at(depth, 0)
    }

    /// A queue whose first request issues at `t`.
    pub(crate) fn starting_at(depth: u32, t: Nanos) -> Self {
        Queue { depth: depth as usize, outstanding: BinaryHeap::new(), last_issue: t }
    }

    pub(crate) fn issue_time(&mut self) -> Nanos {
        if self.outstanding.len() >= self.depth {
            if let Some(Reverse(t)) = self.outstanding.pop() {
                self.last_issue = self.last_issue.max(t);
            }
        }
        self.last_issue
    }

    pub(crate) fn complete(&mut self, done: Nanos) {
        self.outstanding.push(Reverse(done));
    }

    pub(crate) fn drain(&mut self) -> Nanos {
        self.outstanding.drain().map(|Reverse(t)| t).max().unwrap_or(self.last_issue).max(self.last_issue)
    }
}

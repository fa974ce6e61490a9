//! A run's result as the terminal shows it: its phases, levels and accounting in tables and lines.

use super::{RunResult, TimeBase};

/// The human-readable tables of a run: phases, levels, write amplification by cause.
pub fn render(r: &RunResult) -> String {
    use crate::table::Table;
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let cpu = match (&r.host.cpu, r.time_base) {
        (_, TimeBase::WallClock) => "the host's real CPU".to_string(),
        (Some(c), TimeBase::Simulated) => format!("host CPU: {}", c.model),
        (None, TimeBase::Simulated) => "host CPU time is not modelled".into(),
    };
    let mut out = format!("{} on {} with {} ({} time; {cpu})\n\n", r.workload, r.device, r.engine, r.time_base);
    let mut t = Table::new(&["phase", "ops", "ops/s", "p50 us", "p99 us", "p99.9 us", "MiB written", "MiB read"]);
    for p in &r.phases {
        t.row(vec![
            p.name.clone(),
            p.ops.to_string(),
            // No time passed (in simulation, nothing reached the device): no rate to give.
            if p.elapsed_s > 0.0 { format!("{:.0}", p.ops_per_sec) } else { "-".into() },
            format!("{:.1}", p.latency.p50_us),
            format!("{:.1}", p.latency.p99_us),
            format!("{:.1}", p.latency.p999_us),
            mb(p.user_bytes),
            mb(p.read_bytes),
        ]);
    }
    out.push_str(&t.render());
    let levels = levels_table(r);
    if !levels.is_empty() {
        out.push('\n');
        out.push_str(&levels);
    }
    out.push_str(&accounting(r));
    out
}

/// The levels the run wrote or left files in; nothing when there are none (a key-value SSD, page
/// writes), rather than a table's header alone.
fn levels_table(r: &RunResult) -> String {
    use crate::table::Table;
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let mut t = Table::new(&[
        "level",
        "files",
        "size MiB",
        "read MiB",
        "written MiB",
        "moved MiB",
        "remapped MiB",
        "host MiB",
        "compactions",
    ]);
    let mut rows = 0;
    for l in r.lsm.iter().flat_map(|s| &s.levels) {
        if l.files == 0 && l.bytes_written == 0 && l.bytes_moved == 0 {
            continue;
        }
        rows += 1;
        t.row(vec![
            format!("L{}", l.level),
            l.files.to_string(),
            mb(l.bytes),
            mb(l.bytes_read),
            mb(l.bytes_written),
            mb(l.bytes_moved),
            mb(l.bytes_remapped),
            l.host_write_bytes.map_or("-".into(), mb),
            l.compactions.to_string(),
        ]);
    }
    if rows == 0 {
        return String::new();
    }
    t.render()
}

/// Host and flash writes by cause, wear, zones, a key-value SSD's own work, stalls.
fn accounting(r: &RunResult) -> String {
    let mb = |b: u64| format!("{:.1}", b as f64 / (1 << 20) as f64);
    let mut out = String::new();
    out.push_str(&format!(
        "\nuser {} MiB; host writes {} MiB{}",
        mb(r.host.user_bytes),
        mb(r.host.write_bytes),
        r.host.write_amplification.map_or(String::new(), |wa| format!(" (host WA {wa:.2})"))
    ));
    if let Some(h) = &r.host.write_bytes_by_cause {
        out.push_str(&format!(
            ": wal {}, flush {}, compaction {}, manifest {}, fs metadata {}",
            mb(h.wal),
            mb(h.flush),
            mb(h.compaction_by_level.iter().sum()),
            mb(h.manifest),
            mb(h.fs_metadata)
        ));
        for (name, bytes) in [("moves", h.moves), ("T-zone", h.t_zone), ("zone GC", h.zone_gc)] {
            if bytes > 0 {
                out.push_str(&format!(", {name} {}", mb(bytes)));
            }
        }
    }
    out.push('\n');
    if let Some(c) = r.fs.as_ref().and_then(|f| f.page_cache.as_ref()) {
        let w = &c.written_back_bytes;
        out.push_str(&format!(
            "page cache {} MiB: hit ratio {}, {} misses, {} pages read ahead; written back {} MiB (fsync {}, background \
             {}, expired {}, pressure {}, clone {}, direct I/O {}, at the end {}); dirty peak {} MiB, {} MiB of deleted files never \
             written\n",
            mb(c.capacity_bytes),
            c.hit_ratio.map_or("-".into(), |h| format!("{:.1} %", h * 100.0)),
            c.misses,
            c.readahead_pages,
            mb(w.total),
            mb(w.fsync),
            mb(w.background),
            mb(w.expired),
            mb(w.pressure),
            mb(w.clone),
            mb(w.direct),
            mb(w.unmount),
            mb(c.dirty_peak_bytes),
            mb(c.dropped_dirty_bytes)
        ));
    }
    if let Some(l) = &r.host.lanes {
        let s = |ns: u64| format!("{:.3}", ns as f64 / 1e9);
        for (name, t) in [("foreground", &l.foreground), ("background", &l.background)] {
            out.push_str(&format!(
                "{name} lane {} s: cpu {}, waiting for a core {}, reads {}, writes {}, metadata {}, device {}, stalls {}, \
                 idle {}, zone GC {}\n",
                s(t.total_ns()),
                s(t.cpu_ns),
                s(t.cpu_queue_ns),
                s(t.read_ns),
                s(t.write_ns),
                s(t.metadata_ns),
                s(t.device_ns),
                s(t.stall_ns),
                s(t.idle_ns),
                s(t.gc_ns)
            ));
        }
    }
    if let Some(f) = &r.flash {
        // A page-write run's write amplification is over its measured interval (its ftl section).
        let wa = r.write_amplification().map_or(String::new(), |wa| format!(" (write amplification {wa:.2})"));
        out.push_str(&format!(
            "flash programs {} MiB{wa}; GC copied {} pages; {} erases; {} pages remapped\n",
            mb(f.program_bytes),
            f.gc_copied_pages,
            f.erases,
            f.remapped_pages
        ));
        let parts: Vec<String> = f.by_cause.iter().map(|c| c.to_string()).collect();
        out.push_str(&format!("flash time {:.2} s (summed over dies): {}\n", f.busy_s, parts.join(", ")));
        let (w, sf, eff) = (f.wear, f.spare_factor, f.effective_spare_factor);
        out.push_str(&format!(
            "wear: {} / {:.2} / {} erases per block (min / mean / max); spare factor {sf} ({eff:.4} effective)\n",
            w.min_erases, w.mean_erases, w.max_erases
        ));
    }
    if let Some(z) = r.fs.as_ref().and_then(|f| f.zones.as_ref()) {
        out.push_str(&format!(
            "zones: {} of {} data zones in use, {} at >= 90 % utilisation (histogram by tenths {:?}); space \
             amplification {}; {} resets; host GC {} runs, {} MiB copied\n",
            z.used_zones,
            z.data_zones,
            z.zones_over_90_percent,
            z.utilisation_histogram,
            z.space_amplification.map_or("-".into(), |s| format!("{s:.2}")),
            z.resets,
            z.gc_runs,
            mb(z.gc_copied_bytes)
        ));
    }
    if let Some(w) = &r.kv_ssd {
        out.push_str(&format!(
            "device work: {} flushes, compactions by level {:?}, GC {} runs moving {} pages; puts waited {:.3} s \
             beyond their flushes for them ({:.3} s of it compaction); {} reads answered from device DRAM\n",
            w.flushes,
            w.compactions_by_level,
            w.gc_runs,
            w.gc_moved_pages,
            w.held_ns as f64 / 1e9,
            w.compaction_ns as f64 / 1e9,
            w.dram_hits
        ));
        if let Some(n) = w.ssts_read_per_get {
            out.push_str(&format!("SSTs read per get: {n:.2}\n"));
        }
    }
    if let Some(e) = &r.lsm {
        let c = &e.stalls_by_cause;
        out.push_str(&format!(
            "stalls: {} ({:.3} s): {} slowdowns ({:.3} s), {} memtable ({:.3} s), {} level-0 stop ({:.3} s)\n",
            e.stall_count,
            e.stall_s,
            c.slowdown.count,
            c.slowdown.s,
            c.memtable.count,
            c.memtable.s,
            c.l0_stop.count,
            c.l0_stop.s
        ));
    }
    if let Some(l) = r.host.lanes.filter(|l| l.out_of_order_requests > 0) {
        out.push_str(&format!(
            "flash operations issued out of simulated-time order: {} ({:.3} s late in total)\n",
            l.out_of_order_requests,
            l.out_of_order_ns as f64 / 1e9
        ));
    }
    out
}

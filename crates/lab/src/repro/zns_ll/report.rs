//! The zns-ll repro's report: the fillrandom table and figures, the comparison beside the seed's
//! numbers, the writes by cause and the YCSB table, from the runs' results.

use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::result::HostWrites;
use crate::result::RunResult;

use super::super::{failed, mb, ratio, round};
use super::{GIB, PAPER_YCSB_SPEEDUP, ROWS};
use workload::YcsbWorkload;

fn wa(r: &RunResult) -> f64 {
    r.write_amplification().unwrap_or(0.0)
}

/// The fillrandom phase's throughput.
fn fill_ops(r: &RunResult) -> f64 {
    r.phases.last().map_or(0.0, |p| p.ops_per_sec)
}

pub(super) fn fillrandom(set: &mut ResultSet, fills: &[Option<RunResult>], asked: &[bool]) {
    let ll = fills[4].as_ref().map(fill_ops);
    let mut rows = Vec::new();
    for ((row, r), _) in ROWS.iter().zip(fills).zip(asked).filter(|(_, &asked)| asked) {
        let Some(r) = r else {
            let mut cells = vec![Cell::Text(row.name.into()), Cell::Text(row.about.into())];
            cells.extend((0..11).map(|_| failed()));
            rows.push(cells);
            continue;
        };
        let z = r.zones();
        rows.push(vec![
            Cell::Text(row.name.into()),
            Cell::Text(row.about.into()),
            round(fill_ops(r), 0),
            ratio(ll, Some(fill_ops(r))),
            round(wa(r), 2),
            z.and_then(|z| z.space_amplification).map_or(Cell::Text("-".into()), |s| round(s, 2)),
            Cell::Number(z.map_or(0, |z| z.resets) as f64),
            Cell::Number(z.map_or(0, |z| z.gc_runs) as f64),
            mb(z.map_or(0, |z| z.gc_copied_bytes)),
            Cell::Number(z.map_or(0, |z| z.used_zones) as f64),
            round(z.map_or(0.0, |z| z.zones_over_90_percent as f64 / z.used_zones.max(1) as f64 * 100.0), 1),
            round(r.host.sim_time_s.unwrap_or(0.0), 1),
            Cell::Text(r.content_digest.map_or("-".into(), |d| format!("{} records, {:016x}", d.records, d.fnv1a))),
        ]);
    }
    set.tables.push(ResultTable {
        name: "fillrandom: throughput, write and space amplification, zones".into(),
        columns: [
            "row",
            "what",
            "ops/s",
            "LL speed-up",
            "WA",
            "SA",
            "zone resets",
            "GC runs",
            "GC MiB",
            "used zones",
            "zones >= 90 % (%)",
            "simulated s",
            "contents (records, FNV-1a)",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    let done: Vec<&RunResult> = fills.iter().flatten().collect();
    let same = done.windows(2).all(|w| w[0].content_digest == w[1].content_digest);
    set.notes.push(format!(
        "Database contents at the end of fillrandom (full-scan digest): {}.",
        match (same, done.len()) {
            (true, n) if n == ROWS.len() => "identical in every row".to_string(),
            (true, n) => format!("identical in the {n} rows that finished"),
            (false, _) => "DIFFERENT between rows: a strategy lost or invented data".to_string(),
        }
    ));
    writes_by_cause(set, fills);
    fillrandom_figures(set, fills);
}

/// The fillrandom figures: throughput, write amplification, zones.
fn fillrandom_figures(set: &mut ResultSet, fills: &[Option<RunResult>]) {
    let categories: Vec<String> = ROWS.iter().map(|r| r.name.to_string()).collect();
    set.figures.push(Figure {
        id: "fillrandom_throughput".into(),
        title: "fillrandom throughput per strategy".into(),
        kind: FigureKind::Bar,
        x_label: "strategy".into(),
        y_label: "operations per simulated second".into(),
        categories: categories.clone(),
        series: vec![Series {
            name: "ours".into(),
            points: fills.iter().enumerate().filter_map(|(i, r)| Some((i as f64, fill_ops(r.as_ref()?)))).collect(),
            dashed: false,
        }],
    });
    set.figures.push(Figure {
        id: "throughput_over_time".into(),
        title: "fillrandom throughput over time".into(),
        kind: FigureKind::Line,
        x_label: "simulated seconds".into(),
        y_label: "operations per simulated second".into(),
        categories: vec![],
        series: ROWS
            .iter()
            .zip(fills)
            .filter_map(|(row, r)| {
                Some(Series {
                    name: row.name.into(),
                    points: r.as_ref()?.phases.last().map_or_else(Vec::new, |p| p.timeline.clone()),
                    dashed: false,
                })
            })
            .collect(),
    });
    set.figures.push(Figure {
        id: "zone_utilisation".into(),
        title: "zone utilisation at the end of fillrandom (share of used zones per tenth)".into(),
        kind: FigureKind::Bar,
        x_label: "zone utilisation (live bytes / zone capacity)".into(),
        y_label: "% of used data zones".into(),
        categories: (0..10).map(|i| format!("{}-{}%", i * 10, i * 10 + 10)).collect(),
        series: ROWS
            .iter()
            .zip(fills)
            .filter_map(|(row, r)| {
                let z = r.as_ref()?.zones()?;
                let used = z.used_zones.max(1) as f64;
                Some(Series {
                    name: row.name.into(),
                    points: z
                        .utilisation_histogram
                        .iter()
                        .enumerate()
                        .map(|(i, &n)| (i as f64, n as f64 / used * 100.0))
                        .collect(),
                    dashed: false,
                })
            })
            .collect(),
    });
}

/// Host writes by cause (MiB), per row.
fn writes_by_cause(set: &mut ResultSet, fills: &[Option<RunResult>]) {
    let levels = fills
        .iter()
        .flatten()
        .filter_map(|r| r.host.write_bytes_by_cause.as_ref())
        .map(|h| h.compaction_by_level.len())
        .max()
        .unwrap_or(0);
    let mut columns: Vec<String> = ["row", "WAL", "flush"].map(String::from).to_vec();
    columns.extend((1..levels).map(|l| format!("compaction L{l}")));
    columns.extend(["moves", "T-zone", "zone GC", "metadata", "total", "WA"].map(String::from));
    let mut rows = Vec::new();
    let mut by_cause: Vec<(usize, Vec<f64>)> = Vec::new();
    for (i, (row, r)) in ROWS.iter().zip(fills).enumerate() {
        let Some(r) = r else { continue };
        let Some(h) = &r.host.write_bytes_by_cause else { continue };
        let mut values = vec![h.wal, h.flush];
        values.extend((1..levels).map(|l| h.compaction_by_level.get(l).copied().unwrap_or(0)));
        values.extend([h.moves, h.t_zone, h.zone_gc, h.manifest + h.fs_metadata + h.other]);
        set.notes.extend(thrashing(row.name, h));
        let mut cells = vec![Cell::Text(row.name.into())];
        cells.extend(values.iter().map(|&b| mb(b)));
        cells.push(mb(h.total));
        cells.push(round(r.host.write_amplification.unwrap_or(0.0), 2));
        rows.push(cells);
        by_cause.push((i, values.iter().map(|&b| b as f64 / GIB as f64).collect()));
    }
    let cause_names: Vec<String> = columns[1..columns.len() - 2].to_vec();
    set.figures.push(Figure {
        id: "writes_by_cause".into(),
        title: "fillrandom host writes by cause".into(),
        kind: FigureKind::Bar,
        x_label: "strategy".into(),
        y_label: "GiB written".into(),
        categories: ROWS.iter().map(|r| r.name.to_string()).collect(),
        series: cause_names
            .iter()
            .enumerate()
            .map(|(c, name)| Series {
                name: name.clone(),
                points: by_cause.iter().map(|(i, v)| (*i as f64, v[c])).collect(),
                dashed: false,
            })
            .collect(),
    });
    set.tables.push(ResultTable { name: "fillrandom host writes by cause (MiB)".into(), columns, rows });
}

/// Host zone GC that copies more than the engine itself wrote is thrashing: the zones hold live
/// and dead data mixed, and each GC pass copies live data that the next pass copies again.
pub(super) fn thrashing(row: &str, h: &HostWrites) -> Option<String> {
    let engine = h.total.saturating_sub(h.zone_gc);
    (h.zone_gc > engine).then(|| {
        format!(
            "{row}: host zone GC thrashes: it copied {:.1} GiB, {:.1}x the {:.1} GiB the engine wrote (its zones mix \
             live and dead data, and GC copies the same live data again and again)",
            h.zone_gc as f64 / GIB as f64,
            h.zone_gc as f64 / engine.max(1) as f64,
            engine as f64 / GIB as f64
        )
    })
}

pub(super) fn ycsb_table(set: &mut ResultSet, workloads: &[YcsbWorkload], results: &[Option<RunResult>]) {
    let mut rows = Vec::new();
    let mut gc = Vec::new();
    let mut ll = Vec::new();
    for (i, (w, pair)) in workloads.iter().zip(results.chunks(2)).enumerate() {
        let ops = |r: &Option<RunResult>| r.as_ref().map(|r| r.phases.last().map_or(0.0, |p| p.ops_per_sec));
        let (g, l) = (ops(&pair[0]), ops(&pair[1]));
        let both = g.zip(l).map(|(g, l)| l / g.max(1e-9));
        rows.push(vec![
            Cell::Text(w.name().to_string()),
            g.map_or_else(failed, |g| round(g, 0)),
            l.map_or_else(failed, |l| round(l, 0)),
            both.map_or_else(failed, |x| round(x, 2)),
            Cell::Text(format!("{}-{}", PAPER_YCSB_SPEEDUP.0, PAPER_YCSB_SPEEDUP.1)),
            Cell::Text(match both {
                Some(x) if (PAPER_YCSB_SPEEDUP.0..=PAPER_YCSB_SPEEDUP.1).contains(&((x * 100.0).round() / 100.0)) => {
                    "in".into()
                }
                Some(_) => "out".into(),
                None => "-".into(),
            }),
        ]);
        gc.extend(g.map(|g| (i as f64, g)));
        ll.extend(l.map(|l| (i as f64, l)));
    }
    set.tables.push(ResultTable {
        name: "YCSB: LL vs GC (run phase; Load = the load phase)".into(),
        columns: ["workload", "GC ops/s", "LL ops/s", "LL / GC", "paper LL / GC", "in the paper's range"]
            .map(String::from)
            .to_vec(),
        rows,
    });
    set.figures.push(Figure {
        id: "ycsb".into(),
        title: "YCSB throughput, LL vs GC".into(),
        kind: FigureKind::Bar,
        x_label: "YCSB workload".into(),
        y_label: "operations per simulated second".into(),
        categories: workloads.iter().map(|w| w.name().to_string()).collect(),
        series: vec![
            Series { name: "GC".into(), points: gc, dashed: false },
            Series { name: "LL".into(), points: ll, dashed: false },
        ],
    });
}

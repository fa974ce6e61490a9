//! The `cache` part of the remapcom repro: how much Figures 11 and 12 depend on the host's page
//! cache, which seed 000 does not give. Fillrandom and zipfian (Figure 11) and YCSB Load and A-F
//! (Figure 12) at 1 KiB KVs in Baseline, RemapCom-Base and RemapCom, without a cache and with
//! three sizes, the largest the repro's own (whose runs are the figures' own).

use workload::YcsbWorkload;

use super::{get, wa, Mode, GIB, MIB, PAPER_PAGE_CACHE};
use crate::error::Result;
use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::repro::{Context, Runs};

/// Cache sizes at the paper's scale (scaled with the rest; cache.toml's).
const SIZES: [u64; 4] = [0, 256 * MIB, GIB, PAPER_PAGE_CACHE];
const KV: u64 = 1024;

/// The swept workloads, by the label of their runs (cache.toml's `workload`).
fn workloads() -> Vec<String> {
    let mut out = vec![format!("fillrandom {KV} B"), format!("zipfian {KV} B")];
    out.extend(YcsbWorkload::ALL.iter().map(|w| format!("ycsb {} {KV} B", w.name())));
    out
}

/// The label of a swept run: the figures' own at the repro's cache size.
fn label(base: &str, cache: u64) -> String {
    match cache {
        PAPER_PAGE_CACHE => base.to_string(),
        0 => format!("{base} no page cache"),
        b => format!("{base} page cache {}", crate::spec::format_size(b)),
    }
}

pub(super) fn report(c: &Context, runs: &Runs, set: &mut ResultSet) -> Result<()> {
    let mut rows = Vec::new();
    let mut series: Vec<Series> = SIZES
        .iter()
        .map(|&cache| Series {
            name: match c.scale.size(cache) {
                0 => "no page cache".into(),
                b => format!("{} page cache", crate::spec::format_size(b)),
            },
            points: Vec::new(),
            dashed: false,
        })
        .collect();
    let names: Vec<String> = workloads();
    for (wi, base) in names.iter().enumerate() {
        for (si, &cache) in SIZES.iter().enumerate() {
            let l = label(base, cache);
            let (b, rb, rf) = (get(runs, &l, Mode::Baseline)?, get(runs, &l, Mode::Base)?, get(runs, &l, Mode::Full)?);
            let gain = |r: &crate::result::RunResult| (r.host.ops_per_sec / b.host.ops_per_sec.max(1e-9) - 1.0) * 100.0;
            let hit = b.fs.as_ref().and_then(|f| f.page_cache.as_ref()).and_then(|p| p.hit_ratio);
            rows.push(vec![
                Cell::Text(base.clone()),
                Cell::Number((c.scale.size(cache) / MIB) as f64),
                Cell::Number(b.host.ops_per_sec.round()),
                Cell::Number((gain(rb) * 10.0).round() / 10.0),
                Cell::Number((gain(rf) * 10.0).round() / 10.0),
                hit.map_or(Cell::Text("-".into()), |h| Cell::Number((h * 1000.0).round() / 10.0)),
                Cell::Number((wa(b) * 100.0).round() / 100.0),
                Cell::Number((wa(rf) * 100.0).round() / 100.0),
            ]);
            series[si].points.push((wi as f64, rf.host.ops_per_sec / b.host.ops_per_sec.max(1e-9)));
        }
    }
    set.tables.push(ResultTable {
        name: "Page-cache sweep (ours): Figures 11 and 12 at 1 KiB by the host's page cache".into(),
        columns: [
            "workload",
            "page cache MiB",
            "Baseline ops/s",
            "Base gain %",
            "RemapCom gain %",
            "Baseline hit ratio %",
            "Baseline WA",
            "RemapCom WA",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    set.figures.push(Figure {
        id: "cache_sweep".into(),
        title: "RemapCom throughput / Baseline's by page-cache size (1 KiB KVs)".into(),
        kind: FigureKind::Bar,
        x_label: "workload".into(),
        y_label: "RemapCom / Baseline throughput".into(),
        categories: names,
        series,
    });
    set.notes.push(format!(
        "The cache part sweeps the host's page cache, which seed 000 does not give: none, {}, {} and the repro's {} \
         (its figures' runs), scaled as the rest.",
        crate::spec::format_size(c.scale.size(SIZES[1])),
        crate::spec::format_size(c.scale.size(SIZES[2])),
        crate::spec::format_size(c.scale.size(SIZES[3]))
    ));
    Ok(())
}

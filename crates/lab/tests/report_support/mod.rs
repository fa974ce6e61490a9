//! Shared by the report tests: the report module itself (the `flashkv` crate is a binary, so the
//! tests compile the module from its source) and a sample result set shaped like a reproduction.

#![allow(dead_code)]

#[path = "../../src/report/mod.rs"]
pub mod report;

use report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};

/// Two tables (one with text that CSV must quote), a line figure over a numeric x axis with the
/// paper's numbers dashed beside ours, and a grouped bar figure with a negative value.
pub fn sample() -> ResultSet {
    let sizes = [256.0, 512.0, 1024.0, 2048.0, 4096.0];
    let ours = [2.91, 3.12, 3.46, 3.87, 4.31];
    let paper = [2.6, 2.9, 3.3, 3.7, 4.0];
    let wa = ResultTable {
        name: "Write amplification, fillrandom".into(),
        columns: vec!["KV size (B)".into(), "WA ours".into(), "WA paper".into(), "difference (%)".into()],
        rows: sizes
            .iter()
            .zip(ours.iter().zip(paper.iter()))
            .map(|(&s, (&o, &p))| vec![Cell::Number(s), o.into(), p.into(), ((o - p) / p * 100.0).into()])
            .collect(),
    };
    let levels = ResultTable {
        name: "Table 3: per-level write reduction at 1 KB".into(),
        columns: vec!["mode".into(), "L1".into(), "L2".into(), "L3".into(), "L4".into(), "comment".into()],
        rows: vec![
            vec![
                "base".into(),
                0.0123.into(),
                26.4.into(),
                29.0.into(),
                31.96.into(),
                "state machine, no retention".into(),
            ],
            vec![
                "full".into(),
                5.0.into(),
                47.123.into(),
                52.0.into(),
                53.5.into(),
                "all of \"RemapCom\", with retention".into(),
            ],
            vec!["paper base".into(), 1.0.into(), 26.0.into(), 29.0.into(), 32.0.into(), "Table 3 of the paper".into()],
        ],
    };
    let line = Figure {
        id: "fig10_wa_fillrandom".into(),
        title: "Write amplification vs KV size, fillrandom".into(),
        kind: FigureKind::Line,
        x_label: "KV size (bytes)".into(),
        y_label: "write amplification (flash bytes / user bytes)".into(),
        categories: vec![],
        series: vec![
            Series {
                name: "RemapCom full".into(),
                points: sizes.iter().copied().zip(ours.iter().copied()).collect(),
                dashed: false,
            },
            Series {
                name: "paper: RemapCom".into(),
                points: sizes.iter().copied().zip(paper.iter().copied()).collect(),
                dashed: true,
            },
            Series {
                name: "baseline".into(),
                points: sizes.iter().map(|&s| (s, 4.0 + s / 1024.0)).collect(),
                dashed: false,
            },
        ],
    };
    let bar = Figure {
        id: "fig12_ycsb".into(),
        title: "YCSB throughput change vs baseline".into(),
        kind: FigureKind::Bar,
        x_label: "workload".into(),
        y_label: "throughput change (%)".into(),
        categories: ["Load", "A", "B", "C", "D", "E", "F"].iter().map(|s| s.to_string()).collect(),
        series: vec![
            Series {
                name: "base".into(),
                points: vec![(0.0, 12.0), (1.0, 8.5), (2.0, 1.2), (3.0, -0.4), (4.0, 2.0), (5.0, -3.5), (6.0, 6.0)],
                dashed: false,
            },
            Series {
                name: "full".into(),
                points: vec![(0.0, 21.0), (1.0, 14.0), (2.0, 2.5), (3.0, 0.3), (4.0, 3.1), (5.0, -1.0), (6.0, 9.9)],
                dashed: false,
            },
            Series {
                name: "paper (full)".into(),
                points: vec![(0.0, 30.0), (1.0, 18.0), (2.0, 3.0), (3.0, 0.0), (4.0, 4.0), (5.0, 1.0), (6.0, 12.0)],
                dashed: true,
            },
        ],
    };
    ResultSet {
        title: "RemapCom: write amplification and YCSB".into(),
        scale: "1/64 of the paper: 64 MiB written, 256 MiB SSD, 4 KiB pages".into(),
        notes: vec![
            "Background work is charged to simulated time; its results become visible when it starts.".into(),
            "WA differs from the paper by +8 % at 4 KB (smaller dataset: fewer levels).".into(),
        ],
        tables: vec![wa, levels],
        figures: vec![line, bar],
        runs: vec![serde_json::json!({"name": "fillrandom-1k", "wa": 3.46, "seed": 7})],
        ..ResultSet::default()
    }
}

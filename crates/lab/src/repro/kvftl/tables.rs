//! The tables and figures of seed 004's repro: Figs. 8-13 and Tables II-III beside the paper.

use super::{
    paper, sweeps, Find, Measured, Sweep, DESIGNS, DISTS, KIB, LARGE, PAGE_SIZES, SMALL, TABLE3, UNIFORM, UNIFORM_1M,
};
use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::repro::{failed, round};

fn pct(x: f64) -> Cell {
    round(x * 100.0, 1)
}

/// Figs. 8a, 9a and 10 at 16 KiB pages, one row per distribution and design.
pub(super) fn main_grid(set: &mut ResultSet, find: &Find) {
    let mut rows = Vec::new();
    for dist in DISTS {
        let dftl = find(&format!("DFTL {}", dist.name));
        for name in DESIGNS {
            let Some(m) = find(&format!("{name} {}", dist.name)) else {
                rows.push(vec![Cell::Text(dist.name.into()), Cell::Text(name.into()), failed()]);
                continue;
            };
            rows.push(vec![
                Cell::Text(dist.name.into()),
                Cell::Text(name.into()),
                pct(m.utilisation),
                pct(m.cumulative_utilisation),
                round(m.units_per_value, 2),
                round(m.time_s, 2),
                dftl.map_or_else(failed, |d| round((m.time_s / d.time_s - 1.0) * 100.0, 1)),
                Cell::Number(m.reads as f64),
                Cell::Number(m.programs as f64),
                Cell::Number(m.erases as f64),
                Cell::Number(m.buffer_reads as f64),
                Cell::Number(m.gc_copies as f64),
            ]);
        }
    }
    set.tables.push(ResultTable {
        name: "Fig. 8a, 9a, 10: utilisation, execution time, flash operations (16 KiB pages)".into(),
        columns: [
            "values",
            "design",
            "utilisation %",
            "cumulative utilisation %",
            "partitions (pages) per value",
            "time s",
            "time vs DFTL %",
            "page reads",
            "page programs",
            "erases",
            "buffer reads",
            "GC page copies",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    let categories: Vec<String> = DISTS.iter().map(|d| d.name.to_string()).collect();
    for (id, title, y, pick) in [
        (
            "fig8a_utilisation",
            "Fig. 8a: space utilisation",
            "utilisation (%)",
            (|m: Measured| m.utilisation * 100.0) as fn(Measured) -> f64,
        ),
        ("fig9a_time", "Fig. 9a: total execution time", "simulated seconds", |m: Measured| m.time_s),
        ("fig10_page_reads", "Fig. 10: page reads", "page reads", |m: Measured| m.reads as f64),
        ("fig10_page_programs", "Fig. 10: page programs", "page programs", |m: Measured| m.programs as f64),
        ("fig10_erases", "Fig. 10: block erases", "erases", |m: Measured| m.erases as f64),
    ] {
        let series = DESIGNS
            .iter()
            .map(|name| Series {
                name: (*name).into(),
                points: DISTS
                    .iter()
                    .enumerate()
                    .filter_map(|(i, d)| Some((i as f64, pick(find(&format!("{name} {}", d.name))?))))
                    .collect(),
                dashed: false,
            })
            .collect();
        set.figures.push(Figure {
            id: id.into(),
            title: title.into(),
            kind: FigureKind::Bar,
            x_label: "value sizes".into(),
            y_label: y.into(),
            categories: categories.clone(),
            series,
        });
    }
}

/// Figs. 8b / 9b: utilisation and time per page size, both readings of uniform.
pub(super) fn page_sizes(set: &mut ResultSet, find: &Find) {
    let label = |name: &str, dist: &str, page: u64| {
        if page == 16 * KIB {
            format!("{name} {dist}")
        } else {
            format!("{name} {dist} {} KiB", page / KIB)
        }
    };
    let mut rows = Vec::new();
    for dist in [UNIFORM, UNIFORM_1M] {
        for page in PAGE_SIZES {
            let mut row = vec![Cell::Text(dist.name.into()), Cell::Number((page / KIB) as f64)];
            for name in DESIGNS {
                row.push(find(&label(name, dist.name, page)).map_or_else(failed, |m| pct(m.utilisation)));
            }
            for name in DESIGNS {
                row.push(find(&label(name, dist.name, page)).map_or_else(failed, |m| round(m.time_s, 2)));
            }
            rows.push(row);
        }
    }
    let mut columns = vec!["values".to_string(), "page KiB".to_string()];
    columns.extend(DESIGNS.iter().map(|n| format!("{n} utilisation %")));
    columns.extend(DESIGNS.iter().map(|n| format!("{n} time s")));
    set.tables.push(ResultTable {
        name: "Fig. 8b, 9b: page size (paper: SP/NP/WS >= 80 % at 32 and 64 KiB, WS almost 90 %; 32 KiB faster \
               than 16, 64 the slowest; KVFTL the slowest at every size)"
            .into(),
        columns,
        rows,
    });
    let categories: Vec<String> = PAGE_SIZES.iter().map(|p| format!("{} KiB", p / KIB)).collect();
    let series = |pick: fn(Measured) -> f64| {
        DESIGNS
            .iter()
            .map(|name| Series {
                name: (*name).into(),
                points: PAGE_SIZES
                    .iter()
                    .enumerate()
                    .filter_map(|(i, p)| Some((i as f64, pick(find(&label(name, "uniform", *p))?))))
                    .collect(),
                dashed: false,
            })
            .collect()
    };
    set.figures.push(Figure {
        id: "fig8b_utilisation_by_page".into(),
        title: "Fig. 8b: space utilisation by page size (uniform)".into(),
        kind: FigureKind::Bar,
        x_label: "page size".into(),
        y_label: "utilisation (%)".into(),
        categories: categories.clone(),
        series: series(|m| m.utilisation * 100.0),
    });
    set.figures.push(Figure {
        id: "fig9b_time_by_page".into(),
        title: "Fig. 9b: total execution time by page size (uniform)".into(),
        kind: FigureKind::Bar,
        x_label: "page size".into(),
        y_label: "simulated seconds".into(),
        categories,
        series: series(|m| m.time_s),
    });
}

/// Figs. 11-13: each variant's parameter against utilisation and page reads and programs.
pub(super) fn sweep_tables(set: &mut ResultSet, find: &Find) {
    for (i, Sweep { title, x_name, prefix, points }) in sweeps().into_iter().enumerate() {
        let mut rows = Vec::new();
        let mut util_series = Vec::new();
        for dist in [SMALL, UNIFORM, LARGE] {
            let mut series = Series { name: dist.name.into(), points: Vec::new(), dashed: false };
            for (k, x) in points.iter().enumerate() {
                let m = find(&format!("{prefix} {x} {}", dist.name));
                let Some(m) = m else {
                    rows.push(vec![Cell::Text(dist.name.into()), Cell::Text(x.clone()), failed()]);
                    continue;
                };
                series.points.push((k as f64, m.utilisation * 100.0));
                rows.push(vec![
                    Cell::Text(dist.name.into()),
                    Cell::Text(x.clone()),
                    pct(m.utilisation),
                    round(m.units_per_value, 2),
                    Cell::Number(m.reads as f64),
                    Cell::Number(m.programs as f64),
                    round(m.time_s, 2),
                ]);
            }
            util_series.push(series);
        }
        set.tables.push(ResultTable {
            name: title.into(),
            columns: [
                "values",
                x_name,
                "utilisation %",
                "partitions per value",
                "page reads",
                "page programs",
                "time s",
            ]
            .map(String::from)
            .to_vec(),
            rows,
        });
        set.figures.push(Figure {
            id: format!("fig{}_sweep_utilisation", 11 + i),
            title: format!("{title}: utilisation"),
            kind: FigureKind::Line,
            x_label: x_name.into(),
            y_label: "utilisation (%)".into(),
            categories: points.clone(),
            series: util_series,
        });
    }
}

/// Table II (static RAM) and Table III (time and mapping load / store share per RAM size).
pub(super) fn ram_tables(set: &mut ResultSet, find: &Find) {
    let rows = DESIGNS
        .iter()
        .map(|name| {
            let paper = match *name {
                "DFTL" => Cell::Number(paper::DFTL_STATIC_RAM),
                "KVFTL" | "KVFTL-SP" | "KVFTL-NP" | "KVFTL-WS" => Cell::Number(paper::KVFTL_STATIC_RAM),
                _ => Cell::Text("-".into()),
            };
            let m = find(&format!("{name} uniform"));
            vec![
                Cell::Text((*name).into()),
                paper,
                m.map_or_else(failed, |m| Cell::Number(m.static_ram as f64)),
                m.map_or_else(failed, |m| Cell::Number(m.table_ram as f64)),
            ]
        })
        .collect();
    set.tables.push(ResultTable {
        name: "Table II: static RAM, bytes (uniform); and the RAM the cached tables need to be held whole at the end \
               (ours; the paper: 32 MB is 'large enough ... to contain almost all the valid entries', Table III)"
            .into(),
        columns: ["design", "paper", "ours", "cached tables whole (ours)"].map(String::from).to_vec(),
        rows,
    });
    let mut rows = Vec::new();
    let mut series = [
        Series { name: "DFTL".into(), points: Vec::new(), dashed: false },
        Series { name: "KVFTL-WS".into(), points: Vec::new(), dashed: false },
        Series { name: "DFTL (paper)".into(), points: Vec::new(), dashed: true },
        Series { name: "KVFTL-WS (paper)".into(), points: Vec::new(), dashed: true },
    ];
    // The chart draws each design's time over its own time with unlimited RAM, ours and the
    // paper's: seconds at two scales never share an axis.
    let unlimited = |d: usize| {
        let ours = find(&format!("{} uniform", ["DFTL", "KVFTL-WS"][d])).map(|m| m.time_s.max(1e-9));
        (ours, TABLE3[TABLE3.len() - 1].2[d * 3 + 2])
    };
    for (k, (ram, _, paper)) in TABLE3.iter().enumerate() {
        let mut row = vec![Cell::Text((*ram).into())];
        for (d, name) in ["DFTL", "KVFTL-WS"].iter().enumerate() {
            let label =
                if *ram == "unlimited" { format!("{name} uniform") } else { format!("{name} uniform RAM {ram}") };
            let p = &paper[d * 3..d * 3 + 3];
            match find(&label) {
                Some(m) => {
                    if let Some(base) = unlimited(d).0 {
                        series[d].points.push((k as f64, m.time_s / base));
                    }
                    row.extend([
                        Cell::Number(p[0]),
                        round(m.load_s / m.time_s.max(1e-9) * 100.0, 3),
                        Cell::Number(p[1]),
                        round(m.store_s / m.time_s.max(1e-9) * 100.0, 3),
                        Cell::Number(p[2]),
                        round(m.time_s, 2),
                    ]);
                }
                None => row.extend([
                    Cell::Number(p[0]),
                    failed(),
                    Cell::Number(p[1]),
                    failed(),
                    Cell::Number(p[2]),
                    failed(),
                ]),
            }
            series[2 + d].points.push((k as f64, p[2] / unlimited(d).1));
        }
        rows.push(row);
    }
    set.tables.push(ResultTable {
        name: "Table III: execution time and mapping load / store share by RAM size (uniform; the paper's times \
               are at its scale)"
            .into(),
        columns: [
            "RAM",
            "DFTL load % (paper)",
            "DFTL load %",
            "DFTL store % (paper)",
            "DFTL store %",
            "DFTL time s (paper)",
            "DFTL time s",
            "WS load % (paper)",
            "WS load %",
            "WS store % (paper)",
            "WS store %",
            "WS time s (paper)",
            "WS time s",
        ]
        .map(String::from)
        .to_vec(),
        rows,
    });
    set.figures.push(Figure {
        id: "table3_time_by_ram".into(),
        title: "Table III: total execution time by mapping RAM, over the time with unlimited RAM (uniform)".into(),
        kind: FigureKind::Line,
        x_label: "RAM for mapping tables".into(),
        y_label: "time / time with unlimited RAM".into(),
        categories: TABLE3.iter().map(|(r, _, _)| r.to_string()).collect(),
        series: series.to_vec(),
    });
}

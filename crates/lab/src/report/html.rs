//! index.html: the page of a result folder.
//!
//! Self-contained and static: inline CSS, no script, no external resource, so it displays from a
//! plain folder (file://) in any browser. It shows, in order: the title, the scale and the notes; a
//! contents list; every table (numbers with 3-4 significant digits, right-aligned) with a link to
//! its CSV file; every figure as `<img src="<id>.svg">` with a caption, links to its SVG and PNG
//! files, and its data in a closed `<details>` table; the file list (results.json, results.csv,
//! latency.csv). All text from the result set is HTML-escaped.

use std::fmt::Write as _;

use super::format::cell_number;
use super::model::{Cell, Figure, FigureKind, ResultSet, ResultTable};
use super::{chart, csv, CSV_FILE, JSON_FILE, LATENCY_FILE};

const STYLE: &str = "\
body{font-family:'DejaVu Sans',Arial,Helvetica,sans-serif;color:#1a1a1a;background:#fff;\
margin:0 auto;padding:24px 32px;max-width:1120px;line-height:1.4}
h1{font-size:1.6em;margin:0 0 4px}
h2{font-size:1.25em;margin:28px 0 8px;border-bottom:1px solid #ccc;padding-bottom:4px}
h3{font-size:1.05em;margin:20px 0 6px}
p.scale{margin:0 0 12px;color:#444}
ul.notes{margin:0 0 12px;padding-left:20px;color:#333}
nav ul{margin:4px 0;padding-left:20px}
table{border-collapse:collapse;margin:4px 0 12px;font-size:0.92em}
th,td{border:1px solid #c8c8c8;padding:3px 9px;vertical-align:top}
th{background:#eef1f5;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tbody tr:nth-child(even){background:#f7f8fa}
figure{margin:16px 0 24px}
figure img{max-width:100%;height:auto;border:1px solid #ddd}
figcaption{margin-top:4px;color:#333}
p.files{margin:0 0 12px;font-size:0.9em;color:#444}
details{margin-top:6px}
summary{cursor:pointer;color:#345}
footer{margin-top:32px;color:#666;font-size:0.9em}
";

/// The page for `set`. The chart files it links are `<figure.id>.svg` beside it.
pub fn render(set: &ResultSet) -> String {
    let mut p = String::new();
    let title = if set.title.is_empty() { "flashkv results" } else { &set.title };
    p.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    p.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(p, "<title>{}</title>", esc(title));
    let _ = writeln!(p, "<style>\n{STYLE}</style>\n</head>\n<body>");
    let _ = writeln!(p, "<h1>{}</h1>", esc(title));
    if !set.scale.is_empty() {
        let _ = writeln!(p, "<p class=\"scale\"><b>Scale:</b> {}</p>", esc(&set.scale));
    }
    if !set.notes.is_empty() {
        p.push_str("<ul class=\"notes\">\n");
        for note in &set.notes {
            let _ = writeln!(p, "<li>{}</li>", esc(note));
        }
        p.push_str("</ul>\n");
    }
    contents(&mut p, set);
    if !set.tables.is_empty() {
        p.push_str("<h2 id=\"tables\">Tables</h2>\n");
        for (i, (table, file)) in set.tables.iter().zip(csv::table_files(set)).enumerate() {
            let _ = writeln!(p, "<h3 id=\"table-{}\">{}</h3>", i + 1, esc(&table.name));
            data_table(&mut p, table);
            let _ = writeln!(p, "<p class=\"files\">CSV: <a href=\"{0}\">{0}</a></p>", esc(&file));
        }
    }
    if !set.figures.is_empty() {
        p.push_str("<h2 id=\"figures\">Figures</h2>\n");
        for fig in &set.figures {
            figure(&mut p, fig, &set.scale);
        }
    }
    let tables = if set.tables.is_empty() { "" } else { "; each table above as CSV in <code>tables/</code>" };
    let charts = if set.figures.is_empty() { "" } else { "; each chart as SVG and as PNG (twice the size)" };
    let _ = writeln!(
        p,
        "<footer>Every number: <a href=\"{JSON_FILE}\">{JSON_FILE}</a> ({} raw runs); \
         one row per run, a column per parameter and metric: <a href=\"{CSV_FILE}\">{CSV_FILE}</a>; \
         latencies per run, phase and operation: <a href=\"{LATENCY_FILE}\">{LATENCY_FILE}</a>{tables}{charts}. \
         Rebuild this page with <code>flashkv report DIR</code>.</footer>",
        set.runs.len()
    );
    p.push_str("</body>\n</html>\n");
    p
}

fn contents(p: &mut String, set: &ResultSet) {
    if set.tables.len() + set.figures.len() < 2 {
        return;
    }
    p.push_str("<nav><b>Contents</b>\n<ul>\n");
    for (i, table) in set.tables.iter().enumerate() {
        let _ = writeln!(p, "<li><a href=\"#table-{}\">{}</a></li>", i + 1, esc(&table.name));
    }
    for fig in &set.figures {
        let _ = writeln!(p, "<li><a href=\"#{}\">{}</a></li>", esc(&fig.id), esc(&fig.title));
    }
    p.push_str("</ul>\n</nav>\n");
}

fn data_table(p: &mut String, table: &ResultTable) {
    p.push_str("<table>\n<thead><tr>");
    for col in &table.columns {
        let _ = write!(p, "<th>{}</th>", esc(col));
    }
    p.push_str("</tr></thead>\n<tbody>\n");
    for row in &table.rows {
        p.push_str("<tr>");
        for cell in row {
            match cell {
                Cell::Number(v) => {
                    let _ = write!(p, "<td class=\"num\">{}</td>", cell_number(*v));
                }
                Cell::Text(t) => {
                    let _ = write!(p, "<td>{}</td>", esc(t));
                }
            }
        }
        p.push_str("</tr>\n");
    }
    p.push_str("</tbody>\n</table>\n");
}

fn figure(p: &mut String, fig: &Figure, scale: &str) {
    let title = chart::full_title(fig, scale);
    let (w, h) = chart::SIZE;
    let _ = writeln!(p, "<figure id=\"{}\">", esc(&fig.id));
    let _ = writeln!(p, "<img src=\"{}.svg\" width=\"{w}\" height=\"{h}\" alt=\"{}\">", esc(&fig.id), esc(&title));
    let names: Vec<String> =
        fig.series.iter().map(|s| if s.dashed { format!("{} (dashed)", s.name) } else { s.name.clone() }).collect();
    let _ = writeln!(
        p,
        "<figcaption><b>{}</b>: {}. x: {}; y: {}. Series: {}.</figcaption>",
        esc(&fig.id),
        esc(&title),
        esc(&fig.x_label),
        esc(&fig.y_label),
        esc(&names.join(", "))
    );
    let id = esc(&fig.id);
    let _ = writeln!(p, "<p class=\"files\">Chart: <a href=\"{id}.svg\">SVG</a>, <a href=\"{id}.png\">PNG</a></p>");
    figure_data(p, fig);
    p.push_str("</figure>\n");
}

/// The numbers behind a chart, one row per x value (in order of first appearance), one column per
/// series, so a reader can check a point without opening the JSON.
fn figure_data(p: &mut String, fig: &Figure) {
    let categorical = fig.kind == FigureKind::Bar || !fig.categories.is_empty();
    let mut xs: Vec<f64> = Vec::new();
    for &(x, _) in fig.series.iter().flat_map(|s| s.points.iter()) {
        if !xs.iter().any(|&seen| seen.total_cmp(&x).is_eq()) {
            xs.push(x);
        }
    }
    if xs.is_empty() {
        return;
    }
    if !categorical {
        xs.sort_by(f64::total_cmp);
    }
    p.push_str("<details><summary>data</summary>\n<table>\n<thead><tr>");
    let _ = write!(p, "<th>{}</th>", esc(&fig.x_label));
    for s in &fig.series {
        let _ = write!(p, "<th>{}</th>", esc(&s.name));
    }
    p.push_str("</tr></thead>\n<tbody>\n");
    for &x in &xs {
        let label = chart::category_name(fig, x).unwrap_or_else(|| cell_number(x));
        let _ = write!(p, "<tr><td>{}</td>", esc(&label));
        for s in &fig.series {
            let ys: Vec<String> =
                s.points.iter().filter(|(px, _)| px.total_cmp(&x).is_eq()).map(|&(_, y)| cell_number(y)).collect();
            let _ = write!(p, "<td class=\"num\">{}</td>", ys.join(", "));
        }
        p.push_str("</tr>\n");
    }
    p.push_str("</tbody>\n</table>\n</details>\n");
}

/// HTML-escapes text for element content and double-quoted attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

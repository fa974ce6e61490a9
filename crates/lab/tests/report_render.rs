//! The result folder as `flashkv run` writes it and `flashkv report DIR` rebuilds it: files,
//! determinism, CSV quoting, chart contents and error messages.

mod report_support;

use std::fs;

use report_support::report;
use report_support::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use report_support::sample;

/// Every file under `dir` (subfolders too), by its path relative to `dir`, with its bytes.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &std::path::Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
        for e in fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{name}/"), out);
            } else {
                out.push((name, fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, "", &mut out);
    out.sort();
    out
}

/// Same file names and same bytes, without printing whole files when they differ.
fn assert_same(a: &[(String, Vec<u8>)], b: &[(String, Vec<u8>)]) {
    let names = |f: &[(String, Vec<u8>)]| f.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b));
    for ((name, x), (_, y)) in a.iter().zip(b) {
        assert!(x == y, "{name} differs");
    }
}

#[test]
fn writes_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("nested/result");
    report::write_report(&out, &sample()).unwrap();
    let names: Vec<String> = files(&out).into_iter().map(|f| f.0).collect();
    assert_eq!(
        names,
        [
            "fig10_wa_fillrandom.png",
            "fig10_wa_fillrandom.svg",
            "fig12_ycsb.png",
            "fig12_ycsb.svg",
            "index.html",
            "latency.csv",
            "results.csv",
            "results.json",
            "tables/table-3-per-level-write-reduction-at-1-kb.csv",
            "tables/write-amplification-fillrandom.csv",
        ]
    );
}

#[test]
fn same_set_gives_the_same_bytes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    report::write_report(a.path(), &sample()).unwrap();
    report::write_report(b.path(), &sample()).unwrap();
    assert_same(&files(a.path()), &files(b.path()));
}

#[test]
fn rebuild_reproduces_the_page() {
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &sample()).unwrap();
    let before = files(dir.path());
    for (name, _) in &before {
        if name != "results.json" {
            fs::remove_file(dir.path().join(name)).unwrap();
        }
    }
    fs::remove_dir(dir.path().join("tables")).unwrap();
    let index = report::rebuild(dir.path()).unwrap();
    assert_eq!(index, dir.path().join("index.html"));
    assert_same(&files(dir.path()), &before);
}

/// `flashkv report DIR --tables-into FILE`: each table whose block the markdown file has is
/// written into it (twice is once), a block named for a folder takes that folder's table alone,
/// and a file with no block for any table is refused by name.
#[test]
fn tables_go_into_their_blocks_of_a_markdown_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("repro-x-small");
    report::write_report(&out, &sample()).unwrap();
    let doc = dir.path().join("x.md");
    let key = "Write amplification, fillrandom";
    fs::write(&doc, format!("# X\n\n<!-- {key} -->\nstale\n<!-- end {key} -->\n\nprose\n")).unwrap();
    assert_eq!(report::tables_into(&out, &doc).unwrap(), [key]);
    let once = fs::read_to_string(&doc).unwrap();
    assert!(!once.contains("stale") && once.ends_with(&format!("<!-- end {key} -->\n\nprose\n")), "{once}");
    assert!(once.contains("Generated from the results.json of `repro-x-small`"), "{once}");
    let table = sample().tables.into_iter().find(|t| t.name == key).unwrap();
    let header = format!("| {} |", table.columns.join(" | "));
    assert!(once.contains(&header), "{once}");
    assert_eq!(once.lines().filter(|l| l.starts_with("| ")).count(), table.rows.len() + 2, "{once}");
    report::tables_into(&out, &doc).unwrap();
    assert_eq!(fs::read_to_string(&doc).unwrap(), once);
    // A block for one result folder's table takes that folder's alone.
    let other = dir.path().join("repro-x-paper");
    report::write_report(&other, &sample()).unwrap();
    let mine = format!("{key} @ repro-x-paper");
    fs::write(&doc, format!("<!-- {mine} -->\n<!-- end {mine} -->\n")).unwrap();
    assert!(report::tables_into(&out, &doc).is_err(), "repro-x-small has no block there");
    assert_eq!(report::tables_into(&other, &doc).unwrap(), [mine]);
    assert!(fs::read_to_string(&doc).unwrap().contains("`repro-x-paper`"));
    fs::write(&doc, "# nothing to fill\n").unwrap();
    let err = report::tables_into(&out, &doc).unwrap_err().to_string();
    assert!(err.contains("x.md") && err.contains("<!-- end "), "{err}");
}

#[test]
fn json_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &sample()).unwrap();
    let text = fs::read_to_string(dir.path().join("results.json")).unwrap();
    assert_eq!(report::from_json(&text).unwrap(), sample());
    assert!(text.starts_with("{\n  \"schema_version\": 2,\n  \"title\": \"RemapCom"), "{text}");
    assert!(text.ends_with("}\n"));
}

#[test]
fn every_figure_has_a_labelled_svg() {
    let dir = tempfile::tempdir().unwrap();
    let set = sample();
    report::write_report(dir.path(), &set).unwrap();
    for fig in &set.figures {
        let svg = fs::read_to_string(dir.path().join(format!("{}.svg", fig.id))).unwrap();
        assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"), "{}", fig.id);
        assert_eq!(svg.matches("<svg").count(), 1);
        assert!(svg.contains(&fig.x_label), "{}: x label", fig.id);
        assert!(svg.contains(&fig.y_label), "{}: y label", fig.id);
        let (_, lines) = report::chart::title_lines(&format!("{} ({})", fig.title, set.scale));
        for line in &lines {
            assert!(svg.contains(&format!(">\n{line}\n</text>")), "{}: title line {line:?}", fig.id);
        }
        assert_eq!(lines.join(" "), format!("{} ({})", fig.title, set.scale));
        for s in &fig.series {
            assert!(svg.contains(&s.name), "{}: legend {}", fig.id, s.name);
        }
        // Balanced text elements, nothing unescaped.
        assert_eq!(svg.matches("<text").count(), svg.matches("</text>").count());
    }
    let line = fs::read_to_string(dir.path().join("fig10_wa_fillrandom.svg")).unwrap();
    assert!(line.contains("\n1000\n") && line.contains("\n4000\n"), "round x ticks");
    let bar = fs::read_to_string(dir.path().join("fig12_ycsb.svg")).unwrap();
    assert!(bar.contains("\nLoad\n") && bar.contains("\nF\n"), "category labels");
    assert!(bar.contains("\n-5\n"), "negative y tick for the negative bar");
}

#[test]
fn page_shows_title_scale_notes_tables_and_charts() {
    let dir = tempfile::tempdir().unwrap();
    let set = sample();
    report::write_report(dir.path(), &set).unwrap();
    let html = fs::read_to_string(dir.path().join("index.html")).unwrap();
    assert!(html.contains("<h1>RemapCom: write amplification and YCSB</h1>"));
    assert!(html.contains("1/64 of the paper"));
    assert!(html.contains("<li>WA differs from the paper by +8 % at 4 KB"));
    assert!(html.contains("<img src=\"fig10_wa_fillrandom.svg\""));
    assert!(html.contains("<img src=\"fig12_ycsb.svg\""));
    assert!(html.contains("<a href=\"fig12_ycsb.png\">PNG</a>"));
    assert!(html.contains("<a href=\"tables/write-amplification-fillrandom.csv\">"));
    for file in ["results.json", "results.csv", "latency.csv"] {
        assert!(html.contains(&format!("<a href=\"{file}\">{file}</a>")), "link to {file}");
    }
    assert_eq!(html.matches("<table>").count(), 4, "2 tables and 2 figure data tables");
    assert!(html.contains("<td class=\"num\">3.46</td>"));
    assert!(html.contains("<td class=\"num\">0.0123</td>"));
    assert!(html.contains("<td class=\"num\">47.12</td>"), "4 significant digits");
    assert!(html.contains("all of &quot;RemapCom&quot;, with retention"));
    for banned in ["<script", "http://", "https://", "<link"] {
        assert!(!html.contains(banned), "page must be self-contained: {banned}");
    }
}

#[test]
fn table_csv_files_and_quoting() {
    let set = ResultSet {
        title: "t".into(),
        tables: vec![
            ResultTable {
                name: "first, with comma".into(),
                columns: vec!["a".into(), "b \"q\"".into()],
                rows: vec![vec![Cell::Number(1.5), "x\ny".into()], vec![Cell::Number(f64::INFINITY), " padded".into()]],
            },
            ResultTable {
                name: "second".into(),
                columns: vec!["n".into()],
                rows: vec![vec![Cell::Number(0.1)], vec![Cell::Number(12345678901.0)]],
            },
        ],
        ..ResultSet::default()
    };
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &set).unwrap();
    let csv = |name: &str| fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(csv("tables/first-with-comma.csv"), "a,\"b \"\"q\"\"\"\r\n1.5,\"x\ny\"\r\ninf,\" padded\"\r\n");
    assert_eq!(csv("tables/second.csv"), "n\r\n0.1\r\n12345678901\r\n");
    // No runs: results.csv and latency.csv are a header alone.
    assert_eq!(csv("results.csv"), "run\r\n");
    assert!(csv("latency.csv").starts_with("run,phase,kind,count,"));
    // JSON cannot hold infinity: it is kept as text, and the rebuilt page is the same.
    let json = fs::read_to_string(dir.path().join("results.json")).unwrap();
    assert!(json.contains("\"inf\""));
    let html = fs::read(dir.path().join("index.html")).unwrap();
    report::rebuild(dir.path()).unwrap();
    assert_eq!(fs::read(dir.path().join("index.html")).unwrap(), html);
}

#[test]
fn charts_survive_odd_data() {
    let fig = |kind, categories: Vec<String>, series: Vec<Series>| Figure {
        id: "odd".into(),
        title: "odd <data> & more".into(),
        kind,
        x_label: "x (units)".into(),
        y_label: "y (units)".into(),
        categories,
        series,
    };
    let s = |name: &str, points: Vec<(f64, f64)>, dashed| Series { name: name.into(), points, dashed };
    let cases = vec![
        fig(FigureKind::Line, vec![], vec![]),
        fig(FigureKind::Line, vec![], vec![s("empty", vec![], false)]),
        fig(FigureKind::Line, vec![], vec![s("one", vec![(3.0, 7.0)], false)]),
        fig(FigureKind::Line, vec![], vec![s("flat", vec![(1.0, 0.0), (2.0, 0.0)], true)]),
        fig(
            FigureKind::Line,
            vec![],
            vec![s("nan", vec![(f64::NAN, 1.0), (1.0, f64::INFINITY), (2.0, 5.0), (3.0, -2.0)], false)],
        ),
        fig(FigureKind::Line, vec![], vec![s("decades", vec![(1.0, 0.01), (10.0, 100.0), (100.0, 123456.0)], false)]),
        fig(FigureKind::Line, vec![], vec![s("huge", vec![(0.0, 1e301), (1.0, 2e9)], false)]),
        fig(FigureKind::Line, vec![], vec![s("tiny", vec![(0.0, 1e-7), (1.0, 3e-7)], false)]),
        fig(
            FigureKind::Line,
            vec!["a".into(), "b".into()],
            vec![s("cat", vec![(0.0, 1.0), (1.0, 2.0), (5.0, 9.0)], false)],
        ),
        fig(FigureKind::Bar, vec![], vec![s("numeric x", vec![(256.0, 1.0), (1024.0, -2.0)], false)]),
        fig(FigureKind::Bar, vec!["only".into()], vec![s("neg", vec![(0.0, -4.0)], true)]),
        fig(FigureKind::Bar, vec!["a".into()], vec![]),
    ];
    for (i, f) in cases.into_iter().enumerate() {
        let svg = report::chart::render_svg(&f, "tiny scale").unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert!(svg.contains("odd &lt;data&gt; &amp; more (tiny scale)"), "case {i}");
        assert!(svg.contains("x (units)") && svg.contains("y (units)"), "case {i}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "case {i}: {svg}");
        if f.series.iter().all(|s| s.points.iter().all(|p| !p.1.is_finite() || p.1.abs() >= 1e300)) {
            assert!(svg.contains("no data"), "case {i}");
        }
    }
}

#[test]
fn bad_figure_ids_are_refused() {
    let mut set = sample();
    set.figures[1].id = "../escape".into();
    let dir = tempfile::tempdir().unwrap();
    let err = report::write_report(dir.path(), &set).unwrap_err();
    assert!(matches!(err, report::ReportError::FigureId { index: 1, .. }), "{err:?}");
    let err = err.to_string();
    assert!(err.contains("\"../escape\"") && err.contains("figure 1"), "{err}");
    let mut set = sample();
    set.figures[1].id = set.figures[0].id.clone();
    let err = report::write_report(dir.path(), &set).unwrap_err().to_string();
    assert!(err.contains("earlier figure"), "{err}");
}

#[test]
fn rebuild_errors_name_the_file_and_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let err = report::rebuild(dir.path()).unwrap_err();
    assert!(matches!(&err, report::ReportError::NoResults { path } if path == &dir.path().join("results.json")));
    let err = err.to_string();
    assert!(err.contains("results.json") && err.contains("not found"), "{err}");

    fs::write(dir.path().join("results.json"), "{\n  \"title\": \"x\",\n  \"scale\": oops\n}\n").unwrap();
    let err = report::rebuild(dir.path()).unwrap_err().to_string();
    assert!(err.contains("results.json"), "{err}");
    assert!(err.contains("invalid JSON at line 3, column"), "{err}");

    fs::write(dir.path().join("results.json"), "{\n  \"title\": \"x\"\n}\n").unwrap();
    let err = report::rebuild(dir.path()).unwrap_err().to_string();
    assert!(err.contains("not a result set at line 3, column 1") && err.contains("scale"), "{err}");
    assert!(!dir.path().join("index.html").exists());
}

/// A results.json of schema version 1 (runs with flat fields, before issue 56), as `flashkv run`
/// wrote it: `flashkv report` still rebuilds its folder, and results.csv keeps its columns.
#[test]
fn a_first_schema_result_set_still_rebuilds() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/results-v1/results.json");
    let dir = tempfile::tempdir().unwrap();
    fs::copy(&fixture, dir.path().join("results.json")).unwrap();
    let set = report::from_json(&fs::read_to_string(&fixture).unwrap()).unwrap();
    assert_eq!(set.schema_version, 1, "a file without the field is of the first shape");
    assert!(set.runs[0].get("user_bytes").is_some() && set.runs[0].get("host").is_none());
    report::rebuild(dir.path()).unwrap();
    assert_eq!(fs::read(dir.path().join("results.json")).unwrap(), fs::read(&fixture).unwrap(), "left as it is");
    let csv = fs::read_to_string(dir.path().join("results.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for column in ["write_amplification", "user_bytes", "ftl.write_amplification", "device.spare_factor"] {
        assert!(header.contains(&column), "{column} in {header:?}");
    }
    assert_eq!(csv.lines().count(), 1 + set.runs.len());
    assert!(dir.path().join("index.html").exists());
}

/// A result set of a later schema than this build reads is refused, naming the file.
#[test]
fn a_later_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let later = ResultSet { schema_version: report::model::SCHEMA_VERSION + 1, ..sample() };
    fs::write(dir.path().join("results.json"), report::to_json(&later).unwrap()).unwrap();
    let e = report::rebuild(dir.path()).unwrap_err().to_string();
    assert!(e.contains("results.json") && e.contains("schema version 3"), "{e}");
}

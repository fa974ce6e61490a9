//! The result folder for papers: results.csv as one tidy table (a row per run), latency.csv in long
//! form, one CSV per table, chart titles that fit, PNG charts, and a folder that belongs to one
//! result set.

mod report_support;

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::Path;
use std::process::Command;

use report_support::report::model::{Figure, ResultSet, ResultTable};
use report_support::report::{self, ReportError};
use report_support::sample;
use serde_json::json;

/// Fields of RFC 4180 CSV text (quoted fields may hold commas, quotes and line breaks).
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "lines end with CRLF");
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(field.is_empty() && row.is_empty(), "the last line ends with CRLF");
    rows
}

/// The rows of a CSV file as maps from column to field; checks every row is as wide as the header.
fn records(text: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut rows = parse_csv(text);
    let header = rows.remove(0);
    let unique: HashSet<&String> = header.iter().collect();
    assert_eq!(unique.len(), header.len(), "column names are unique: {header:?}");
    let records = rows
        .into_iter()
        .map(|r| {
            assert_eq!(r.len(), header.len(), "a row as wide as the header: {r:?}");
            header.iter().cloned().zip(r).collect()
        })
        .collect();
    (header, records)
}

fn latency(count: u64, p99: f64) -> serde_json::Value {
    json!({"count": count, "mean_us": p99 / 3.0, "p50_us": 0.001, "p99_us": p99, "p999_us": p99 * 2.0, "max_us": p99 * 5.0})
}

/// Three runs shaped like results.json's: labels, nested objects, arrays of scalars and of named
/// and unnamed objects, a timeline, a long array, nulls, booleans and text that CSV must quote.
fn runs() -> Vec<serde_json::Value> {
    vec![
        json!({
            "workload": "fillrandom",
            "engine": "lsm (leveled compaction, \"remap\" off)",
            "device": "simulated femu SSD, 256MiB",
            "variant": "packed",
            "workload.value_size": 100,
            "ops_per_sec": 145115.58837694654,
            "sim_time_s": 0.1 + 0.2,
            "latency": latency(36157, 1000.447),
            "lanes": {"foreground": {"stall_ns": 123, "read_ns": 5}, "background": {"stall_ns": 0, "read_ns": 7}},
            "host_write_bytes_by_cause": {"wal": 4096, "compaction_by_level": [1, 2, 3]},
            "levels": [{"level": 0, "bytes_written": 10}, {"level": 1, "bytes_written": 20}],
            "phases": [
                {"name": "load", "ops": 10, "latency": latency(10, 5.5),
                 "latency_by_kind": {"insert": latency(10, 5.5)}, "timeline": [[0.1, 5.0], [0.2, 6.0]]},
                {"name": "run", "ops": 20, "latency": latency(20, 7.25),
                 "latency_by_kind": {"read": latency(15, 9.0), "update": latency(5, 3.0)}, "timeline": [[0.3, 1.0]]}
            ],
            "flash_by_cause": [{"cause": "host.wal", "busy_s": 0.5}, {"cause": "gc", "busy_s": 0.125}],
            "zones": {"utilisation": [0.5, 0.9], "utilisation_histogram": [0, 1, 1]},
            "per_block": [1, 2],
            "content_digest": null,
            "simulated": true,
            "note": "first line\nsecond line"
        }),
        json!({
            "experiment": "fig10/1k",
            "mode": "full",
            "workload": "ycsb-a",
            "engine": "lsm",
            "device": "zns",
            "variant": "aligned",
            "workload.value_size": 1000,
            "ops_per_sec": 18111.5,
            "latency": latency(4128, 11403.263),
            "phases": [
                {"name": "run", "ops": 1, "latency": latency(1, 1.0), "latency_by_kind": {}},
                {"name": "run", "ops": 2, "latency": latency(2, 2.0)}
            ],
            "per_block": (0..100).collect::<Vec<u32>>(),
            "wear": {"min_erases": 0, "mean_erases": -1.5e-7, "max_erases": 3}
        }),
        json!({"experiment": "bare", "ops_per_sec": 0}),
    ]
}

fn runs_set() -> ResultSet {
    ResultSet { title: "runs".into(), runs: runs(), ..ResultSet::default() }
}

#[test]
fn results_csv_is_one_row_per_run_and_a_column_per_parameter_and_metric() {
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &runs_set()).unwrap();
    let text = fs::read_to_string(dir.path().join("results.csv")).unwrap();
    let (header, rows) = records(&text);
    assert_eq!(rows.len(), 3);
    let labels = ["run", "experiment", "variant", "mode", "workload.value_size", "workload", "engine", "device"];
    assert_eq!(header[..labels.len()], labels, "label columns first");
    // Numbers as numbers, in full precision; then columns in order of first appearance.
    let (a, b, c) = (&rows[0], &rows[1], &rows[2]);
    assert_eq!(a["run"], "0");
    assert_eq!(c["run"], "2");
    assert_eq!(a["ops_per_sec"].parse::<f64>().unwrap(), 145115.58837694654);
    assert_eq!(a["sim_time_s"].parse::<f64>().unwrap(), 0.1 + 0.2);
    assert_eq!(b["wear.mean_erases"].parse::<f64>().unwrap(), -1.5e-7);
    assert_eq!(a["workload.value_size"], "100");
    assert_eq!(a["latency.p99_us"], "1000.447");
    assert_eq!(a["lanes.foreground.stall_ns"], "123");
    assert_eq!(a["host_write_bytes_by_cause.wal"], "4096");
    assert_eq!(a["host_write_bytes_by_cause.compaction_by_level.2"], "3");
    assert_eq!(a["levels.1.bytes_written"], "20");
    assert_eq!(a["levels.1.level"], "1");
    // Named elements: by name, the same column in every run; a repeated name is numbered.
    assert_eq!(a["phases.run.ops"], "20");
    assert_eq!(b["phases.run.ops"], "1");
    assert_eq!(b["phases.run#2.ops"], "2");
    assert_eq!(a["phases.run.latency_by_kind.read.p99_us"], "9");
    assert_eq!(a["flash_by_cause.gc.busy_s"], "0.125");
    assert_eq!(a["flash_by_cause.host.wal.busy_s"], "0.5");
    assert_eq!(a["zones.utilisation_histogram.1"], "1");
    assert_eq!(a["simulated"], "true");
    assert_eq!(a["content_digest"], "");
    assert_eq!(a["note"], "first line\nsecond line");
    assert_eq!(a["engine"], "lsm (leveled compaction, \"remap\" off)");
    assert_eq!(c["latency.p99_us"], "", "a run without the column has an empty field");
    assert_eq!(c["experiment"], "bare");
    // Left to results.json: names, timelines, per-zone lists, and arrays too long in some run.
    for h in &header {
        assert!(!h.contains("timeline") && !h.starts_with("zones.utilisation."), "{h}");
        assert!(!h.starts_with("per_block") && !h.ends_with(".name") && !h.ends_with(".cause"), "{h}");
    }
    // The raw text: quotes only where RFC 4180 needs them; numbers never quoted.
    assert!(text.contains(",\"lsm (leveled compaction, \"\"remap\"\" off)\","), "{text}");
    assert!(text.starts_with("run,experiment,variant,mode,workload.value_size,workload,engine,device,"));
    assert!(text.contains(",145115.58837694654,"));
}

#[test]
fn latency_csv_is_long_form() {
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &runs_set()).unwrap();
    let text = fs::read_to_string(dir.path().join("latency.csv")).unwrap();
    let (header, rows) = records(&text);
    assert_eq!(
        header.join(","),
        "run,experiment,variant,mode,workload.value_size,workload,engine,device,\
         phase,kind,count,mean_us,p50_us,p99_us,p999_us,max_us"
    );
    let keys: Vec<(String, String, String)> =
        rows.iter().map(|r| (r["run"].clone(), r["phase"].clone(), r["kind"].clone())).collect();
    let want = [
        ("0", "load", "all"),
        ("0", "load", "insert"),
        ("0", "run", "all"),
        ("0", "run", "read"),
        ("0", "run", "update"),
        ("1", "run", "all"),
        ("1", "run", "all"),
    ];
    let want: Vec<(String, String, String)> =
        want.iter().map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string())).collect();
    assert_eq!(keys, want);
    let read = &rows[3];
    assert_eq!((read["count"].as_str(), read["p99_us"].as_str(), read["max_us"].as_str()), ("15", "9", "45"));
    assert_eq!(read["mean_us"].parse::<f64>().unwrap(), 9.0 / 3.0);
    assert_eq!(read["variant"], "packed");
    assert_eq!(read["workload.value_size"], "100");
    assert_eq!(rows[5]["mode"], "full");
}

/// Python's csv module reads results.csv and latency.csv as one table each, with numeric columns.
/// It needs python3, so it is ignored in a plain `cargo test` and CI runs it with `--ignored`,
/// where a missing python3 fails it.
#[test]
#[ignore = "needs python3 (its csv module); run with --ignored (CI does)"]
fn python_reads_each_csv_as_one_table() {
    if let Err(e) = Command::new("python3").arg("--version").output() {
        panic!("python3 cannot run: {e}");
    }
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &runs_set()).unwrap();
    let script = r#"
import csv, sys
def table(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert len({len(r) for r in rows}) == 1, "rows of different widths"
    return [dict(zip(rows[0], r)) for r in rows[1:]]
runs = table(sys.argv[1] + "/results.csv")
assert len(runs) == 3, len(runs)
assert float(runs[0]["ops_per_sec"]) == 145115.58837694654
assert [float(r["latency.p99_us"]) for r in runs[:2]] == [1000.447, 11403.263]
assert runs[0]["note"] == "first line\nsecond line"
lat = table(sys.argv[1] + "/latency.csv")
assert [r["kind"] for r in lat] == ["all", "insert", "all", "read", "update", "all", "all"]
assert sum(int(r["count"]) for r in lat if r["kind"] == "all") == 33
print("ok", len(runs[0]))
"#;
    let out = Command::new("python3").arg("-c").arg(script).arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("ok "), "{stdout}");
}

#[test]
fn each_table_is_its_own_csv_file() {
    let mut set = sample();
    let dup = ResultTable {
        name: set.tables[0].name.clone(),
        columns: vec!["x".into(), "y".into()],
        rows: vec![vec![1.0.into()]],
    };
    set.tables.push(dup);
    set.tables.push(ResultTable { name: "  ".into(), columns: vec!["only".into()], rows: vec![vec!["".into()]] });
    let dir = tempfile::tempdir().unwrap();
    report::write_report(dir.path(), &set).unwrap();
    let files = report::csv::table_files(&set);
    assert_eq!(
        files,
        [
            "tables/write-amplification-fillrandom.csv",
            "tables/table-3-per-level-write-reduction-at-1-kb.csv",
            "tables/write-amplification-fillrandom-2.csv",
            "tables/table.csv",
        ]
    );
    let read = |f: &str| fs::read_to_string(dir.path().join(f)).unwrap();
    let (header, rows) = records(&read(&files[1]));
    assert_eq!(header, ["mode", "L1", "L2", "L3", "L4", "comment"]);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1]["L2"], "47.123");
    assert_eq!(rows[1]["comment"], "all of \"RemapCom\", with retention");
    assert_eq!(read(&files[2]), "x,y\r\n1,\r\n", "a short row is padded to the header");
    assert_eq!(read(&files[3]), "only\r\n\"\"\r\n", "an empty line would be skipped by readers");
    let (_, rows) = records(&read(&files[0]));
    assert_eq!(rows[4]["KV size (B)"], "4096");
    // The tables are no longer stacked in results.csv.
    assert!(!read("results.csv").contains("Write amplification"));

    assert_eq!(report::csv::slug("Figure 10: WA, fillrandom (1/64)"), "figure-10-wa-fillrandom-1-64");
    assert_eq!(report::csv::slug("Ünïcode — only"), "n-code-only");
    assert_eq!(report::csv::slug(&"long name ".repeat(20)).len(), 59);
}

/// (text, left, top, right, bottom) of every text element as drawn with the PNG's font.
fn text_boxes(svg: &str) -> Vec<(String, f32, f32, f32, f32)> {
    use resvg::usvg;
    fn walk(g: &usvg::Group, out: &mut Vec<(String, f32, f32, f32, f32)>) {
        for node in g.children() {
            match node {
                usvg::Node::Group(g) => walk(g, out),
                usvg::Node::Text(t) => {
                    let text: String = t.chunks().iter().map(|c| c.text()).collect();
                    let b = t.abs_bounding_box();
                    out.push((text, b.left(), b.top(), b.right(), b.bottom()));
                }
                _ => {}
            }
        }
    }
    let tree = usvg::Tree::from_str(svg, &report::raster::options()).unwrap();
    let mut out = Vec::new();
    walk(tree.root(), &mut out);
    out
}

#[test]
fn chart_titles_fit_at_any_length() {
    let (width, _) = report::chart::SIZE;
    let base = sample().figures[0].clone();
    let words = ["Table", "III:", "time", "by", "RAM", "size,", "WWWWWW", "ours", "(s)", "vs", "the", "paper's", "MMM"];
    for n in [1, 8, 16, 40, 90] {
        let mut title: Vec<String> = (0..n).map(|i| words[i % words.len()].to_string()).collect();
        if n == 40 {
            title.push("W".repeat(150)); // one word longer than a line
        }
        let fig = Figure { title: title.join(" "), ..base.clone() };
        let scale = "1/16 of the paper: 16 GiB of data, 4 GiB SSD, 64 MiB RAM";
        let svg = report::chart::render_svg(&fig, scale).unwrap();
        let (px, lines) = report::chart::title_lines(&report::chart::full_title(&fig, scale));
        assert!(px >= 12.0, "{n} words: {px} px");
        assert_eq!(lines.concat().replace(' ', ""), report::chart::full_title(&fig, scale).replace(' ', ""));
        let boxes = text_boxes(&svg);
        let mut title_bottom = 0.0f32;
        for line in &lines {
            let (_, left, _, right, bottom) =
                boxes.iter().find(|b| &b.0 == line).unwrap_or_else(|| panic!("{n} words: line {line:?} not drawn"));
            assert!(*left >= 0.0 && *right <= width as f32, "{n} words: {line:?} spans {left}..{right} of {width}");
            title_bottom = title_bottom.max(*bottom);
        }
        // Room is left for the title: everything else is below it.
        for (text, _, top, _, _) in boxes.iter().filter(|b| !lines.contains(&b.0)) {
            assert!(*top > title_bottom, "{n} words: {text:?} at {top} overlaps the title (to {title_bottom})");
        }
        if n >= 16 {
            assert!(lines.len() > 1, "{n} words in one line");
        }
    }
}

/// (width, height, distinct colours, share of pixels not white, dark pixels in the top `rows`)
fn png_stats(bytes: &[u8], rows: u32) -> (u32, u32, usize, f64, usize) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let mut colours = HashSet::new();
    let (mut inked, mut dark_top) = (0usize, 0usize);
    for (i, px) in buf[..info.buffer_size()].chunks_exact(4).enumerate() {
        colours.insert([px[0], px[1], px[2]]);
        if px[..3] != [255, 255, 255] {
            inked += 1;
        }
        if (i as u32) < rows * info.width && px[..3].iter().all(|&v| v < 100) {
            dark_top += 1;
        }
    }
    let total = (info.width * info.height) as f64;
    (info.width, info.height, colours.len(), inked as f64 / total, dark_top)
}

#[test]
fn every_chart_is_also_a_png() {
    let dir = tempfile::tempdir().unwrap();
    let set = sample();
    report::write_report(dir.path(), &set).unwrap();
    if let Some(keep) = std::env::var_os("FLASHKV_REPORT_OUT") {
        // To look at the pictures: FLASHKV_REPORT_OUT=<dir> keeps this result folder there.
        report::write_report(Path::new(&keep), &set).unwrap();
    }
    let (w, h) = report::chart::SIZE;
    let s = report::raster::SCALE;
    for fig in &set.figures {
        let png = fs::read(dir.path().join(format!("{}.png", fig.id))).unwrap();
        let (pw, ph, colours, inked, title_ink) = png_stats(&png, 30 * s);
        assert_eq!((pw, ph), (w * s, h * s), "{}", fig.id);
        assert!(colours > 16, "{}: {colours} colours (anti-aliased text has many greys)", fig.id);
        assert!(inked > 0.02, "{}: {:.2}% not white", fig.id, inked * 100.0);
        assert!(title_ink > 200, "{}: the title's text is drawn ({title_ink} dark pixels)", fig.id);
        // Same SVG, same bytes.
        let svg = fs::read_to_string(dir.path().join(format!("{}.svg", fig.id))).unwrap();
        assert_eq!(report::raster::render_png(&fig.id, &svg).unwrap(), png, "{}", fig.id);
    }
}

fn write(dir: &Path, name: &str, text: &str) {
    fs::create_dir_all(dir.join(name).parent().unwrap()).unwrap();
    fs::write(dir.join(name), text).unwrap();
}

#[test]
fn a_folder_holds_one_result_set() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    report::write_report(&dir, &sample()).unwrap();
    write(&dir, "runs/0.json", "cached run");
    write(&dir, "timing.json", "[]");
    let before = fs::read(dir.join("results.json")).unwrap();

    // Another experiment's set is refused, and nothing is touched.
    let other = ResultSet { title: "Another experiment".into(), ..sample() };
    report::check_folder(&dir, &sample().title).unwrap();
    report::check_folder(&tmp.path().join("missing"), "anything").unwrap();
    let early = report::check_folder(&dir, &other.title).unwrap_err();
    assert!(matches!(early, ReportError::OtherResults { .. }), "{early:?}");
    let err = report::write_report(&dir, &other).unwrap_err();
    assert!(matches!(&err, ReportError::OtherResults { dir: d, .. } if d == &dir), "{err:?}");
    let message = err.to_string();
    for part in [dir.display().to_string(), sample().title, other.title.clone(), "--out".into(), "delete".into()] {
        assert!(message.contains(&part), "{message:?} should name {part:?}");
    }
    assert_eq!(fs::read(dir.join("results.json")).unwrap(), before);

    // The same experiment again, with one figure and one table fewer: their files go, the rest stays.
    let mut fewer = sample();
    fewer.figures.truncate(1);
    fewer.tables.truncate(1);
    report::write_report(&dir, &fewer).unwrap();
    for gone in ["fig12_ycsb.svg", "fig12_ycsb.png", "tables/table-3-per-level-write-reduction-at-1-kb.csv"] {
        assert!(!dir.join(gone).exists(), "{gone} is left behind");
    }
    for kept in ["fig10_wa_fillrandom.png", "tables/write-amplification-fillrandom.csv", "runs/0.json", "timing.json"] {
        assert!(dir.join(kept).exists(), "{kept} was removed");
    }
    assert_eq!(fs::read_to_string(dir.join("runs/0.json")).unwrap(), "cached run");

    // No tables at all: the tables folder goes too.
    let none = ResultSet { tables: Vec::new(), ..fewer };
    report::write_report(&dir, &none).unwrap();
    assert!(!dir.join("tables").exists());

    // A results.json that is not a result set is not ours to replace.
    write(&dir, "results.json", "{\"something\": \"else\"}");
    let err = report::write_report(&dir, &sample()).unwrap_err();
    assert!(matches!(err, ReportError::ForeignResults { .. }), "{err:?}");
    assert!(err.to_string().contains("not a result set") && err.to_string().contains("--out"), "{err}");

    // A folder without results.json is fine to write into; its files stay.
    let fresh = tmp.path().join("fresh");
    write(&fresh, "notes.txt", "mine");
    report::write_report(&fresh, &sample()).unwrap();
    assert_eq!(fs::read_to_string(fresh.join("notes.txt")).unwrap(), "mine");
}

#[test]
fn errors_name_the_path_and_the_operation() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    fs::write(&file, "x").unwrap();
    let err = report::write_report(&file.join("out"), &sample()).unwrap_err();
    assert!(
        matches!(&err, ReportError::Io { op: report::Op::CreateDir, path, .. } if path == &file.join("out")),
        "{err:?}"
    );
    assert!(err.to_string().starts_with(&format!("{}: cannot create directory: ", file.join("out").display())));

    let err = report::raster::render_png("broken", "<svg").unwrap_err();
    assert!(matches!(err, ReportError::Chart { format: "PNG", .. }), "{err:?}");
    assert!(err.to_string().starts_with("figure \"broken\": cannot draw the PNG chart: cannot read the SVG"), "{err}");
}

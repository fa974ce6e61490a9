//! What `flashkv` says, in the user's words: help that lists what exists, labels and titles that
//! describe the run (not Rust's debug text, not "0 records" for a run that has none, no empty
//! tables), and errors that list every accepted name.

use std::path::Path;
use std::process::Command;

mod common;
use common::flashkv;

/// `flashkv --help` names every repro `flashkv repro` accepts.
#[test]
fn help_lists_every_repro() {
    let (code, repro_help, err) = flashkv(&["repro", "--help"]);
    assert_eq!(code, 0, "{err}");
    let values = repro_help.split("[possible values: ").nth(1).expect("repro --help lists its values");
    let names: Vec<&str> = values.split(']').next().unwrap().split(", ").collect();
    assert_eq!(names.len(), 5, "{names:?}");
    let (code, help, err) = flashkv(&["--help"]);
    assert_eq!(code, 0, "{err}");
    let line = help.lines().find(|l| l.trim_start().starts_with("repro ")).expect("a repro line");
    for name in names {
        assert!(line.contains(name), "--help's repro line leaves out {name}: {line}");
    }
}

/// The engine's label (run headers, results.json's and latency.csv's `engine`) says the bloom
/// filter in words: `bloom 10 bits per key`, `no bloom filter`, never `Some(10)`.
#[test]
fn the_engine_label_says_its_bloom_filter_in_words() {
    for (bits, words) in [("10", "bloom 10 bits per key"), ("0", "no bloom filter")] {
        let (code, out, err) =
            flashkv(&["bench", "--fs", "mem", "--num", "2000", "--benchmarks", "fillseq", "--bloom-bits", bits]);
        assert_eq!(code, 0, "{err}");
        let header = out.lines().find(|l| l.contains("with lsm (")).expect("a run header");
        assert!(header.contains(words) && !header.contains("Some(") && !header.contains("None"), "{header}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tiny.toml");
    let out = dir.path().join("out");
    let (code, _, err) = flashkv(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let latency = std::fs::read_to_string(out.join("latency.csv")).unwrap();
    assert!(latency.contains("bloom 10 bits per key") && !latency.contains("Some("), "{latency}");
}

/// A page-write experiment is titled by its page writes, not "0 records", and neither it nor a
/// key-value SSD run has a `levels` table: they have no LSM levels.
#[test]
fn runs_without_records_or_levels_say_neither() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pages.toml");
    std::fs::write(
        &file,
        "title = \"pages\"\n[device]\ncapacity = \"64MiB\"\n[workload]\nname = \"pages\"\npages = { writes = 1.0 }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, stdout, err) = flashkv(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let title = stdout.lines().next().unwrap();
    assert!(!title.contains("0 records") && title.contains("1 capacity-writes of uniform page writes"), "{title}");
    assert!(!stdout.contains("\nlevels\n"), "{stdout}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let tables: Vec<&str> = set["tables"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!tables.contains(&"levels"), "{tables:?}");

    let kv =
        ["ycsb", "--engine", "kvftl", "--preset", "kvftl", "--capacity", "1GiB", "--records", "2000", "--ops", "2000"];
    let (code, stdout, err) = flashkv(&kv);
    assert_eq!(code, 0, "{err}");
    let levels_header = |l: &str| l.starts_with("level ") && l.contains("files") && l.contains("remapped MiB");
    assert!(!stdout.lines().any(levels_header), "an empty levels table: {stdout}");
    let (code, stdout, err) =
        flashkv(&["ycsb", "--fs", "mem", "--records", "2000", "--ops", "2000", "--write-buffer-size", "64KiB"]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.lines().any(levels_header), "the engine's runs keep their levels table: {stdout}");
}

/// An unknown workload is refused listing every workload, the lab's own (pages, block and
/// key-value traces) and YCSB's `core` too.
#[test]
fn an_unknown_workload_lists_every_workload() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w.toml");
    std::fs::write(&file, "title = \"w\"\n[workload]\nname = \"nope\"\nrecords = 10\n").unwrap();
    for args in [vec!["run", file.to_str().unwrap()], vec!["bench", "--benchmarks", "nope"]] {
        let (code, _, err) = flashkv(&args);
        assert_eq!(code, 2, "{args:?}");
        for name in ["core", "pages", "block-trace", "kv-trace", "fillrandom", "all_random", "load"] {
            assert!(err.contains(name), "{args:?}: {name} missing from {err}");
        }
    }
}

/// An experiment given as data (the Python package's dict) without a title is refused naming
/// the title, not with a TOML parse error about a line of a file nobody wrote.
#[test]
fn an_experiment_dict_without_a_title_names_the_title() {
    let e = lab::experiment::Experiment::text_from_json(r#"{"workload": {"name": "fillrandom", "records": 10}}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing field `title`") && !e.contains("TOML") && !e.contains("line 1"), "{e}");
    let e = lab::experiment::Experiment::text_from_json(r#"{"title": "t", "wrkload": {}}"#).unwrap_err().to_string();
    assert!(e.contains("wrkload") && !e.contains("line 1"), "{e}");
    // Read straight into the experiment (no text made), the same messages.
    let e =
        lab::experiment::Experiment::from_json(r#"{"workload": {"name": "fillrandom"}}"#).err().unwrap().to_string();
    assert!(e.contains("missing field `title`") && !e.contains("line 1"), "{e}");
    let e = lab::experiment::Experiment::from_json(
        r#"{"title": "t", "workload": {"name": "fillrandom", "records": "many"}}"#,
    )
    .err()
    .unwrap()
    .to_string();
    assert!(e.contains("workload.records"), "{e}");
}

/// An experiment given as JSON and read straight into the experiment has the runs of its text.
#[test]
fn an_experiment_from_json_has_the_runs_of_its_text() {
    use lab::experiment::Experiment;
    let json = r#"{"title": "t", "device": {"capacity": "256MiB"}, "engine": "lsm",
        "workload": {"name": "a", "records": 100, "ycsb": {"readproportion": 0.9}},
        "variant": [{"name": "x"}, {"name": "y", "engine": {"remap": "full"}}],
        "sweep": [{"parameter": "workload.value_size", "values": [256, 1024]},
                  {"parameter": "workload.ycsb.updateproportion", "values": [0.1, 0.5]}]}"#;
    let runs = |e: Experiment| serde_json::to_string(&e.runs()).unwrap();
    let direct = runs(Experiment::from_json(json).unwrap());
    assert_eq!(direct, runs(Experiment::parse(&Experiment::text_from_json(json).unwrap()).unwrap()));
    assert!(direct.contains("y @ value_size=1024, updateproportion=0.5"), "{direct}");
}

/// A single run states its device, capacity included (`ftl`'s default 16 GiB, a key-value SSD's,
/// a ZNS SSD's), on stderr before it starts; `--quiet` says nothing. Progress bars are drawn only
/// on a terminal: none here (stderr is a pipe), one under `script`'s pseudo-terminal unless
/// `--quiet`.
#[test]
fn a_single_run_states_its_device_and_shows_progress_on_a_terminal() {
    for (args, says) in [
        (vec!["ftl", "--writes", "0.01"], "raw capacity 16 GiB (17179869184 bytes"),
        (vec!["bench", "--fs", "zone", "--num", "1000", "--capacity", "1GiB"], "ZNS SSD, 1 GiB"),
        (
            vec!["ycsb", "--engine", "kvftl", "--preset", "kvftl", "--records", "100", "--ops", "100"],
            "raw capacity 64 GiB",
        ),
        (vec!["ycsb", "--fs", "mem", "--records", "100", "--ops", "100", "--json"], "device: mem"),
    ] {
        let (code, _, err) = flashkv(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        assert!(err.starts_with("device: ") && err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("eta"), "{args:?}: a progress bar on a pipe: {err}");
        let quiet = [args.clone(), vec!["--quiet"]].concat();
        let (code, _, err) = flashkv(&quiet);
        assert_eq!(code, 0, "{quiet:?}: {err}");
        assert!(err.is_empty(), "{quiet:?}: {err}");
    }
    // util-linux's `script` runs a command on a pseudo-terminal and copies what it draws.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped the terminal half: no `script` (util-linux) here");
        return;
    }
    let on_terminal = |extra: &str| -> String {
        let command = format!("{} ftl --capacity 1GiB --writes 2 {extra}", env!("CARGO_BIN_EXE_flashkv"));
        let out = Command::new("script").args(["-qfec", &command, "/dev/null"]).output().expect("run script");
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let shown = on_terminal("");
    assert!(shown.contains("pages [") && shown.contains("eta"), "no progress bar on a terminal: {shown}");
    assert!(shown.contains("device: simulated femu SSD, 1 GiB"), "{shown}");
    let quiet = on_terminal("--quiet");
    assert!(!quiet.contains("pages [") && !quiet.contains("device:"), "--quiet: {quiet}");
}

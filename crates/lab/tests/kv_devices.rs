//! Key-value SSDs through the same commands, runner, results and reports as the LSM engine:
//! `flashkv ycsb --engine plsc`, an experiment with `engine = "plsc"`, and what does not apply
//! to a device with no file system or no scans.

mod common;
use common::flashkv;

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = flashkv(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
}

/// YCSB A on PLSC, on LevelDB inside the device and on the LSM engine: the same workload finds the
/// same keys; PLSC's flash
/// accounting follows DESIGN.md's names (its host writes are its write-buffer flushes) and its time
/// is simulated.
#[test]
fn ycsb_runs_on_key_value_ssds_and_finds_what_the_lsm_engine_finds() {
    let common = ["ycsb", "--workload", "a", "--records", "4000", "--ops", "4000", "--value-size", "2KiB", "--json"];
    let mut plsc_args = common.to_vec();
    plsc_args.extend(["--engine", "plsc", "--preset", "plsc", "--capacity", "2GiB"]);
    let plsc = json(&plsc_args);
    let mut lsm_args = common.to_vec();
    lsm_args.extend(["--capacity", "1GiB"]);
    let lsm = json(&lsm_args);
    let mut in_device_args = common.to_vec();
    in_device_args.extend(["--engine", "lsm-in-device", "--preset", "plsc", "--capacity", "2GiB"]);
    let in_device = json(&in_device_args);
    let found = |v: &serde_json::Value| v["phases"][1]["found"].as_u64().unwrap();
    assert!(found(&plsc) > 0);
    assert_eq!(found(&plsc), found(&lsm), "the same reads find the same keys");
    assert_eq!(found(&in_device), found(&lsm), "the same reads find the same keys");
    assert!(in_device["engine"].as_str().unwrap().starts_with("lsm-in-device"), "{}", in_device["engine"]);
    assert_eq!(plsc["phases"][1]["user_bytes"], lsm["phases"][1]["user_bytes"]);
    assert_eq!(plsc["time_base"], "simulated");
    assert!(plsc["engine"].as_str().unwrap().starts_with("plsc"), "{}", plsc["engine"]);
    let programs = plsc["flash"]["program_bytes"].as_u64().unwrap();
    let host = plsc["host"]["write_bytes"].as_u64().unwrap();
    // Records still in the write buffer at the end, or replaced there, never reach flash: the
    // host's flushes are no more than the user's bytes plus page padding, and at most what the
    // flash programmed.
    assert!(host > 0 && host <= programs, "host {host} <= programs {programs}");
    let user = plsc["host"]["user_bytes"].as_u64().unwrap() as f64;
    let wa = plsc["flash"]["write_amplification"].as_f64().unwrap();
    assert!((wa - programs as f64 / user).abs() < 1e-9, "WA is flash programs / user bytes: {wa}");
    assert!(plsc["flash"]["by_cause"].as_array().unwrap().iter().any(|c| c["cause"] == "host"));
    let work = &plsc["kv_ssd"];
    assert!(work["flushes"].as_u64().unwrap() > 0, "{work}");
    let load_s = plsc["phases"][0]["elapsed_s"].as_f64().unwrap() + plsc["phases"][1]["elapsed_s"].as_f64().unwrap();
    let waited = work["held_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(waited <= load_s, "puts waited {waited} s within the run's {load_s} s");
    assert!(work["compaction_ns"].as_u64().unwrap() <= work["held_ns"].as_u64().unwrap());
    assert!(lsm["kv_ssd"].is_null(), "the LSM engine has no device work");
}

/// db_bench through the same runner: one fill, then reads, on each key-value SSD.
#[test]
fn bench_runs_a_fill_and_reads_on_key_value_ssds() {
    for engine in ["plsc", "lsm-in-device"] {
        let v = json(&[
            "bench",
            "--engine",
            engine,
            "--preset",
            "plsc",
            "--capacity",
            "2GiB",
            "--num",
            "3000",
            "--value-size",
            "1024",
            "--benchmarks",
            "fillrandom,readrandom",
            "--json",
        ]);
        let phases = v["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 2, "{engine}");
        assert_eq!(phases[0]["name"], "fillrandom");
        assert!(phases[1]["found"].as_u64().unwrap() > 1000, "{engine}: {}", phases[1]);
        assert!(v["engine"].as_str().unwrap().starts_with(engine), "{engine}");
    }
}

#[test]
fn an_experiment_runs_plsc_beside_the_lsm_engine() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.toml");
    std::fs::write(
        &file,
        "title = \"PLSC beside LSM\"\n[device]\npreset = \"plsc\"\ncapacity = \"2GiB\"\n\
         [workload]\nname = \"ycsb-a\"\nrecords = 2000\noperations = 2000\nvalue_size = 1024\n\
         [[variant]]\nname = \"lsm\"\n[[variant]]\nname = \"plsc\"\nengine = { name = \"plsc\" }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, stdout, err) = flashkv(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("plsc"), "{stdout}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let runs = set["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert!(runs.iter().any(|r| r["engine"].as_str().unwrap().starts_with("plsc")));
    assert!(out.join("index.html").exists());
    // The short form: `engine = "plsc"` for the whole experiment.
    std::fs::write(
        &file,
        "title = \"PLSC\"\nengine = \"plsc\"\n[device]\npreset = \"plsc\"\ncapacity = \"2GiB\"\n\
         [workload]\nname = \"ycsb-c\"\nrecords = 1000\noperations = 1000\n",
    )
    .unwrap();
    let (code, _, err) = flashkv(&["run", file.to_str().unwrap(), "--out", dir.path().join("o2").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn what_does_not_apply_to_a_key_value_ssd_is_named() {
    let (code, _, err) = flashkv(&["ycsb", "--engine", "kvftl9", "--records", "10", "--ops", "10"]);
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "'--engine <ENGINE>': unknown engine 'kvftl9'; accepted: lsm, plsc, lsm-in-device, lsm-in-device-one-plane"
        ),
        "{err}"
    );
    let (code, _, err) = flashkv(&["ycsb", "--engine", "plsc", "--fs", "mem", "--records", "10", "--ops", "10"]);
    assert_eq!(code, 2);
    assert!(err.contains("no file system below it"), "{err}");
    let (code, _, err) = flashkv(&[
        "ycsb",
        "--engine",
        "plsc",
        "--workload",
        "e",
        "--capacity",
        "2GiB",
        "--records",
        "100",
        "--ops",
        "100",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("no scans"), "{err}");
    let (code, _, err) = flashkv(&["bench", "--engine", "plsc", "--num", "10", "--capacity", "2GiB"]);
    assert_eq!(code, 2);
    assert!(err.contains("one fill per bench"), "{err}");
}

/// `--value-size small|uniform|large` are relative to the preset's flash page (our definition of
/// seeds 002 and 004's classes): on the plsc preset (16 KiB pages) a large value is 16 KiB + 1 to
/// 48 KiB.
#[test]
fn value_size_classes_follow_the_devices_page() {
    let mean = |class: &str| {
        let v = json(&[
            "ycsb",
            "--engine",
            "plsc",
            "--preset",
            "plsc",
            "--capacity",
            "4GiB",
            "--workload",
            "load",
            "--records",
            "2000",
            "--ops",
            "1",
            "--value-size",
            class,
            "--json",
        ]);
        v["phases"][0]["user_bytes"].as_f64().unwrap() / 2000.0
    };
    let page = 16384.0;
    let (small, uniform, large) = (mean("small"), mean("uniform"), mean("large"));
    assert!(small > 0.4 * page && small < 0.6 * page + 64.0, "small: mean {small}");
    assert!(uniform > 0.9 * page && uniform < 1.1 * page + 64.0, "uniform: mean {uniform}");
    assert!(large > 1.9 * page && large < 2.1 * page + 64.0, "large: mean {large}");
}

/// `--timing`, `--page-size` and `--key-size` reach the device and the workload: the same load
/// with SSDSim's chip and with seed 004's takes different simulated time, keys of 200 B add 200 B
/// per record to the user bytes, and `--page-size 32KiB` gives the device 32 KiB pages; bad values
/// are errors that name the flag.
#[test]
fn timing_page_size_and_key_size_are_parameters() {
    let load = |extra: &[&str]| {
        let mut args = vec![
            "ycsb",
            "--workload",
            "load",
            "--records",
            "2000",
            "--value-size",
            "4KiB",
            "--engine",
            "plsc",
            "--preset",
            "plsc",
            "--capacity",
            "2GiB",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    let ssdsim = load(&[]);
    let seed004 = load(&["--timing", "seed004"]);
    assert!(ssdsim["device"].as_str().unwrap().contains("NAND 20us/200us/1.5ms/25ns"), "{}", ssdsim["device"]);
    assert!(seed004["device"].as_str().unwrap().contains("NAND 115us/1.6ms/3ms/10ns"), "{}", seed004["device"]);
    let time = |v: &serde_json::Value| v["host"]["sim_time_s"].as_f64().unwrap();
    assert_ne!(time(&ssdsim), time(&seed004));
    assert_eq!(ssdsim["flash"]["program_bytes"], seed004["flash"]["program_bytes"], "timings change time, not work");

    let long_keys = load(&["--key-size", "200"]);
    let user = |v: &serde_json::Value| v["host"]["user_bytes"].as_u64().unwrap();
    let key_bytes = |v: &serde_json::Value| user(v) - 2000 * 4096;
    assert_eq!(key_bytes(&long_keys), 2000 * 200, "every key is 200 B");
    assert!(key_bytes(&ssdsim) < 2000 * 30, "YCSB's own keys are short");

    let big_pages = load(&["--page-size", "32KiB"]);
    assert!(big_pages["device"].as_str().unwrap().contains("32 KiB pages"), "{}", big_pages["device"]);

    for (flag, bad, says) in [
        ("--timing", "fast", "ssdsim"),
        ("--timing", "1us/2us/3us", "READ/PROGRAM/ERASE"),
        ("--page-size", "3000", "power of two"),
        ("--key-size", "2000", "key_size"),
        ("--key-size", "300", "maximum key size of 255"),
    ] {
        let (code, _, err) = flashkv(&[
            "ycsb",
            "--workload",
            "load",
            "--records",
            "10",
            "--engine",
            "plsc",
            "--preset",
            "plsc",
            "--capacity",
            "2GiB",
            flag,
            bad,
        ]);
        assert_ne!(code, 0, "{flag} {bad}");
        assert!(err.contains(says), "{flag} {bad}: {err}");
    }
}

/// The key-value FTLs of seed 004 through `--engine` and experiment files: each variant's
/// parameter reaches the device (a sweep over `engine.max_waste` changes the result), the mapping
/// RAM makes table I/O, and an option given to a design it does not apply to, or out of range, is
/// an error naming it.
#[test]
fn kvftl_variants_and_their_parameters_run_from_the_command_line_and_experiment_files() {
    let ycsb = |extra: &[&str]| {
        let mut args = vec![
            "ycsb",
            "--workload",
            "a",
            "--records",
            "300",
            "--ops",
            "3000",
            "--value-size",
            "small",
            "--preset",
            "kvftl",
            "--capacity",
            "1GiB",
            "--json",
        ];
        args.extend_from_slice(extra);
        json(&args)
    };
    let ftl = |v: &serde_json::Value| v["kv_ssd"]["ftl"].clone();
    let ws = ycsb(&["--engine", "kvftl-ws"]);
    let ws_big = ycsb(&["--engine", "kvftl-ws", "--max-waste", "8KiB"]);
    assert!(ws["engine"].as_str().unwrap().contains("WS 2048 B"), "{}", ws["engine"]);
    assert!(ws_big["engine"].as_str().unwrap().contains("WS 8192 B"), "{}", ws_big["engine"]);
    let units = |v: &serde_json::Value| ftl(v)["space"]["live_alloc_bytes"].as_u64().unwrap();
    assert!(units(&ws_big) > units(&ws), "more waste allowed, more bytes allocated");
    let dftl = ycsb(&["--engine", "dftl-kv", "--mapping-ram", "16KiB"]);
    assert!(ftl(&dftl)["mapping"]["loads"].as_u64().unwrap() > 0, "{}", ftl(&dftl));
    assert!(dftl["flash"]["by_cause"].as_array().unwrap().iter().any(|c| c["cause"] == "mapping"));
    for (args, says) in [
        (vec!["--engine", "kvftl-sp", "--max-waste", "1KiB"], "--max-waste: does not apply to engine kvftl-sp"),
        (vec!["--engine", "plsc", "--mapping-ram", "1MiB"], "--mapping-ram: does not apply"),
        (vec!["--engine", "kvftl-sp", "--min-partition", "3000"], "not a power of two"),
        (vec!["--engine", "kvftl-np", "--max-partitions", "0"], "at least 1"),
        (vec!["--engine", "kvftl-sp", "--min-partition", "2MiB"], "SP's smallest partition"),
    ] {
        let mut a = vec!["ycsb", "--workload", "load", "--records", "10", "--preset", "kvftl", "--capacity", "1GiB"];
        a.extend(args.iter().copied());
        let (code, _, err) = flashkv(&a);
        assert_ne!(code, 0, "{args:?}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ws.toml");
    std::fs::write(
        &file,
        "title = \"WS sweep\"\n[engine]\nname = \"kvftl-ws\"\n[device]\npreset = \"kvftl\"\ncapacity = \"1GiB\"\n\
         [workload]\nname = \"ycsb-a\"\nrecords = 300\noperations = 1000\nvalue_size = \"small\"\n\
         [sweep]\nparameter = \"engine.max_waste\"\nvalues = [\"1KiB\", \"8KiB\"]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = flashkv(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let runs = set["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_ne!(runs[0]["engine"], runs[1]["engine"], "the sweep reached the device");
    std::fs::write(
        &file,
        "title = \"bad\"\n[engine]\nname = \"kvftl\"\nmax_waste = 100\n[workload]\nname = \"ycsb-a\"\nrecords = 10\n",
    )
    .unwrap();
    let (code, _, err) = flashkv(&["run", file.to_str().unwrap(), "--out", dir.path().join("o2").to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("engine.max_waste: does not apply to engine kvftl"), "{err}");
}

/// `--values zeros` with `--store compact` (how the paper-scale repros fit in memory) measures
/// exactly what generated values in plain memory measure, on every design: only the wall clock
/// differs.
#[test]
fn zero_values_in_the_compact_store_change_no_result() {
    let designs: [&[&str]; 6] = [
        &["--engine", "plsc", "--preset", "plsc", "--capacity", "2GiB"],
        &["--engine", "lsm-in-device", "--preset", "plsc", "--capacity", "2GiB"],
        &["--engine", "kvftl-ws", "--preset", "kvftl", "--capacity", "1GiB"],
        &["--engine", "dftl-kv", "--preset", "kvftl", "--capacity", "1GiB", "--mapping-ram", "64KiB"],
        &["--remap", "full", "--capacity", "256MiB"],
        &["--fs", "zone", "--capacity", "1GiB"],
    ];
    for design in designs {
        let run = |values: &str, store: &str| {
            let mut args = vec!["ycsb", "--workload", "a", "--records", "3000", "--ops", "3000", "--json"];
            args.extend(["--value-size", "1-6KiB", "--values", values, "--store", store]);
            args.extend(design);
            let mut v = json(&args);
            let m = v.as_object_mut().unwrap();
            m.remove("timing");
            v
        };
        let generated = run("generated", "memory");
        assert!(generated["flash"]["program_bytes"].as_u64().unwrap() > 0, "{design:?}");
        assert_eq!(generated, run("zeros", "compact"), "{design:?}");
    }
    let (code, _, err) = flashkv(&["ycsb", "--records", "10", "--ops", "10", "--values", "ones"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("'--values <VALUES>': unknown value data `ones`: accepted values are generated, zeros"),
        "{err}"
    );
}

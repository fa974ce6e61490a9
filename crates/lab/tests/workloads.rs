//! The workload commands, experiment files and reports as a user runs them.

mod common;
use common::flashkv;

const SMALL_SIM: &[&str] = &["--records", "3000", "--ops", "3000", "--capacity", "256MiB", "--json"];

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = flashkv(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
}

#[test]
fn ycsb_reports_the_accounting_names() {
    let mut args = vec!["ycsb", "--workload", "a", "--value-size", "1024"];
    args.extend_from_slice(SMALL_SIM);
    let v = json(&args);
    for key in [
        "/host/user_bytes",
        "/host/write_bytes",
        "/flash/program_bytes",
        "/flash/read_bytes",
        "/flash/erases",
        "/flash/gc_copied_pages",
        "/flash/copybacks",
        "/flash/remapped_pages",
        "/flash/write_amplification",
        "/host/write_amplification",
        "/host/sim_time_s",
        "/timing/wall_time_s",
        "/host/ops_per_sec",
        "/host/latency",
        "/lsm/levels",
    ] {
        assert!(v.pointer(key).is_some(), "missing {key}");
    }
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 2);
    assert_eq!(phases[1]["ops"].as_u64(), Some(3000));
    assert!(v["host"]["user_bytes"].as_u64().unwrap() > 3000 * 1024, "load and updates wrote their records");
    assert!(v["flash"]["write_amplification"].as_f64().unwrap() >= 1.0);
    // The flash's own view: programs and die time per cause add up to the totals.
    let causes = v["flash"]["by_cause"].as_array().unwrap();
    let programs: u64 = causes.iter().map(|c| c["program_pages"].as_u64().unwrap()).sum();
    assert_eq!(programs * 4096, v["flash"]["program_bytes"].as_u64().unwrap());
    let busy: f64 = causes.iter().map(|c| c["busy_s"].as_f64().unwrap()).sum();
    assert!((busy - v["flash"]["busy_s"].as_f64().unwrap()).abs() < 1e-6, "{busy} vs {}", v["flash"]["busy_s"]);
    let names: Vec<&str> = causes.iter().map(|c| c["cause"].as_str().unwrap()).collect();
    for name in ["host.wal", "host.flush", "host.fs-metadata"] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(v["flash"]["wear"]["max_erases"].as_u64().is_some());
    let (sf, eff) =
        (v["flash"]["spare_factor"].as_f64().unwrap(), v["flash"]["effective_spare_factor"].as_f64().unwrap());
    assert!(eff < sf && eff > 0.0, "effective {eff} vs configured {sf}");
}

/// A run's JSON without what may differ between two runs of the same work: the wall clock, and
/// the names of the workload and its run phase.
fn measured(mut v: serde_json::Value) -> serde_json::Value {
    let o = v.as_object_mut().unwrap();
    for key in ["timing", "workload"] {
        o.remove(key);
    }
    for phase in o["phases"].as_array_mut().unwrap() {
        phase.as_object_mut().unwrap().remove("name");
    }
    v
}

/// YCSB's -P: a property file with workload A's definition over CoreWorkload's defaults runs
/// workload A, operation for operation; -p and --records / --ops override it.
#[test]
fn a_ycsb_property_file_of_workload_a_is_workload_a() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/workloada");
    let device = ["--capacity", "256MiB", "--json"];
    let named = json(&[&["ycsb", "--workload", "a", "--records", "3000", "--ops", "3000"][..], &device].concat());
    let from_file = json(&[&["ycsb", "-P", file][..], &device].concat());
    assert_eq!(from_file["workload"], "core", "-P alone completes CoreWorkload, as YCSB does");
    assert_eq!(measured(named.clone()), measured(from_file.clone()));
    // Without the file, CoreWorkload's defaults (95 % reads, uniform) are another workload.
    let core = json(&[&["ycsb", "--workload", "core", "--records", "3000", "--ops", "3000"][..], &device].concat());
    assert_ne!(measured(core), measured(named.clone()));
    // -p over the file: reads only.
    let reads =
        json(&[&["ycsb", "-P", file, "-p", "readproportion=1", "-p", "updateproportion=0"][..], &device].concat());
    let kinds = reads["phases"][1]["latency_by_kind"].as_object().unwrap();
    assert!(kinds.contains_key("read") && !kinds.contains_key("update"), "{kinds:?}");
    let updates = named["phases"][1]["latency_by_kind"].as_object().unwrap();
    assert!(updates.contains_key("update"), "{updates:?}");
    // --records and --ops override the file's counts, as -p does (YCSB's command line over its
    // property file); only a -p that says otherwise conflicts. A wrong property is named.
    let fewer = json(&[&["ycsb", "-P", file, "--records", "1000", "--ops", "500"][..], &device].concat());
    let ops: Vec<u64> = fewer["phases"].as_array().unwrap().iter().map(|p| p["ops"].as_u64().unwrap()).collect();
    assert_eq!(ops, [1000, 500], "{}", fewer["phases"]);
    let by_p =
        json(&[&["ycsb", "-P", file, "-p", "recordcount=1000", "-p", "operationcount=500"][..], &device].concat());
    assert_eq!(measured(by_p), measured(fewer), "--records N is -p recordcount=N");
    let (code, _, err) = flashkv(&["ycsb", "-P", file, "-p", "recordcount=10", "--records", "20"]);
    assert_eq!(code, 2);
    assert!(err.contains("--records") && err.contains("recordcount=10"), "{err}");
    let (code, _, err) = flashkv(&["ycsb", "-P", file, "-p", "requestdistribution=normal"]);
    assert_eq!(code, 2);
    assert!(err.contains("-p") && err.contains("uniform, zipfian, latest, hotspot"), "{err}");
    let bad = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(bad.path(), "recordcount=10\nreadproportoin=0.5\n").unwrap();
    let (code, _, err) = flashkv(&["ycsb", "-P", bad.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("line 2") && err.contains("readproportoin"), "{err}");
}

/// Block trace replay: an MSR trace's write bytes are the device's host write bytes, each
/// format's sample replays, open loop follows the trace's clock, and a malformed line is named.
#[test]
fn block_traces_replay_on_the_simulated_ssd() {
    let dir = tempfile::tempdir().unwrap();
    // A generated MSR trace of page-aligned requests: 70 % writes of 1-4 pages, 1 ms apart.
    let (mut text, mut written, mut read) = (String::new(), 0u64, 0u64);
    let mut x: u64 = 7;
    for i in 0..3000u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let (pages, page) = ((x >> 33) % 4 + 1, (x >> 40) % 50_000);
        let write = (x >> 20) % 10 < 7;
        let size = pages * 4096;
        if write {
            written += size
        } else {
            read += size
        }
        let op = if write { "Write" } else { "Read" };
        text.push_str(&format!("{},src,1,{op},{},{size},0\n", 128_166_372_000_000_000 + i * 10_000, page * 4096));
    }
    let trace = dir.path().join("gen.csv");
    std::fs::write(&trace, &text).unwrap();
    let trace = trace.to_str().unwrap();
    let v = json(&["ftl", "--trace", trace, "--capacity", "256MiB", "--no-precondition", "--json"]);
    assert_eq!(v["host"]["write_bytes"].as_u64(), Some(written), "the trace's write bytes reach the device");
    let replay = &v["phases"][0];
    assert_eq!((replay["ops"].as_u64(), replay["read_bytes"].as_u64()), (Some(3000), Some(read)));
    assert!(replay["latency_by_kind"]["read"]["p99_us"].as_f64().unwrap() > 0.0);
    // Open loop: 3000 requests 1 ms apart take at least the trace's 2.999 s.
    let open = json(&["ftl", "--trace", trace, "--capacity", "256MiB", "--replay", "open", "--json"]);
    let phases = open["phases"].as_array().unwrap();
    assert_eq!(phases[0]["name"], "precondition");
    assert!(phases[1]["elapsed_s"].as_f64().unwrap() >= 2.999, "{}", phases[1]["elapsed_s"]);
    assert!(open["host"]["write_bytes"].as_u64().unwrap() > written, "preconditioning writes the device first");
    // Each format's sample: the MSR one needs its addresses wrapped on a small device.
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/");
    let blk = json(&["ftl", "--trace", &format!("{data}blkparse-sample.txt"), "--trace-format", "blkparse", "--json"]);
    let kinds = blk["phases"][1]["latency_by_kind"].as_object().unwrap();
    assert!(kinds.contains_key("read") && kinds.contains_key("write") && kinds.contains_key("trim"), "{kinds:?}");
    assert_eq!(blk["phases"][1]["user_bytes"].as_u64(), Some(24 * 512), "two dispatched writes, 16 + 8 sectors");
    // After the preconditioning, a closed-loop replay starts on an idle device: no request waits
    // for the fill (a 256 MiB fill takes seconds; a page read or program, at most a few ms).
    let max_us = blk["phases"][1]["latency"]["max_us"].as_f64().unwrap();
    assert!(max_us < 20_000.0, "a request waited {max_us} us");
    let msr = format!("{data}msr-sample.csv");
    let (code, _, err) = flashkv(&["ftl", "--trace", &msr, "--capacity", "256MiB"]);
    assert_eq!(code, 2);
    assert!(err.contains("line 1") && err.contains("exceed the device's"), "{err}");
    let wrapped = json(&["ftl", "--trace", &msr, "--capacity", "256MiB", "--addresses", "wrap", "--json"]);
    assert_eq!(wrapped["phases"][1]["ops"].as_u64(), Some(5));
    // A malformed line is named by its number.
    let bad = dir.path().join("bad.csv");
    let lines: Vec<&str> = text.lines().collect();
    std::fs::write(&bad, format!("{}\n{}\n1,src,1,Erase,0,4096,0\n", lines[0], lines[1])).unwrap();
    let (code, _, err) = flashkv(&["ftl", "--trace", bad.to_str().unwrap(), "--capacity", "256MiB"]);
    assert_eq!(code, 2);
    assert!(err.contains("line 3") && err.contains("'erase' is not Read or Write"), "{err}");
}

/// Key-value trace replay: fillrandom's operations written as a trace replay to the same
/// results as fillrandom itself, on the engine and on a key-value SSD; a bad line is named.
#[test]
fn a_kv_trace_of_fillrandom_replays_as_fillrandom() {
    use workload::db_bench::DbBenchKind;
    use workload::{Op, ValueData, ValueSize, Workload, WorkloadSpec};
    let dir = tempfile::tempdir().unwrap();
    // The runner seeds a db_bench write phase with the run's seed + 1.
    let spec = WorkloadSpec {
        records: 20_000,
        operations: 1,
        value_size: ValueSize::Fixed(1000),
        key_size: None,
        values: ValueData::Zeros,
    };
    let mut trace = String::from("# fillrandom, 20000 x 1000 B: flushes and compactions\n");
    for op in Workload::DbBench(DbBenchKind::FillRandom).build(&spec, 43).unwrap() {
        let Op::Insert { key, value } = op else { panic!("fillrandom puts") };
        let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
        trace.push_str(&format!("put,0x{hex},{}\n", value.len()));
    }
    std::fs::write(dir.path().join("fill.trace"), &trace).unwrap();
    for (engine, device) in
        [("", "fs = \"sim\"\ncapacity = \"256MiB\""), ("engine = \"plsc\"\n", "capacity = \"1GiB\"")]
    {
        let file = |workload: &str| {
            format!(
                "title = \"t\"\n{engine}[device]\n{device}\n[workload]\n{workload}\nvalues = \"zeros\"\nvalue_size = 1000\nseed = 42\n"
            )
        };
        let run = |name: &str, text: String| {
            let path = dir.path().join(format!("{name}.toml"));
            std::fs::write(&path, text).unwrap();
            let out = dir.path().join(name);
            let (code, _, err) = flashkv(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
            assert_eq!(code, 0, "{name}: {err}");
            let v: serde_json::Value =
                serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
            let mut r = v["runs"][0].clone();
            measured(r.take())
        };
        let tag = if engine.is_empty() { "lsm" } else { "plsc" };
        let fill = run(&format!("fill-{tag}"), file("name = \"fillrandom\"\nrecords = 20000"));
        let replay = run(&format!("replay-{tag}"), file("name = \"kv-trace\"\nkv_trace = \"fill.trace\""));
        assert_eq!(fill["phases"][0]["ops"].as_u64(), Some(20_000), "{tag}");
        if tag == "lsm" {
            assert!(fill["lsm"]["levels"][0]["bytes_written"].as_u64().unwrap() > 0, "the engine flushed");
        }
        let strip = |mut v: serde_json::Value| {
            let o = v.as_object_mut().unwrap();
            for key in ["variant", "experiment", "run"] {
                o.remove(key);
            }
            v
        };
        assert_eq!(strip(fill), strip(replay), "{tag}: the trace replays as the generator runs");
    }
    let bad = dir.path().join("bad.trace");
    std::fs::write(&bad, "put,a,10\nget,a\nput,b\n").unwrap();
    let text = format!(
        "title = \"t\"\n[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"kv-trace\"\nkv_trace = \"{}\"\n",
        bad.display()
    );
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, text).unwrap();
    let (code, _, err) = flashkv(&["run", path.to_str().unwrap(), "--out", dir.path().join("bad").to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("line 3") && err.contains("put takes 3 fields"), "{err}");
}

#[test]
fn mixgraph_runs_its_fill_and_mix() {
    let mut args = vec!["mixgraph", "--workload", "prefix_dist"];
    args.extend_from_slice(SMALL_SIM);
    let v = json(&args);
    let phases = v["phases"].as_array().unwrap();
    assert_eq!(phases[0]["name"], "fill");
    assert_eq!(phases[1]["name"], "run prefix_dist");
    let kinds = phases[1]["latency_by_kind"].as_object().unwrap();
    assert!(kinds.contains_key("read") && kinds.contains_key("update") && kinds.contains_key("scan"), "{kinds:?}");
}

#[test]
fn the_same_experiment_and_seed_give_byte_identical_results() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/tiny.toml");
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for dir in [&a, &b] {
        let (code, _, err) = flashkv(&["run", file, "--out", dir.path().to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
    }
    let ra = std::fs::read(a.path().join("results.json")).unwrap();
    let rb = std::fs::read(b.path().join("results.json")).unwrap();
    assert!(ra.len() > 1000);
    assert_eq!(ra, rb, "results.json differs between two runs of the same experiment");
    for f in ["results.csv", "index.html", "write_amplification_vs_workload_value_size.svg", "timing.json"] {
        assert!(a.path().join(f).exists(), "{f} missing");
    }
    // The page can be rebuilt from results.json alone.
    std::fs::remove_file(a.path().join("index.html")).unwrap();
    let (code, out, err) = flashkv(&["report", a.path().to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("index.html") && a.path().join("index.html").exists());
}

#[test]
fn bad_input_names_the_field_and_the_accepted_values() {
    let (code, _, err) = flashkv(&["ycsb", "--workload", "g"]);
    assert_eq!(code, 2);
    assert!(err.contains("--workload") && err.contains("load"), "{err}");
    let (code, _, err) = flashkv(&["mixgraph", "--workload", "random"]);
    assert_eq!(code, 2);
    assert!(err.contains("all_random"), "{err}");
    let (code, _, err) = flashkv(&["bench", "--fs", "floppy", "--num", "10"]);
    assert_eq!(code, 2);
    assert!(err.contains("sim, zone, posix:DIR, mem"), "{err}");
    for (flags, needle) in [
        (&["--zone-size", "1536KiB"][..], "--zone-size: 1.5 MiB is not a multiple of the 1.0 MiB erase block"),
        (&["--max-open-zones", "5000"][..], "--max-open-zones: 5000 exceeds the device's"),
        (
            &["--max-open-zones", "20", "--max-active-zones", "10"][..],
            "--max-open-zones: 20 exceeds max_active_zones 10",
        ),
        (&["--zone-policy", "tiered"][..], "shared, per-level, per-window, lifetime"),
        (&["--zone-gc", "-1"][..], "--zone-gc"),
        (&["--compaction", "tiered"][..], "leveled, gear, ll"),
    ] {
        let mut args = vec!["bench", "--fs", "zone", "--num", "10", "--capacity", "1GiB"];
        args.extend_from_slice(flags);
        let (code, _, err) = flashkv(&args);
        assert_eq!(code, 2, "{flags:?}");
        // One line that says it all (clap adds its hint on how to get help after a blank line).
        assert!(err.lines().next().is_some_and(|l| l.contains(needle)), "{flags:?}: {err}");
    }
    let (code, _, err) = flashkv(&["bench", "--benchmarks", "fillrand", "--num", "10"]);
    assert_eq!(code, 2);
    assert!(err.contains("fillrandom"), "{err}");
    let (code, _, err) = flashkv(&["ycsb", "--records", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--records"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "title = \"x\"\n[workload]\nname = \"fillrandom\"\nrecords = \"many\"\n").unwrap();
    let (code, _, err) = flashkv(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.toml") && err.contains("records"), "{err}");
    let (code, _, err) = flashkv(&["report", dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("results.json"), "{err}");
}

/// Sizes, counts, fractions and lists are checked where they enter, in every command and in
/// experiment files: exit status 2 and a first line naming the flag and the accepted range.
#[test]
fn bad_sizes_counts_and_lists_are_refused_at_the_door() {
    let cases: [(&[&str], &str); 14] = [
        (&["bench", "--value-size", "0"], "'--value-size <VALUE_SIZE>': size must be positive"),
        (
            &["bench", "--value-size", "1GiB"],
            "'--value-size <VALUE_SIZE>': 1 GiB exceeds the engine's largest value (64 MiB)",
        ),
        (&["bench", "--value-size", "10GiB"], "'--value-size <VALUE_SIZE>': 10 GiB exceeds the engine's largest value"),
        (&["bench", "--value-size", "2KiB-1KiB"], "--value-size"),
        (&["ycsb", "--value-size", "0"], "'--value-size <VALUE_SIZE>': size must be positive"),
        (&["bench", "--num", "-5"], "'--num <NUM>': -5 is negative; accepted: a whole number from 1"),
        (&["ycsb", "--records", "-3"], "'--records <RECORDS>': -3 is negative"),
        (&["mixgraph", "--ops", "0"], "'--ops <OPS>': 0 is below 1"),
        (&["bench", "--spare-factor", "-0.1"], "'--spare-factor <SPARE_FACTOR>': '-0.1' is outside [0, 1)"),
        (&["ftl", "--spare-factor", "-0.1"], "'--spare-factor <SPARE_FACTOR>': '-0.1' is outside [0, 1)"),
        (
            &["bench", "--benchmarks", "fillseq,,readrandom"],
            "'--benchmarks <BENCHMARKS>': empty item in 'fillseq,,readrandom'",
        ),
        (&["bench", "--benchmarks", "fillseq,"], "'--benchmarks <BENCHMARKS>': empty item"),
        (&["ftl", "--writes", "-1"], "--writes: -1 must be a positive number"),
        (&["ftl", "--queue-depth", "-3"], "'--queue-depth <QUEUE_DEPTH>': -3 is not in"),
    ];
    for (args, needle) in cases {
        let (code, _, err) = flashkv(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(first.contains(needle), "{args:?}: {err}");
    }
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("zero.toml");
    std::fs::write(&bad, "title = \"x\"\n[workload]\nname = \"fillrandom\"\nrecords = 10\nvalue_size = 0\n").unwrap();
    let (code, _, err) = flashkv(&["run", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("workload.value_size: size must be positive"), "{err}");
}

/// The engine on the simulated ZNS SSD: zone accounting in the result, every byte the device
/// programmed written by the host (no device GC), and lifetime-leveling's own causes.
#[test]
fn bench_runs_on_a_zoned_device() {
    let v = json(&[
        "bench",
        "--benchmarks",
        "fillrandom",
        "--num",
        "60000",
        "--value-size",
        "512",
        "--fs",
        "zone",
        "--capacity",
        "1GiB",
        "--zone-policy",
        "per-level",
        "--compaction",
        "ll",
        "--json",
    ]);
    let r = &v;
    let zones = &r["fs"]["zones"];
    assert!(zones["used_zones"].as_u64().unwrap() > 0 && zones["resets"].as_u64().is_some(), "{zones}");
    assert_eq!(zones["utilisation"].as_array().unwrap().len() as u64, zones["used_zones"].as_u64().unwrap());
    assert_eq!(
        r["flash"]["program_bytes"], r["host"]["write_bytes"],
        "a zoned device writes only what the host writes"
    );
    for cause in ["moves", "t_zone", "zone_gc"] {
        assert!(r["host"]["write_bytes_by_cause"][cause].is_u64(), "{cause}");
    }
    assert!(r["engine"].as_str().unwrap().contains("ll compaction"), "{}", r["engine"]);
    assert!(r["device"].as_str().unwrap().contains("ZNS"), "{}", r["device"]);
    assert!(r["phases"][0]["timeline"].as_array().unwrap().len() > 10, "throughput over time");
}

#[test]
fn bench_runs_on_memory_and_on_real_files() {
    let dir = tempfile::tempdir().unwrap();
    let fs = format!("posix:{}", dir.path().display());
    for fs in ["mem", fs.as_str()] {
        let v =
            json(&["bench", "--fs", fs, "--num", "5000", "--benchmarks", "fillrandom,readrandom,readseq", "--json"]);
        let phases = v["phases"].as_array().unwrap();
        assert_eq!(phases.len(), 3);
        assert_eq!(v["time_base"], "wall-clock");
        assert!(v.get("flash").is_none(), "no device is visible on real files");
        assert!(
            phases[2]["ops"].as_u64().unwrap() > 3000,
            "readseq counts records (fillrandom leaves about 63 % of the keys)"
        );
    }
}

#[test]
fn bench_fills_start_on_a_fresh_database_as_db_bench() {
    // fillseq writes every key; fillrandom then starts on a destroyed database, so readseq sees
    // only fillrandom's distinct keys (about 63 % of them), as after db_bench's fillrandom.
    let v = json(&["bench", "--fs", "mem", "--num", "4000", "--benchmarks", "fillseq,fillrandom,readseq", "--json"]);
    let phases = v["phases"].as_array().unwrap();
    let read = phases[2]["ops"].as_u64().unwrap();
    assert!((2300..2800).contains(&read), "readseq read {read} records of 4000 keys");
    // The totals still cover both fills.
    assert_eq!(v["host"]["user_bytes"].as_u64().unwrap(), 2 * 4000 * 116);
    let v = json(&["bench", "--fs", "mem", "--num", "4000", "--benchmarks", "fillseq,overwrite,readseq", "--json"]);
    assert_eq!(v["phases"][2]["ops"].as_u64().unwrap(), 4000, "overwrite keeps the database");
}

/// Every simulated second of the foreground lane is accounted for by what it waited for, and a
/// compaction that reads its inputs ahead (the page cache's readahead under LevelDB) waits less
/// for reads than one that reads block by block, for the same flash pages read.
#[test]
fn lanes_account_for_the_simulated_time_and_readahead_shortens_compaction_reads() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("readahead.toml");
    std::fs::write(
        &file,
        r#"
title = "readahead"
[engine]
write_buffer_size = "256KiB"
max_file_size = "256KiB"
max_bytes_for_level_base = "1MiB"
[device]
fs = "sim"
preset = "femu"
capacity = "256MiB"
[workload]
name = "fillrandom"
data = "16MiB"
value_size = 1000
seed = 7
[[variant]]
name = "readahead"
[[variant]]
name = "block by block"
engine = { compaction_readahead = 0 }
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = flashkv(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let runs = set["runs"].as_array().unwrap();
    let lane = |r: &serde_json::Value, l: &str, k: &str| r["host"]["lanes"][l][k].as_u64().unwrap();
    for r in runs {
        let parts = [
            "read_ns",
            "write_ns",
            "metadata_ns",
            "device_ns",
            "stall_ns",
            "idle_ns",
            "gc_ns",
            "cpu_ns",
            "cpu_queue_ns",
        ];
        let fg: u64 = parts.iter().map(|k| lane(r, "foreground", k)).sum();
        let sim_ns = r["host"]["sim_time_s"].as_f64().unwrap() * 1e9;
        assert!((fg as f64 - sim_ns).abs() < 1e3, "foreground parts {fg} ns, simulated time {sim_ns} ns");
        let jobs: f64 = r["lsm"]["levels"].as_array().unwrap().iter().map(|l| l["job_s"].as_f64().unwrap()).sum();
        let bg: u64 = parts.iter().map(|k| lane(r, "background", k)).sum();
        assert!(jobs > 0.0 && jobs * 1e9 <= bg as f64 + 1e3, "jobs {jobs} s inside the background lane's {bg} ns");
    }
    let (ahead, blockwise) = (&runs[0], &runs[1]);
    let reads = |r: &serde_json::Value| lane(r, "background", "read_ns") as f64;
    assert!(
        reads(ahead) * 2.0 < reads(blockwise),
        "compaction read waits: {} ns with readahead, {} ns block by block",
        reads(ahead),
        reads(blockwise)
    );
    let pages = |r: &serde_json::Value| r["flash"]["read_bytes"].as_f64().unwrap();
    assert!(pages(ahead) < pages(blockwise) * 1.2, "readahead reads about the same pages");
}

/// Query traces RocksDB's db_bench wrote (tests/data/rocksdb, with the commands that made them):
/// replayed from an empty store, the gets find what db_bench's found, on the engine and on a
/// key-value SSD; seeks are one-record scans and a multi-get a read per key.
#[test]
fn rocksdb_query_traces_replay_as_db_bench_ran_them() {
    let dir = tempfile::tempdir().unwrap();
    let data = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/rocksdb");
    let run = |name: &str, engine: &str, trace: &str| -> serde_json::Value {
        let path = dir.path().join(format!("{name}.toml"));
        let text = format!(
            "title = \"t\"\n{engine}[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"kv-trace\"\n\
             kv_trace = \"{data}/{trace}.trace\"\n"
        );
        std::fs::write(&path, text).unwrap();
        let out = dir.path().join(name);
        let (code, _, err) = flashkv(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {err}");
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
        v["runs"][0]["phases"][0].clone()
    };
    let count = |p: &serde_json::Value, kind: &str| p["latency_by_kind"][kind]["count"].as_u64();
    // reads:200 writes:200 total:400 found:34
    for engine in ["", "engine = \"plsc\"\n"] {
        let p = run(&format!("rrwr{}", engine.len()), engine, "readrandomwriterandom");
        assert_eq!((p["ops"].as_u64(), count(&p, "read"), count(&p, "insert")), (Some(400), Some(200), Some(200)));
        assert_eq!(p["found"], 34, "{engine}");
        // The puts carry the trace's own 16-byte keys and 24-byte values.
        assert_eq!(p["user_bytes"], 200 * (16 + 24), "{engine}");
    }
    let p = run("seek", "", "seekrandom");
    assert_eq!((p["ops"].as_u64(), count(&p, "scan")), (Some(50), Some(50)));
    let p = run("multiget", "", "multireadrandom");
    assert_eq!((p["ops"].as_u64(), count(&p, "read")), (Some(48), Some(48)));
}

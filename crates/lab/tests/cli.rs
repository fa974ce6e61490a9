//! The `flashkv` binary as a user runs it: results, JSON names, and clear errors for bad input.

mod common;
use common::flashkv;

const SMALL: &[&str] =
    &["ftl", "--capacity", "256MiB", "--channels", "1", "--chips", "1", "--spare-factor", "0.2", "--writes", "3"];

#[test]
fn ftl_json_has_the_accounting_names() {
    let mut args = SMALL.to_vec();
    args.push("--json");
    let (code, out, err) = flashkv(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON on stdout");
    for key in [
        "/ftl/write_amplification",
        "/flash/erases",
        "/flash/gc_copied_pages",
        "/host/sim_time_s",
        "/timing/wall_time_s",
        "/timing/nand_ops_per_wall_sec",
    ] {
        assert!(v.pointer(key).is_some(), "missing {key} in {out}");
    }
    // Raw page writes: the host's writes are the user's, and the whole run's flash write
    // amplification would divide the warmup's programs by user bytes that leave it out.
    for key in ["/host/write_amplification", "/flash/write_amplification"] {
        assert!(v.pointer(key).is_none(), "{key} does not apply to page writes: {out}");
    }
    // The measured part's write amplification, beside greedy GC's large-block limit.
    let wa = v["ftl"]["write_amplification"].as_f64().unwrap();
    let theory = v["ftl"]["theory_write_amplification"].as_f64().unwrap();
    assert!(wa > 1.0 && (wa / theory - 1.0).abs() < 0.25, "WA {wa} vs theory {theory}");
    assert!(v["flash"]["erases"].as_u64().unwrap() > 0);
}

/// The geometry as MQSim's users write it: the device's size from its blocks per plane, and the
/// GC reserve, in an experiment file as on `flashkv ftl`'s command line.
#[test]
fn the_geometry_and_the_gc_reserve_are_parameters() {
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["ftl", "--channels", "2", "--chips", "1", "--dies", "1", "--planes", "2"];
        args.extend(["--pages-per-block", "64", "--blocks-per-plane", "256", "--writes", "2", "--json"]);
        args.extend(extra);
        let (code, out, err) = flashkv(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).expect("JSON on stdout")
    };
    let one = run(&[]);
    // 2 channels x 2 planes x 256 blocks x 64 pages of 4 KiB: 256 MiB.
    assert!(one["device"].as_str().unwrap().contains("256 MiB"), "{}", one["device"]);
    let eight = run(&["--gc-reserve", "8"]);
    let spare = |v: &serde_json::Value| v["flash"]["effective_spare_factor"].as_f64().unwrap();
    assert!(
        spare(&eight) < spare(&one),
        "a larger reserve holds more spare blocks idle: {} vs {}",
        spare(&eight),
        spare(&one)
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("geometry.toml");
    std::fs::write(
        &file,
        "title = \"g\"\n[device]\nchannels = 2\nchips = 1\ndies = 1\nplanes = 2\npages_per_block = 64\n\
         blocks_per_plane = 256\ngc_reserve = 8\n[workload]\nname = \"pages\"\npages = { writes = 2.0 }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = flashkv(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let from_file = &set["runs"][0];
    for key in ["/ftl/write_amplification", "/flash/erases", "/flash/gc_copied_pages", "/flash/effective_spare_factor"]
    {
        assert_eq!(from_file.pointer(key), eight.pointer(key), "{key}: the file and the flags make the same device");
    }
}

/// `flashkv run` keeps its finished runs: started again on the same folder it reads them back (the
/// wall-clock timings are the first runs', exactly), and `--fresh` runs them again.
#[test]
fn an_experiment_run_again_reads_its_finished_runs_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("two.toml");
    std::fs::write(
        &file,
        "title = \"two\"\n[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"fillrandom\"\nrecords = 2000\n\
         [[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nworkload = { value_size = 200 }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend(extra);
        let (code, _, err) = flashkv(&args);
        assert_eq!(code, 0, "{err}");
        let read = |name: &str| std::fs::read_to_string(out.join(name)).unwrap();
        (read("results.json"), read("timing.json"))
    };
    let first = run(&[]);
    assert_eq!(std::fs::read_dir(out.join("runs")).unwrap().count(), 2, "a file per finished run");
    let again = run(&[]);
    assert!(again.0 == first.0 && again.1 == first.1, "the same results and the first runs' timings");
    let fresh = run(&["--fresh"]);
    assert!(fresh.0 == first.0, "the same results: the runs are in simulated time");
    assert!(fresh.1 != first.1, "new runs take their own wall time: {}", fresh.1);
}

#[test]
fn in_plane_gc_copies_back_unless_copyback_is_off() {
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["ftl", "--capacity", "256MiB", "--channels", "2", "--chips", "1"];
        args.extend(["--spare-factor", "0.2", "--writes", "3", "--json"]);
        args.extend(extra);
        let (code, out, err) = flashkv(&args);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).expect("JSON on stdout")
    };
    let n = |v: &serde_json::Value, k: &str| v["flash"][k].as_u64().unwrap_or_else(|| panic!("no {k}"));
    let spread = run(&[]);
    assert!(n(&spread, "gc_copied_pages") > 0);
    // Only a victim taken to refill the device-wide reserve finds room in its own plane.
    let (cb, copied) = (n(&spread, "copybacks"), n(&spread, "gc_copied_pages"));
    assert!(cb * 10 < copied, "femu's GC spreads its copies over the other planes: {cb} of {copied}");
    let in_plane = run(&["--gc-destination", "in-plane"]);
    assert!(n(&in_plane, "copybacks") * 10 > n(&in_plane, "gc_copied_pages") * 9);
    let off = run(&["--gc-destination", "in-plane", "--no-copyback"]);
    assert_eq!(n(&off, "copybacks"), 0);
    assert_eq!(n(&off, "gc_copied_pages"), n(&in_plane, "gc_copied_pages"));
}

#[test]
fn the_same_seed_gives_the_same_simulation() {
    let mut args = SMALL.to_vec();
    args.extend(["--json", "--pattern", "zipf:0.9", "--seed", "5"]);
    let strip = |s: String| -> serde_json::Value {
        let mut v: serde_json::Value = serde_json::from_str(&s).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("timing");
        v
    };
    let a = strip(flashkv(&args).1);
    let b = strip(flashkv(&args).1);
    assert_eq!(a, b);
    args.pop();
    args.push("6");
    assert_ne!(a, strip(flashkv(&args).1), "a different seed must change the run");
}

#[test]
fn ftl_table_is_readable() {
    let (code, out, err) = flashkv(SMALL);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("write amplification") && out.contains("large-block limit, effective spare"), "{out}");
}

#[test]
fn bad_input_is_a_clear_error() {
    for (args, needle) in [
        (vec!["ftl", "--preset", "nope"], "femu, plsc, kvftl"),
        (vec!["ftl", "--capacity", "0"], "--capacity"),
        (vec!["ftl", "--capacity", "12XB"], "--capacity"),
        (vec!["ftl", "--pattern", "zipf:abc"], "--pattern"),
        (vec!["ftl", "--gc", "lru"], "greedy, cost-benefit, fifo"),
        (vec!["ftl", "--gc-destination", "nowhere"], "spread, in-plane"),
        (vec!["ftl", "--spare-factor", "1.5"], "--spare-factor"),
        (vec!["ftl", "--capacity", "64MiB", "--spare-factor", "0.01"], "--spare-factor"),
        (vec!["ftl", "--fs", "mem"], "page writes go to a simulated block SSD"),
        (vec!["ftl", "--channels", "0"], "--channels: must be at least 1"),
        (vec!["ftl", "--capacity", "1GiB", "--blocks-per-plane", "64"], "give capacity or blocks_per_plane"),
        (vec!["ftl", "--blocks-per-plane", "0"], "--blocks-per-plane: must be at least 1"),
        (vec!["ftl", "--gc-reserve", "0"], "--gc-reserve: GC needs at least one reserved free block"),
        (vec!["bench", "--page-cache", "12XB"], "--page-cache"),
        (vec!["bench", "--fs", "mem", "--page-cache", "1MiB"], "only a simulated file system"),
        (vec!["bench", "--fs", "mem", "--direct-reads"], "does not apply to fs mem"),
        (vec!["bench", "--engine", "kvftl", "--direct-writes"], "does not apply to engine kvftl"),
        (vec!["bench", "--cpu", "no-such-calibration.toml"], "neither calibrated, off, nor a calibration file"),
        (vec!["bench", "--host-cores", "0"], "--host-cores: at least 1"),
        (vec!["bench", "--engine", "kvftl", "--cpu", "off"], "--cpu: engine kvftl is a key-value SSD"),
    ] {
        let (code, _, err) = flashkv(&args);
        assert_eq!(code, 2, "{args:?} should fail");
        assert!(err.contains(needle), "{args:?}: '{err}' does not mention {needle}");
    }
}

/// `--page-cache` reports what the cache did, and its hits spare the device: on both simulated
/// file systems, a run with a 2 MiB cache reads the device less than without one; with the
/// engine's files opened for direct I/O, it reads and writes what it does without one.
#[test]
fn the_page_cache_is_reported_and_saves_device_reads() {
    let run = |fs: &str, cache: &str, direct: &[&'static str]| -> serde_json::Value {
        let args = ["bench", "--fs", fs, "--benchmarks", "fillrandom,readrandom", "--num", "100000"];
        let mut args = args.to_vec();
        // Flash time alone: with host CPU the runs' compactions interleave differently with and
        // without a cache, and this test is about what the cache itself saves.
        args.extend(["--capacity", "256MiB", "--page-cache", cache, "--cpu", "off", "--json"]);
        args.extend(direct);
        let (code, out, err) = flashkv(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).expect("JSON on stdout")
    };
    for fs in ["sim", "zone"] {
        let (off, on) = (run(fs, "0", &[]), run(fs, "2MiB", &[]));
        assert!(off.pointer("/fs/page_cache").is_none(), "{fs}: no cache, no page_cache");
        let c = &on["fs"]["page_cache"];
        assert_eq!(c["capacity_bytes"], 2 << 20);
        let (hits, misses) = (c["hits"].as_u64().unwrap(), c["misses"].as_u64().unwrap());
        assert!(hits > 0 && misses > 0, "{fs}: {c}");
        assert!(c["written_back_bytes"]["total"].as_u64().unwrap() > 0, "{fs}: {c}");
        let read = |v: &serde_json::Value| v["flash"]["read_bytes"].as_u64().unwrap();
        assert!(read(&on) < read(&off), "{fs}: {} device bytes read with the cache, {} without", read(&on), read(&off));
        let direct = run(fs, "2MiB", &["--direct-reads", "--direct-writes"]);
        for field in ["/flash/program_bytes", "/host/write_bytes"] {
            assert_eq!(direct.pointer(field), off.pointer(field), "{fs}: {field} under direct I/O");
        }
        // CURRENT, not a data file, is read through the cache: a page at most.
        assert!(read(&off).abs_diff(read(&direct)) <= 4096, "{fs}: {} vs {}", read(&direct), read(&off));
        assert!(direct["fs"]["page_cache"]["readahead_pages"] == 0, "{fs}: {}", direct["fs"]["page_cache"]);
    }
}

/// The host CPU model: by default the built-in calibration charges the engine's work to its lanes
/// (its counts in `host_cpu`, its time in each lane's `cpu_ns`); `--cpu off` charges nothing and
/// counts the same work; one shared core makes the lanes wait for it; and a file `flashkv calibrate`
/// writes is a model `--cpu` takes.
#[test]
fn the_host_cpu_model_charges_the_engines_work() {
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["bench", "--benchmarks", "fillrandom,readrandom", "--num", "100000", "--json"];
        args.extend(extra);
        let (code, out, err) = flashkv(&args);
        assert_eq!(code, 0, "{args:?}: {err}");
        serde_json::from_str(&out).expect("JSON on stdout")
    };
    let (on, off) = (run(&[]), run(&["--cpu", "off"]));
    let cpu = |v: &serde_json::Value, lane: &str| v["host"]["lanes"][lane]["cpu_ns"].as_u64().unwrap();
    assert!(cpu(&on, "foreground") > 0 && cpu(&on, "background") > 0, "{}", on["host"]["lanes"]);
    assert_eq!((cpu(&off, "foreground"), cpu(&off, "background")), (0, 0));
    assert_eq!(on["host"]["cpu"]["foreground"]["get"], 100000);
    assert_eq!(on["host"]["cpu"]["foreground"]["insert"], off["host"]["cpu"]["foreground"]["insert"]);
    assert!(on["host"]["cpu"]["model"].as_str().unwrap().contains("calibrated on"), "{}", on["host"]["cpu"]);
    let one = run(&["--host-cores", "1"]);
    let queued = one["host"]["lanes"]["foreground"]["cpu_queue_ns"].as_u64().unwrap()
        + one["host"]["lanes"]["background"]["cpu_queue_ns"].as_u64().unwrap();
    assert!(queued > 0, "one core for two lanes: {}", one["host"]["lanes"]);

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cal.toml");
    let f = file.to_str().unwrap();
    let (code, out, err) = flashkv(&["calibrate", "--data", "1MiB", "--out", f]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("held-out error"), "{out}");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("[host.cpu]") && text.contains("r_squared"), "{text}");
    let mine = run(&["--cpu", f]);
    assert!(cpu(&mine, "foreground") > 0, "{}", mine["host"]["lanes"]);
    assert!(mine["host"]["cpu"]["model"].as_str().unwrap().contains("own cost model"), "{}", mine["host"]["cpu"]);
}

/// `--out` naming an existing file is refused before any work: nothing runs, nothing prints.
#[test]
fn an_out_path_that_is_a_file_is_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("taken");
    std::fs::write(&file, b"mine").unwrap();
    let f = file.to_str().unwrap();
    for args in [
        vec!["bench", "--fs", "mem", "--num", "2000", "--out", f],
        vec!["ftl", "--capacity", "256MiB", "--writes", "2", "--out", f],
        vec!["ycsb", "--fs", "mem", "--records", "1000", "--ops", "1000", "--out", f],
        vec!["demo", "--out", f],
        vec!["run", "experiments/demo.toml", "--out", f],
        vec!["repro", "remapcom", "--scale", "tiny", "--out", f],
    ] {
        let (code, out, err) = flashkv(&args);
        assert_eq!(code, 2, "{args:?} should fail");
        assert!(err.contains(f) && err.contains("is not a folder"), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?} ran before refusing: {out}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
}

/// `--out` where no result folder can be written (under a file; in a read-only folder, where the
/// permission bits hold: not for root) fails before any work, in under a second, and leaves
/// nothing behind.
#[test]
fn an_out_folder_that_cannot_be_written_is_refused_in_under_a_second() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"mine").unwrap();
    let mut places = vec![file.join("results"), file.join("deeper").join("results")];
    let read_only = dir.path().join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
    // Root writes through permission bits: the read-only cases then prove nothing, and are left out.
    if std::fs::write(read_only.join("probe"), b"").is_err() {
        places.extend([read_only.clone(), read_only.join("results")]);
    }
    for place in &places {
        let f = place.to_str().unwrap();
        for args in [
            vec!["bench", "--fs", "mem", "--num", "200000", "--out", f],
            vec!["ftl", "--capacity", "1GiB", "--writes", "4", "--out", f],
            vec!["ycsb", "--fs", "mem", "--records", "100000", "--ops", "100000", "--out", f],
            vec!["mixgraph", "--fs", "mem", "--out", f],
            vec!["demo", "--out", f],
            vec!["run", "experiments/demo.toml", "--out", f],
            vec!["repro", "remapcom", "--scale", "tiny", "--out", f],
        ] {
            let start = std::time::Instant::now();
            let (code, out, err) = flashkv(&args);
            let took = start.elapsed();
            assert_eq!(code, 2, "{args:?} should fail: {out}");
            assert!(err.contains(f) && err.contains("cannot write a result folder there"), "{args:?}: {err}");
            assert!(out.is_empty(), "{args:?} ran before refusing: {out}");
            assert!(took < std::time::Duration::from_secs(1), "{args:?} took {took:?} to fail");
        }
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"mine");
    std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o755)).unwrap();
    let left: Vec<_> = std::fs::read_dir(&read_only).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.iter().all(|n| n == "probe"), "left behind: {left:?}");
}

/// `flashkv repair DIR` rebuilds a database that lost CURRENT and its MANIFEST, and says what it
/// kept; a missing directory is a one-line error.
#[test]
fn repair_rebuilds_a_database_without_current_or_manifest() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let fs: Arc<dyn storage::Fs> = Arc::new(storage::PosixFs::new(dir.path()).unwrap());
    let opts = lsm::Options { create_if_missing: true, write_buffer_size: 32 << 10, ..lsm::Options::default() };
    let db = lsm::Db::open(storage::Env::new(Arc::clone(&fs)), "db", opts.clone()).unwrap();
    for i in 0..3000u32 {
        db.put(&lsm::WriteOptions::default(), format!("k{i:05}").as_bytes(), &[i as u8; 50]).unwrap();
    }
    db.close().unwrap();
    for name in fs.list("db").unwrap() {
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            fs.remove(&format!("db/{name}")).unwrap();
        }
    }
    let (code, out, err) = flashkv(&["repair", dir.path().join("db").to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("SST(s) kept with 3000 entries"), "{out}");
    let db = lsm::Db::open(storage::Env::new(fs), "db", lsm::Options::default()).unwrap();
    for i in (0..3000u32).step_by(97) {
        let got = db.get(&lsm::ReadOptions::default(), format!("k{i:05}").as_bytes()).unwrap();
        assert_eq!(got, Some(vec![i as u8; 50]), "key {i}");
    }
    let (code, _, err) = flashkv(&["repair", dir.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("nowhere") && err.lines().count() == 1, "{err}");
}

/// Every file under `dir` with its bytes, and every folder: what a command must leave unchanged.
fn snapshot(dir: &std::path::Path) -> Vec<(std::path::PathBuf, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.push((path.clone(), None));
            out.extend(snapshot(&path));
        } else {
            out.push((path.clone(), Some(std::fs::read(&path).unwrap())));
        }
    }
    out.sort();
    out
}

/// `flashkv repair` pointed at a folder that holds no database (empty; the folder `bench --fs
/// posix:DIR` was given, whose database is in DIR/db; a folder of experiment files) fails naming
/// what it looked for, and writes nothing there.
#[test]
fn repair_refuses_a_folder_without_a_database_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let empty = root.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let others = root.path().join("experiments");
    std::fs::create_dir(&others).unwrap();
    std::fs::write(others.join("demo.toml"), "title = \"demo\"\n").unwrap();
    std::fs::write(others.join("notes.txt"), "not a database\n").unwrap();
    let bench = root.path().join("bench");
    let (code, _, err) = flashkv(&["bench", "--fs", &format!("posix:{}", bench.display()), "--num", "2000"]);
    assert_eq!(code, 0, "{err}");
    assert!(bench.join("db").join("CURRENT").exists(), "bench --fs posix:DIR keeps its database in DIR/db");
    for dir in [&empty, &others, &bench] {
        let before = snapshot(dir);
        let (code, out, err) = flashkv(&["repair", dir.to_str().unwrap()]);
        assert_eq!(code, 2, "{}: {out}", dir.display());
        assert!(err.contains(dir.to_str().unwrap()) && err.contains("CURRENT") && err.contains("MANIFEST"), "{err}");
        assert!(err.contains(".ldb") && err.contains(".log"), "{err}");
        assert_eq!(snapshot(dir), before, "{}: the repair wrote into it", dir.display());
    }
}

/// Sizes mean what their units say: `4GB` is 4,000,000,000 bytes and `4GiB` 4,294,967,296, on the
/// command line and in experiment files alike, and printed back with their unit; a spelling that
/// could be either (`4G`, `4gib`, `4KB`) is refused, the error naming both families.
#[test]
fn decimal_and_binary_units_mean_what_they_say() {
    // One plane of 125 pages of 2 KiB a block: 4,000,000,000 bytes are 15,625 whole blocks, so
    // the device is exactly the size asked for; with a spare factor of 0.2, the fill writes
    // 3,200,000,000 bytes.
    let geometry = ["--page-size", "2KiB", "--pages-per-block", "125", "--channels", "1", "--chips", "1"];
    let run = |capacity: &str| -> serde_json::Value {
        let mut args = vec!["ftl", "--capacity", capacity, "--dies", "1", "--planes", "1"];
        args.extend(geometry);
        args.extend(["--spare-factor", "0.2", "--writes", "0.01", "--json"]);
        let (code, out, err) = flashkv(&args);
        assert_eq!(code, 0, "{capacity}: {err}");
        serde_json::from_str(&out).expect("JSON on stdout")
    };
    let fill = |v: &serde_json::Value| v["phases"][0]["user_bytes"].as_u64().unwrap();
    let gb = run("4GB");
    assert_eq!(fill(&gb), 3_200_000_000, "a 4,000,000,000-byte device, 0.2 of it spare");
    assert!(gb["device"].as_str().unwrap().contains(", 4 GB,"), "{}", gb["device"]);
    let gib = run("4GiB");
    // 4 GiB is 16,777 whole blocks of 256,000 bytes (4,294,912,000 bytes).
    assert_eq!(fill(&gib), 16_777 * 256_000 / 5 * 4);
    assert!(gib["device"].as_str().unwrap().contains(", 4 GiB,"), "{}", gib["device"]);
    assert_eq!(run("4000000000")["phases"], gb["phases"], "4GB is 4,000,000,000 bytes");
    assert_eq!(run("4 GB")["phases"], gb["phases"], "a space before the unit is allowed");

    let dir = tempfile::tempdir().unwrap();
    for bad in ["4G", "4gib", "4KB", "4 gb"] {
        let flags = [
            vec!["ftl", "--capacity", bad],
            vec!["bench", "--fs", "mem", "--page-cache", bad],
            vec!["bench", "--fs", "mem", "--write-buffer-size", bad],
            vec!["ycsb", "--fs", "mem", "--value-size", bad],
        ];
        let file = dir.path().join("sizes.toml");
        std::fs::write(
            &file,
            format!("title = \"t\"\n[device]\ncapacity = \"{bad}\"\n[workload]\nname = \"fillrandom\"\nrecords = 10\n"),
        )
        .unwrap();
        let out = dir.path().join("out");
        let from_file = vec!["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()];
        for args in flags.iter().chain([&from_file]) {
            let (code, stdout, err) = flashkv(args);
            assert_eq!(code, 2, "{args:?} must be refused: {stdout}");
            assert!(
                err.contains("decimal kB, MB, GB, TB") && err.contains("binary KiB, MiB, GiB, TiB"),
                "{args:?}: {err}"
            );
        }
    }
}

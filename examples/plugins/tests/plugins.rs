//! The example plug-in as its user runs it: built outside flashkv's crates, selected by name on
//! the command line and in an experiment file, and named among the accepted ones.

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashkv-plugins")).args(args).output().expect("run flashkv-plugins");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

const FTL: [&str; 11] = [
    "ftl",
    "--capacity",
    "256MiB",
    "--channels",
    "1",
    "--spare-factor",
    "0.1",
    "--writes",
    "3",
    "--pattern",
    "zipf:0.9",
];

fn ftl(gc: &str) -> serde_json::Value {
    let (code, out, err) = run(&[&FTL[..], &["--gc", gc, "--json"]].concat());
    assert_eq!(code, 0, "{gc}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn the_registered_gc_policy_runs_by_name() {
    let cat = ftl("cost-age-time");
    let greedy = ftl("greedy");
    assert!(cat["device"].as_str().unwrap().contains("GC cost-age-time"), "{}", cat["device"]);
    let wa = |v: &serde_json::Value| v["ftl"]["write_amplification"].as_f64().unwrap();
    assert!(wa(&cat) > 1.0 && wa(&cat) != wa(&greedy), "cost-age-time {} vs greedy {}", wa(&cat), wa(&greedy));
    // An experiment file selects it the same way.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gc.toml");
    std::fs::write(
        &file,
        "title = \"gc\"\n[device]\ncapacity = \"256MiB\"\nchannels = 1\nspare_factor = 0.1\n\
         [workload]\nname = \"pages\"\npages = { writes = 3.0, pattern = \"zipf:0.9\" }\n\
         [[variant]]\nname = \"greedy\"\n[[variant]]\nname = \"cat\"\ndevice = { gc = \"cost-age-time\" }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = run(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let runs = set["runs"].as_array().unwrap();
    assert_eq!(runs[1]["ftl"]["write_amplification"], cat["ftl"]["write_amplification"]);
    assert_eq!(runs[0]["ftl"]["write_amplification"], greedy["ftl"]["write_amplification"]);
}

/// The registered compaction strategy: the same database as LevelDB's leveled compaction, by
/// different compactions. Both run with LevelDB's level-0 triggers (`--profile leveldb`): under
/// flashkv's (level 0 emptied in fewer, larger compactions) the two wrote the same bytes per level
/// at this size.
#[test]
fn the_registered_compaction_strategy_runs_by_name() {
    let bench = |compaction: &str| -> serde_json::Value {
        let args = [
            "bench",
            "--benchmarks",
            "fillrandom",
            "--num",
            "150000",
            "--value-size",
            "400",
            "--capacity",
            "512MiB",
            "--profile",
            "leveldb",
        ];
        let (code, out, err) = run(&[&args[..], &["--compaction", compaction, "--json"]].concat());
        assert_eq!(code, 0, "{compaction}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let (mine, leveled) = (bench("min-overlap"), bench("leveled"));
    assert!(mine["engine"].as_str().unwrap().contains("min-overlap compaction"), "{}", mine["engine"]);
    let written = |v: &serde_json::Value| -> Vec<u64> {
        v["lsm"]["levels"].as_array().unwrap().iter().map(|l| l["bytes_written"].as_u64().unwrap()).collect()
    };
    assert!(written(&leveled)[2] > 0, "compactions ran into level 2");
    // Level 1 to 2 is where the files it picks differ: fewer level-2 bytes rewritten.
    assert!(written(&mine)[2] < written(&leveled)[2], "{:?} vs {:?}", written(&mine), written(&leveled));
    assert_eq!(mine["phases"][0]["user_bytes"], leveled["phases"][0]["user_bytes"]);
}

/// The registered zone placement: the same data as the shared stream, in other zones.
#[test]
fn the_registered_zone_placement_runs_by_name() {
    let bench = |policy: &str| -> serde_json::Value {
        let args = ["bench", "--fs", "zone", "--capacity", "1GiB", "--benchmarks", "fillrandom", "--num", "150000"];
        let (code, out, err) = run(&[&args[..], &["--value-size", "400", "--zone-policy", policy, "--json"]].concat());
        assert_eq!(code, 0, "{policy}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let (mine, shared) = (bench("hot-cold"), bench("shared"));
    assert!(mine["device"].as_str().unwrap().contains("hot-cold placement"), "{}", mine["device"]);
    assert_eq!(mine["phases"][0]["user_bytes"], shared["phases"][0]["user_bytes"]);
    assert_ne!(mine["fs"]["zones"]["resets"], serde_json::Value::Null);
    assert_ne!(mine["fs"]["zones"], shared["fs"]["zones"], "two SST streams fill zones differently from one");
}

/// The registered FTL: a random overwrite of a full block merges it whole (write amplification
/// = pages per block), and the engine on a file system on it finds what it finds on the
/// page-mapped FTL.
#[test]
fn the_registered_ftl_runs_by_name() {
    let pages = |ftl: &str| -> serde_json::Value {
        let args = ["ftl", "--capacity", "64MiB", "--pages-per-block", "64", "--writes", "1", "--pattern", "uniform"];
        let (code, out, err) = run(&[&args[..], &["--ftl", ftl, "--json"]].concat());
        assert_eq!(code, 0, "{ftl}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let (mine, page) = (pages("block-map"), pages("page"));
    assert!(mine["device"].as_str().unwrap().contains("block-map FTL"), "{}", mine["device"]);
    assert_eq!(mine["ftl"]["write_amplification"], 64.0);
    assert!(page["ftl"]["write_amplification"].as_f64().unwrap() < 10.0, "{}", page["ftl"]);
    let bench = |ftl: &str| -> serde_json::Value {
        let args = ["bench", "--capacity", "256MiB", "--benchmarks", "fillrandom,readrandom", "--num", "20000"];
        let (code, out, err) = run(&[&args[..], &["--ftl", ftl, "--json"]].concat());
        assert_eq!(code, 0, "{ftl}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let (mine, page) = (bench("block-map"), bench("page"));
    assert_eq!(mine["phases"][1]["found"], page["phases"][1]["found"]);
    assert_eq!(mine["host"]["user_bytes"], page["host"]["user_bytes"]);
    // An experiment file selects it the same way.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ftl.toml");
    std::fs::write(
        &file,
        "title = \"ftl\"\n[device]\ncapacity = \"64MiB\"\npages_per_block = 64\nftl = \"block-map\"\n\
         [workload]\nname = \"pages\"\npages = { writes = 1.0, pattern = \"uniform\" }\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = run(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(set["runs"][0]["ftl"]["write_amplification"], 64.0);
    // A zoned device has no FTL to replace.
    let (code, _, err) = run(&["bench", "--fs", "zone", "--ftl", "block-map", "--num", "1000"]);
    assert_eq!(code, 2);
    assert!(err.contains("--ftl: applies to a simulated block SSD (fs = sim), not to 'zone'"), "{err}");
}

/// The registered key-value SSD design: db_bench's gets find what they find on the PLSC-tree,
/// from the command line and from an experiment file.
#[test]
fn the_registered_kv_ssd_runs_by_name() {
    let bench = |engine: &str| -> serde_json::Value {
        let args = ["bench", "--capacity", "256MiB", "--benchmarks", "fillrandom,readrandom", "--num", "5000"];
        let (code, out, err) = run(&[&args[..], &["--engine", engine, "--json"]].concat());
        assert_eq!(code, 0, "{engine}: {err}");
        serde_json::from_str(&out).unwrap()
    };
    let (mine, plsc) = (bench("hash-kv"), bench("plsc"));
    assert!(mine["engine"].as_str().unwrap().contains("hash-kv"), "{}", mine["engine"]);
    let found = &mine["phases"][1]["found"];
    assert!(found.as_u64().unwrap() > 2000, "{found}");
    assert_eq!(found, &plsc["phases"][1]["found"]);
    // A page per pair: 5000 puts program at least 5000 pages.
    assert!(mine["flash"]["program_bytes"].as_u64().unwrap() >= 5000 * 4096, "{}", mine["flash"]["program_bytes"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kv.toml");
    std::fs::write(
        &file,
        "title = \"kv\"\n[engine]\nname = \"hash-kv\"\n[device]\ncapacity = \"256MiB\"\n\
         [workload]\nname = \"fillrandom\"\nrecords = 5000\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let (code, _, err) = run(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(set["runs"][0]["phases"][0]["ops"], 5000);
}

#[test]
fn an_unknown_name_lists_the_registered_ones() {
    let (code, _, err) = run(&["ftl", "--gc", "lru"]);
    assert_eq!(code, 2);
    assert!(err.contains("greedy, cost-benefit, fifo, cost-age-time"), "{err}");
    let (code, _, err) = run(&["bench", "--compaction", "tiered"]);
    assert_eq!(code, 2);
    assert!(err.contains("leveled, gear, ll, min-overlap"), "{err}");
    let (code, _, err) = run(&["bench", "--fs", "zone", "--zone-policy", "per-file"]);
    assert_eq!(code, 2);
    assert!(err.contains("shared, per-level, per-window, lifetime, hot-cold"), "{err}");
    let (code, _, err) = run(&["ftl", "--ftl", "hybrid"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown FTL 'hybrid'; accepted: page, block-map"), "{err}");
    let (code, _, err) = run(&["bench", "--engine", "hash-table"]);
    assert_eq!(code, 2);
    assert!(err.contains("kvftl-ws, dftl-kv, hash-kv"), "{err}");
}

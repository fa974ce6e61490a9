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

#[test]
fn an_unknown_name_lists_the_registered_ones() {
    let (code, _, err) = run(&["ftl", "--gc", "lru"]);
    assert_eq!(code, 2);
    assert!(err.contains("greedy, cost-benefit, fifo, cost-age-time"), "{err}");
}

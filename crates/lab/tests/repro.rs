//! `flashkv repro`: the RemapCom reproduction at its tiny (test) scale, and on a real reflink XFS.

use std::process::Command;

fn flashkv(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashkv")).args(args).output().expect("run flashkv");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn remapcom_ranges_sit_beside_the_paper() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, stdout, err) =
        flashkv(&["repro", "remapcom", "--scale", "tiny", "--only", "fig15", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.contains("Figure 15") && stdout.contains("paper"), "{stdout}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let runs = set["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 9, "3 ranges x 3 modes");
    let remapped: u64 =
        runs.iter().filter(|r| r["mode"] == "RemapCom").map(|r| r["remapped_pages"].as_u64().unwrap()).sum();
    let baseline: u64 =
        runs.iter().filter(|r| r["mode"] == "Baseline").map(|r| r["remapped_pages"].as_u64().unwrap()).sum();
    assert!(remapped > 0 && baseline == 0, "RemapCom remaps, Baseline does not: {remapped} / {baseline}");
    assert!(out.join("fig15_ranges.svg").exists());
}

#[test]
fn unknown_parts_and_scales_are_named() {
    let (code, _, err) = flashkv(&["repro", "remapcom", "--only", "fig99"]);
    assert_eq!(code, 2);
    assert!(err.contains("fig9-11"), "{err}");
    let (code, _, err) = flashkv(&["repro", "remapcom", "--scale", "huge"]);
    assert_eq!(code, 2);
    assert!(err.contains("small, paper"), "{err}");
    let (code, _, err) = flashkv(&["repro", "plsc"]);
    assert_eq!(code, 2);
    assert!(err.contains("remapcom"), "{err}");
}

/// On a real reflink XFS, RemapCom writes fewer bytes to the block device than Baseline at 4 KiB.
#[test]
fn remapcom_on_xfs_writes_less_to_the_device() {
    if let Some(why) = storage_unavailable() {
        assert!(std::env::var("FLASHKV_REQUIRE_XFS").as_deref() != Ok("1"), "FLASHKV_REQUIRE_XFS=1 but: {why}");
        println!("skipped: {why}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x");
    let (code, stdout, err) = flashkv(&["repro", "remapcom-xfs", "--scale", "tiny", "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    println!("{stdout}");
    let set: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let device = |mode: &str, kv: f64| -> u64 {
        set["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["mode"] == mode)
            .nth(if kv > 2000.0 { 1 } else { 0 })
            .map(|r| r["device_bytes_written"].as_u64().unwrap())
            .unwrap()
    };
    let (off, full) = (device("Baseline", 4096.0), device("RemapCom", 4096.0));
    assert!(full < off, "at 4 KiB RemapCom wrote {full} device bytes, Baseline {off}");
}

fn storage_unavailable() -> Option<String> {
    // Same conditions as storage::loop_xfs::LoopXfs::unavailable, checked from outside the binary.
    if !std::path::Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control".into());
    }
    let root = Command::new("id").arg("-u").output().ok().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root != Some(true) {
        return Some("not root".into());
    }
    let found =
        |t: &str| ["/sbin", "/usr/sbin", "/bin", "/usr/bin"].iter().any(|d| std::path::Path::new(d).join(t).exists());
    for t in ["mkfs.xfs", "losetup", "mount"] {
        if !found(t) {
            return Some(format!("{t} not found"));
        }
    }
    None
}

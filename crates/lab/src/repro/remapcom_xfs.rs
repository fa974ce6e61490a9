//! `flashkv repro remapcom-xfs`: the fillrandom runs of Figure 10 (Baseline, aligned Baseline,
//! RemapCom-Base, RemapCom; 1 KiB and 4 KiB KVs) on PosixFs over a real reflink XFS on a loop
//! device, with the bytes that reached the block device read from the kernel's statistics
//! (`/sys/block/loopN/stat`). A UDB is placed with FICLONERANGE there, so the saving is measured on
//! a real file system, not in simulation. Needs root, xfsprogs and loop devices.

use storage::loop_xfs::LoopXfs;
use workload::db_bench::DbBenchKind;
use workload::ValueSize;

use super::remapcom::{engine, value_for, Mode, DB_BENCH_KEY, MODES, SCALES};
use super::Scale;
use crate::error::{LabError, Result};
use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::result::Timing;
use crate::runner;
use crate::spec::{DeviceSpec, FsKind, RunSpec, WorkloadKind, WorkloadSpec};

const MIB: u64 = 1 << 20;

pub fn run(scale: &str, progress: bool) -> Result<(ResultSet, Vec<Timing>)> {
    if let Some(why) = LoopXfs::unavailable() {
        return Err(LabError::Unavailable(format!("repro remapcom-xfs needs a loop-mounted XFS: {why}")));
    }
    let scale = Scale::parse(scale, &SCALES)?;
    let divisor = scale.divisor();
    let data = scale.size(4u64 << 30);
    let work = std::env::temp_dir().join(format!("flashkv-xfs-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(LabError::io(&work, "create"))?;
    let result = measure(&work, data, &scale, progress);
    let _ = std::fs::remove_dir_all(&work);
    let (rows, series, timings, runs) = result?;
    let set = ResultSet {
        title: "RemapCom on a real reflink XFS (loop device): bytes written to the block device".into(),
        scale: format!(
            "{} per run, fillrandom, engine sizes / {divisor} of the paper's",
            crate::spec::format_size(data)
        ),
        notes: vec![
            "Device bytes are field 7 of /sys/block/loopN/stat (512-byte sectors written) over the whole run, after \
             syncfs: file data, XFS metadata and its log."
                .into(),
            "UDBs are placed with FICLONERANGE (reflink): shared extents, nothing rewritten.".into(),
        ],
        tables: vec![ResultTable {
            name: "device bytes written (MiB)".into(),
            columns: ["KV size B", "mode", "user MiB", "device MiB", "device / user", "cloned MiB", "vs Baseline %"]
                .map(String::from)
                .to_vec(),
            rows,
        }],
        figures: vec![Figure {
            id: "xfs_device_writes".into(),
            title: "Bytes written to the block device per user byte".into(),
            kind: FigureKind::Bar,
            x_label: "KV size (bytes)".into(),
            y_label: "device bytes / user bytes".into(),
            categories: vec!["1024".into(), "4096".into()],
            series,
        }],
        runs,
    };
    Ok((set, timings))
}

type Measured = (Vec<Vec<Cell>>, Vec<Series>, Vec<Timing>, Vec<serde_json::Value>);

fn measure(work: &std::path::Path, data: u64, scale: &Scale, progress: bool) -> Result<Measured> {
    let mut rows = Vec::new();
    let mut timings = Vec::new();
    let mut runs = Vec::new();
    let mut per_mode: Vec<Series> =
        MODES.iter().map(|m| Series { name: m.name().into(), points: Vec::new(), dashed: false }).collect();
    for (ki, kv) in [1024u64, 4096].iter().enumerate() {
        let mut baseline = 0u64;
        for (mi, mode) in MODES.iter().enumerate() {
            // A fresh file system per run, so that every run starts from the same empty device.
            let dir = work.join(format!("{kv}-{mi}"));
            std::fs::create_dir_all(&dir).map_err(LabError::io(&dir, "create"))?;
            let xfs = LoopXfs::new(&dir, (data * 4).max(1 << 30)).map_err(LabError::Unavailable)?;
            let db_dir = xfs.mount_point().join("db");
            let device = DeviceSpec { fs: FsKind::Posix(db_dir), ..DeviceSpec::default() };
            let workload = WorkloadSpec::new(WorkloadKind::db_bench(DbBenchKind::FillRandom), data / kv, 0)
                .with_values(ValueSize::Fixed(value_for(*kv, DB_BENCH_KEY)), workload::ValueData::Generated);
            let spec = RunSpec::new(engine(scale, *mode), device, workload);
            if progress {
                eprintln!("xfs {kv} B: {}", mode.name());
            }
            xfs.syncfs().map_err(LabError::Unavailable)?;
            let before = xfs.bytes_written().map_err(LabError::Unavailable)?;
            let (r, t) = runner::run(&spec, false)?;
            xfs.syncfs().map_err(LabError::Unavailable)?;
            let written = xfs.bytes_written().map_err(LabError::Unavailable)? - before;
            drop(xfs);
            let _ = std::fs::remove_dir_all(&dir);
            if *mode == Mode::Baseline {
                baseline = written;
            }
            let cloned: u64 = r.levels.iter().map(|l| l.bytes_remapped).sum();
            let per_user = written as f64 / r.user_bytes.max(1) as f64;
            per_mode[mi].points.push((ki as f64, per_user));
            rows.push(vec![
                Cell::Number(*kv as f64),
                Cell::Text(mode.name().into()),
                Cell::Number(r.user_bytes as f64 / MIB as f64),
                Cell::Number(written as f64 / MIB as f64),
                Cell::Number(per_user),
                Cell::Number(cloned as f64 / MIB as f64),
                Cell::Number(((written as f64 / baseline.max(1) as f64 - 1.0) * 1000.0).round() / 10.0),
            ]);
            let mut v = serde_json::to_value(&r).map_err(LabError::json("a run's result"))?;
            if let Some(o) = v.as_object_mut() {
                o.insert("mode".into(), serde_json::json!(mode.name()));
                o.insert("device_bytes_written".into(), serde_json::json!(written));
            }
            runs.push(v);
            timings.push(t);
        }
    }
    Ok((rows, per_mode, timings, runs))
}

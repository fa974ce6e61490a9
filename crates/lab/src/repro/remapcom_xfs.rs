//! `flashkv repro remapcom-xfs`: the fillrandom runs of Figure 10 (Baseline, aligned Baseline,
//! RemapCom-Base, RemapCom; 1 KiB and 4 KiB KVs at the paper's literal sizes, and 4 KiB with
//! block-filling values as a sensitivity row, Baseline and RemapCom) on a real reflink XFS on a
//! loop device (`fs = "xfs-loop"`, a fresh file system per run), with the bytes that reached the
//! block device read from the kernel's statistics. A UDB is placed with FICLONERANGE there, so the
//! saving is measured on a real file system, not in simulation. Needs root, xfsprogs and loop
//! devices. The runs are data: experiments/repro/remapcom-xfs/ (fills.toml, block-filling.toml).

use storage::loop_xfs::LoopXfs;

use super::remapcom::{Mode, MODES};
use super::{Context, Repro, ReproFile, Runs};
use crate::error::Result;
use crate::report::model::{Cell, Figure, FigureKind, ResultSet, ResultTable, Series};
use crate::spec::format_size;

const MIB: u64 = 1 << 20;

const FILES: [ReproFile; 2] = [repro_file!("remapcom-xfs/fills.toml"), repro_file!("remapcom-xfs/block-filling.toml")];

/// The fills: KV size, whether its values fill a block (the sensitivity row), and the modes run.
const FILLS: [(u64, bool, &[Mode]); 3] =
    [(1024, false, &MODES), (4096, false, &MODES), (4096, true, &[Mode::Baseline, Mode::Full])];

/// Seed 000's Figure 10 fills on a real device, as a repro.
pub struct RemapComXfs;

fn label(kv: u64, block_filling: bool) -> String {
    match block_filling {
        false => format!("xfs {kv} B"),
        true => format!("xfs {kv} B block-filling"),
    }
}

fn key(kv: u64, block_filling: bool, mode: Mode) -> String {
    format!("{} ({})", label(kv, block_filling), mode.name())
}

/// User data per run: 4 GiB at the paper's scale.
fn data(c: &Context) -> u64 {
    c.scale.size(4u64 << 30)
}

impl Repro for RemapComXfs {
    fn title(&self) -> &'static str {
        "RemapCom on a real reflink XFS (loop device): bytes written to the block device"
    }

    fn name(&self) -> &'static str {
        "remapcom-xfs"
    }

    fn files(&self) -> &'static [ReproFile] {
        &FILES
    }

    fn unavailable(&self) -> Option<String> {
        LoopXfs::unavailable().map(|why| format!("needs a loop-mounted XFS: {why}"))
    }

    fn report(&self, c: &Context, runs: &Runs) -> Result<ResultSet> {
        let mut rows = Vec::new();
        let mut series: Vec<Series> =
            MODES.iter().map(|m| Series { name: m.name().into(), points: Vec::new(), dashed: false }).collect();
        for (ki, (kv, sizing, modes)) in FILLS.iter().enumerate() {
            let written = |mode: Mode| -> Result<(u64, &crate::result::RunResult)> {
                let r = runs.need(&key(*kv, *sizing, mode))?;
                Ok((r.fs.as_ref().and_then(|f| f.device_write_bytes).unwrap_or(0), r))
            };
            let baseline = written(Mode::Baseline)?.0;
            for (mi, mode) in MODES.iter().enumerate().filter(|(_, m)| modes.contains(m)) {
                let (bytes, r) = written(*mode)?;
                let cloned: u64 = r.levels().iter().map(|l| l.bytes_remapped).sum();
                let per_user = bytes as f64 / r.host.user_bytes.max(1) as f64;
                series[mi].points.push((ki as f64, per_user));
                rows.push(vec![
                    Cell::Text(label(*kv, *sizing)),
                    Cell::Text(mode.name().into()),
                    Cell::Number(r.host.user_bytes as f64 / MIB as f64),
                    Cell::Number(bytes as f64 / MIB as f64),
                    Cell::Number(per_user),
                    Cell::Number(cloned as f64 / MIB as f64),
                    Cell::Number(((bytes as f64 / baseline.max(1) as f64 - 1.0) * 1000.0).round() / 10.0),
                ]);
            }
        }
        Ok(ResultSet {
            scale: format!(
                "{} per run, fillrandom, engine sizes / {} of the paper's",
                format_size(data(c)),
                c.scale.divisor()
            ),
            notes: vec![
                "Device bytes are field 7 of /sys/block/loopN/stat (512-byte sectors written) from the mount of a \
                 fresh file system to the end of the run, after the engine closed and syncfs: file data, XFS \
                 metadata and its log."
                    .into(),
                "UDBs are placed with FICLONERANGE (reflink): shared extents, nothing rewritten.".into(),
                "KV sizes are the paper's (16-byte key, S - 16-byte value). A literal 4 KiB KV makes a 4,121-byte \
                 block, which takes two 4 KiB file-system blocks once aligned, so the aligned modes write and clone \
                 about twice the blocks; compare them with 'Baseline + aligned blocks', the same layout without \
                 clones. The block-filling row sizes values so that one KV fills one block and its page (4,055 B; \
                 the reading before issue 28)."
                    .into(),
            ],
            tables: vec![ResultTable {
                name: "device bytes written (MiB)".into(),
                columns: ["fill", "mode", "user MiB", "device MiB", "device / user", "cloned MiB", "vs Baseline %"]
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
                categories: FILLS.iter().map(|(kv, sizing, _)| label(*kv, *sizing)).collect(),
                series,
            }],
            ..Default::default()
        })
    }
}

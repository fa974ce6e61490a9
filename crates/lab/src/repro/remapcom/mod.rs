//! `flashkv repro remapcom`: seed 000's evaluation (Figures 9-15, Table 3) on the simulated FEMU
//! SSD, Baseline (LevelDB), RemapCom-Base and RemapCom, each table beside the paper's numbers.
//!
//! Scale: the paper writes 4 GiB into LevelDB (2 MiB SSTs, 4 KiB blocks, 4 MiB memtable, 10 MiB
//! level 1) on a 16 GiB SSD (4 KiB pages, 40/200/2000 us). `small` divides every size by 16 except
//! the block and page size, so device : data : SST : memtable : level target keep the paper's
//! ratios and the tree has the same number of levels; `paper` is the paper's own scale.
//!
//! KV size S, the headline reading of Figures 9-14 and Table 3 (issue 57): values sized so that
//! 4096 / S KVs fill a 4 KiB data block and its page exactly. The paper's Figure 14 writes 12 GB of
//! 4 KB KVs to its 16 GB SSD, which it could not do if a 4 KB KV took two pages, as the literal
//! reading of its text ("The key size is fixed to 16 bytes while the value size varies according
//! to the KV item size": an (S - 16)-byte value, a 4,121-byte block at 4 KiB) makes it. The literal
//! reading stays as labelled rows of Figures 9-11 and a labelled series of Figure 14. Figure 15
//! draws sizes from ranges, which cannot fill blocks exactly, and Figure 13 has Mixgraph's own.
//!
//! The runs are data: experiments/repro/remapcom/, a file per figure and the page-cache sweep, at
//! the scales they define (each choice of ours commented there). This file and its modules pick
//! the parts asked for and put the runs beside the paper's numbers (paper.rs).
//!
//! The paper's figures give most numbers only as bars; where its text states a number (averages,
//! ratios, per-workload improvements, Table 3) it sits beside ours with the difference, and the
//! claims table (claims.rs), first in the report, gives each a verdict for the parts asked for.

mod cache_sweep;
mod claims;
mod micro;
mod paper;
mod sizes;
mod workloads;

use super::{Context, Repro, ReproFile, Runs, Scale};
use crate::error::{LabError, Result};
use crate::report::model::{Cell, ResultSet, Series};
use crate::result::RunResult;

const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;

/// The runs, a file per figure (the literal KV sizes' rows of Figures 10 and 14 in files of their
/// own) and the page-cache sweep, in the order results.json lists them.
const FILES: [ReproFile; 8] = [
    repro_file!("remapcom/fig9-11.toml"),
    repro_file!("remapcom/fig10-literal.toml"),
    repro_file!("remapcom/fig12-ycsb.toml"),
    repro_file!("remapcom/fig13-mixgraph.toml"),
    repro_file!("remapcom/fig14-dataset.toml"),
    repro_file!("remapcom/fig14-literal.toml"),
    repro_file!("remapcom/fig15-ranges.toml"),
    repro_file!("remapcom/cache.toml"),
];

/// The parts each file's runs belong to (in [`FILES`]' order); table3 comes with Figures 9-11:
/// they share their runs.
const FILE_PARTS: [&[&str]; 8] = [
    &["fig9-11", "table3"],
    &["fig9-11", "table3"],
    &["fig12"],
    &["fig13"],
    &["fig14"],
    &["fig14"],
    &["fig15"],
    &["cache"],
];

/// The paper's setup: 4 GiB written (the host's page cache at its scale is ours: see
/// cache.toml and [`PAPER_PAGE_CACHE`]).
const PAPER_DATA: u64 = 4 * GIB;

/// The host's page cache at the paper's scale (ours, the files' `page_cache`; the `cache` part
/// sweeps it).
pub(super) const PAPER_PAGE_CACHE: u64 = 12 * GIB;

/// The scale's sizes, as its runs have them (the files' engine and device).
fn describe(scale: &Scale) -> Result<String> {
    let spec = FILES[0].spec(&scale.name, &key("fillrandom 256 B", Mode::Baseline))?;
    let s = |b: Option<crate::spec::Bytes>| mib(b.map_or(0, |b| b.0));
    Ok(format!(
        "{} scale: {} SSD, {} written, {} SSTs, {} memtable, {} level 1",
        scale.name,
        s(spec.device.capacity),
        mib(scale.size(PAPER_DATA)),
        s(spec.engine.lsm.max_file_size),
        s(spec.engine.lsm.write_buffer_size),
        s(spec.engine.lsm.max_bytes_for_level_base)
    ))
}

fn mib(b: u64) -> String {
    crate::spec::format_size(b)
}

/// The configurations compared (the files' `mode` cases, by name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Mode {
    /// LevelDB: packed blocks, no remap ("Baseline").
    Baseline,
    /// LevelDB with blocks aligned to pages: the cost of alignment alone.
    Aligned,
    Base,
    Full,
}

impl Mode {
    pub(super) fn name(self) -> &'static str {
        match self {
            Mode::Baseline => "Baseline",
            Mode::Aligned => "Baseline + aligned blocks",
            Mode::Base => "RemapCom-Base",
            Mode::Full => "RemapCom",
        }
    }
}

pub(super) const MODES: [Mode; 4] = [Mode::Baseline, Mode::Aligned, Mode::Base, Mode::Full];
const COMPARED: [Mode; 3] = [Mode::Baseline, Mode::Base, Mode::Full];
const KV_SIZES: [u64; 5] = [256, 512, 1024, 2048, 4096];

/// The parts `--only` picks from (table3 comes with Figures 9-11: they share their runs).
const PARTS: [&str; 7] = ["fig9-11", "table3", "fig12", "fig13", "fig14", "fig15", "cache"];

/// Seed 000's evaluation, as a repro.
pub struct RemapCom;

impl Repro for RemapCom {
    fn title(&self) -> &'static str {
        "RemapCom (seed 000): Baseline vs RemapCom-Base vs RemapCom on the simulated FEMU SSD"
    }

    fn name(&self) -> &'static str {
        "remapcom"
    }

    fn files(&self) -> &'static [ReproFile] {
        &FILES
    }

    fn parts(&self) -> std::result::Result<&'static [&'static str], &'static str> {
        Ok(&PARTS)
    }

    fn wanted(&self, c: &Context, file: &ReproFile, _key: &str) -> bool {
        let parts = FILES.iter().position(|f| f.path == file.path).map_or(&[][..], |i| FILE_PARTS[i]);
        parts.iter().any(|p| c.wants(p))
    }

    fn report(&self, c: &Context, runs: &Runs) -> Result<ResultSet> {
        let mut set = ResultSet { scale: describe(&c.scale)?, notes: notes(), ..Default::default() };
        if c.wants("fig9-11") || c.wants("table3") {
            part(&mut set, "Figures 9-11 and Table 3", |set| micro::report(runs, set))?;
        }
        if c.wants("fig12") {
            part(&mut set, "Figure 12", |set| workloads::ycsb_report(c, runs, set))?;
        }
        if c.wants("fig13") {
            part(&mut set, "Figure 13", |set| workloads::mixgraph_report(c, runs, set))?;
        }
        if c.wants("fig14") {
            part(&mut set, "Figure 14", |set| sizes::dataset_report(c, runs, set))?;
        }
        if c.wants("fig15") {
            part(&mut set, "Figure 15", |set| sizes::range_report(c, runs, set))?;
        }
        if c.wants("cache") {
            part(&mut set, "The page-cache sweep", |set| cache_sweep::report(c, runs, set))?;
        }
        let (claims, left_out) = claims::claims(c, runs);
        let (table, note) = super::claims::table(&c.scale.name, &claims);
        set.tables.insert(0, table);
        set.notes.push(note);
        set.notes.extend(left_out);
        Ok(set)
    }

    /// The claims alone (every claim, with "failed" where a run is missing).
    fn claims(&self, c: &Context, runs: &Runs) -> Result<crate::report::model::ResultTable> {
        Ok(super::claims::table(&c.scale.name, &claims::claims(c, runs).0).0)
    }
}

/// Adds a part's tables, figures and notes to `set`, or, when one of its runs failed (or is not
/// in the result folder), only a note saying so: the rest of a long repro keeps its report, and
/// the claims table still gives every claim ("failed" where a run is missing).
fn part(set: &mut ResultSet, name: &str, build: impl FnOnce(&mut ResultSet) -> Result<()>) -> Result<()> {
    let mut with = set.clone();
    match build(&mut with) {
        Ok(()) => *set = with,
        Err(LabError::MissingRun { key, why }) => {
            set.notes.push(format!("{name}: left out, a run has no result: {key}: {why} (see the failed runs)."))
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

fn notes() -> Vec<String> {
    vec![
        "Throughput is operations per simulated second.".into(),
        crate::result::SIMULATED_TIME_NOTE.into(),
        "Write amplification = flash page programs x page size / user bytes (WAL, flushes, compactions, file-system \
         metadata and GC relocations included; remaps excluded)."
            .into(),
        super::ZERO_VALUES_NOTE.into(),
        format!(
            "The host's page cache (ours; seed 000 does not give it): {} at the paper's scale, scaled with the rest. \
             Table 2 prints the guest's memory as \"16 MB\" as it prints the 16 GiB SSD; read the same way the guest \
             has 16 GiB, of which 4 GiB are left to the kernel and LevelDB. CLOCK, Linux's readahead (128 KiB) and \
             dirty write-back (10 % background ratio, 30 s expiry). The cache part sweeps its size.",
            crate::spec::format_size(PAPER_PAGE_CACHE)
        ),
        "KV size S (issue 57): 4096 / S KVs fill one 4 KiB data block and its page exactly, with db_bench's 16-byte \
         keys (values of 227, 482, 992, 2013 and 4055 bytes for 256 B .. 4 KiB) and YCSB's keys zero-padded to 24 \
         bytes (our choice; values of 219, 984 and 4047 bytes). The evidence is the paper's Figure 14: it writes 12 \
         GB of 4 KB KVs to its 16 GB SSD. Read literally (\"The key size is fixed to 16 bytes while the value size \
         varies according to the KV item size\"), a 4 KiB KV has a 4,080-byte value and its data block 4,121 bytes, \
         two pages once aligned, so the remapping modes keep about twice the live data in flash (Figure 14's \
         literal series shows what that does to the largest datasets). The literal reading \
         (the headline from issue 28 to issue 57) is kept as labelled rows of Figures 9-11 (fillrandom) and a \
         labelled series of Figure 14. Figure 15 draws sizes from ranges, which no value size makes fill blocks, and \
         Figure 13 has Mixgraph's own sizes."
            .into(),
        "Compactions read their inputs ahead 128 KiB at a time (Linux's default readahead under LevelDB; our \
         choice, `compaction_readahead`). The window does not scale: at the small scale an SST (128 KiB) is about \
         one window, and page-aligned SSTs, slightly larger, often need a second request, which the aligned modes \
         (Baseline aligned, RemapCom-Base, RemapCom) pay in read time; at the paper's scale an SST is 16 windows."
            .into(),
    ]
}

/// The key of run `label` in `mode`.
fn key(label: &str, mode: Mode) -> String {
    format!("{label} ({})", mode.name())
}

/// The finished run `label` in `mode`.
fn get<'a>(runs: &'a Runs, label: &str, mode: Mode) -> Result<&'a RunResult> {
    runs.need(&key(label, mode))
}

/// Our values and the paper's, one bar or point per category, the paper's drawn dashed.
pub(super) fn ours_and_paper(ours: (&str, Vec<f64>), paper: (&str, Vec<f64>)) -> Vec<Series> {
    let series = |(name, v): (&str, Vec<f64>), dashed| Series {
        name: name.to_string(),
        points: v.into_iter().enumerate().map(|(i, y)| (i as f64, y)).collect(),
        dashed,
    };
    vec![series(ours, false), series(paper, true)]
}

pub(super) fn pct(x: f64) -> Cell {
    Cell::Number((x * 1000.0).round() / 10.0)
}

pub(super) fn reduction(base: f64, x: f64) -> f64 {
    if base == 0.0 {
        0.0
    } else {
        1.0 - x / base
    }
}

pub(super) fn wa(r: &RunResult) -> f64 {
    r.write_amplification().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ValueSizeSpec;
    use workload::ValueSize;

    /// The value size of run `key` of `file` at the tiny scale.
    fn value_of(file: usize, key: &str) -> ValueSizeSpec {
        FILES[file].spec("tiny", key).unwrap().workload.value_size
    }

    /// The value of `key_size`-byte keys that makes 4096 / `kv` KVs fill a 4 KiB page exactly: n
    /// entries (an internal key of `key_size` + 8 bytes, a 4-byte header and the value), the restart
    /// array, the entry count and the 5-byte trailer.
    fn block_filling(kv: u64, key_size: u64) -> u32 {
        let n = 4096 / kv;
        ((4096 - 9 - 4 * n.div_ceil(16)) / n - (key_size + 12)) as u32
    }

    /// KV size S is block-filling in every figure's headline runs (issue 57) and the paper's
    /// literal 16-byte key + (S - 16)-byte value in the labelled literal rows of Figures 10 and 14.
    #[test]
    fn figures_use_block_filling_kv_sizes_and_the_literal_rows_the_papers_text() {
        let fixed = |v| ValueSizeSpec::Bytes(ValueSize::Fixed(v));
        for kv in KV_SIZES {
            for label in [format!("fillrandom {kv} B"), format!("zipfian {kv} B")] {
                assert_eq!(value_of(0, &key(&label, Mode::Full)), fixed(block_filling(kv, 16)), "{label}");
            }
            let label = format!("fillrandom {kv} B literal");
            for mode in MODES {
                assert_eq!(value_of(1, &key(&label, mode)), fixed(kv as u32 - 16), "{label}");
            }
        }
        assert_eq!(KV_SIZES.map(|kv| block_filling(kv, 16)), [227, 482, 992, 2013, 4055]);
        for kv in [256, 1024, 4096] {
            assert_eq!(value_of(2, &key(&format!("ycsb a {kv} B"), Mode::Base)), fixed(block_filling(kv, 24)));
        }
        assert_eq!([256, 1024, 4096].map(|kv| block_filling(kv, 24)), [219, 984, 4047]);
        let tiny = |f: usize| FILES[f].at("tiny").unwrap();
        for (key, spec) in tiny(4).runs() {
            assert_eq!(spec.workload.value_size, fixed(4055), "{key}");
        }
        for (key, spec) in tiny(5).runs() {
            assert!(key.contains(" literal ("), "{key}");
            assert_eq!(spec.workload.value_size, fixed(4080), "{key}");
        }
        let runs = |f: usize| tiny(f).runs().len();
        assert_eq!((runs(0), runs(1), runs(4), runs(5)), (2 * 5 * 4, 5 * 4, 6 * 3, 6 * 3));
    }

    /// The cache sweep's runs at the repro's own cache size carry the figures' keys, so they must be
    /// the figures' runs: with `--only cache` alone they run from cache.toml.
    #[test]
    fn the_cache_sweeps_figure_runs_are_the_figures() {
        let cache = FILES[7].at("tiny").unwrap().runs();
        let mut shared = 0;
        for f in &FILES[..7] {
            for (key, spec) in f.at("tiny").unwrap().runs() {
                if let Some((_, same)) = cache.iter().find(|(k, _)| *k == key) {
                    assert_eq!(format!("{spec:?}"), format!("{same:?}"), "{key}");
                    shared += 1;
                }
            }
        }
        assert_eq!(shared, 9 * COMPARED.len(), "fillrandom, zipfian and YCSB load, A-F at 1 KiB");
    }

    /// A part with a run that has no result (failed, or not in the folder `--report-only` reads)
    /// is left out with a note naming the run; the other parts keep their tables, and the claims
    /// table still gives that part's claims, as "failed".
    #[test]
    fn a_part_with_a_missing_run_is_left_out_not_fatal() {
        let ranges = FILES[6].at("tiny").unwrap().runs();
        let mut spec = ranges[0].1.clone();
        (spec.workload.records, spec.device.store) = (Some(2_000), crate::spec::Store::Memory);
        let (r, _) = crate::runner::run(&spec, false).unwrap();
        let mut runs = Runs { results: Default::default(), failed: Default::default() };
        for (k, _) in &ranges {
            runs.results.insert(k.clone(), r.clone());
        }
        let c = Context {
            scale: crate::repro::Scale::parse("tiny", &crate::repro::scales(&RemapCom).unwrap()).unwrap(),
            store: crate::spec::Store::default(),
            only: Some(vec!["fig12".into(), "fig15".into()]),
            timing: None,
            cpu: None,
        };
        let set = RemapCom.report(&c, &runs).unwrap();
        let names: Vec<&str> = set.tables.iter().map(|t| t.name.as_str()).collect();
        assert!(names.contains(&"Figure 15: KV size ranges"), "{names:?}");
        assert!(!names.iter().any(|n| n.starts_with("Figure 12")), "{names:?}");
        assert!(
            set.notes.iter().any(|n| n.starts_with("Figure 12: left out") && n.contains("ycsb ")),
            "{:?}",
            set.notes
        );
        let claims = &set.tables[0];
        let ours = |source: &str| -> Vec<String> {
            claims.rows.iter().filter(|r| r[0].to_string() == source).map(|r| r[3].to_string()).collect()
        };
        assert!(ours("Fig. 12").iter().all(|v| v == "failed"));
        let fig15 = ours("Fig. 15");
        assert!(!fig15.is_empty() && fig15.iter().all(|v| v != "failed"), "{fig15:?}");
    }

    /// The page cache the report names is the files'.
    #[test]
    fn the_papers_page_cache_is_the_files() {
        for f in &FILES {
            for (key, spec) in f.at("paper").unwrap().runs() {
                let cache = spec.device.page_cache.0;
                assert!(cache == PAPER_PAGE_CACHE || f.path.ends_with("cache.toml"), "{key}: {cache}");
            }
        }
    }
}

//! The repros' runs: LevelDB's profile for every engine run, and the same runs from `flashkv
//! repro` as from `flashkv run` on the repros' experiment files.

use super::*;

/// The repro's runs at `scale` with the default options.
fn context(repro: &dyn Repro, scale: &str) -> Context {
    Context {
        scale: Scale::parse(scale, &scales(repro).unwrap()).unwrap(),
        store: Store::default(),
        only: None,
        timing: None,
        cpu: None,
    }
}

/// The runs of `repro` at `scale`, or `None` where it cannot run (remapcom-xfs needs root and
/// xfsprogs: CI installs them (.ci/run), and the README's test command needs no more than Rust).
fn runs_here(repro: &dyn Repro, c: &Context) -> Option<Vec<Run>> {
    match runs(repro, c) {
        Ok(runs) => Some(runs),
        Err(LabError::Unavailable(why)) => {
            eprintln!("skipped: {}: {why}", repro.name());
            None
        }
        Err(e) => panic!("{}: {e}", repro.name()),
    }
}

/// The seeds ran LevelDB, so every run of the engine in a repro keeps LevelDB's policies (its
/// level-0 write triggers): per-level writes stay LevelDB's whatever flashkv's defaults become.
#[test]
fn every_repro_runs_the_engine_with_leveldbs_profile() {
    for repro in registry() {
        let Some(runs) = runs_here(repro, &context(repro, "tiny")) else { continue };
        let lsm: Vec<&Run> = runs.iter().filter(|r| !r.spec.engine.is_kv_ssd()).collect();
        assert!(lsm.len() > 1 || repro.name() == "kvftl", "{}: {} engine runs", repro.name(), lsm.len());
        for run in lsm {
            assert_eq!(run.spec.engine.profile, lsm::Profile::LevelDb, "{} {}", repro.name(), run.key);
        }
    }
}

/// Each repro's runs at each of its scales are its experiment files' at that scale, as `flashkv
/// run FILE --scale NAME` reads them from the repository: the same keys (labels), labels and
/// specifications, in the same order (a key met again in a later file is the same run, run once).
#[test]
fn a_repros_runs_are_its_experiment_files_runs_at_each_scale() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for repro in registry() {
        let scales = scales(repro).unwrap();
        assert_eq!(scales.iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), ["small", "paper", "tiny"]);
        for (scale, _) in &scales {
            let c = context(repro, scale);
            let Some(runs) = runs_here(repro, &c) else { break };
            let mut from_files: Vec<LabelledRun> = Vec::new();
            for f in repro.files() {
                let e = Experiment::load_at(&root.join(f.path), Some(scale)).unwrap();
                assert_eq!(e.scales(), scales.as_slice(), "{}: every file of a repro has its scales", f.path);
                assert_eq!(e.at_scale().map(|s| s.0), Some(scale.as_str()));
                for mut run in e.labelled_runs() {
                    if let Some(first) = from_files.iter().find(|r| r.label == run.label) {
                        assert_eq!(first.spec, run.spec, "{}: '{}' given twice, differently", f.path, run.label);
                        continue;
                    }
                    if run.labels.is_empty() {
                        run.labels = vec![("experiment".into(), run.label.clone())];
                    }
                    from_files.push(run);
                }
            }
            assert_eq!(runs.len(), from_files.len(), "{} at {scale}", repro.name());
            for (run, file) in runs.iter().zip(&from_files) {
                assert_eq!((&run.key, &run.labels), (&file.label, &file.labels), "{} at {scale}", repro.name());
                assert_eq!(run.spec, file.spec, "{} at {scale}: {}", repro.name(), run.key);
            }
        }
    }
}

/// The command line's store and timing replace the files' (a file that leaves the store to the
/// run, as remapcom-xfs on a real file system does, keeps it).
#[test]
fn the_command_lines_store_and_timing_are_the_runs() {
    let plsc = registry().into_iter().find(|r| r.name() == "plsc").unwrap();
    let timing = <flashsim::Timing as crate::spec::Named>::parse_name("femu").unwrap();
    let c = Context { store: Store::Memory, timing: Some(timing.clone()), ..context(plsc, "tiny") };
    for run in runs(plsc, &c).unwrap() {
        assert_eq!((&run.spec.device.store, &run.spec.device.timing), (&Store::Memory, &Some(timing.clone())));
    }
    for run in runs(plsc, &context(plsc, "tiny")).unwrap() {
        assert_eq!((&run.spec.device.store, &run.spec.device.timing), (&Store::Compact, &None));
    }
}

/// crates/lab/experiments/zns-ll-paper-ycsb-seek.toml runs the repro's paper-scale YCSB B and F
/// rows with seek compaction off: its runs are zns-ll/ycsb.toml's at the paper's scale but for that
/// (and the content digest, which it does not take).
#[test]
fn the_seek_compaction_experiment_is_the_repros_paper_scale_rows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let e = Experiment::load(&root.join("experiments/zns-ll-paper-ycsb-seek.toml")).unwrap();
    let zns = registry().into_iter().find(|r| r.name() == "zns-ll").unwrap();
    let repro = runs(zns, &context(zns, "paper")).unwrap();
    assert_eq!(e.runs().len(), 4);
    for (label, mut spec) in e.runs() {
        // "B, GC, seek compaction off" is the repro's "ycsb b GC".
        let mut parts = label.split(", ");
        let (w, row) = (parts.next().unwrap().to_lowercase(), parts.next().unwrap());
        let key = format!("ycsb {w} {row}");
        let theirs = &repro.iter().find(|r| r.key == key).unwrap_or_else(|| panic!("no run {key}")).spec;
        assert_eq!(spec.engine.lsm.seek_compaction, Some(false), "{label}");
        (spec.engine.lsm.seek_compaction, spec.digest) = (None, true);
        assert_eq!(&spec, theirs, "{label} against the repro's {key}");
    }
}

/// remapcom-fig15-cache.toml says its runs with the cache are the repro's Figure 15 runs and the
/// others the same with the page cache off: hold it at every scale, so that the experiment cannot
/// drift from the runs its claim is set beside.
#[test]
fn the_fig15_cache_experiment_is_the_repros_figure_15_with_and_without_the_cache() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let remapcom = registry().into_iter().find(|r| r.name() == "remapcom").unwrap();
    for (scale, _) in scales(remapcom).unwrap() {
        let e = Experiment::load_at(&root.join("experiments/remapcom-fig15-cache.toml"), Some(&scale)).unwrap();
        let repro = runs(remapcom, &context(remapcom, &scale)).unwrap();
        assert_eq!(e.runs().len(), 18, "{scale}");
        for (label, mut spec) in e.runs() {
            let key = label.replace(", no page cache", "");
            let theirs = &repro.iter().find(|r| r.key == key).unwrap_or_else(|| panic!("no run {key}")).spec;
            if key != label {
                assert_eq!(spec.device.page_cache.0, 0, "{label}");
                spec.device.page_cache = theirs.device.page_cache;
            }
            assert_eq!(&spec, theirs, "{label} against the repro's {key} at {scale}");
        }
    }
}

/// The claims blocks of docs/results/<repro>.md (written by `flashkv report DIR --tables-into`)
/// claim what the repro's report claims at that scale: its sources, claims and paper's numbers, in
/// the report's order, so that a changed claim or paper number cannot leave the page behind (its
/// "ours" column is the runs', which a test cannot rerun at the paper's scale).
#[test]
fn the_docs_claims_blocks_are_the_reports_claims() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut checked = 0;
    for repro in registry() {
        let doc = root.join(format!("docs/results/{}.md", repro.name()));
        let Ok(text) = std::fs::read_to_string(&doc) else { continue };
        for (scale, _) in scales(repro).unwrap() {
            let key = claims::table_name(&scale);
            let Some(block) = crate::report::markdown::block(&text, &key) else { continue };
            let none = Runs { results: BTreeMap::new(), failed: BTreeMap::new() };
            let table = repro.claims(&context(repro, &scale), &none).unwrap();
            let want: Vec<String> = table
                .rows
                .iter()
                .map(|r| r[..3].iter().map(|c| c.to_string()).collect::<Vec<_>>().join(" | "))
                .collect();
            let got: Vec<String> = block
                .lines()
                .filter(|l| l.starts_with("| "))
                .skip(2)
                .map(|l| l.trim_start_matches("| ").splitn(4, " | ").take(3).collect::<Vec<_>>().join(" | "))
                .collect();
            // The page's claims are the report's in order; a report leaves out a claim its runs
            // cannot speak to (remapcom: a level of Table 3 the scale barely reaches).
            let mut rest = want.iter();
            let stale: Vec<&String> = got.iter().filter(|g| !rest.any(|w| w == *g)).collect();
            assert!(
                stale.is_empty() && !got.is_empty(),
                "{}: {key} is stale (rerun `flashkv report DIR --tables-into FILE`): {stale:?}",
                doc.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no claims block in docs/results");
}

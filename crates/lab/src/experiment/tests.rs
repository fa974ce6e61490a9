//! The experiment file format's tests.

use super::*;
use crate::spec::{Named, ZoneGc};

const BASE: &str = r#"
title = "t"
[device]
capacity = "256MiB"
[workload]
name = "fillrandom"
records = 1000
"#;

fn error(text: &str) -> String {
    Experiment::parse(text).err().expect("an error").to_string()
}

/// The experiment files the docs name as the commands behind their figures (some run for an
/// hour, so CI does not run them): each still loads and every point plans, so a renamed field
/// breaks this test rather than a reader's rerun.
#[test]
fn every_committed_experiment_file_loads() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let (mut loaded, mut folders) = (0, vec![dir.clone()]);
    // The repros' files (experiments/repro/NAME/) too, at each of their scales.
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "toml") {
                let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!e.points.is_empty(), "{}: no runs", path.display());
                for (scale, _) in e.scales() {
                    Experiment::load_at(&path, Some(scale)).unwrap_or_else(|e| panic!("{e}"));
                }
                loaded += 1;
            }
        }
    }
    assert!(loaded >= 30, "only {loaded} experiment files found in {}", dir.display());
}

#[test]
fn variants_and_sweeps_expand_to_points() {
    let text = format!("{BASE}\n[[variant]]\nname = \"a\"\n[[variant]]\nname = \"b\"\nengine = {{ align_blocks = true }}\n[sweep]\nparameter = \"workload.value_size\"\nvalues = [256, 1024]\n");
    let e = Experiment::parse(&text).unwrap();
    assert_eq!(e.points.len(), 4);
    assert!(e.points[2].spec.engine.lsm.align_blocks && !e.points[0].spec.engine.lsm.align_blocks);
    assert_eq!(e.points[1].spec.workload.value_size.name(), "1024");
    assert_eq!(e.runs()[1].0, "a @ 1024");
}

#[test]
fn a_grid_of_sweeps_runs_every_combination() {
    let ycsb = BASE.replace("fillrandom", "a");
    let text = format!(
        "{ycsb}\n[[variant]]\nname = \"v\"\n[[sweep]]\nparameter = \"workload.value_size\"\nvalues = [256, 1024]\n\
         [[sweep]]\nparameter = \"workload.ycsb.readproportion\"\nvalues = [0.5, 0.9, 1.0]\n"
    );
    let e = Experiment::parse(&text).unwrap();
    assert_eq!(e.points.len(), 6, "2 x 3 combinations");
    let labels: Vec<String> = e.runs().into_iter().map(|(l, _)| l).collect();
    assert_eq!(labels[0], "v @ value_size=256, readproportion=0.5");
    assert_eq!(labels[5], "v @ value_size=1024, readproportion=1.0");
    let p = &e.points[4].spec.workload;
    assert_eq!((p.value_size.name().as_str(), p.ycsb.get("readproportion")), ("1024", Some("0.9")));
    // A figure over the last sweep, a line per value of the other.
    let fig = e.figure("ops_per_sec", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(fig.categories, ["0.5", "0.9", "1.0"]);
    let names: Vec<&str> = fig.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["v, value_size=256", "v, value_size=1024"]);
    assert_eq!(fig.series[1].points, [(0.0, 4.0), (1.0, 5.0), (2.0, 6.0)]);
    let twice = text.replace("workload.ycsb.readproportion", "workload.value_size");
    assert!(error(&twice).contains("swept twice"), "{}", error(&twice));
    let bad = text.replace("0.9", "-0.9");
    assert!(error(&bad).contains("readproportion=-0.9"), "{}", error(&bad));
}

#[test]
fn a_ycsb_property_file_is_read_beside_the_experiment() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine"), "readproportion=0.2\nupdateproportion=0.8\nrecordcount=500\n").unwrap();
    let text = "title = \"t\"\n[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"core\"\n\
                ycsb_file = \"mine\"\noperations = 10\nycsb = { updateproportion = 0.7 }\n";
    let e = Experiment::parse_in(text, dir.path()).unwrap();
    let w = &e.points[0].spec.workload;
    assert_eq!((w.ycsb.get("readproportion"), w.ycsb.get("updateproportion")), (Some("0.2"), Some("0.7")));
    assert_eq!(e.points[0].spec.plan().unwrap().kind.phases().unwrap().records, 500, "recordcount gives the records");
    let json = serde_json::to_value(w).unwrap();
    assert!(json.get("ycsb_file").is_none() && json["ycsb"]["recordcount"] == "500", "{json}");
    let e = Experiment::parse_in(text, Path::new("/nonexistent")).err().unwrap().to_string();
    assert!(e.contains("mine") && e.contains("read the YCSB property file"), "{e}");
    let twice = text.replace("operations = 10", "operations = 10\nrecords = 7");
    let e = Experiment::parse_in(&twice, dir.path()).err().unwrap().to_string();
    assert!(e.contains("workload.records") && e.contains("recordcount=500"), "{e}");
    let fill = text.replace("\"core\"", "\"fillrandom\"");
    let e = Experiment::parse_in(&fill, dir.path()).err().unwrap().to_string();
    assert!(e.contains("workload.ycsb: YCSB properties apply to YCSB workloads"), "{e}");
}

#[test]
fn every_shipped_experiment_file_is_valid() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let e = Experiment::load(&path).unwrap_or_else(|e| panic!("{e}"));
            assert!(!e.points.is_empty(), "{}", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} experiment files in {}", dir.display());
}

#[test]
fn errors_name_the_field_and_the_accepted_values() {
    let e = error(&BASE.replace("records = 1000", "records = \"many\""));
    assert!(e.contains("workload.records"), "{e}");
    let e = error(&format!("{BASE}\n[engine]\nwrite_bufer_size = 1\n"));
    assert!(e.contains("write_bufer_size"), "{e}");
    let e = error(&BASE.replace("fillrandom", "fillrandomly"));
    assert!(e.contains("workload.name") && e.contains("fillseq"), "{e}");
    let e = error(&format!("{BASE}\n[engine]\ncompaction = \"tiered\"\n"));
    assert!(e.contains("engine.compaction") && e.contains("leveled, gear, ll"), "{e}");
    let e = error(&format!("metrics = [\"speed\"]\n{BASE}"));
    assert!(e.contains("ops_per_sec"), "{e}");
    let e = error(&format!("{BASE}\n[sweep]\nparameter = \"value_size\"\nvalues = [1]\n"));
    assert!(e.contains("section.field"), "{e}");
    let e = error(&format!("{BASE}\n[engine]\nname = \"kvftl-np\"\nmax_waste = \"2KiB\"\n"));
    assert!(e.contains("engine.max_waste: does not apply to engine kvftl-np"), "{e}");
}

#[test]
fn the_host_is_a_section() {
    let e = Experiment::parse(&format!("{BASE}[host]\nsync = true\n")).unwrap();
    assert!(e.points[0].spec.host.sync);
    let kv = "title = \"t\"\nengine = \"plsc\"\n[device]\ncapacity = \"2GiB\"\n\
              [workload]\nname = \"a\"\nrecords = 10\n[host]\nsync = true\n";
    assert!(error(kv).contains("host.sync: engine plsc is a key-value SSD"), "{}", error(kv));
}

/// Page writes (`flashkv ftl`'s workload) are a workload like any other in a file.
#[test]
fn page_writes_are_a_workload() {
    let text = "title = \"gc\"\n[device]\ncapacity = \"256MiB\"\nchannels = 1\ngc = \"fifo\"\n\
                [workload]\nname = \"pages\"\npages = { pattern = \"zipf:0.9\", writes = 2.0 }\n";
    let e = Experiment::parse(text).unwrap();
    let spec = &e.points[0].spec;
    assert_eq!(spec.workload.pages.pattern, crate::spec::Pattern::Zipf(0.9));
    assert_eq!(spec.workload.pages.queue_depth, 64, "the others keep their defaults");
    let bad = text.replace("writes = 2.0", "writes = -1.0");
    assert!(error(&bad).contains("workload.pages.writes"), "{}", error(&bad));
    let engine = format!("{text}[engine]\nremap = \"full\"\n");
    assert!(error(&engine).contains("no engine applies"), "{}", error(&engine));
}

/// A block trace is a workload too; its file is found beside the experiment file.
#[test]
fn block_traces_are_a_workload() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.csv"), "1,h,0,Write,0,4096,0\n").unwrap();
    let text = "title = \"trace\"\n[device]\ncapacity = \"256MiB\"\n[workload]\nname = \"block-trace\"\n\
                trace = { file = \"t.csv\", format = \"msr\", replay = \"open\" }\n";
    let e = Experiment::parse_in(text, dir.path()).unwrap();
    let t = e.points[0].spec.workload.trace.clone().unwrap();
    assert_eq!((t.file, t.replay, t.queue_depth), (dir.path().join("t.csv"), crate::spec::Replay::Open, 64));
    let missing = Experiment::parse_in(text, Path::new("/nonexistent")).err().unwrap().to_string();
    assert!(missing.contains("workload.trace.file") && missing.contains("is not a file"), "{missing}");
    let format = text.replace("\"msr\"", "\"pcap\"");
    let e = Experiment::parse_in(&format, dir.path()).err().unwrap().to_string();
    assert!(e.contains("workload.trace.format") && e.contains("msr, blkparse"), "{e}");
    let none = "title = \"t\"\n[workload]\nname = \"block-trace\"\n";
    assert!(error(none).contains("block-trace needs a trace"), "{}", error(none));
    let other = text.replace("block-trace", "fillrandom").replace("[workload]", "[workload]\nrecords = 10");
    let e = Experiment::parse_in(&other, dir.path()).err().unwrap().to_string();
    assert!(e.contains("workload.trace: applies to workload block-trace only"), "{e}");
}

#[test]
fn zoned_devices_are_checked_when_read() {
    let zone = BASE.replace("[device]", "[device]\nfs = \"zone\"\nzone_policy = \"per-level\"\nzone_gc = 2");
    let e = Experiment::parse(&zone).unwrap();
    let d = &e.points[0].spec.device;
    assert_eq!((d.zone_policy.name(), d.zone_gc), ("per-level", ZoneGc::AtFreeZones(2)));
    let off = zone.replace("zone_gc = 2", "zone_gc = \"off\"");
    assert_eq!(Experiment::parse(&off).unwrap().points[0].spec.device.zone_gc, ZoneGc::Off);
    for (bad, field) in [
        ("zone_size = \"1536KiB\"", "device.zone_size: 1.5 MiB is not a multiple of the 1.0 MiB erase block"),
        ("zone_policy = \"tiered\"", "device.zone_policy: unknown policy 'tiered'"),
        ("zone_gc = 0", "device.zone_gc"),
        ("max_open_zones = 5000", "device.max_open_zones: 5000 exceeds the device's"),
    ] {
        let key = bad.split(' ').next().unwrap();
        let text = if zone.contains(&format!("{key} =")) {
            zone.lines().map(|l| if l.starts_with(key) { bad } else { l }).collect::<Vec<_>>().join("\n")
        } else {
            zone.replace("[device]", &format!("[device]\n{bad}"))
        };
        let e = error(&text);
        assert!(e.contains(field) && !e.contains('\n'), "{bad}: {e}");
    }
}

/// A file with scales: its values are the paper's, a scale divides the fields of `scaled` (sizes
/// and counts), then applies its factors and sets its own fields as written; the first scale is
/// the default, and an unknown one is named with the accepted ones.
#[test]
fn scales_divide_the_scaled_fields() {
    let text = "title = \"t\"\nscaled = [\"device.capacity\", \"workload.records\", \"engine.write_buffer_size\"]\n\
                [[scale]]\nname = \"small\"\ndivisor = 16\n\
                [[scale]]\nname = \"paper\"\ndivisor = 1\n\
                [[scale]]\nname = \"tiny\"\ndivisor = 64\nmultiply = { \"device.capacity\" = 1.5 }\n\
                workload = { records = 7 }\n\
                [engine]\nwrite_buffer_size = \"4MiB\"\n[device]\ncapacity = \"16GiB\"\n\
                [workload]\nname = \"fillrandom\"\nrecords = 160000\n\
                [[variant]]\nname = \"big\"\ndevice = { capacity = \"32GiB\" }\n";
    let at = |scale: Option<&str>| Experiment::parse_at(text, Path::new("."), scale).unwrap();
    let spec = |e: &Experiment| e.points[0].spec.clone();
    let small = at(None);
    assert_eq!(small.at_scale(), Some(("small", 16)), "the first scale is the default");
    assert_eq!(small.scales().iter().map(|s| s.0.as_str()).collect::<Vec<_>>(), ["small", "paper", "tiny"]);
    let s = spec(&small);
    assert_eq!((s.device.capacity.unwrap().0, s.workload.records), (2 << 30, Some(10_000)));
    assert_eq!(s.engine.lsm.write_buffer_size.unwrap().0, 256 << 10);
    let p = spec(&at(Some("paper")));
    assert_eq!((p.device.capacity.unwrap().0, p.workload.records), (32 << 30, Some(160_000)));
    let t = spec(&at(Some("tiny")));
    // 32 GiB / 64 x 1.5; the scale's own records as written.
    assert_eq!((t.device.capacity.unwrap().0, t.workload.records), (768 << 20, Some(7)));
    let e = Experiment::parse_at(text, Path::new("."), Some("huge")).err().unwrap().to_string();
    assert!(e.contains("unknown scale 'huge'; accepted: small, paper, tiny"), "{e}");
    let e = Experiment::parse_at(BASE, Path::new("."), Some("tiny")).err().unwrap().to_string();
    assert!(e.contains("the file has no [[scale]]"), "{e}");
    let e = error(&text.replace("\"workload.records\", ", "\"workload.name\", "));
    assert!(e.contains("workload.name") && e.contains("not a size or a count"), "{e}");
    let e = error(&text.replace("divisor = 64", "divisor = 0"));
    assert!(e.contains("divisor") && e.contains("at least 1"), "{e}");
    let none = text.split("[[scale]]").next().unwrap().to_string() + "[workload]\nname = \"fillrandom\"\nrecords = 1\n";
    assert!(error(&none).contains("[[scale]]"), "{}", error(&none));
}

/// Cases are named tables of overrides; labels are templates over the variant and the sweeps'
/// names, given to each run and (`labels`) to its JSON; a `scaled` sweep's names are sizes shown
/// at the scale.
#[test]
fn cases_and_label_templates_name_the_runs() {
    let text = "title = \"t\"\nlabel = \"{name} {data} ({mode})\"\nlabels = { mode = \"{mode}\" }\n\
                scaled = [\"workload.records\", \"device.capacity\"]\n\
                [[scale]]\nname = \"small\"\ndivisor = 16\n[[scale]]\nname = \"paper\"\ndivisor = 1\n\
                [device]\ncapacity = \"4GiB\"\n[workload]\nname = \"fillrandom\"\nrecords = 1600\n\
                [[sweep]]\nparameter = \"workload.name\"\nvalues = [\"fillrandom\", \"fillseq\"]\n\
                [[sweep]]\nname = \"data\"\nscaled = true\ncases = [\n\
                  { name = \"1GiB\", workload = { records = 1600 } },\n\
                  { name = \"2GiB\", workload = { records = 3200 } },\n]\n\
                [[sweep]]\nname = \"mode\"\ncases = [\n\
                  { name = \"Baseline\" },\n\
                  { name = \"RemapCom\", engine = { align_blocks = true, remap = \"full\" } },\n]\n";
    let e = Experiment::parse(text).unwrap();
    let runs = e.labelled_runs();
    assert_eq!(runs.len(), 8);
    assert_eq!(runs[0].label, "fillrandom 64 MiB (Baseline)");
    assert_eq!(runs[3].label, "fillrandom 128 MiB (RemapCom)");
    assert_eq!(runs[3].labels, [("mode".to_string(), "RemapCom".to_string())]);
    assert_eq!((runs[3].spec.workload.records, runs[3].spec.engine.lsm.align_blocks), (Some(200), true));
    assert!(!runs[2].spec.engine.lsm.align_blocks);
    let paper = Experiment::parse_at(text, Path::new("."), Some("paper")).unwrap();
    assert_eq!(paper.runs()[7].0, "fillseq 2 GiB (RemapCom)");
    let bad = text.replace("({mode})", "({moed})");
    assert!(error(&bad).contains("unknown placeholder {moed}; accepted: variant, name, data, mode"), "{}", error(&bad));
    let twice = text.replace("{name} {data} ({mode})", "{name} ({mode})");
    assert!(error(&twice).contains("two runs are labelled 'fillrandom (Baseline)'"), "{}", error(&twice));
    let nameless = text.replace("name = \"mode\"\ncases", "cases");
    assert!(error(&nameless).contains("a sweep of cases needs a name"), "{}", error(&nameless));
    let both = text.replace("name = \"mode\"\ncases", "name = \"mode\"\nparameter = \"engine.remap\"\ncases");
    assert!(error(&both).contains("give parameter and values"), "{}", error(&both));
}

//! Metrics by name: any number of a run's result, named by its dotted path through the result's
//! sections (`flash.erases`, `ftl.write_amplification`, `host.latency.p99_us`,
//! `lsm.levels.1.bytes_written`, `flash.by_cause.gc.busy_s`, `phases.load.ops_per_sec`), and the
//! short names of earlier experiment files ([`ALIASES`]).
//!
//! Contract:
//! - A name is checked against the shape of a result before anything runs ([`check_metric`]): a
//!   path that no kind of run has is refused, and the error names what exists where the path went
//!   wrong. The shape is [`RunResult`]'s own (a result with every section and field present), so
//!   a field added to a section is a metric at once.
//! - A run without the figure (its section or field absent for its kind of run) gives no value
//!   ([`metric_value`] returns `None`), never 0.
//! - Array elements are picked as in results.csv: by position (`levels.1`), or by their `name`
//!   (phases) or `cause` (flash causes).

use serde_json::Value;

use super::{FlashSection, FsSection, HostSection, LsmSection, RunResult, TimeBase};

/// The short names of earlier experiment files and the paths each stands for: the first path a
/// run has gives its value.
pub const ALIASES: [(&str, &[&str]); 6] = [
    // A page-write run's write amplification is its measured interval's; a run on real files
    // has no flash, and its host write amplification stands in (as it always did).
    ("write_amplification", &["ftl.write_amplification", "flash.write_amplification", "host.write_amplification"]),
    ("host_write_amplification", &["host.write_amplification"]),
    ("ops_per_sec", &["host.ops_per_sec"]),
    ("p99_latency_us", &["host.latency.p99_us"]),
    ("remapped_pages", &["flash.remapped_pages"]),
    ("sim_time_s", &["host.sim_time_s"]),
];

/// A metric name that names no number of a run's result.
#[derive(Debug, thiserror::Error)]
pub enum MetricError {
    #[error(
        "unknown metric '{metric}': {} has no '{segment}'; it has: {}. A metric is a short name ({}) or a dotted path \
         to a number of a run's result, e.g. flash.erases",
        if at.is_empty() { "a run's result" } else { at },
        known.join(", "),
        ALIASES.map(|a| a.0).join(", ")
    )]
    Unknown { metric: String, at: String, segment: String, known: Vec<String> },
    #[error("unknown metric '{metric}': {at} is a number, with nothing under it")]
    PastANumber { metric: String, at: String },
    #[error("metric '{metric}' is not a number: {what}")]
    NotANumber { metric: String, what: String },
}

/// Checks that `metric` is an alias or the path of a number some kind of run has.
pub fn check_metric(metric: &str) -> Result<(), MetricError> {
    if ALIASES.iter().any(|(a, _)| *a == metric) {
        return Ok(());
    }
    let shape = shape();
    let mut at = &shape;
    let mut walked: Vec<&str> = Vec::new();
    for segment in metric.split('.') {
        let unknown = |known: Vec<String>| MetricError::Unknown {
            metric: metric.to_string(),
            at: walked.join("."),
            segment: segment.to_string(),
            known,
        };
        at = match at {
            Value::Object(m) => match m.get(segment).or_else(|| m.get(ANY)) {
                Some(v) => v,
                None => return Err(unknown(m.keys().cloned().collect())),
            },
            // Each element has the shape of the first: any position or name picks one.
            Value::Array(items) => match items.first() {
                Some(v) => v,
                None => return Err(unknown(Vec::new())),
            },
            _ => return Err(MetricError::PastANumber { metric: metric.to_string(), at: walked.join(".") }),
        };
        walked.push(segment);
    }
    match at {
        Value::Number(_) | Value::Null => Ok(()),
        Value::Object(m) => Err(MetricError::NotANumber {
            metric: metric.to_string(),
            what: format!("it has {}", m.keys().cloned().collect::<Vec<_>>().join(", ")),
        }),
        Value::Array(_) => {
            Err(MetricError::NotANumber { metric: metric.to_string(), what: "a list: name an element".into() })
        }
        other => Err(MetricError::NotANumber { metric: metric.to_string(), what: format!("{other}") }),
    }
}

/// The value of `metric` (an alias or a dotted path) in a run's result as JSON (`run`), if the run
/// has it.
pub fn metric_value(metric: &str, run: &Value) -> Option<f64> {
    match ALIASES.iter().find(|(a, _)| *a == metric) {
        Some((_, paths)) => paths.iter().find_map(|p| path_value(p, run)),
        None => path_value(metric, run),
    }
}

/// The number at the dotted `path` of `run`.
fn path_value(path: &str, run: &Value) -> Option<f64> {
    let mut at = run;
    for segment in path.split('.') {
        at = match at {
            Value::Object(m) => m.get(segment)?,
            Value::Array(items) => match segment.parse::<usize>() {
                Ok(i) => items.get(i)?,
                Err(_) => items.iter().find(|x| ["name", "cause"].iter().any(|f| x[*f] == segment))?,
            },
            _ => return None,
        };
    }
    at.as_f64()
}

/// The key that, in the shape, stands for any key of a map (a phase's latency by kind).
const ANY: &str = "*";

/// A result with every section and field present and one element in every list: the shape every
/// metric path is checked against.
fn shape() -> Value {
    let mut phase = super::PhaseResult::default();
    phase.latency_by_kind.insert(ANY.into(), Default::default());
    let mut by_cause = super::HostWrites::default();
    by_cause.compaction_by_level.push(0);
    let zones = super::ZoneSummary {
        utilisation: vec![0.0],
        utilisation_histogram: vec![0],
        space_amplification: Some(0.0),
        ..Default::default()
    };
    let page_cache = super::PageCacheSummary { hit_ratio: Some(0.0), ..Default::default() };
    let kv_ssd = kvssd::DeviceWork {
        compactions_by_level: vec![0],
        ssts_read_per_get: Some(0.0),
        ftl: Some(Default::default()),
        ..Default::default()
    };
    let ftl = super::FtlSummary {
        theory_write_amplification: Some(0.0),
        theory_write_amplification_effective: Some(0.0),
        ..Default::default()
    };
    let r = RunResult {
        workload: String::new(),
        engine: String::new(),
        device: String::new(),
        time_base: TimeBase::Simulated,
        phases: vec![phase],
        host: HostSection {
            write_bytes_by_cause: Some(by_cause),
            write_amplification: Some(0.0),
            sim_time_s: Some(0.0),
            lanes: Some(Default::default()),
            cpu: Some(Default::default()),
            ..Default::default()
        },
        lsm: Some(LsmSection {
            levels: vec![super::LevelResult { host_write_bytes: Some(0), ..Default::default() }],
            ..Default::default()
        }),
        fs: Some(FsSection { page_cache: Some(page_cache), zones: Some(zones), device_write_bytes: Some(0) }),
        flash: Some(FlashSection {
            write_amplification: Some(0.0),
            by_cause: vec![Default::default()],
            ..Default::default()
        }),
        ftl: Some(ftl),
        kv_ssd: Some(kv_ssd),
        content_digest: Some(Default::default()),
    };
    serde_json::to_value(&r).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_every_section_are_metrics() {
        for m in [
            "ftl.write_amplification",
            "flash.erases",
            "flash.write_amplification",
            "host.write_amplification",
            "host.latency.p99_us",
            "host.lanes.foreground.cpu_ns",
            "host.write_bytes_by_cause.compaction_by_level.2",
            "lsm.levels.1.bytes_written",
            "lsm.stalls_by_cause.memtable.s",
            "flash.by_cause.gc.busy_s",
            "phases.load.latency_by_kind.read.p99_us",
            "fs.zones.space_amplification",
            "kv_ssd.ftl.static_ram_bytes",
        ] {
            check_metric(m).unwrap_or_else(|e| panic!("{m}: {e}"));
        }
        for (alias, paths) in ALIASES {
            check_metric(alias).unwrap();
            for p in paths {
                check_metric(p).unwrap_or_else(|e| panic!("{alias} -> {p}: {e}"));
            }
        }
    }

    #[test]
    fn unknown_paths_are_refused_naming_what_exists() {
        let e = check_metric("speed").unwrap_err().to_string();
        assert!(e.contains("has no 'speed'") && e.contains("flash") && e.contains("ops_per_sec"), "{e}");
        let e = check_metric("flash.erase").unwrap_err().to_string();
        assert!(e.contains("flash has no 'erase'") && e.contains("erases, gc_copied_pages"), "{e}");
        let e = check_metric("flash.erases.total").unwrap_err().to_string();
        assert!(e.contains("flash.erases is a number, with nothing under it"), "{e}");
        let e = check_metric("flash").unwrap_err().to_string();
        assert!(e.contains("not a number") && e.contains("program_bytes"), "{e}");
        assert!(check_metric("workload").is_err(), "a label is no number");
    }

    #[test]
    fn a_figure_a_run_lacks_has_no_value() {
        let run = serde_json::json!({
            "host": { "ops_per_sec": 10.0, "write_amplification": 1.5 },
            "flash": { "write_amplification": 3.0, "by_cause": [{ "cause": "gc", "busy_s": 2.0 }] },
            "phases": [{ "name": "load", "ops": 7 }],
        });
        assert_eq!(metric_value("write_amplification", &run), Some(3.0));
        assert_eq!(metric_value("flash.by_cause.gc.busy_s", &run), Some(2.0));
        assert_eq!(metric_value("flash.by_cause.0.busy_s", &run), Some(2.0));
        assert_eq!(metric_value("phases.load.ops", &run), Some(7.0));
        assert_eq!(metric_value("ftl.write_amplification", &run), None);
        assert_eq!(metric_value("remapped_pages", &run), None);
        let no_flash = serde_json::json!({ "host": { "write_amplification": 1.5 } });
        assert_eq!(metric_value("write_amplification", &no_flash), Some(1.5));
    }
}

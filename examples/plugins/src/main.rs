//! flashkv with this crate's plug-ins: `flashkv-plugins ftl --gc cost-age-time`,
//! `flashkv-plugins bench --compaction min-overlap`, `... bench --fs zone --zone-policy hot-cold`, or `gc = "cost-age-time"` in an experiment
//! file's `[device]` (`compaction = "min-overlap"` in its `[engine]`), run with
//! `flashkv-plugins run FILE`.

mod cost_age_time;
mod hot_cold;
mod min_overlap;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut plugins = lab::plugins::Registry::new();
    let registered = plugins
        .gc_policy(cost_age_time::CostAgeTime)
        .and_then(|p| p.compaction_strategy(min_overlap::MinOverlap))
        .and_then(|p| p.zone_allocator(hot_cold::HotCold))
        .map(|_| ());
    if let Err(e) = registered {
        eprintln!("flashkv-plugins: {e}");
        return ExitCode::from(2);
    }
    lab::cli::main(plugins)
}

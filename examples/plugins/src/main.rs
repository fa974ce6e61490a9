//! flashkv with this crate's plug-ins: `flashkv-plugins ftl --gc cost-age-time`, or
//! `gc = "cost-age-time"` in an experiment file's `[device]`, run with `flashkv-plugins run FILE`.

mod cost_age_time;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut plugins = lab::plugins::Registry::new();
    if let Err(e) = plugins.gc_policy(cost_age_time::CostAgeTime) {
        eprintln!("flashkv-plugins: {e}");
        return ExitCode::from(2);
    }
    lab::cli::main(plugins)
}

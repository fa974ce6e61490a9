//! flashkv with this crate's plug-ins: `flashkv-plugins ftl --gc cost-age-time`,
//! `... ftl --ftl block-map`, `... bench --compaction min-overlap`,
//! `... bench --fs zone --zone-policy hot-cold`, `... bench --engine hash-kv`; or the same names
//! in an experiment file (`[device] gc = "cost-age-time"`, `[engine] compaction = "min-overlap"`,
//! ...), run with `flashkv-plugins run FILE`.

mod block_map;
mod cost_age_time;
mod hash_kv;
mod hot_cold;
mod min_overlap;

use std::process::ExitCode;

/// The allocator `flashkv` uses (crates/lab/src/main.rs says why): a binary of one's own picks its
/// own, and a simulated run is 1.23-1.42x slower on glibc's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    match registry() {
        Ok(plugins) => lab::cli::main(plugins),
        Err(e) => {
            eprintln!("flashkv-plugins: {e}");
            ExitCode::from(2)
        }
    }
}

/// This crate's plug-ins, each under its name.
fn registry() -> Result<lab::plugins::Registry, lab::plugins::PluginError> {
    let mut plugins = lab::plugins::Registry::new();
    plugins
        .gc_policy(cost_age_time::CostAgeTime)?
        .compaction_strategy(min_overlap::MinOverlap)?
        .zone_allocator(hot_cold::HotCold)?
        .ftl(block_map::NAME, |cfg| Ok(Box::new(block_map::BlockMap::new(cfg)?)))?
        .kv_ssd(hash_kv::NAME, |media| Ok(Box::new(hash_kv::HashKv::new(media)?)))?;
    Ok(plugins)
}

//! `flashkv repro NAME`: reproduce a seed paper's experiments and put our measurement beside the
//! paper's number, at a reduced scale in minutes or at the paper's scale on request.

mod remapcom;
mod remapcom_xfs;

use std::path::PathBuf;

use crate::publish;

#[derive(clap::Args, Debug, Clone)]
pub struct ReproArgs {
    /// remapcom (simulated FEMU SSD) or remapcom-xfs (real reflink XFS on a loop device).
    pub name: String,
    /// small (the paper's ratios at 1/16 of its size, minutes), paper (16 GiB device, 4 GiB
    /// written: hours), or tiny (1/64, for tests).
    #[arg(long, default_value = "small")]
    pub scale: String,
    /// Only these parts, comma-separated (remapcom: fig9-11, table3, fig12, fig13, fig14, fig15).
    #[arg(long)]
    pub only: Option<String>,
    /// Where simulated devices keep page contents: auto, memory, file, file:DIR (see `--store` of
    /// bench).
    #[arg(long, default_value = "auto")]
    pub store: String,
    /// The result folder (default: results/repro-NAME-SCALE).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub const NAMES: &str = "remapcom, remapcom-xfs";

pub fn run(a: &ReproArgs, progress: bool) -> Result<(), String> {
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("results/repro-{}-{}", a.name, a.scale)));
    let only: Option<Vec<String>> = a.only.as_ref().map(|s| s.split(',').map(|p| p.trim().to_string()).collect());
    let (set, timings) = match a.name.as_str() {
        // Long runs: progress lines always go to stderr.
        "remapcom" => remapcom::run(&remapcom::Scale::parse(&a.scale)?, &a.store, only.as_deref(), true)?,
        "remapcom-xfs" => remapcom_xfs::run(&a.scale, progress)?,
        other => return Err(format!("repro: unknown experiment '{other}'; accepted: {NAMES}")),
    };
    print!("{}", publish::summary(&set));
    publish::write_folder(&out, &set, &timings)?;
    println!("report: {}", out.join("index.html").display());
    Ok(())
}

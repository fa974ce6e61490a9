//! What a long run says on stderr while it works: a progress bar per phase, drawn on a terminal
//! and silent otherwise (pipes, CI) or with `--quiet`; and, before a single run starts, one line
//! that states its device with the capacity resolved (the preset's own when none was given), so a
//! run of minutes never starts without saying what it runs on.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::spec::{format_size, Kind, Plan, Storage};

/// A bar of `total` steps labelled `what`, hidden unless `show` and stderr is a terminal.
pub fn bar(show: bool, total: u64, what: &str) -> ProgressBar {
    if !show {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    if let Ok(style) = ProgressStyle::with_template("{msg:>8} [{bar:40}] {percent:>3}% eta {eta}") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_string());
    bar
}

/// `device: ...`: the device `plan` runs on as its result will name it, then for a simulated
/// device its raw capacity and the geometry that makes it.
pub fn device_line(plan: &Plan) -> String {
    let raw = match plan.media() {
        Some(media) => {
            let g = &media.geometry;
            format!(
                "; raw capacity {} ({} bytes: {} channels x {} chips x {} dies x {} planes x {} blocks x {} pages of {})",
                format_size(g.capacity_bytes()),
                g.capacity_bytes(),
                g.channels,
                g.chips_per_channel,
                g.dies_per_chip,
                g.planes_per_die,
                g.blocks_per_plane,
                g.pages_per_block,
                format_size(g.page_size as u64)
            )
        }
        None => String::new(),
    };
    let database = match &plan.kind {
        Kind::Lsm(p) => match &p.storage {
            Storage::Posix(dir) => format!(" (the database in {})", dir.join(crate::engine::DIR).display()),
            _ => String::new(),
        },
        _ => String::new(),
    };
    format!("device: {}{database}{raw}", plan.device)
}

//! The report page is known to display: a headless Chromium (Debian's `chromium`) renders a
//! generated index.html with its charts, and the screenshot must be a real picture (large enough,
//! many colours), not a blank or error page.
//!
//! It needs Debian's `chromium` (tests/setup-chromium.sh installs it), so it is ignored by a plain
//! `cargo test`, which lists it as ignored, and runs on request: `cargo test --release -p lab
//! --test report_screenshot -- --ignored` (CI runs it so). Run so without chromium, it prints
//! "skipped: chromium not installed" and passes, unless FLASHKV_REQUIRE_CHROMIUM=1, when it fails
//! instead (CI sets it). Set FLASHKV_SCREENSHOT_OUT=<dir> to keep the report and the screenshot for
//! a look.

mod report_support;

use std::collections::HashSet;
use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Chromium normally needs a few seconds; a hung browser must fail the test, not the CI run.
const BROWSER_DEADLINE: Duration = Duration::from_secs(120);

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

fn screenshot(browser: &Path, page: &Path, work: &Path) -> PathBuf {
    let shot = work.join("shot.png");
    let profile = work.join("profile");
    fs::create_dir_all(&profile).unwrap();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1200,1600")
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", browser.display()));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            assert!(
                status.success(),
                "{} failed ({status}):\n{}",
                browser.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            break;
        }
        if started.elapsed() > BROWSER_DEADLINE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{} did not finish within {BROWSER_DEADLINE:?}", browser.display());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    shot
}

/// (width, height, distinct RGB colours, share of pixels that are not white)
fn picture_stats(png_path: &Path) -> (u32, u32, usize, f64) {
    let mut decoder = png::Decoder::new(BufReader::new(File::open(png_path).unwrap()));
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let mut colours = HashSet::new();
    let mut inked = 0usize;
    for px in pixels.chunks_exact(channels) {
        let rgb = match channels {
            1 | 2 => [px[0], px[0], px[0]],
            _ => [px[0], px[1], px[2]],
        };
        colours.insert(rgb);
        if rgb != [255, 255, 255] {
            inked += 1;
        }
    }
    let total = (info.width as usize * info.height as usize).max(1);
    (info.width, info.height, colours.len(), inked as f64 / total as f64)
}

#[test]
#[ignore = "needs Debian's chromium (tests/setup-chromium.sh); run with --ignored (CI does)"]
fn report_page_renders_in_headless_chromium() {
    let Some(browser) = find_chromium() else {
        if std::env::var("FLASHKV_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium not installed but FLASHKV_REQUIRE_CHROMIUM=1 (run crates/lab/tests/setup-chromium.sh)");
        }
        println!("skipped: chromium not installed");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("report");
    report_support::report::write_report(&dir, &report_support::sample()).unwrap();
    let started = Instant::now();
    let shot = screenshot(&browser, &dir.join("index.html"), work.path());
    let took = started.elapsed();

    let size = fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    if let Some(keep) = std::env::var_os("FLASHKV_SCREENSHOT_OUT") {
        let keep = PathBuf::from(keep);
        fs::create_dir_all(&keep).unwrap();
        for entry in fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            // Files only (the tables/ folder is not needed to look at the page).
            if entry.file_type().unwrap().is_file() {
                fs::copy(entry.path(), keep.join(entry.file_name())).unwrap();
            }
        }
        if size > 0 {
            fs::copy(&shot, keep.join("shot.png")).unwrap();
        }
    }
    assert!(size > 10 * 1024, "screenshot {} is {size} bytes: the page did not render", shot.display());
    let (w, h, colours, inked) = picture_stats(&shot);
    println!("screenshot {w}x{h}, {size} bytes, {colours} colours, {:.1}% not white, {took:?}", inked * 100.0);
    assert_eq!((w, h), (1200, 1600));
    assert!(colours > 50, "only {colours} distinct colours: blank or error page");
    assert!(inked > 0.02, "only {:.2}% of the pixels are not white", inked * 100.0);
}

//! What the CLI test files share: running the `flashkv` binary this build made.

use std::process::Command;

/// Runs `flashkv ARGS`; returns its exit code (-1 when killed by a signal), stdout and stderr.
pub fn flashkv(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_flashkv")).args(args).output().expect("run flashkv");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

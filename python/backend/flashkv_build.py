"""The package's build backend: maturin, plus the `flashkv` command-line binary.

maturin builds the native module (`flashkv._native`) but cannot also build a Rust binary into the
same wheel. So before maturin builds a wheel (or an editable install), this runs
`cargo build --release --bin flashkv` in the repository's workspace, the very build that gives
`target/release/flashkv` (nothing is rebuilt when that binary is up to date), and copies the binary
to `flashkv/_bin/flashkv`, which the wheel ships and `flashkv.cli` runs as the `flashkv` command.

It also checks that the package's version (python/Cargo.toml, which maturin reads) is the
workspace's, the version `flashkv --version` prints.

Everything else is maturin's, unchanged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

import maturin

# The PEP 517 hooks this backend leaves to maturin as they are.
build_sdist = maturin.build_sdist
get_requires_for_build_sdist = maturin.get_requires_for_build_sdist
get_requires_for_build_wheel = maturin.get_requires_for_build_wheel
prepare_metadata_for_build_wheel = maturin.prepare_metadata_for_build_wheel
if hasattr(maturin, "get_requires_for_build_editable"):
    get_requires_for_build_editable = maturin.get_requires_for_build_editable

# maturin warns when it is not the build backend itself; here it is, behind this module.
os.environ.setdefault("MATURIN_NO_MISSING_BUILD_BACKEND_WARNING", "1")

PACKAGE = Path(__file__).resolve().parents[1]  # python/
WORKSPACE = PACKAGE.parent
BINARY = PACKAGE / "flashkv" / "_bin" / "flashkv"


def _fail(message: str) -> NoReturn:
    sys.stderr.write(f"flashkv build: {message}\n")
    raise SystemExit(1)


def _package_version() -> str:
    text = (PACKAGE / "Cargo.toml").read_text()
    found = re.search(r'(?ms)^\[package\].*?^version\s*=\s*"([^"]+)"', text)
    if not found:
        _fail("no version in python/Cargo.toml's [package]")
    return found.group(1)


def _version_of(package_id: str) -> str:
    """The version in a cargo package id: `path+file:///...#lab@0.1.0`, `...#0.1.0` or, from an
    older cargo, `lab 0.1.0 (path+file:///...)`."""
    if " (" in package_id:
        return package_id.split()[1]
    return package_id.rpartition("#")[2].rpartition("@")[2]


def build_cli() -> Path:
    """Builds the workspace's `flashkv` binary and copies it into the package; returns its path."""
    manifest = WORKSPACE / "Cargo.toml"
    if not (WORKSPACE / "crates" / "lab" / "Cargo.toml").is_file():
        _fail(f"no flashkv workspace at {WORKSPACE}: install from a checkout (pip install ./python)")
    cargo = os.environ.get("CARGO", "cargo")
    cmd = [cargo, "build", "--release", "--bin", "flashkv", "--manifest-path", str(manifest)]
    cmd += ["--message-format", "json-render-diagnostics"]
    sys.stderr.write(f"flashkv build: {' '.join(cmd[:5])} (in the workspace)\n")
    try:
        done = subprocess.run(cmd, cwd=WORKSPACE, stdout=subprocess.PIPE, text=True)
    except OSError as e:
        _fail(f"cannot run {cargo}: {e} (Rust stable is needed: https://rustup.rs)")
    if done.returncode != 0:
        _fail(f"cargo build of the flashkv binary failed (exit status {done.returncode})")
    built, version = None, None
    for line in done.stdout.splitlines():
        msg = json.loads(line) if line.startswith("{") else {}
        target = msg.get("target", {})
        is_cli = target.get("name") == "flashkv" and "bin" in target.get("kind", [])
        if msg.get("reason") == "compiler-artifact" and is_cli:
            built = msg.get("executable")
            version = _version_of(msg.get("package_id", ""))
    if not built:
        _fail("cargo built no flashkv executable")
    if version and version != _package_version():
        _fail(f"python/Cargo.toml has version {_package_version()}, the workspace {version}: make them equal")
    BINARY.parent.mkdir(parents=True, exist_ok=True)
    # Copied beside, then renamed over: a running old binary keeps its file.
    partial = BINARY.with_name(BINARY.name + ".partial")
    shutil.copy2(built, partial)
    os.replace(partial, BINARY)
    return BINARY


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build_cli()
    return maturin.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    build_cli()
    return maturin.build_editable(wheel_directory, config_settings, metadata_directory)

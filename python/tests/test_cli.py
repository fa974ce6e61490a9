"""The installed package: the `flashkv` command is the lab's command line, and `__version__` is the
package's version, which is the workspace's."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from importlib.metadata import version
from pathlib import Path

import flashkv

from conftest import REPO


def installed_command() -> str:
    """The `flashkv` command the package installed beside this interpreter's scripts."""
    path = Path(sysconfig.get_path("scripts")) / "flashkv"
    assert path.is_file(), f"{path}: the package installed no flashkv command"
    return str(path)


def run(*cmd, **kwargs):
    return subprocess.run(list(cmd), capture_output=True, text=True, **kwargs)


def workspace_version() -> str:
    text = (REPO / "Cargo.toml").read_text()
    return re.search(r'(?ms)^\[workspace\.package\].*?^version\s*=\s*"([^"]+)"', text).group(1)


def test_version_is_the_package_metadata_version_and_the_workspace_version():
    assert flashkv.__version__ == version("flashkv")
    assert flashkv.__version__ == workspace_version()


def test_the_installed_command_prints_the_version(flashkv_bin):
    done = run(installed_command(), "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"flashkv {flashkv.__version__}\n"
    assert done.stdout == run(flashkv_bin, "--version").stdout


def test_the_installed_command_is_the_release_binary(flashkv_bin):
    # The same help, and the same error and exit status for a bad argument, as target/release/flashkv.
    for args in (["--help"], ["bench", "--help"], ["bench", "--no-such-flag"]):
        ours, theirs = run(installed_command(), *args), run(flashkv_bin, *args)
        same = (ours.returncode, ours.stdout, ours.stderr) == (theirs.returncode, theirs.stdout, theirs.stderr)
        assert same, (args, ours, theirs)
    assert run(installed_command(), "bench", "--no-such-flag").returncode == 2


def test_python_m_flashkv_is_the_command_and_sets_the_interpreter_for_ray(tmp_path):
    done = run(sys.executable, "-m", "flashkv", "--version")
    assert done.returncode == 0 and done.stdout == f"flashkv {flashkv.__version__}\n", done.stderr
    # `--executor ray` runs $FLASHKV_PYTHON: the command sets it to its interpreter when unset. A
    # stand-in for the binary shows the environment it gets.
    env = {k: v for k, v in os.environ.items() if k != "FLASHKV_PYTHON"}
    printenv = shutil.which("env")
    script = f"import pathlib, flashkv.cli as c; c.binary = lambda: pathlib.Path({printenv!r}); c.main([])"
    done = run(sys.executable, "-c", script, env=env)
    assert f"FLASHKV_PYTHON={sys.executable}\n" in done.stdout, done.stdout

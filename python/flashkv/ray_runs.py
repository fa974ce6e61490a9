"""flashkv runs as Ray tasks. Ray schedules; each task runs one run through the native module,
exactly as ``flashkv`` runs it locally, so the results are the same.

Used by ``flashkv.run(..., executor="ray")`` and, as ``python -m flashkv.ray_runs [--address A]``,
by ``flashkv run FILE --executor ray[=ADDRESS]``: it reads one JSON object per line on stdin,
``{"index", "spec"}``, and prints ``{"index", "outcome"}`` per run as each finishes.

With ``--binary PATH`` (a flashkv binary with plug-ins, docs/extending.md), each task runs that
binary (``PATH run-spec``) instead of the native module: the binary goes to the workers through
Ray's object store, is kept on each worker machine under its digest, and runs there.

Where a shipped binary is kept (contract): in a folder of the worker's own user,
``$XDG_CACHE_HOME/flashkv/plugins`` or ``~/.cache/flashkv/plugins``, created with mode 0700 and
refused when it is a link, is another user's, or others may write in it; the file is written
under a temporary name created exclusively in that folder, then renamed into place; its sha256
is checked before every run, and a file that does not match (or is not a plain file of this
user) is replaced, never run. Nothing goes through the shared temporary folder, where another
local user could have put a program of their own under the name the binary's digest predicts.
When the user's cache folder cannot be made, a new private folder (``tempfile.mkdtemp``) of this
process is used instead.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, Optional


def _run_one(spec_json: str) -> str:
    from flashkv import _native

    return _native.run_spec(spec_json)


class UnsafeFolder(RuntimeError):
    """The folder for shipped binaries is a link, another user's, or writable by others."""


# The private folder of this process, when the user's cache folder cannot be made.
_fallback: Optional[Path] = None


def _plugin_folder() -> Path:
    """This user's folder for shipped binaries (see the module's contract)."""
    global _fallback
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = Path(base) / "flashkv" / "plugins"
    try:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        if _fallback is None:
            _fallback = Path(tempfile.mkdtemp(prefix="flashkv-plugins-"))
        return _fallback
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise UnsafeFolder(f"{folder} is not a folder (a link?): refusing to keep a program there")
    if st.st_uid != os.getuid():
        raise UnsafeFolder(f"{folder} belongs to user {st.st_uid}, not to this user ({os.getuid()})")
    if st.st_mode & 0o077:
        # Ours: narrowed rather than refused (an older version, or a umask, left it open).
        os.chmod(folder, 0o700)
    return folder


def _sha256_of(path: Path) -> Optional[str]:
    """The sha256 of ``path`` if it is a plain file of this user (not a link), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            return None
        h = hashlib.sha256()
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
        return h.hexdigest()


def _installed(binary: bytes, digest: str) -> Path:
    """The path of ``binary`` (whose sha256 is ``digest``) in this user's folder, written there
    unless a file with that digest already is."""
    if hashlib.sha256(binary).hexdigest() != digest:
        raise ValueError("the shipped binary does not match its digest")
    folder = _plugin_folder()
    exe = folder / f"flashkv-plugins-{digest}"
    if _sha256_of(exe) == digest:
        return exe
    # Created exclusively (O_EXCL, mode 0600) under a name of its own, then renamed over
    # whatever had the binary's name: a link or a foreign file there is replaced, never followed.
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".flashkv-plugins-", suffix=".part", delete=False) as f:
        part = Path(f.name)
        try:
            f.write(binary)
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), 0o700)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
    os.replace(part, exe)
    return exe


def _run_with_binary(binary: bytes, digest: str, spec_json: str) -> str:
    """Runs ``spec_json`` with a shipped plug-in binary, kept in this user's folder under its
    digest and checked against it before the run (see the module's contract)."""
    # Checked (and replaced on a mismatch) before every run; the folder is this user's alone, so
    # what was checked is what runs.
    exe = _installed(binary, digest)
    done = subprocess.run([str(exe), "run-spec"], input=spec_json, capture_output=True, text=True)
    if done.returncode != 0:
        return json.dumps({"error": f"{exe.name} run-spec failed: {done.stderr.strip()}"})
    return done.stdout.strip()


def run_specs(
    specs: Iterable[tuple[int, str]],
    address: Optional[str] = None,
    workers: Optional[int] = None,
    binary: Optional[Path] = None,
) -> Iterator[tuple[int, str]]:
    """Runs each ``(index, spec JSON)`` as a Ray task and yields ``(index, outcome JSON)`` in the
    order they finish. Joins the running Ray, else the cluster at ``address``, else starts one here
    with ``workers`` CPUs (all when None). ``binary``: a plug-in binary the tasks run."""
    import ray

    if not ray.is_initialized():
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=address, log_to_driver=False)
    if binary is None:
        task = ray.remote(num_cpus=1, max_retries=0)(_run_one)
        pending = {task.remote(spec): index for index, spec in specs}
    else:
        blob = Path(binary).read_bytes()
        digest = hashlib.sha256(blob).hexdigest()
        shipped = ray.put(blob)
        task = ray.remote(num_cpus=1, max_retries=0)(_run_with_binary)
        pending = {task.remote(shipped, digest, spec): index for index, spec in specs}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            index = pending.pop(ref)
            try:
                outcome = ray.get(ref)
            except Exception as e:  # a task that died (a worker lost, say) is that run's failure
                outcome = json.dumps({"error": f"Ray task failed: {e}"})
            yield index, outcome


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m flashkv.ray_runs", description=__doc__)
    parser.add_argument("--address", help="the Ray cluster (default: a Ray started here)")
    parser.add_argument("--workers", type=int, help="CPUs of a Ray started here (default: all)")
    parser.add_argument("--binary", type=Path, help="a flashkv binary with plug-ins that the tasks run")
    args = parser.parse_args(argv)
    specs = []
    for line in sys.stdin:
        if line.strip():
            task = json.loads(line)
            specs.append((task["index"], json.dumps(task["spec"])))
    for index, outcome in run_specs(specs, address=args.address, workers=args.workers, binary=args.binary):
        # The outcome is the native module's JSON, passed on as is (no float re-encoding).
        sys.stdout.write(f'{{"index": {index}, "outcome": {outcome}}}\n')
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""flashkv runs as Ray tasks. Ray schedules; each task runs one run through the native module,
exactly as ``flashkv`` runs it locally, so the results are the same.

Used by ``flashkv.run(..., executor="ray")`` and, as ``python -m flashkv.ray_runs [--address A]``,
by ``flashkv run FILE --executor ray[=ADDRESS]``: it reads one JSON object per line on stdin,
``{"index", "spec"}``, and prints ``{"index", "outcome"}`` per run as each finishes.

With ``--binary PATH`` (a flashkv binary with plug-ins, docs/extending.md), each task runs that
binary (``PATH run-spec``) instead of the native module: the binary goes to the workers through
Ray's object store, is written once per worker machine under its digest, and runs there.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, Optional


def _run_one(spec_json: str) -> str:
    from flashkv import _native

    return _native.run_spec(spec_json)


def _run_with_binary(binary: bytes, digest: str, spec_json: str) -> str:
    """Runs ``spec_json`` with a shipped plug-in binary, written to this machine's temporary folder
    under its digest the first time."""
    exe = Path(tempfile.gettempdir()) / f"flashkv-plugins-{digest[:16]}"
    if not exe.exists():
        part = exe.with_suffix(f".{os.getpid()}.part")
        part.write_bytes(binary)
        part.chmod(0o755)
        os.replace(part, exe)
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

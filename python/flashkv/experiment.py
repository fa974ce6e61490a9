"""Experiments from Python: the same runner, result folder and results.json as ``flashkv run``."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Union

from . import _native

Experiment = Union[str, os.PathLike, Mapping[str, Any]]


def experiment_text(experiment: Experiment) -> str:
    """The experiment-file (TOML) text of ``experiment``: a path to a file, the text itself, or a
    dict of the file's sections (``{"title": ..., "workload": {...}, "variant": [...]}``)."""
    if isinstance(experiment, Mapping):
        return _native.experiment_text(json.dumps(experiment))
    return _file_text(experiment)


def _file_text(experiment: Union[str, os.PathLike]) -> str:
    """The text of an experiment given as a path to its file or as the text itself."""
    if isinstance(experiment, os.PathLike) or (isinstance(experiment, str) and "\n" not in experiment):
        return Path(experiment).read_text()
    return experiment


def _parse(experiment: Experiment) -> _native.ParsedExperiment:
    """``experiment`` read once, every run's specification made and checked: a dict goes straight
    to the Rust structs (as JSON, no TOML text made), a file or text is parsed."""
    if isinstance(experiment, Mapping):
        return _native.ParsedExperiment.from_json(json.dumps(experiment))
    return _native.ParsedExperiment.from_text(_file_text(experiment))


class Results:
    """A finished experiment: its result folder and what its results.json holds."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self.data: dict = json.loads((self.folder / "results.json").read_text())

    @property
    def schema_version(self) -> int:
        """The shape of ``runs``: 2, runs in sections (``host``, ``lsm``, ``fs``, ``flash``, ``ftl``,
        ``kv_ssd``; docs/design.md, "Accounting names"); 1 (a results.json without the field),
        runs with flat fields, as flashkv wrote them before the sections."""
        return self.data.get("schema_version", 1)

    @property
    def runs(self) -> list[dict]:
        """One dict per run, in the experiment's order (variant, sweep value, then the accounting)."""
        return self.data["runs"]

    @property
    def tables(self) -> dict[str, list[dict]]:
        """The report's tables, each as a list of rows (dicts keyed by column)."""
        return {t["name"]: [dict(zip(t["columns"], row)) for row in t["rows"]] for t in self.data["tables"]}

    def frame(self):
        """A pandas DataFrame, one row per run: every number and text of a run, nested objects
        flattened to their dotted paths, the names an experiment's ``metrics`` take
        (``flash.write_amplification``, ``host.latency.p99_us``); lists (phases, levels) are left
        to ``runs``. A figure a run does not have (its section absent) is missing (NaN)."""
        import pandas

        def flatten(prefix: str, value: dict, row: dict) -> None:
            for key, v in value.items():
                name = f"{prefix}{key}"
                if isinstance(v, dict):
                    flatten(f"{name}.", v, row)
                elif not isinstance(v, list):
                    row[name] = v

        rows = []
        for run in self.runs:
            row: dict = {}
            flatten("", run, row)
            rows.append(row)
        return pandas.DataFrame(rows)

    def __repr__(self) -> str:
        return f"Results({self.data['title']!r}, {len(self.runs)} runs, folder={str(self.folder)!r})"


def run(
    experiment: Experiment,
    out: Optional[Union[str, os.PathLike]] = None,
    executor: str = "local",
    address: Optional[str] = None,
    workers: Optional[int] = None,
    progress: bool = False,
    binary: Optional[Union[str, os.PathLike]] = None,
) -> Results:
    """Runs ``experiment`` and writes its result folder ``out`` (a new temporary folder when None).

    ``executor``: ``"local"`` (this machine's cores, as ``flashkv run``) or ``"ray"``: every run a
    Ray task, on the running Ray (``ray.init()`` done before), on the cluster at ``address``, or on
    a Ray started here with ``workers`` CPUs.

    ``binary``: a flashkv binary of one's own, with plug-ins registered (docs/extending.md), that
    runs the experiment (``BINARY run FILE --out FOLDER --executor ...``) so that it may name them;
    on Ray, the binary is shipped to the workers and each task runs it (a Ray it starts here takes
    every CPU, so ``workers`` does not apply).
    """
    if binary is not None:
        # The binary reads the experiment itself, from a file: this process only writes it.
        text = experiment_text(experiment)
    else:
        parsed = _parse(experiment)
    folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="flashkv-"))
    if binary is not None:
        if executor not in ("local", "ray"):
            raise ValueError(f"executor: unknown executor {executor!r}; accepted: local, ray")
        if workers is not None:
            raise ValueError("workers: a plug-in binary's Ray takes every CPU; leave workers unset")
        on = executor if address is None or executor == "local" else f"ray={address}"
        _run_binary(Path(binary), text, folder, progress, on)
    elif executor == "local":
        parsed.run(str(folder), "local", progress)
    elif executor == "ray":
        from .ray_runs import run_specs

        # A folder that cannot be written is refused before the runs, not after them.
        parsed.check_folder(str(folder))
        runs = parsed.runs()
        outcomes: list[Optional[str]] = [None] * len(runs)
        specs = [(i, spec) for i, (_, spec) in enumerate(runs)]
        for done, (index, outcome) in enumerate(run_specs(specs, address=address, workers=workers), 1):
            outcomes[index] = outcome
            if progress:
                print(f"[{done}/{len(runs)}] {runs[index][0]}: done", flush=True)
        parsed.assemble(outcomes, str(folder))
    else:
        raise ValueError(f"executor: unknown executor {executor!r}; accepted: local, ray")
    return Results(folder)


def _run_binary(binary: Path, text: str, folder: Path, progress: bool, executor: str) -> None:
    """``binary run`` on ``text``, its result folder ``folder``; its error is raised as FlashkvError."""
    import subprocess

    if not binary.is_file():
        raise FileNotFoundError(f"binary: {binary} is not a file")
    # In the current directory, so that the files the experiment names resolve as in-process.
    with tempfile.NamedTemporaryFile("w", suffix=".toml", prefix=".flashkv-", dir=os.getcwd(), delete=False) as f:
        f.write(text)
    try:
        done = subprocess.run(
            [str(binary), "run", f.name, "--out", str(folder), "--executor", executor],
            # On Ray, the binary runs this interpreter's flashkv.ray_runs.
            env={**os.environ, "FLASHKV_PYTHON": os.environ.get("FLASHKV_PYTHON", sys.executable)},
            stdout=None if progress else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.unlink(f.name)
    if done.returncode != 0:
        raise _native.FlashkvError(done.stderr.strip())

"""Experiments from Python give the command line's results, locally and on Ray."""

import os
import subprocess
import sys

import flashkv
import pytest

from conftest import sweep


def write_file(tmp_path, experiment):
    path = tmp_path / "sweep.toml"
    path.write_text(flashkv.experiment_text(experiment))
    return path


def test_results_json_from_python_equals_the_command_lines_byte_for_byte(tmp_path, flashkv_bin):
    experiment = sweep(runs_per_variant=2)
    path = write_file(tmp_path, experiment)
    cli = tmp_path / "cli"
    subprocess.run([flashkv_bin, "run", str(path), "--out", str(cli)], check=True, capture_output=True)
    from_file = flashkv.run(path, out=tmp_path / "file")
    from_dict = flashkv.run(experiment, out=tmp_path / "dict")
    expected = (cli / "results.json").read_bytes()
    assert (from_file.folder / "results.json").read_bytes() == expected
    assert (from_dict.folder / "results.json").read_bytes() == expected
    # One row per run, with the point and the accounting names of docs/design.md as columns.
    frame = from_dict.frame()
    assert len(frame) == 4
    assert list(frame["variant"]) == ["LevelDB", "LevelDB", "RemapCom", "RemapCom"]
    # Sweep values stay numbers: the column is numeric.
    assert list(frame["workload.value_size"]) == [992, 2013, 992, 2013]
    assert frame["workload.value_size"].dtype.kind in "iu"
    assert from_dict.schema_version == 2
    for column in [
        "host.user_bytes",
        "host.write_bytes",
        "flash.program_bytes",
        "flash.write_amplification",
        "host.latency.p99_us",
        "lsm.stall_s",
    ]:
        assert column in frame.columns, column
    assert (frame["flash.program_bytes"] > frame["host.user_bytes"]).all()
    assert from_dict.tables["runs"][0]["variant"] == "LevelDB"


def test_a_sweep_on_ray_with_two_workers_equals_the_local_run(tmp_path, flashkv_bin):
    experiment = sweep(runs_per_variant=4)
    local = flashkv.run(experiment, out=tmp_path / "local")
    assert len(local.runs) == 8
    on_ray = flashkv.run(experiment, out=tmp_path / "ray", executor="ray", workers=2)
    expected = (local.folder / "results.json").read_bytes()
    assert (on_ray.folder / "results.json").read_bytes() == expected
    # The command line's --executor ray goes through the same tasks (its own Ray).
    path = write_file(tmp_path, experiment)
    env = dict(os.environ, FLASHKV_PYTHON=sys.executable)
    done = subprocess.run(
        [flashkv_bin, "run", str(path), "--out", str(tmp_path / "cli-ray"), "--executor", "ray"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "cli-ray" / "results.json").read_bytes() == expected


def test_a_failed_run_on_ray_names_the_run(tmp_path):
    # 64 MiB of data on a 16 MiB device: the device fills; the error names the variant.
    experiment = sweep(runs_per_variant=1, data="64MiB")
    experiment["device"]["capacity"] = "16MiB"
    try:
        flashkv.run(experiment, out=tmp_path / "ray", executor="ray", workers=2)
    except flashkv.FlashkvError as e:
        assert "LevelDB" in str(e), e
    else:
        raise AssertionError("a run on a full device must fail")


def test_the_example_runs_its_sweep_and_plots_it(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "sweep.py")
    done = subprocess.run(
        [sys.executable, example, "--out", str(tmp_path / "sweep")], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "8 runs in" in done.stdout and "RemapCom" in done.stdout, done.stdout
    assert (tmp_path / "sweep" / "sweep.png").stat().st_size > 10_000


def test_a_plug_in_binary_runs_its_own_gc_policy(tmp_path):
    """The example plug-in crate's binary (examples/plugins, built with the workspace) runs an
    experiment that names its GC policy; the package's own runner does not know the name."""
    from conftest import REPO

    binary = REPO / "target" / "release" / "flashkv-plugins"
    if not binary.exists():
        pytest.fail(f"{binary} does not exist: run `cargo build --release --workspace` first")
    experiment = {
        "title": "plug-in gc",
        "device": {"capacity": "256MiB", "channels": 1, "spare_factor": 0.1, "gc": "cost-age-time"},
        "workload": {"name": "pages", "pages": {"writes": 2.0, "pattern": "zipf:0.9"}},
    }
    results = flashkv.run(experiment, out=tmp_path / "cat", binary=binary)
    assert "GC cost-age-time" in results.runs[0]["device"]
    with pytest.raises(flashkv.FlashkvError, match="cost-age-time"):
        flashkv.run(experiment, out=tmp_path / "native")


def test_a_plug_in_binary_runs_on_ray(tmp_path):
    """On Ray, the plug-in binary is shipped to the workers and each task runs it: the results are
    those of its local run, for a plug-in FTL and a plug-in key-value SSD."""
    from conftest import REPO

    binary = REPO / "target" / "release" / "flashkv-plugins"
    experiment = {
        "title": "plug-ins on ray",
        "device": {"capacity": "64MiB", "pages_per_block": 64, "ftl": "block-map"},
        "workload": {"name": "pages", "pages": {"writes": 1.0, "pattern": "uniform"}},
        "variant": [
            {"name": "block-map"},
            {
                "name": "hash-kv",
                "engine": {"name": "hash-kv"},
                "device": {"ftl": "page", "capacity": "256MiB", "pages_per_block": 256},
                "workload": {"name": "fillrandom", "records": 3000},
            },
        ],
    }
    local = flashkv.run(experiment, out=tmp_path / "local", binary=binary)
    on_ray = flashkv.run(experiment, out=tmp_path / "ray", binary=binary, executor="ray")
    assert local.runs[0]["ftl"]["write_amplification"] == 64.0
    assert (on_ray.folder / "results.json").read_bytes() == (local.folder / "results.json").read_bytes()


def test_an_experiment_is_read_once_whatever_runs_it(tmp_path, monkeypatch):
    """``run`` reads its experiment once (a dict straight into the Rust structs, a file parsed),
    and its runs, its run here and the result folder of outcomes from elsewhere all come from that
    reading. Ray's tasks are replaced by runs in this process: the same specs and outcomes."""
    from flashkv import _native, ray_runs

    def in_process(specs, address=None, workers=None):
        for index, spec in specs:
            yield index, _native.run_spec(spec)

    monkeypatch.setattr(ray_runs, "run_specs", in_process)
    experiment = sweep(runs_per_variant=1, data="2MiB")
    path = write_file(tmp_path, experiment)
    results = {}
    for name, given, executor in [
        ("dict", experiment, "local"),
        ("file", path, "local"),
        ("text", path.read_text(), "local"),
        ("dict-ray", experiment, "ray"),
        ("file-ray", path, "ray"),
    ]:
        before = _native.experiments_parsed()
        results[name] = flashkv.run(given, out=tmp_path / name, executor=executor)
        assert _native.experiments_parsed() - before == 1, name
    expected = (results["dict"].folder / "results.json").read_bytes()
    for name, r in results.items():
        assert (r.folder / "results.json").read_bytes() == expected, name
    # A mistake in a dict is named by its field, without a line of a text nobody wrote.
    experiment["workload"]["records"] = "many"
    with pytest.raises(flashkv.FlashkvError, match="workload.records") as e:
        flashkv.run(experiment, out=tmp_path / "bad")
    assert "line" not in str(e.value), e.value
    with pytest.raises(flashkv.FlashkvError, match="missing field `title`"):
        flashkv.run({"workload": {"name": "fillrandom"}}, out=tmp_path / "untitled")

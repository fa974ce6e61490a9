"""A plug-in binary shipped to Ray workers (``flashkv.ray_runs._run_with_binary``) runs only as
shipped: a program another user planted under the name it had in the shared temporary folder, or
under its name in the worker's own folder, is never run. No Ray needed: the worker's side alone."""

import hashlib
import json
import os
import stat
import tempfile
from pathlib import Path

import pytest

from flashkv import ray_runs

SPEC = json.dumps({"spec": "of a run"})


def script(says: str, marker: Path) -> bytes:
    """A program that leaves ``marker`` behind and prints ``says`` as its outcome."""
    text = f"#!/bin/sh\ncat > /dev/null\ntouch '{marker}'\necho '{{\"result\": \"{says}\"}}'\n"
    return text.encode()


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A shared temporary folder and a user cache folder of the test's own."""
    shared = tmp_path / "shared-tmp"
    cache = tmp_path / "cache"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setattr(ray_runs, "_fallback", None, raising=False)
    return shared, cache


def plant(path: Path, program: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(program)
    path.chmod(0o755)


def test_a_program_planted_under_the_old_or_the_new_name_is_not_run(places, tmp_path):
    shared, cache = places
    genuine = script("genuine", tmp_path / "genuine-ran")
    digest = hashlib.sha256(genuine).hexdigest()
    planted_ran = tmp_path / "planted-ran"
    planted = script("planted", planted_ran)
    # The name the binary had in the shared temporary folder, and the name it has now.
    old_name = shared / f"flashkv-plugins-{digest[:16]}"
    new_name = cache / "flashkv" / "plugins" / f"flashkv-plugins-{digest}"
    plant(old_name, planted)
    plant(new_name, planted)
    outcome = json.loads(ray_runs._run_with_binary(genuine, digest, SPEC))
    assert outcome == {"result": "genuine"}, outcome
    assert not planted_ran.exists(), "the planted program ran"
    assert (tmp_path / "genuine-ran").exists()
    assert new_name.read_bytes() == genuine, "the planted file was replaced by the shipped binary"
    folder = new_name.parent
    assert stat.S_IMODE(os.lstat(folder).st_mode) == 0o700
    assert [p.name for p in folder.iterdir()] == [new_name.name], "no temporary file left"

    # Changed after it was written (same name, other bytes): checked before the next run, replaced.
    planted_ran.unlink(missing_ok=True)
    new_name.write_bytes(planted)
    assert json.loads(ray_runs._run_with_binary(genuine, digest, SPEC)) == {"result": "genuine"}
    assert not planted_ran.exists()

    # A link at the binary's name is replaced, not followed.
    new_name.unlink()
    target = tmp_path / "elsewhere"
    plant(target, planted)
    new_name.symlink_to(target)
    assert json.loads(ray_runs._run_with_binary(genuine, digest, SPEC)) == {"result": "genuine"}
    assert not planted_ran.exists() and target.read_bytes() == planted, "written through the link"
    assert not new_name.is_symlink()


def test_a_plugin_folder_that_is_a_link_is_refused(places, tmp_path):
    _, cache = places
    genuine = script("genuine", tmp_path / "genuine-ran")
    digest = hashlib.sha256(genuine).hexdigest()
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    (cache / "flashkv").mkdir(parents=True)
    (cache / "flashkv" / "plugins").symlink_to(elsewhere)
    with pytest.raises(ray_runs.UnsafeFolder):
        ray_runs._run_with_binary(genuine, digest, SPEC)
    assert list(elsewhere.iterdir()) == [] and not (tmp_path / "genuine-ran").exists()

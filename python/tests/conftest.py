import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def flashkv_bin() -> str:
    """The command-line flashkv (built by `cargo build --release`, or $FLASHKV_BIN)."""
    path = os.environ.get("FLASHKV_BIN", str(REPO / "target" / "release" / "flashkv"))
    if not Path(path).exists():
        pytest.fail(f"{path} does not exist: run `cargo build --release` first or set FLASHKV_BIN")
    return path


def sweep(runs_per_variant: int = 4, data: str = "8MiB") -> dict:
    """A small sweep as a dict: LevelDB and RemapCom over value sizes, on a simulated 256 MiB SSD."""
    sizes = [992, 2013, 4055, 8151][:runs_per_variant]
    return {
        "title": "python sweep",
        "metrics": ["write_amplification"],
        "device": {"fs": "sim", "preset": "femu", "capacity": "256MiB"},
        "workload": {"name": "fillrandom", "data": data, "seed": 7},
        "variant": [{"name": "LevelDB"}, {"name": "RemapCom", "engine": {"remap": "full"}}],
        "sweep": {"parameter": "workload.value_size", "values": sizes},
    }

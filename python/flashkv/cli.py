"""The ``flashkv`` command the package installs: the lab's command line itself.

The package ships the Rust binary that ``cargo build --release`` makes (``target/release/flashkv``)
as ``flashkv/_bin/flashkv`` (see ``backend/flashkv_build.py``). The command replaces this Python
process with that binary, the same arguments passed on, so its output, exit status and signals are
the binary's own. ``python -m flashkv`` does the same.

One thing is added: ``--executor ray`` runs ``$FLASHKV_PYTHON -m flashkv.ray_runs``, and unless
``FLASHKV_PYTHON`` is set, the command sets it to this interpreter, the one this package (and Ray,
when installed) lives in.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn, Optional


def binary() -> Path:
    """The path of the ``flashkv`` binary this package ships."""
    return Path(__file__).resolve().parent / "_bin" / "flashkv"


def main(argv: Optional[list[str]] = None) -> NoReturn:
    args = sys.argv[1:] if argv is None else argv
    exe = binary()
    if not exe.is_file():
        sys.stderr.write(f"flashkv: error: the package's binary {exe} is missing; reinstall the package\n")
        raise SystemExit(2)
    os.environ.setdefault("FLASHKV_PYTHON", sys.executable)
    # argv[0] "flashkv": the name clap shows in usage lines, as when the binary is run itself.
    os.execv(exe, ["flashkv", *args])


if __name__ == "__main__":
    main()

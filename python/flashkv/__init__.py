"""flashkv from Python.

- ``run(experiment)``: run an experiment (a file, its text, or a dict of the same sections) as
  ``flashkv run`` does and get its results: ``Results.runs`` (plain dicts with the accounting
  names of docs/design.md), ``Results.frame()`` (a pandas DataFrame, one row per run),
  ``Results.folder`` (the result folder: results.json, results.csv, charts, index.html).
- ``run(..., executor="ray")``: the same runs as Ray tasks, on a Ray started here or on the
  cluster at ``address``; the results are those of a local run (runs are deterministic).
- ``Db``: the lsm engine embedded, on a directory (``Db.open(path)``) or on a simulated SSD
  (``Db.simulated("1GiB")``).
- The ``flashkv`` command (and ``python -m flashkv``): the lab's command line, the Rust binary the
  package ships (``flashkv.cli``).
- ``__version__``: the package's version, the workspace's (what ``flashkv --version`` prints).

Errors from the Rust side are ``FlashkvError``, with the Rust message.
"""

from importlib.metadata import version as _version

from ._native import Db, FlashkvError, Range
from .experiment import Results, experiment_text, run

__version__ = _version("flashkv")

__all__ = ["Db", "FlashkvError", "Range", "Results", "__version__", "experiment_text", "run"]

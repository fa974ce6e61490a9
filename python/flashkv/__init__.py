"""flashkv from Python.

- ``run(experiment)``: run an experiment (a file, its text, or a dict of the same sections) as
  ``flashkv run`` does and get its results: ``Results.runs`` (plain dicts, DESIGN.md's accounting
  names), ``Results.frame()`` (a pandas DataFrame, one row per run), ``Results.folder`` (the result
  folder: results.json, results.csv, charts, index.html).
- ``run(..., executor="ray")``: the same runs as Ray tasks, on a Ray started here or on the
  cluster at ``address``; the results are those of a local run (runs are deterministic).
- ``Db``: the lsm engine embedded, on a directory (``Db.open(path)``) or on a simulated SSD
  (``Db.simulated("1GiB")``).

Errors from the Rust side are ``FlashkvError``, with the Rust message.
"""

from ._native import Db, FlashkvError, Range
from .experiment import Results, experiment_text, run

__all__ = ["Db", "FlashkvError", "Range", "Results", "experiment_text", "run"]

"""``python -m flashkv``: the ``flashkv`` command (see ``flashkv.cli``)."""

from .cli import main

main()

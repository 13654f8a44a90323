"""The op translators of the OpenVINO frontend, one folder per op family holding both
directions: its ``read*.py`` modules translate OpenVINO layers into IR nodes (registering in
`import_table`), its ``write*.py`` modules IR nodes into OpenVINO layers (registering in
`export_table`); any other module of a family is a helper its translators import.

`FAMILIES` is the one list of families: `load` imports the modules of one direction of each,
which registers their translators (`reader` loads ``"read"``, `writer` ``"write"``). A family
folder missing from the list would never load; tests/test_op_tables.py checks none is.
"""

from __future__ import annotations

import importlib
import pkgutil

FAMILIES = (
    "attention", "basic", "colour", "conv", "ctc", "detection", "embed", "fourier", "indexing",
    "loops", "ml", "norm", "quant", "random", "rnn", "roi", "sampling", "shape", "sparse",
    "state", "strings",
)
DIRECTIONS = ("read", "write")

_loaded: set[str] = set()


def modules(direction: str) -> list[str]:
    """The full names of the `direction` (``"read"`` or ``"write"``) modules of every family:
    ``read.py`` and ``read_<part>.py`` for ``"read"``."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r} is not one of {DIRECTIONS}")
    out = []
    for family in FAMILIES:
        package = importlib.import_module(f"{__name__}.{family}")
        out += [f"{package.__name__}.{info.name}" for info in pkgutil.iter_modules(package.__path__)
                if info.name == direction or info.name.startswith(direction + "_")]
    return out


def load(direction: str) -> None:
    """Import every `direction` module of every family, so that each registers its translators
    (idempotent)."""
    if direction in _loaded:
        return
    for name in modules(direction):
        importlib.import_module(name)
    _loaded.add(direction)

"""The records `explain` returns: one model element, whether it compiles, and how or why not."""

from __future__ import annotations

from typing import NamedTuple


class Record(NamedTuple):
    """One line of `explain`: a model element, whether it compiles, and how or why not."""

    element: str
    compiles: bool
    reason: str

"""The ``unroll`` transform: its argument and the pass it builds."""

from __future__ import annotations

from ..errors import InputError
from ..passes.unroll import DEFAULT_LIMIT, Unroll
from .registry import Transform


def _positive(text: str, what: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1 or str(n) != text.strip().lstrip("+"):
        raise InputError(f"transform 'unroll': {what} must be a whole number of at least 1 "
                         f"(got '{text}')")
    return n


def make_unroll(argument: str | None) -> Unroll:
    """``unroll``: full, at most 256 iterations; ``unroll=full:N``: full, at most N;
    ``unroll=K``: K copies of the body per iteration."""
    if argument is None or argument.strip() == "full":
        return Unroll(None, DEFAULT_LIMIT)
    head, sep, limit = argument.partition(":")
    if sep and head.strip() == "full":
        return Unroll(None, _positive(limit, "the limit in 'unroll=full:N'"))
    return Unroll(_positive(argument, "K in 'unroll=K'"), DEFAULT_LIMIT)


UNROLL = Transform("unroll", "loops become copies of their body: fully (static count, at most "
                   f"{DEFAULT_LIMIT} iterations; 'unroll=full:N' for N) or K at a time "
                   "('unroll=K')", make_unroll, argument="K | full | full:N")

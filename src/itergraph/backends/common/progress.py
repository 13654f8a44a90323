"""The progress hook the backends call for their outermost loops.

A run that wants progress installs a callback with `reporting(callback)`; the backends call
`report(loop_name, steps_done, done)` from a loop's driver (the NumPy backend once per iteration of
an outermost loop, and only in plans compiled for progress; the JAX backend once per buffer
segment of a loop it drives from Python, or once per loop after a compiled step). Without a
callback installed, `report` does nothing. `done` is True on the last report of a loop run,
whose step count is the loop's iteration count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Callback = Callable[[str, int, bool], None]
_current: ContextVar[Callback | None] = ContextVar("itergraph_progress", default=None)


@contextmanager
def reporting(callback: Callback | None) -> Iterator[None]:
    """Send the progress of the loops run inside the block to `callback(loop, steps, done)`."""
    token = _current.set(callback)
    try:
        yield
    finally:
        _current.reset(token)


def report(loop: str, steps: int, done: bool = False) -> None:
    """Tell the installed callback that outermost loop `loop` has done `steps` iterations
    (and, with `done`, that it has stopped)."""
    cb = _current.get()
    if cb is not None:
        cb(loop, steps, done)


def active() -> bool:
    return _current.get() is not None

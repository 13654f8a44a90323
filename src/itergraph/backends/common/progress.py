"""The progress hook the backends call for their outermost loops.

A run that wants progress installs a callback with `reporting(callback)`; the backends call
`report(loop_name, steps_done, done, total)` from a loop's driver (the NumPy backend about
every 50 ms of an outermost loop, and only in plans compiled for progress; the JAX backend
once per buffer segment of a loop it drives from Python, or once per loop after a compiled
step). Without a callback installed, `report` does nothing. `done` is True on the last report
of a loop run, whose step count is the loop's iteration count. `total` is the most steps the
loop can run when that is known at its start (its trip count, or its shortest sliced input),
else None; it reaches a callback that takes a ``total`` keyword (a three-argument callback
``(loop, steps, done)`` is called without it).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

Callback = Callable[..., None]
#: the installed callback, and whether it takes ``total``
_current: ContextVar[tuple[Callback, bool] | None] = ContextVar("itergraph_progress",
                                                                default=None)


def _takes_total(callback: Callback) -> bool:
    try:
        params = inspect.signature(callback).parameters
    except (TypeError, ValueError):  # a builtin without a signature
        return False
    return "total" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


@contextmanager
def reporting(callback: Callback | None) -> Iterator[None]:
    """Send the progress of the loops run inside the block to `callback(loop, steps, done)`
    (with ``total=`` when it takes it)."""
    token = _current.set(None if callback is None else (callback, _takes_total(callback)))
    try:
        yield
    finally:
        _current.reset(token)


def report(loop: str, steps: int, done: bool = False, total: int | None = None) -> None:
    """Tell the installed callback that outermost loop `loop` has done `steps` iterations
    (and, with `done`, that it has stopped) of at most `total` (None: not known)."""
    got = _current.get()
    if got is not None:
        cb, takes_total = got
        if takes_total:
            cb(loop, steps, done, total=total)
        else:
            cb(loop, steps, done)


def active() -> bool:
    return _current.get() is not None

"""How many iterations a Loop may run: its trip count and its sliced inputs (taken as views).

`trip_limit` reads the trip count, `sliced_views` cuts the sliced inputs into per-iteration
views (checking `Loop.equal_slices`) and lowers the limit to the shortest, and
`check_exhaustion` reports a loop with strict slices that ran out of a sliced input while it
would otherwise have gone on.
"""

from __future__ import annotations

import numpy as np

from .....errors import ExecutionError, where
from .....ir import UNBOUNDED_TRIP_COUNT, Loop, Sliced
from ....common.equal_slices import check_equal_slices
from .layout import LoopLayout


def scalar(loop: Loop, what: str, x) -> np.ndarray:
    """`x` as a 0-d array; an `ExecutionError` naming `what` unless it holds one element (a
    value the model computed or passed on: the caller's feeds were checked against their
    declared types already)."""
    a = np.asarray(x)
    if a.size != 1:
        raise ExecutionError(f"{where(loop)}: {what} must hold one element, got shape {a.shape}")
    return a.reshape(())


def trip_limit(loop: Loop, trip) -> int | None:
    """The iterations the trip count allows (``None``: unbounded, as when it is absent, at
    least `UNBOUNDED_TRIP_COUNT`, or negative in a loop that reads negative as unbounded)."""
    if trip is None:
        return None
    t = int(scalar(loop, "trip count", trip))
    if t >= UNBOUNDED_TRIP_COUNT or (t < 0 and loop.negative_trip_count == "unbounded"):
        return None
    return max(t, 0)


def sliced_views(lay: LoopLayout, values, limit: int | None):
    """``(views, limit, shortest)``: per sliced input a view (or list of views) whose k-th
    entry is its piece k, the iteration limit lowered to the shortest of them, and
    ``(count, port index)`` of the shortest (``None`` without sliced inputs).

    With strict slices and a known iteration count, a limit beyond a sliced input's count is
    an error; with equal slices, so are counts that differ (`check_equal_slices`).
    """
    loop = lay.loop
    strict = loop.strict_slices and lay.known_count
    views = []
    counts = []
    for j, p in lay.sliced:
        view, count = _sequence(loop, j, p, np.asarray(values[j]))
        views.append(view)
        counts.append((j, p, count))
    check_equal_slices(loop, counts)
    shortest = None
    for j, p, count in counts:
        if shortest is None or count < shortest[0]:
            shortest = (count, j)
        if strict and limit is not None and limit > count:
            raise beyond(loop, j, count, p)
        limit = count if limit is None else min(limit, count)
    return views, limit, shortest


def check_exhaustion(lay: LoopLayout, k: int, cond, state, allowed: int | None, shortest,
                     values, outer) -> None:
    """With strict slices: an error when the loop stopped after `k` iterations only because
    its shortest sliced input ran out, while the trip count (`allowed`), the condition and the
    precondition would have run another iteration."""
    loop = lay.loop
    if (loop.strict_slices and shortest is not None and k == shortest[0] and cond
            and (allowed is None or allowed > k)
            and (lay.pre_plan is None or lay.precondition_holds(k, cond, state, values, outer))):
        raise beyond(loop, shortest[1], k, loop.input_ports[shortest[1]])


def beyond(loop: Loop, j: int, count: int, p: Sliced) -> ExecutionError:
    return ExecutionError(f"{where(loop)}: the loop iterates beyond sliced input {j}, which has "
                          f"{count} entries on axis {p.axis}")


def _sequence(loop: Loop, j: int, p: Sliced, x: np.ndarray):
    """A view (or list of views) whose k-th entry is piece k of sliced input `j`, and its count."""
    axis = p.axis + x.ndim if p.axis < 0 else p.axis
    if not 0 <= axis < x.ndim:
        raise ExecutionError(f"{where(loop)}: sliced input {j} has axis {p.axis}, "
                             f"out of range for its rank {x.ndim}")
    dim = x.shape[axis]
    if p.keep_axis and p.start == 0 and p.end == -1 and dim % p.part_size:
        raise ExecutionError(f"{where(loop)}: sliced input {j}: axis {axis} of length {dim} "
                             f"is not divisible by part_size {p.part_size}")
    count = p.count(dim)
    moved = np.moveaxis(x, axis, 0) if axis else x
    if p.keep_axis:
        starts = [p.piece_start(k, dim) for k in range(count)]
        pieces = [moved[s:s + p.part_size] for s in starts]
        return ([np.moveaxis(q, 0, axis) for q in pieces] if axis else pieces), count
    lo, hi = p.bounds(dim)
    if p.stride > 0:
        return moved[lo:hi:p.stride], count
    return moved[hi - 1:(lo - 1 if lo > 0 else None):p.stride], count

"""A loop's inputs resolved for one trace: limit, initial condition, carried and sliced values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....errors import ExecutionError, where
from ....ir import UNBOUNDED_TRIP_COUNT, Loop, Sliced
from ...common.equal_slices import check_equal_slices
from ..context import CannotLower, Scope, TraceContext, is_static
from .info import LoopInfo, loop_info, static_truth
from .messages import beyond_message

INT64_MAX = np.iinfo(np.int64).max


@dataclass
class Setup:
    """A loop's inputs resolved for one trace."""

    loop: Loop
    info: LoopInfo
    scope: Scope
    limit: Any  # int (static), traced int64, or None (unbounded)
    cond0: Any  # True/False (static) or traced bool
    carried0: list  # initial carried values (static or traced)
    stacks: list  # per sliced port: (count, *piece) array of all pieces
    invariants: dict[int, Any]  # param uid -> value
    lengths: list  # per Concat with length: value
    cond_free: bool  # no condition / precondition can stop the loop early
    has_pre: bool
    trip: Any = None  # the trip count's limit alone (int, traced, or None: unbounded)
    # strict slices with a condition or no trip count: (count, port) of the shortest sliced
    # input, checked after the loop (running out of pieces while it would go on is an error)
    strict_after: tuple | None = None
    # carried values grown by a Concat each iteration, carried as buffers (`growing.Grow`)
    grows: list = field(default_factory=list)


def scalar(loop: Loop, what: str, x):
    """`x` as a 0-d value; an `ExecutionError` naming `what` unless it holds one element."""
    if x.size != 1:
        raise ExecutionError(f"{where(loop)}: {what} must hold one element, got shape "
                         f"{tuple(x.shape)}")
    return x.reshape(())


def setup(tc: TraceContext, loop: Loop, scope: Scope) -> Setup:
    import jax.numpy as jnp

    info = loop_info(tc.cache, loop)
    get = scope.get
    # trip count -> limit
    limit: Any = None
    if loop.trip_count is not None:
        t = scalar(loop, "trip count", get(loop.trip_count))
        unb_neg = loop.negative_trip_count == "unbounded"
        if is_static(t):
            t = int(t)
            limit = None if t >= UNBOUNDED_TRIP_COUNT or (t < 0 and unb_neg) else max(t, 0)
        else:
            t = t.astype(np.int64)
            unbounded = t >= UNBOUNDED_TRIP_COUNT
            if unb_neg:
                unbounded = unbounded | (t < 0)
            limit = jnp.where(unbounded, INT64_MAX, jnp.maximum(t, 0))
    # sliced inputs
    trip = limit
    strict = loop.strict_slices
    counted = loop.condition_result is None and loop.precondition is None
    stacks = []
    shortest = None  # (count, port index) of the sliced input with fewest pieces
    sliced = [(j, p, get(p.value)) for j, p in info.sliced]
    counts = [(j, p, *_count(loop, j, p, x)) for j, p, x in sliced]
    check_equal_slices(loop, [(j, p, count) for j, p, _, _, count in counts])
    for (j, p, x), (_, _, axis, dim, count) in zip(sliced, counts):
        if shortest is None or count < shortest[0]:
            shortest = (count, j)
        if strict and counted and limit is not None:
            tc.check(scope.frame, limit > count, beyond_message(loop, j, count, p))
        if limit is None:
            limit = count
        elif isinstance(limit, int):
            limit = min(limit, count)
        else:
            limit = jnp.minimum(limit, count)
        stacks.append(stack_pieces(x, p, axis, dim, count))
    # condition
    cond0: Any = True
    if loop.initial_condition is not None:
        c = scalar(loop, "initial condition", get(loop.initial_condition))
        cond0 = bool(c) if is_static(c) else c.astype(bool)
    invariants = {p.param.uid: get(p.value) for p in info.invariant}
    carried0 = [get(c.value) for c in info.carried]
    for c, x in zip(info.carried, carried0):
        if not hasattr(x, "shape"):
            raise CannotLower(loop, f"carried value '{c.param.name}' is not a tensor")
    statics = {k: v for k, v in invariants.items() if is_static(v)}
    cond_true = static_truth(tc, loop, scope, loop.condition_result, statics)
    pre_true = static_truth(tc, loop, scope, loop.precondition, statics)
    lengths = [get(p.length) for p in info.length_ports]
    return Setup(loop, info, scope, limit, cond0, carried0, stacks, invariants, lengths,
                 cond_free=bool(cond_true) and bool(pre_true) and cond0 is True,
                 has_pre=not pre_true, trip=trip,
                 strict_after=shortest if strict and not (counted and trip is not None)
                 else None)


def _count(loop: Loop, j: int, p: Sliced, x) -> tuple[int, int, int]:
    """``(axis, its length, piece count)`` of sliced input `j`, whose value is `x`."""
    axis = p.axis + x.ndim if p.axis < 0 else p.axis
    if not 0 <= axis < x.ndim:
        raise ExecutionError(f"{where(loop)}: sliced input {j} has axis {p.axis}, out of "
                             f"range for its rank {x.ndim}")
    dim = x.shape[axis]
    if p.keep_axis and (dim % p.part_size) and p.start == 0 and p.end == -1:
        raise ExecutionError(f"{where(loop)}: sliced input {j}: axis {axis} of length {dim} "
                             f"is not divisible by part_size {p.part_size}")
    return axis, dim, p.count(dim)


def stack_pieces(x, p: Sliced, axis: int, dim: int, count: int):
    """All pieces of a sliced input, stacked on a new leading axis: (count, *piece shape)."""
    if is_static(x):
        xp = np
    else:
        import jax.numpy as xp
    moved = xp.moveaxis(x, axis, 0) if axis else x
    rest = tuple(moved.shape[1:])
    ps = p.part_size
    if count == 0:
        shape = (0, *rest) if not p.keep_axis else (0, *_piece_shape(x.shape, axis, ps))
        return xp.zeros(shape, x.dtype)
    first, last = p.piece_start(0, dim), p.piece_start(count - 1, dim)
    if ps == 1 and abs(p.stride) == 1:
        g = moved[first:first + count] if p.stride > 0 else moved[last:first + 1][::-1]
        g = g.reshape((count, 1, *rest)) if p.keep_axis else g
    else:
        starts = [p.piece_start(k, dim) for k in range(count)]
        idx = (np.asarray(starts, np.int64)[:, None] + np.arange(ps)).reshape(-1)
        g = xp.take(moved, idx, axis=0).reshape((count, ps, *rest))
        if not p.keep_axis:
            g = g.reshape((count, *rest))
    if p.keep_axis and axis:
        g = xp.moveaxis(g, 1, axis + 1)
    return g


def _piece_shape(shape, axis, ps):
    s = list(shape)
    s[axis] = ps
    return tuple(s)

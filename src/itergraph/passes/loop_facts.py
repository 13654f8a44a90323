"""What the loop-shape transforms need to know about a loop before rewriting it.

Not a pass itself: `unroll`, `loop_to_scan`, `scan_to_loop` and `loop_to_ti` use it.

- `static_count(loop)`: the number of iterations when it is known before the loop starts
  from its trip count and the static lengths of its sliced inputs, else why not;
- `condition_never_stops(loop)`: whether the loop's condition provably stays true.
"""

from __future__ import annotations

import numpy as np

from ..ir.loop import UNBOUNDED_TRIP_COUNT, Loop
from ..ir.static_values import static_int
from ..ir.types import TensorType
from .loop_motion import const_value, static_shape


def trip_limit(loop: Loop) -> tuple[int | None, str]:
    """The trip count as a number of iterations (None: no limit), or ``(None, reason)`` when
    the loop has a trip count that is not known before it runs (reason non-empty)."""
    if loop.trip_count is None:
        return None, ""
    n = static_int(loop.trip_count)
    if n is None:
        return None, "its trip count is not known before it runs"
    if n >= UNBOUNDED_TRIP_COUNT:
        return None, ""
    if n < 0:
        return (0, "") if loop.negative_trip_count == "zero" else (None, "")
    return n, ""


def slice_counts(loop: Loop) -> list[int] | None:
    """The number of pieces each sliced input yields, when every one has a static length."""
    out = []
    for s in loop.sliced:
        shape = static_shape(s.value)
        if shape is None or not -len(shape) <= s.axis < len(shape):
            return None
        out.append(s.count(shape[s.axis]))
    return out


def static_count(loop: Loop) -> tuple[int | None, str]:
    """``(iterations, "")`` when `loop` runs a number of iterations known before it starts
    and runs without a loop error, else ``(None, reason)``. Only the trip count, the
    initial condition and the sliced inputs are looked at: a caller must also check the
    condition (`condition_never_stops`)."""
    if loop.precondition is not None:
        return None, "it has a precondition (a while loop)"
    limit, why = trip_limit(loop)
    if why:
        return None, why
    counts = slice_counts(loop)
    if counts is None:
        return None, "a sliced input has no static length"
    if loop.equal_slices and len(set(counts)) > 1:
        return None, "its sliced inputs have different lengths (a run-time error)"
    if loop.strict_slices and limit is not None and counts and limit > min(counts):
        return None, "it iterates beyond a sliced input's end (a run-time error)"
    if loop.equal_slices and counts and counts[0] == 0:
        return None, "its sliced inputs are empty"
    bounds = counts + ([limit] if limit is not None else [])
    first = const_value(loop.initial_condition)
    if first is not None and not bool(np.asarray(first).reshape(-1)[0]):
        return 0, ""
    if not bounds:
        return None, "it has no trip count and no sliced input"
    if loop.initial_condition is not None and first is None:
        return None, "its initial condition is not a constant"
    return min(bounds), ""


def condition_never_stops(loop: Loop) -> bool:
    """Whether every iteration's condition is true, as far as the graph shows: no condition
    result, or one that passes the condition input through (``Identity`` chains) or is a
    constant true; and an initial condition that is absent or a constant true."""
    first = loop.initial_condition
    if first is not None:
        c = const_value(first)
        if c is None or c.size != 1 or not bool(c.reshape(-1)[0]):
            return False
    v = loop.condition_result
    if v is None:
        return True
    body = {id(n) for n in loop.body.nodes}
    while v is not loop.condition_param:
        c = const_value(v)
        if c is not None:
            return c.size == 1 and bool(c.reshape(-1)[0])
        n = v.producer
        if (n is None or id(n) not in body or n.op_type != "Identity" or n.domain != ""
                or not n.inputs or n.inputs[0] is None):
            return False
        v = n.inputs[0]
    return True


def int_const(v_type, value: int) -> np.ndarray:
    """`value` as an array of the type of an iteration parameter (int64 scalar by default)."""
    dtype = np.int64
    shape: tuple = ()
    if isinstance(v_type, TensorType):
        if v_type.dtype is not None and v_type.dtype.is_integer:
            dtype = v_type.dtype.numpy
        if v_type.shape is not None and all(isinstance(d, int) for d in v_type.shape):
            shape = tuple(v_type.shape)
    return np.full(shape, value, dtype)


def bool_const(v_type) -> np.ndarray:
    """``True`` shaped as a condition parameter's type (a scalar by default)."""
    shape: tuple = ()
    if isinstance(v_type, TensorType) and v_type.shape is not None and all(
            isinstance(d, int) for d in v_type.shape):
        shape = tuple(v_type.shape)
    return np.full(shape, True)



"""Finishing a loop's outputs: last values, concatenated outputs, the zero-trip case."""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir import Concat, Loop, Value
from ....semantics.empty_stack import axis_out_of_range, empty_stack, stacked_output
from ...common.memory import over_limit
from ..context import CannotLower, TooLarge, is_static
from .messages import too_large_message, zero_trip_message
from .setup import Setup, scalar


def last_outputs(st: Setup, state: list, lasts: list) -> list:
    """The loop's outputs with the non-concatenated ones filled in (concatenated ones None)
    from the final carried `state` and the `lasts` of the last iteration."""
    info = st.info
    outs: list = [None] * len(st.loop.output_ports)
    for i, j in info.last_state.items():
        outs[i] = state[j]
    for i, v in info.last_direct.items():
        outs[i] = _direct(st, v)
    for i, x in zip(info.last_plain, lasts):
        outs[i] = x
    return outs


def zero_trip_outputs(st: Setup) -> list:
    loop, info = st.loop, st.info
    outs: list = [None] * len(loop.output_ports)
    for i, j in info.last_state.items():
        outs[i] = st.carried0[j]
    for i, v in info.last_direct.items():
        outs[i] = _direct(st, v)
    for i in info.last_plain:
        raise ExecutionError(zero_trip_message(loop, i))
    for i in info.concat_idx:
        stacked = empty_stack(loop.output_ports[i])
        outs[i] = finish_concat(np, loop, i, loop.output_ports[i], stacked, 0,
                                length_of(st, loop.output_ports[i]))
    return outs


def _direct(st: Setup, v: Value):
    if v.uid in st.invariants:
        return st.invariants[v.uid]
    return st.scope.get(v)


def length_of(st: Setup, port: Concat):
    if port.length is None:
        return None
    x = st.lengths[st.info.length_ports.index(port)]
    return x


def finish_concat(xp, loop: Loop, index: int, port: Concat, stacked, n: int, length):
    """Per-iteration values stacked on axis 0 -> the output (reverse, pad, move or merge)."""
    if n == 0 and port.empty_error:
        raise ExecutionError(port.empty_error)
    if port.reverse:
        stacked = xp.flip(stacked, 0)
    if port.length is not None:
        if not is_static(length):
            raise CannotLower(loop, f"the length of output {index} must be known at compile time")
        total = int(scalar(loop, f"length of output {index}", np.asarray(length)))
        if total < n:
            raise ExecutionError(f"{where(loop)}: output {index} ('{port.output.name}') has "
                                 f"length {total}, below the {n} iterations the loop ran")
        if total > n:
            check_size(loop, index, (total, *stacked.shape[1:]), stacked.dtype,
                       f"length {total}", n)
            pad = [(0, total - n)] + [(0, 0)] * (stacked.ndim - 1)
            stacked = xp.pad(stacked, pad)
    out = stacked_output(xp, stacked, port)
    if out is None:
        raise ExecutionError(axis_out_of_range(loop, index, port, stacked.ndim - 1))
    return out


def check_size(loop: Loop, index: int, shape, dtype, what: str, iterations: int) -> None:
    """`TooLarge` naming output `index`, before it is allocated, when an array of `shape`
    and `dtype` (the output after `iterations` iterations) cannot fit in memory."""
    nbytes = int(np.prod(shape, dtype=object)) * np.dtype(dtype).itemsize
    limit = over_limit(nbytes)
    if limit is not None:
        raise TooLarge(too_large_message(loop, [index], nbytes, what, limit), loop, iterations)

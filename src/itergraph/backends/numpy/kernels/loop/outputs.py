"""The outputs of a Loop: Concat outputs gathered while it runs, all of them finished after.

An `Accumulator` receives the per-iteration values of one Concat output, in a buffer
preallocated for the known iteration count, or one that doubles when the count is not known
in advance. `finish_outputs` gives every output its value once the loop has stopped.

Every buffer is checked against the memory this process can have before it is allocated, and
an allocation that fails anyway is reported as on the JAX backend (`common.loop_memory`):
``Loop node 'L': output 1 ('seq') would need 7.45 GiB (length 1000000000), more than this
process can allocate (4.00 GiB)``. A growing buffer grows to what fits rather than doubling
past it.
"""

from __future__ import annotations

import numpy as np

from .....errors import ExecutionError, where
from .....ir import Concat, Invariant, Loop, Value
from .....semantics.empty_stack import axis_out_of_range, empty_stack, stacked_output
from ....common.loop_memory import (
    allocate,
    allocation_failed_message,
    check_buffer,
    nbytes_of,
)
from ....common.memory import memory_limit
from .bounds import scalar
from .layout import LoopLayout

UNKNOWN_COUNT_CAPACITY = 16  # first buffer length when the iteration count is not known


def accumulators(lay: LoopLayout, limit: int | None,
                 max_iterations: int | None = None) -> list[Accumulator]:
    """One empty accumulator per Concat output, sized for `limit` iterations when the loop's
    count is known in advance (at most `max_iterations`: the loop stops there)."""
    capacity = limit if lay.known_count and limit is not None else UNKNOWN_COUNT_CAPACITY
    if max_iterations is not None:
        capacity = min(capacity, max(int(max_iterations), 1))
    ports = lay.loop.output_ports
    return [Accumulator(lay.loop, i, ports[i], capacity) for i in lay.concat_idx]


def finish_outputs(lay: LoopLayout, k: int, state, last, accs: list[Accumulator], values,
                   lengths, outer) -> list:
    """The loop's outputs after `k` iterations: Last outputs of carried values from the final
    `state`, other Last outputs from the results of the last iteration (`last`, ``None`` after
    zero iterations), Concat outputs from their accumulators (the driver wrote entries
    0..k-1; `lengths` are the requested lengths of padded outputs)."""
    loop = lay.loop
    out_ports = loop.output_ports
    outs: list = [None] * len(out_ports)
    for i, j in lay.last_from_state.items():
        outs[i] = state[j]
    for i, s in zip(lay.last_plain, lay.plain_slots):
        outs[i] = _zero_trip_last(loop, i, out_ports[i].result, values, outer, lay.captures) \
            if last is None else last[s]
    length_of = {id(p): v for p, v in zip(lay.length_ports, lengths)}
    for i, acc in zip(lay.concat_idx, accs):
        acc.count = k
        outs[i] = acc.finish(length_of.get(id(out_ports[i])))
    return outs


class Accumulator:
    """Per-iteration values of one Concat output.

    ``buf[k]`` receives the value of iteration k. Where it can, ``buf`` is a view of `out`,
    the output itself laid out as the port says (entries on `axis`, reversed when the port is
    reversed): then a loop that runs exactly `capacity` iterations returns `out` as it is,
    without a final copy. Otherwise (growth past the capacity, fewer iterations, padding to a
    length) ``buf`` holds the entries stacked on a new leading axis and `finish` joins them.
    """

    __slots__ = ("loop", "index", "port", "buf", "count", "shape", "dtype", "capacity", "out")

    def __init__(self, loop: Loop, index: int, port: Concat, capacity: int):
        self.loop, self.index, self.port = loop, index, port
        self.buf = None
        self.out = None
        self.count = 0
        self.capacity = max(capacity, 1)

    def _buffer(self, shape, dtype, what: str, zeros: bool = False) -> np.ndarray:
        return allocate(self.loop, [self.index], shape, dtype, what, zeros)

    def _allocate(self, x: np.ndarray) -> np.ndarray:
        self.shape, self.dtype = x.shape, x.dtype
        cap, port, shape, rank = self.capacity, self.port, x.shape, x.ndim
        what = f"a buffer for {cap} iterations"
        if port.length is None:
            if port.new_axis:
                a = port.axis + rank + 1 if port.axis < 0 else port.axis
                if 0 <= a <= rank:
                    self.out = self._buffer((*shape[:a], cap, *shape[a:]), x.dtype, what)
                    view = np.moveaxis(self.out, a, 0) if a else self.out
                    return view[::-1] if port.reverse else view
            else:
                a = port.axis + rank if port.axis < 0 else port.axis
                if 0 <= a < rank:
                    d = shape[a]
                    self.out = self._buffer((*shape[:a], cap * d, *shape[a + 1:]), x.dtype,
                                            what)
                    split = self.out.reshape(*shape[:a], cap, d, *shape[a + 1:])
                    view = np.moveaxis(split, a, 0) if a else split
                    return view[::-1] if port.reverse else view
        return self._buffer((cap, *shape), x.dtype, what)

    def append(self, x) -> None:
        buf = self.buf
        if buf is None:
            x = np.asarray(x)
            buf = self.buf = self._allocate(x)
        elif x.shape != self.shape:
            raise ExecutionError(
                f"{where(self.loop)}: output {self.index} ('{self.port.output.name}') changes "
                f"shape in iteration {self.count}: {x.shape} after {self.shape} in earlier "
                "iterations; "
                "concatenated outputs must keep one shape"
            )
        if self.count == len(buf):
            buf = self._grow(buf)
        buf[self.count] = x
        self.count += 1

    def _grow(self, buf: np.ndarray) -> np.ndarray:
        """`buf` with room for more entries: twice as many, or as many as fit in memory."""
        n = len(buf)
        entry = nbytes_of(self.shape, self.dtype)
        cap = 2 * n
        limit = memory_limit()
        if limit is not None and entry and cap * entry > limit:
            cap = max(limit // entry, n + 1)  # one more entry at least: refused if too big
        what = f"a buffer for {cap} iterations"
        if self.out is None and _owns_data(buf):
            # realloc in place: the old block is freed at once, not left beside the new one
            nbytes = cap * entry
            check_buffer(self.loop, [self.index], nbytes, what)
            try:
                buf.resize((cap, *self.shape), refcheck=False)
            except MemoryError as e:
                raise ExecutionError(allocation_failed_message(
                    self.loop, [self.index], nbytes, what, e)) from None
            return buf
        grown = self._buffer((cap, *self.shape), self.dtype, what)
        grown[: self.count] = buf
        self.buf = grown
        self.out = None
        return grown

    def put(self, k: int, x) -> tuple:
        """Append `x` as entry `k` (the driver writes entries into `buf` itself while they fit
        and keep the shape); returns ``(buf, shape, capacity)`` for the driver's fast path."""
        self.count = k
        self.append(x)
        return self.buf, self.shape, len(self.buf)

    def _stacked_is_the_output(self) -> bool:
        """Whether the entries stacked on a new leading axis are the output as they stand."""
        port = self.port
        axis = port.axis + len(self.shape) + 1 if port.axis < 0 else port.axis
        return port.new_axis and axis == 0 and not port.reverse and port.length is None

    def finish(self, length) -> np.ndarray:
        try:
            return self._finish(length)
        except MemoryError as e:  # a copy of the entries: as large as the output
            what = f"the {self.count} iterations' values"
            n = nbytes_of((self.count, *self.shape), self.dtype) if self.buf is not None else 0
            raise ExecutionError(allocation_failed_message(self.loop, [self.index], n, what,
                                                           e)) from None

    def _finish(self, length) -> np.ndarray:
        port = self.port
        if self.out is not None and self.count == len(self.buf):
            return self.out  # every entry written in place
        if self.buf is None:
            if port.empty_error:
                raise ExecutionError(port.empty_error)
            stacked = empty_stack(port)
        elif self._stacked_is_the_output() and _owns_data(self.buf):
            out, self.buf = self.buf, None
            out.resize((self.count, *self.shape), refcheck=False)  # trim, no copy
            return out
        else:
            stacked = self.buf[: self.count]
        if port.reverse:
            stacked = stacked[::-1]
        if port.length is not None:
            n = int(scalar(self.loop, f"length of output {self.index}", length))
            if n < self.count:
                raise ExecutionError(
                    f"{where(self.loop)}: output {self.index} ('{port.output.name}') has length "
                    f"{n}, below the {self.count} iterations the loop ran"
                )
            padded = self._buffer((n, *stacked.shape[1:]), stacked.dtype, f"length {n}",
                                  zeros=True)
            padded[: self.count] = stacked
            stacked = padded
        out = stacked_output(np, stacked, port)
        if out is None:
            raise ExecutionError(axis_out_of_range(self.loop, self.index, port, stacked.ndim - 1))
        return stacked.copy() if out is stacked else np.ascontiguousarray(out)


def _owns_data(a: np.ndarray) -> bool:
    """Whether `a` may be resized in place: it owns its memory, contiguous, no Python objects."""
    return a.base is None and a.flags.c_contiguous and a.dtype != object


def _zero_trip_last(loop: Loop, i: int, result: Value, values, outer, caps):
    """A Last output that is not a carried value, after zero iterations."""
    for p, v in zip(loop.input_ports, values):
        if isinstance(p, Invariant) and p.param is result:
            return v  # an invariant input passed straight through
    for c, v in zip(caps, outer):
        if c is result:
            return v
    if result.const is not None:
        return result.const
    raise ExecutionError(
        f"{where(loop)}: output {i} ('{result.name}') has no value: the loop ran zero iterations "
        "and the output is neither a carried value nor loop-invariant"
    )

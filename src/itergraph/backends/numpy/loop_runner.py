"""The NumPy kernel of the canonical `Loop` (see `itergraph.ir.loop` for its meaning).

The body is compiled once into a plan; every iteration updates a preallocated argument
list in place and calls the plan. Sliced inputs are views of the input (the axis is moved to
the front once per run). Concatenated outputs go into a buffer preallocated for the known
iteration count, or one that doubles when the count is not known in advance.
"""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError, InputError, IterationLimitError, where
from ...ir import UNBOUNDED_TRIP_COUNT, Carried, Concat, Invariant, Last, Loop, Sliced, Value
from ...ir.types import TensorType
from .dtypes import to_numpy
from .kernels import kernel
from .plan import CompileContext, node_captures


def _scalar(loop: Loop, what: str, x) -> np.ndarray:
    a = np.asarray(x)
    if a.size != 1:
        raise InputError(f"{where(loop)}: {what} must hold one element, got shape {a.shape}")
    return a.reshape(())


class _Accumulator:
    """Per-iteration values of one Concat output, stacked on a new leading axis."""

    __slots__ = ("loop", "index", "port", "buf", "count", "shape", "dtype")

    def __init__(self, loop: Loop, index: int, port: Concat):
        self.loop, self.index, self.port = loop, index, port
        self.buf = None
        self.count = 0

    def append(self, x, capacity: int) -> None:
        x = np.asarray(x)
        buf = self.buf
        if buf is None:
            self.shape, self.dtype = x.shape, x.dtype
            buf = self.buf = np.empty((max(capacity, 1), *x.shape), x.dtype)
        elif x.shape != self.shape:
            raise ExecutionError(
                f"{where(self.loop)}: output {self.index} ('{self.port.output.name}') changes shape "
                f"in iteration {self.count}: {x.shape} after {self.shape} in earlier iterations; "
                "concatenated outputs must keep one shape"
            )
        if self.count == len(buf):
            grown = np.empty((2 * len(buf), *self.shape), self.dtype)
            grown[: self.count] = buf
            buf = self.buf = grown
        buf[self.count] = x
        self.count += 1

    def finish(self, length) -> np.ndarray:
        port = self.port
        if self.buf is None:
            stacked = _empty_stack(self.loop, self.index, port)
        else:
            stacked = self.buf[: self.count]
        if port.reverse:
            stacked = stacked[::-1]
        if port.length is not None:
            n = int(_scalar(self.loop, f"length of output {self.index}", length))
            if n < self.count:
                raise ExecutionError(
                    f"{where(self.loop)}: output {self.index} ('{port.output.name}') has length "
                    f"{n}, below the {self.count} iterations the loop ran"
                )
            padded = np.zeros((n, *stacked.shape[1:]), stacked.dtype)
            padded[: self.count] = stacked
            stacked = padded
        rank = stacked.ndim - 1
        if port.new_axis:
            axis = port.axis + rank + 1 if port.axis < 0 else port.axis
            return np.ascontiguousarray(np.moveaxis(stacked, 0, axis)) if axis else stacked.copy()
        axis = port.axis + rank if port.axis < 0 else port.axis
        if not 0 <= axis < rank:
            raise ExecutionError(f"{where(self.loop)}: output {self.index}: axis {port.axis} "
                                 f"out of range for rank {rank}")
        moved = np.moveaxis(stacked, 0, axis)
        shape = list(stacked.shape[1:])
        shape[axis] *= stacked.shape[0]
        return np.ascontiguousarray(moved).reshape(shape)


def _empty_stack(loop: Loop, index: int, port: Concat) -> np.ndarray:
    """The zero-iteration stack: declared element shape, unknown dims as 0 (as ONNX Runtime)."""
    t = port.result.type
    if isinstance(t, TensorType) and t.dtype is not None:
        dtype = to_numpy(t.dtype)
    else:
        dtype = np.float32
    shape = t.shape if isinstance(t, TensorType) and t.shape is not None else ()
    return np.zeros((0, *(d if isinstance(d, int) else 0 for d in shape)), dtype)


@kernel("Loop", domain="itergraph")
def loop_kernel(loop: Loop, ctx: CompileContext):
    body = loop.body
    carried = loop.carried
    out_ports = loop.output_ports
    concat_idx = [i for i, p in enumerate(out_ports) if isinstance(p, Concat)]
    last_idx = [i for i, p in enumerate(out_ports) if isinstance(p, Last)]
    # Last outputs of carried results come from the state; others from the last iteration.
    last_from_state = {i: carried.index(c) for i in last_idx
                       if (c := loop.carried_for_result(out_ports[i].result)) is not None}
    last_plain = [i for i in last_idx if i not in last_from_state]

    results: list[Value] = []
    cond_slot = None
    if loop.condition_result is not None:
        cond_slot = 0
        results.append(loop.condition_result)
    state_slots = [len(results) + j for j in range(len(carried))]
    results.extend(c.result for c in carried)
    concat_slots = [len(results) + j for j in range(len(concat_idx))]
    results.extend(out_ports[i].result for i in concat_idx)
    plain_slots = [len(results) + j for j in range(len(last_plain))]
    results.extend(out_ports[i].result for i in last_plain)

    params = list(body.inputs)
    plan = ctx.compile(body, outputs=results, inputs=params)
    pre_plan = (ctx.compile(body, outputs=[loop.precondition], inputs=params)
                if loop.precondition is not None else None)
    caps = node_captures(loop)
    cap_pos = {v.uid: i for i, v in enumerate(caps)}
    body_cap_idx = [cap_pos[v.uid] for v in plan.captures]
    pre_cap_idx = [cap_pos[v.uid] for v in pre_plan.captures] if pre_plan else []
    pos = {v.uid: i for i, v in enumerate(params)}
    n_ports = len(loop.input_ports)
    ports = loop.input_ports
    length_ports = [p for p in out_ports if isinstance(p, Concat) and p.length is not None]

    it_pos = pos.get(loop.iteration_param.uid) if loop.iteration_param is not None else None
    it_dtype, it_shape = np.int64, ()
    if loop.iteration_param is not None and isinstance(loop.iteration_param.type, TensorType):
        t = loop.iteration_param.type
        it_dtype = to_numpy(t.dtype) if t.dtype is not None else np.int64
        it_shape = (1,) if t.shape is not None and len(t.shape) == 1 else ()
    cond_pos = pos.get(loop.condition_param.uid) if loop.condition_param is not None else None
    carried_pos = [pos[c.param.uid] for c in carried]
    sliced = [(j, p, pos[p.param.uid]) for j, p in enumerate(ports) if isinstance(p, Sliced)]
    invariant = [(j, pos[p.param.uid]) for j, p in enumerate(ports) if isinstance(p, Invariant)]
    carried_src = [j for j, p in enumerate(ports) if isinstance(p, Carried)]
    unbounded_negative = loop.negative_trip_count == "unbounded"
    strict_slices = bool(loop.origin_attrs.get("strict_slices"))
    has_condition = loop.condition_result is not None or pre_plan is not None
    body_fn = plan.fn
    pre_fn = pre_plan.fn if pre_plan else None
    n_out = len(out_ports)
    n_params = len(params)

    def run(trip, cond0, *rest):
        values = rest[:n_ports]
        lengths = rest[n_ports:n_ports + len(length_ports)]
        outer = rest[n_ports + len(length_ports):]
        limit = None  # None: unbounded
        if trip is not None:
            t = int(_scalar(loop, "trip count", trip))
            if t >= UNBOUNDED_TRIP_COUNT or (t < 0 and unbounded_negative):
                limit = None
            else:
                limit = max(t, 0)
        args: list = [None] * n_params
        pieces = []
        for j, p, slot in sliced:
            x = np.asarray(values[j])
            axis = p.axis + x.ndim if p.axis < 0 else p.axis
            if not 0 <= axis < x.ndim:
                raise ExecutionError(f"{where(loop)}: sliced input {j} has axis {p.axis}, "
                                     f"out of range for its rank {x.ndim}")
            dim = x.shape[axis]
            if p.keep_axis and (dim % p.part_size) and p.start == 0 and p.end == -1:
                raise ExecutionError(f"{where(loop)}: sliced input {j}: axis {axis} of length {dim} "
                                     f"is not divisible by part_size {p.part_size}")
            count = p.count(dim)
            if strict_slices and limit is not None and limit > count:
                raise ExecutionError(f"{where(loop)}: trip count {limit} iterates beyond sliced "
                                     f"input {j}, which has {count} entries on axis {axis}")
            limit = count if limit is None else min(limit, count)
            moved = np.moveaxis(x, axis, 0) if axis else x
            pieces.append((slot, moved, p, axis, dim))
        for j, slot in invariant:
            args[slot] = values[j]
        state = [values[j] for j in carried_src]
        cond = True if cond0 is None else bool(_scalar(loop, "initial condition", cond0))
        max_it = ctx.max_iterations
        known = limit is not None and not has_condition
        capacity = limit if known else 16
        accs = [_Accumulator(loop, i, out_ports[i]) for i in concat_idx]
        body_caps = [outer[i] for i in body_cap_idx]
        pre_caps = [outer[i] for i in pre_cap_idx]
        last = None
        k = 0
        while cond and (limit is None or k < limit):
            if max_it is not None and k >= max_it:
                raise IterationLimitError(
                    f"{where(loop)}: stopped after max_iterations={max_it} iterations")
            if it_pos is not None:
                args[it_pos] = np.full(it_shape, k, it_dtype)
            if cond_pos is not None:
                args[cond_pos] = np.array(cond)
            for slot, s in zip(carried_pos, state):
                args[slot] = s
            for slot, moved, p, axis, dim in pieces:
                if p.keep_axis:
                    st = p.piece_start(k, dim)
                    piece = moved[st:st + p.part_size]
                    args[slot] = np.moveaxis(piece, 0, axis) if axis else piece
                else:
                    args[slot] = moved[p.piece_start(k, dim)]
            if pre_fn is not None and not bool(_scalar(loop, "precondition",
                                                       pre_fn(*args, *pre_caps)[0])):
                break
            last = body_fn(*args, *body_caps)
            if cond_slot is not None:
                cond = bool(_scalar(loop, f"condition at iteration {k}", last[cond_slot]))
            state = [last[s] for s in state_slots]
            for acc, s in zip(accs, concat_slots):
                acc.append(last[s], capacity)
            k += 1
        outs: list = [None] * n_out
        for i, j in last_from_state.items():
            outs[i] = state[j]
        for i, s in zip(last_plain, plain_slots):
            if last is None:
                outs[i] = _zero_trip_last(loop, i, out_ports[i].result, args, pos, outer, caps)
            else:
                outs[i] = last[s]
        length_of = {id(p): v for p, v in zip(length_ports, lengths)}
        for i, acc in zip(concat_idx, accs):
            outs[i] = acc.finish(length_of.get(id(out_ports[i])))
        return outs[0] if n_out == 1 else outs

    return run


def _zero_trip_last(loop: Loop, i: int, result: Value, args, pos, outer, caps):
    """A Last output that is not a carried value, after zero iterations."""
    if result.uid in pos and args[pos[result.uid]] is not None:
        return args[pos[result.uid]]  # an invariant input passed straight through
    for c, v in zip(caps, outer):
        if c is result:
            return v
    if result.const is not None:
        return result.const
    raise ExecutionError(
        f"{where(loop)}: output {i} ('{result.name}') has no value: the loop ran zero iterations "
        "and the output is neither a carried value nor loop-invariant"
    )

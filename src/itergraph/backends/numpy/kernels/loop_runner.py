"""The NumPy kernel of the canonical `Loop` (see `itergraph.ir.loop` for its meaning).

The body is compiled once into a plan; every iteration updates a preallocated argument
list in place and calls the plan. Sliced inputs are views of the input (the axis is moved to
the front once per run). Concatenated outputs go into a buffer preallocated for the known
iteration count, or one that doubles when the count is not known in advance.
"""

from __future__ import annotations

import itertools

import numpy as np

from ....errors import Error, ExecutionError, InputError, IterationLimitError, where
from ....ir import UNBOUNDED_TRIP_COUNT, Carried, Concat, Invariant, Last, Loop, Sliced, Value
from ....ir.types import DataType, TensorType
from ..plan import CompileContext
from . import kernel


def _scalar(loop: Loop, what: str, x) -> np.ndarray:
    a = np.asarray(x)
    if a.size != 1:
        raise InputError(f"{where(loop)}: {what} must hold one element, got shape {a.shape}")
    return a.reshape(())


class _Accumulator:
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

    def _allocate(self, x: np.ndarray) -> np.ndarray:
        self.shape, self.dtype = x.shape, x.dtype
        cap, port, shape, rank = self.capacity, self.port, x.shape, x.ndim
        if port.length is None:
            if port.new_axis:
                a = port.axis + rank + 1 if port.axis < 0 else port.axis
                if 0 <= a <= rank:
                    self.out = np.empty((*shape[:a], cap, *shape[a:]), x.dtype)
                    view = np.moveaxis(self.out, a, 0) if a else self.out
                    return view[::-1] if port.reverse else view
            else:
                a = port.axis + rank if port.axis < 0 else port.axis
                if 0 <= a < rank:
                    d = shape[a]
                    self.out = np.empty((*shape[:a], cap * d, *shape[a + 1:]), x.dtype)
                    split = self.out.reshape(*shape[:a], cap, d, *shape[a + 1:])
                    view = np.moveaxis(split, a, 0) if a else split
                    return view[::-1] if port.reverse else view
        return np.empty((cap, *shape), x.dtype)

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
            grown = np.empty((2 * len(buf), *self.shape), self.dtype)
            grown[: self.count] = buf
            buf = self.buf = grown
            self.out = None
        buf[self.count] = x
        self.count += 1

    def put(self, k: int, x) -> tuple:
        """Append `x` as entry `k` (the driver writes entries into `buf` itself while they fit
        and keep the shape); returns ``(buf, shape, capacity)`` for the driver's fast path."""
        self.count = k
        self.append(x)
        return self.buf, self.shape, len(self.buf)

    def finish(self, length) -> np.ndarray:
        port = self.port
        if self.out is not None and self.count == len(self.buf):
            return self.out  # every entry written in place
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
        dtype = DataType(t.dtype).numpy
    else:
        dtype = np.float32
    shape = t.shape if isinstance(t, TensorType) and t.shape is not None else ()
    return np.zeros((0, *(d if isinstance(d, int) else 0 for d in shape)), dtype)


@kernel("Loop", domain="itergraph")
def loop_kernel(loop: Loop, ctx: CompileContext):
    if ctx.optimize and id(loop) not in ctx.loops_done:
        fast = _rewritten_kernel(loop, ctx)
        if fast is not None:
            return fast
    return _loop_kernel(loop, ctx)


def _rewritten_kernel(loop: Loop, ctx: CompileContext):
    """The kernel of a rewritten copy of `loop` (`passes.optimize_loops`), or None when the
    rewrites change nothing.

    The copy, with the nodes moved out of its body in front of it, is compiled as a small
    graph reading the loop's own inputs and captures. If running it raises, the original loop
    runs instead: its errors (or its success, e.g. when it runs zero iterations and a moved
    node fails on its inputs) are the ones the user gets.
    """
    from ....ir import Graph
    from ....ir.clone import clone_node
    from ....passes.optimize_loops import optimize_loops

    copy = clone_node(loop, {})
    wrapper = Graph(f"{loop.name or 'loop'} (rewritten)", nodes=[copy], outputs=copy.outputs)
    changed = optimize_loops(wrapper)
    for g in (wrapper, loop.body):
        for _, n in g.walk():
            if isinstance(n, Loop):
                ctx.loops_done.add(id(n))
    if not changed:
        return None
    args = [*loop.inputs, *loop.captured()]
    keep = [i for i, v in enumerate(args) if v is not None]
    try:
        plan = ctx.compile(wrapper, inputs=[args[i] for i in keep])
    except Error:
        return None  # compiling the original reports what is wrong
    if plan.captures:  # the copy reads something the loop does not: leave it
        return None
    fn = plan.fn
    n_out = len(loop.outputs)
    original = []

    def run(*a):
        try:
            outs = fn(*[a[i] for i in keep])
        except Error:
            if not original:
                original.append(_loop_kernel(loop, ctx))
            return original[0](*a)
        return outs[0] if n_out == 1 else list(outs)

    return run


def _loop_kernel(loop: Loop, ctx: CompileContext):
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
    if loop.condition_result is not None:
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
    caps = loop.captured()
    cap_pos = {v.uid: i for i, v in enumerate(caps)}
    body_cap_idx = [cap_pos[v.uid] for v in plan.captures]
    pre_cap_idx = [cap_pos[v.uid] for v in pre_plan.captures] if pre_plan else []
    ports = loop.input_ports
    n_ports = len(ports)
    length_ports = [p for p in out_ports if isinstance(p, Concat) and p.length is not None]
    it_dtype, it_shape = np.int64, ()
    if loop.iteration_param is not None and isinstance(loop.iteration_param.type, TensorType):
        t = loop.iteration_param.type
        it_dtype = DataType(t.dtype).numpy if t.dtype is not None else np.int64
        it_shape = (1,) if t.shape is not None and len(t.shape) == 1 else ()
    sliced = [(j, p) for j, p in enumerate(ports) if isinstance(p, Sliced)]
    invariant = [j for j, p in enumerate(ports) if isinstance(p, Invariant)]
    carried_src = [j for j, p in enumerate(ports) if isinstance(p, Carried)]
    unbounded_negative = loop.negative_trip_count == "unbounded"
    strict_slices = loop.strict_slices
    known_count = loop.condition_result is None and pre_plan is None
    drive = _make_driver(loop, plan, pre_plan, state_slots, concat_slots, ctx.max_iterations)
    n_out = len(out_ports)

    def pre_holds(k, cond, state, values, outer) -> bool:
        """The precondition for iteration `k` (sliced inputs, exhausted by then, read as None)."""
        args = [None] * len(params)
        at = {v.uid: i for i, v in enumerate(params)}
        if loop.iteration_param is not None:
            args[at[loop.iteration_param.uid]] = np.full(it_shape, k, it_dtype)
        if loop.condition_param is not None:
            args[at[loop.condition_param.uid]] = cond
        for c, v in zip(carried, state):
            args[at[c.param.uid]] = v
        for j in invariant:
            args[at[ports[j].param.uid]] = values[j]
        return bool(pre_plan.fn(*args, *[outer[i] for i in pre_cap_idx])[0])

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
        trip_limit = limit
        seqs = []
        shortest = None  # (count, port index) of the shortest sliced input
        for j, p in sliced:
            seq, count = _sequence(loop, j, p, np.asarray(values[j]))
            if shortest is None or count < shortest[0]:
                shortest = (count, j)
            if strict_slices and known_count and limit is not None and limit > count:
                raise _beyond(loop, j, count, p)
            limit = count if limit is None else min(limit, count)
            seqs.append(seq)
        cond = np.array(True) if cond0 is None else _scalar(loop, "initial condition", cond0)
        capacity = limit if known_count and limit is not None else 16
        accs = [_Accumulator(loop, i, out_ports[i], capacity) for i in concat_idx]
        try:
            k, cond, state, last = drive(
                _UNBOUNDED if limit is None else limit, cond,
                [values[j] for j in carried_src], seqs, [values[j] for j in invariant],
                [outer[i] for i in body_cap_idx], [outer[i] for i in pre_cap_idx],
                accs, lambda k: np.full(it_shape, k, it_dtype))
        except ValueError as e:  # a condition that is not one boolean
            raise ExecutionError(f"{where(loop)}: condition must hold one boolean: {e}") from e
        for acc in accs:
            acc.count = k  # the driver wrote entries 0..k-1
        if (strict_slices and shortest is not None and k == shortest[0] and cond
                and (trip_limit is None or trip_limit > k)
                and (pre_plan is None or pre_holds(k, cond, state, values, outer))):
            raise _beyond(loop, shortest[1], k, ports[shortest[1]])
        outs: list = [None] * n_out
        for i, j in last_from_state.items():
            outs[i] = state[j]
        for i, s in zip(last_plain, plain_slots):
            outs[i] = _zero_trip_last(loop, i, out_ports[i].result, values, outer, caps) \
                if last is None else last[s]
        length_of = {id(p): v for p, v in zip(length_ports, lengths)}
        for i, acc in zip(concat_idx, accs):
            outs[i] = acc.finish(length_of.get(id(out_ports[i])))
        return outs[0] if n_out == 1 else outs

    return run


_UNBOUNDED = float("inf")


def _beyond(loop: Loop, j: int, count: int, p: Sliced) -> ExecutionError:
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


def _make_driver(loop: Loop, plan, pre_plan, state_slots, concat_slots, max_iterations):
    """Generate the iteration loop for this `loop`'s port layout as straight-line Python.

    ``drive(limit, cond, state, seqs, invs, caps, pre_caps, accumulators, it)`` returns
    ``(iterations run, last condition, final state, results of the last iteration or None)``.
    Concatenated results are written straight into their accumulator's buffer while they fit
    and keep their shape (``_Accumulator.put`` handles the first entry, growth and errors);
    the caller sets each accumulator's count to the iterations run. A loop whose condition
    never changes and that has no precondition runs as a ``for`` over ``range(limit)``.
    Body parameters the plan does not read are passed as None (sliced ones are not indexed).
    """
    pos = {v.uid: i for i, v in enumerate(plan.inputs)}
    carried, sliced = loop.carried, loop.sliced
    invariant = loop.invariant

    def names(prefix: str, n: int) -> str:
        return "".join(f"{prefix}{i}, " for i in range(n))

    def used(v) -> bool:
        return plan.uses(v) or (pre_plan is not None and pre_plan.uses(v))

    args = ["None"] * len(plan.inputs)
    if loop.iteration_param is not None and used(loop.iteration_param):
        args[pos[loop.iteration_param.uid]] = "it(k)"
    if loop.condition_param is not None:
        args[pos[loop.condition_param.uid]] = "cond"
    for i, c in enumerate(carried):
        args[pos[c.param.uid]] = f"s{i}"
    for i, p in enumerate(sliced):
        if used(p.param):
            args[pos[p.param.uid]] = f"q{i}[k]"
    for i, p in enumerate(invariant):
        args[pos[p.param.uid]] = f"n{i}"
    arglist = ", ".join(args)
    call_caps = "".join(f", c{i}" for i in range(len(plan.captures)))
    counted = loop.condition_result is None and pre_plan is None
    lines = [
        "def drive(limit, cond, S, Q, N, C, P, A, it):",
        f"    {names('s', len(carried))}= S" if carried else "    pass",
        f"    {names('q', len(sliced))}= Q" if sliced else "    pass",
        f"    {names('n', len(invariant))}= N" if invariant else "    pass",
        f"    {names('c', len(plan.captures))}= C" if plan.captures else "    pass",
    ]
    for i in range(len(concat_slots)):
        lines.append(f"    a{i} = A[{i}]; b{i} = sh{i} = None; m{i} = 0")
    lines.append("    r = None")
    if counted:
        lines += ["    if not cond:", f"        return 0, cond, ({names('s', len(carried))}), r",
                  "    k = -1",
                  "    for k in (_count() if limit == _inf else range(limit)):"]
    else:
        lines += ["    k = 0", "    while k < limit and cond:"]
    if max_iterations is not None:
        lines += [f"        if k >= {int(max_iterations)}:", "            _limit()"]
    if pre_plan is not None:
        pre_caps = "".join(f", P[{i}]" for i in range(len(pre_plan.captures)))
        lines += [f"        if not pre({arglist}{pre_caps})[0]:", "            break"]
    lines.append(f"        r = body({arglist}{call_caps})")
    for i, slot in enumerate(state_slots):
        lines.append(f"        s{i} = r[{slot}]")
    if loop.condition_result is not None:
        lines.append("        cond = r[0]")
    for i, slot in enumerate(concat_slots):
        lines += [f"        x = r[{slot}]",
                  f"        if k < m{i} and x.shape == sh{i}:",
                  f"            b{i}[k] = x",
                  "        else:",
                  f"            b{i}, sh{i}, m{i} = a{i}.put(k, x)"]
    if not counted:
        lines.append("        k += 1")
    else:
        lines.append("    k += 1")
    lines += [f"    return k, cond, ({names('s', len(carried))}), r", ""]
    source = "\n".join(lines)

    def limit_reached():
        raise IterationLimitError(
            f"{where(loop)}: stopped after max_iterations={max_iterations} iterations")

    env = {"body": plan.fn, "pre": pre_plan.fn if pre_plan else None, "_limit": limit_reached,
           "_count": itertools.count, "_inf": _UNBOUNDED}
    exec(compile(source, f"<itergraph loop driver: {loop.name}>", "exec"), env)  # noqa: S102
    return env["drive"]


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

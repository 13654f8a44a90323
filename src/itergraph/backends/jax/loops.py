"""Lowering the canonical `Loop` (see `itergraph.ir.loop` for its meaning) to XLA loops.

Three forms, chosen while tracing:

- **scan**: the iteration count is known at trace time (a constant trip count, the slice
  count of a sliced input) and nothing can stop the loop early (no condition, or one that is
  statically true, no precondition). Sliced inputs become ``xs`` (axis moved to the front,
  pieces gathered, reversed for negative strides), concatenated outputs ``ys`` that are
  reversed/moved/merged/padded afterwards, carried values the carry.
- **while**: a condition, a precondition or a run-time trip count, and no concatenated
  output: ``lax.while_loop`` over (iteration, condition, carried values, last values).
- **driver**: as *while*, with concatenated outputs, whose length is only known at run time.
  XLA needs static shapes, so such a loop runs (at the top level of a graph only) as a jitted
  step per buffer capacity: the step fills a buffer per output and stops when the buffer is
  full; the Python `LoopDriver` then resumes from the carried state with a buffer twice as
  large (no iteration runs twice; one compilation per capacity). Inside another loop or a
  branch such a loop cannot be expressed and `CannotLower` sends the enclosing top-level node
  to NumPy.

A scan also moves work out of its body (`HoistPlan`): nodes that read nothing changing
across iterations are traced once before it, and matrix products that read no carried value
(``x_t W``, a recurrent cell's input projection) are computed for all iterations at once.

Zero iterations follow the NumPy backend exactly: carried outputs are the initial values,
concatenated outputs are empty with the body's declared element shape (unknown dims as 0),
and a last value that is neither carried nor loop-invariant is an `ExecutionError`.
`max_iterations` is a traced argument: while loops stop when they reach it and the runner
raises `IterationLimitError` naming the loop; a scan longer than the limit raises as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import ExecutionError, InputError, IterationLimitError, where
from ...ir import UNBOUNDED_TRIP_COUNT, Carried, Concat, Invariant, Loop, Sliced, Value
from ...ir.traits import Trait, has
from ...ir.types import DataType, TensorType
from .context import CannotLower, Frame, NeedsDriver, OpContext, Scope, TraceContext, is_static
from .ops.rnn import cell_input_projection
from .table import lookup
from .trace import eval_graph, eval_nodes

INT64_MAX = np.iinfo(np.int64).max
LIMIT_MESSAGE = "stopped after max_iterations={max_iterations} iterations"


# ----------------------------------------------------------------------------- static analysis


@dataclass
class LoopInfo:
    """What does not depend on shapes: which outputs come from where."""

    concat_idx: list[int]
    last_state: dict[int, int]  # output index -> carried port index
    last_direct: dict[int, Value]  # output index -> a value that is the same every iteration
    last_plain: list[int]  # output index -> last iteration's value (carried in the loop)
    carried: list[Carried]
    sliced: list[tuple[int, Sliced]]
    invariant: list[Invariant]
    length_ports: list[Concat] = field(default_factory=list)


def loop_info(loop: Loop) -> LoopInfo:
    info = loop.meta.get("_jax_info")
    if info is not None:
        return info
    ports = loop.output_ports
    carried = loop.carried
    invariant_params = {p.param.uid for p in loop.invariant}
    body_defined = loop.body.defined()
    concat_idx, last_state, last_direct, last_plain = [], {}, {}, []
    for i, p in enumerate(ports):
        if isinstance(p, Concat):
            concat_idx.append(i)
            continue
        c = loop.carried_for_result(p.result)
        r = p.result
        if c is not None:
            last_state[i] = carried.index(c)
        elif r.uid in invariant_params or (r.uid not in body_defined) or (
                r.const is not None and r.producer is None):
            last_direct[i] = r
        else:
            last_plain.append(i)
    info = LoopInfo(concat_idx, last_state, last_direct, last_plain, carried,
                    [(j, p) for j, p in enumerate(loop.input_ports) if isinstance(p, Sliced)],
                    loop.invariant,
                    [p for p in ports if isinstance(p, Concat) and p.length is not None])
    loop.meta["_jax_info"] = info
    return info


def static_truth(tc: TraceContext, loop: Loop, scope: Scope, value: Value | None,
                 invariants: dict[int, Any]) -> bool | None:
    """The value of a body bool (condition, precondition) when it is the same in every
    iteration and known at trace time, else None. ``None`` value: True (no condition)."""
    if value is None:
        return True
    known: dict[int, Any] = dict(invariants)
    if loop.condition_param is not None:
        known[loop.condition_param.uid] = np.array(True)
    unknown = {v.uid for v in loop.body.inputs if v.uid not in known}

    def get(v):
        if v.uid in known:
            return known[v.uid]
        if v.uid in unknown:
            return None
        try:
            x = scope.get(v)
        except Exception:
            return None
        return x if is_static(x) else None

    for node in tc.program.needed(loop.body, [value]):
        outs = None
        ins = [None if v is None else get(v) for v in node.inputs]
        rule = lookup(node) if not node.subgraphs() else None
        if rule is not None and rule.fold and all(
                x is not None or v is None for x, v in zip(ins, node.inputs)):
            try:
                r = rule.fn(OpContext(node, np, tc, Frame()), *ins)
                outs = [r] if len(node.outputs) == 1 else list(r)
            except Exception:
                outs = None
        for i, v in enumerate(node.outputs):
            if outs is None:
                unknown.add(v.uid)
            else:
                known[v.uid] = np.asarray(outs[i])
    x = get(value)
    if x is None or x.size != 1:
        return None
    return bool(x.reshape(()))


# ----------------------------------------------------------------------------- set-up


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
    # strict slices with a condition: (count, port) of the shortest sliced input, checked
    # after the loop (running out of pieces while the loop would go on is an error)
    strict_after: tuple | None = None


def _scalar(loop: Loop, what: str, x):
    if x.size != 1:
        raise InputError(f"{where(loop)}: {what} must hold one element, got shape "
                         f"{tuple(x.shape)}")
    return x.reshape(())


def setup(tc: TraceContext, loop: Loop, scope: Scope) -> Setup:
    import jax.numpy as jnp

    info = loop_info(loop)
    get = scope.get
    # trip count -> limit
    limit: Any = None
    if loop.trip_count is not None:
        t = _scalar(loop, "trip count", get(loop.trip_count))
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
    for j, p in info.sliced:
        x = get(p.value)
        axis = p.axis + x.ndim if p.axis < 0 else p.axis
        if not 0 <= axis < x.ndim:
            raise ExecutionError(f"{where(loop)}: sliced input {j} has axis {p.axis}, out of "
                                 f"range for its rank {x.ndim}")
        dim = x.shape[axis]
        if p.keep_axis and (dim % p.part_size) and p.start == 0 and p.end == -1:
            raise ExecutionError(f"{where(loop)}: sliced input {j}: axis {axis} of length {dim} "
                                 f"is not divisible by part_size {p.part_size}")
        count = p.count(dim)
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
        c = _scalar(loop, "initial condition", get(loop.initial_condition))
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
                 strict_after=shortest if strict and not counted else None)


def beyond_message(loop: Loop, j: int, count: int, p: Sliced) -> str:
    return (f"{where(loop)}: the loop iterates beyond sliced input {j}, which has {count} "
            f"entries on axis {p.axis}")


def stack_pieces(x, p: Sliced, axis: int, dim: int, count: int):
    """All pieces of a sliced input, stacked on a new leading axis: (count, *piece shape)."""
    xp = np if is_static(x) else _jnp()
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


def _jnp():
    import jax.numpy as jnp

    return jnp


# ----------------------------------------------------------------------------- the body


def iteration_value(loop: Loop, k):
    """The iteration number as the body's iteration parameter wants it (dtype, rank 0 or 1)."""
    t = loop.iteration_param.type
    dtype, shape = np.int64, ()
    if isinstance(t, TensorType):
        if t.dtype is not None:
            dtype = DataType(t.dtype).numpy
        if t.shape is not None and len(t.shape) == 1:
            shape = (1,)
    return k.astype(dtype).reshape(shape)


def run_body(tc: TraceContext, st: Setup, k, state, pieces, wanted: list[Value],
             hoisted: tuple[set[int], dict[int, Any]] | None = None, only=None):
    """Trace one iteration; returns (values of `wanted`, error code of the body).

    `hoisted`: (ids of body nodes not to trace, values of their outputs the rest reads).
    `only`: trace just these body nodes (in order) instead of what `wanted` needs."""
    loop = st.loop
    frame = Frame()
    bs = Scope(tc, parent=st.scope, frame=frame)
    if loop.iteration_param is not None and k is not None:
        bs.bind(loop.iteration_param, iteration_value(loop, k))
    if loop.condition_param is not None:
        bs.bind(loop.condition_param, np.array(True))
    for uid, x in st.invariants.items():
        bs.env[uid] = x
    for c, x in zip(st.info.carried, state):
        bs.bind(c.param, x)
    for (_, p), x in zip(st.info.sliced, pieces):
        if x is not None:
            bs.bind(p.param, x)
    tc.depth += 1
    tc.enclosing.append(loop)
    try:
        if hoisted is None and only is None:
            vals = eval_graph(tc, loop.body, bs, wanted)
        else:
            nodes = only if only is not None else tc.program.needed(loop.body, wanted)
            if hoisted is not None:
                skip, bound = hoisted
                bs.env.update(bound)
                if only is None:
                    nodes = [n for n in nodes if id(n) not in skip]
            eval_nodes(tc, nodes, bs)
            vals = [bs.get(v) for v in wanted]
    finally:
        tc.depth -= 1
        tc.enclosing.pop()
    return vals, frame.err


def _as_array(x, dtype=None):
    jnp = _jnp()
    return jnp.asarray(x) if dtype is None else jnp.asarray(x, dtype=dtype)


def conform(loop: Loop, what: str, x, like):
    """`x` as a traced array of `like`'s shape and dtype; CannotLower when it differs."""
    shape, dtype = tuple(like.shape), np.dtype(like.dtype)
    if tuple(x.shape) != shape or np.dtype(x.dtype) != dtype:
        raise CannotLower(loop, f"{what} changes from {dtype}{list(shape)} to "
                                f"{np.dtype(x.dtype)}{list(x.shape)} across iterations "
                                "(XLA loops need a fixed shape and type)")
    import jax

    return jax.lax.convert_element_type(_as_array(x), dtype)


def _piece_avals(st: Setup):
    import jax

    return [jax.ShapeDtypeStruct(tuple(s.shape[1:]), s.dtype) for s in st.stacks]


def probe(tc: TraceContext, st: Setup, wanted: list[Value]):
    """Shapes/dtypes of body values `wanted` (traced once abstractly, results discarded)."""
    import jax

    if not wanted:
        return []
    state_avals = [jax.ShapeDtypeStruct(tuple(x.shape), x.dtype) for x in st.carried0]
    k_aval = jax.ShapeDtypeStruct((), np.int64)
    notes = len(tc.notes)

    def f(k, state, pieces):
        vals, _ = run_body(tc, st, k, state, pieces, wanted)
        return [_as_array(v) for v in vals]

    out = jax.eval_shape(f, k_aval, state_avals, _piece_avals(st))
    del tc.notes[notes:]
    return out


def _wanted(st: Setup) -> tuple[list[Value], list[Value], list[Value]]:
    info, ports = st.info, st.loop.output_ports
    return ([c.result for c in info.carried], [ports[i].result for i in info.concat_idx],
            [ports[i].result for i in info.last_plain])


# ----------------------------------------------------------------------------- lowering


def lower_loop(tc: TraceContext, loop: Loop, scope: Scope) -> list:
    st = setup(tc, loop, scope)
    if any(not is_static(x) for x in st.lengths):  # padded lengths shape the outputs
        if tc.depth == 0:
            raise NeedsDriver(loop)
        raise CannotLower(loop, "a concatenated output's length is computed from run-time data")
    n = None
    if st.cond0 is False:
        n = 0
    elif st.cond_free and isinstance(st.limit, int):
        n = st.limit
    if n is not None:
        if st.strict_after is not None and st.cond0 is not False:
            count, j = st.strict_after
            if n == count:
                bad = True if st.trip is None else st.trip > n
                tc.check(scope.frame, bad, beyond_message(loop, j, count, loop.input_ports[j]))
        if tc.max_it is not None and n > 0:
            tc.check(scope.frame, tc.max_it < n, f"{where(loop)}: {LIMIT_MESSAGE}",
                     IterationLimitError)
        if n == 0:
            tc.note(loop, True, "runs zero iterations (known at compile time)")
            return zero_trip_outputs(st)
        return _scan(tc, st, n)
    if st.info.concat_idx:
        if tc.depth == 0:
            raise NeedsDriver(loop)
        outer = tc.enclosing[-1] if tc.enclosing else None
        raise CannotLower(loop, "a loop that can stop early (condition, precondition or run-time "
                                "trip count) with concatenated outputs has a data-dependent "
                                f"output length, which XLA cannot express inside {where(outer)}")
    tc.note(loop, True, "lax.while_loop" + (" (with precondition)" if st.has_pre else ""))
    return _while(tc, st)


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
                                _length_of(st, loop.output_ports[i]))
    return outs


def _direct(st: Setup, v: Value):
    if v.uid in st.invariants:
        return st.invariants[v.uid]
    return st.scope.get(v)


def _length_of(st: Setup, port: Concat):
    if port.length is None:
        return None
    x = st.lengths[st.info.length_ports.index(port)]
    return x


def zero_trip_message(loop: Loop, i: int) -> str:
    r = loop.output_ports[i].result
    return (f"{where(loop)}: output {i} ('{r.name}') has no value: the loop ran zero iterations "
            "and the output is neither a carried value nor loop-invariant")


def empty_stack(port: Concat) -> np.ndarray:
    """The zero-iteration stack: declared element shape, unknown dims as 0 (as ONNX Runtime)."""
    t = port.result.type
    known = isinstance(t, TensorType) and t.dtype is not None
    dtype = DataType(t.dtype).numpy if known else np.float32
    shape = t.shape if isinstance(t, TensorType) and t.shape is not None else ()
    return np.zeros((0, *(d if isinstance(d, int) else 0 for d in shape)), dtype)


def finish_concat(xp, loop: Loop, index: int, port: Concat, stacked, n: int, length):
    """Per-iteration values stacked on axis 0 -> the output (reverse, pad, move or merge)."""
    if port.reverse:
        stacked = xp.flip(stacked, 0)
    if port.length is not None:
        if not is_static(length):
            raise CannotLower(loop, f"the length of output {index} must be known at compile time")
        total = int(_scalar(loop, f"length of output {index}", np.asarray(length)))
        if total < n:
            raise ExecutionError(f"{where(loop)}: output {index} ('{port.output.name}') has "
                                 f"length {total}, below the {n} iterations the loop ran")
        if total > n:
            pad = [(0, total - n)] + [(0, 0)] * (stacked.ndim - 1)
            stacked = xp.pad(stacked, pad)
    rank = stacked.ndim - 1
    if port.new_axis:
        axis = port.axis + rank + 1 if port.axis < 0 else port.axis
        if not 0 <= axis <= rank:
            raise ExecutionError(f"{where(loop)}: output {index}: axis {port.axis} out of range "
                                 f"for rank {rank + 1}")
        return xp.moveaxis(stacked, 0, axis) if axis else stacked
    axis = port.axis + rank if port.axis < 0 else port.axis
    if not 0 <= axis < rank:
        raise ExecutionError(f"{where(loop)}: output {index}: axis {port.axis} out of range for "
                             f"rank {rank}")
    moved = xp.moveaxis(stacked, 0, axis)
    shape = list(stacked.shape[1:])
    shape[axis] *= stacked.shape[0]
    return xp.reshape(moved, tuple(shape))


HOIST_MAX_BYTES = 1 << 28


@dataclass
class HoistPlan:
    """Body nodes a scan computes outside its loop (shape-independent, cached per loop).

    `invariant`: nodes reading nothing that changes across iterations (invariant inputs,
    outer values, constants), traced once before the scan. `batched`: matrix products that
    read no carried value (only sliced pieces, the iteration number and invariants), with
    the nodes they need, computed for all iterations at once by one vmapped trace (one large
    product instead of one small product per step). `*_out`: their values the rest reads."""

    invariant: list
    invariant_out: list[Value]
    batched: list
    batched_out: list[Value]
    cells: list = field(default_factory=list)  # LSTM/GRU/RNN nodes: input projection batched


def hoist_plan(tc: TraceContext, loop: Loop, wanted: list[Value]) -> HoistPlan:
    key = ("_jax_hoist", tuple(v.uid for v in wanted))
    plan = loop.meta.get(key)
    if plan is not None:
        return plan
    needed = tc.program.needed(loop.body, wanted)
    carried = {c.param.uid for c in loop.carried}
    per_iter = {p.param.uid for _, p in loop_info(loop).sliced}
    if loop.iteration_param is not None:
        per_iter.add(loop.iteration_param.uid)
    varying = set(carried)  # depends on the carried state (or on a nested loop/branch)
    changing = set(carried) | per_iter  # differs between iterations
    invariant = []
    for n in needed:
        reads = {v.uid for v in n.inputs if v is not None}
        for g in n.subgraphs():
            reads.update(v.uid for v in g.captures())
        outs = {v.uid for v in n.outputs}
        if n.subgraphs() or isinstance(n, Loop) or reads & varying:
            varying |= outs
        if n.subgraphs() or isinstance(n, Loop) or reads & changing:
            changing |= outs
        else:
            invariant.append(n)
    inv_ids = {id(n) for n in invariant}
    producer = {v.uid: n for n in needed for v in n.outputs}
    chosen: set[int] = set()
    stack = [n for n in needed if has(n, Trait.MATMUL)
             and id(n) not in inv_ids and n.outputs[0].uid not in varying]
    cells = []
    for n in needed:  # recurrent cells: X @ W^T + Wb reads no state
        ins = list(n.inputs) + [None] * 5
        if (has(n, Trait.CELL) and id(n) not in inv_ids
                and ins[0] is not None and ins[0].uid not in varying and ins[4] is None
                and all(v is None or v.uid not in changing for v in (ins[1], ins[3]))):
            cells.append(n)
            if ins[0].uid in producer:
                stack.append(producer[ins[0].uid])
    while stack:
        n = stack.pop()
        if id(n) in chosen or id(n) in inv_ids:
            continue
        chosen.add(id(n))
        stack.extend(producer[v.uid] for v in n.inputs if v is not None and v.uid in producer)
    batched = [n for n in needed if id(n) in chosen]

    def frontier(nodes, later):
        made = [v for n in nodes for v in n.outputs]
        reads = {v.uid for n in later for v in n.inputs if v is not None}
        reads.update(v.uid for n in later for g in n.subgraphs() for v in g.captures())
        reads.update(v.uid for v in wanted)
        return [v for v in made if v.uid in reads]

    rest = [n for n in needed if id(n) not in inv_ids and id(n) not in chosen]
    plan = HoistPlan(invariant, frontier(invariant, batched + rest),
                     batched, frontier(batched, rest), cells)
    loop.meta[key] = plan
    return plan


def _hoist(tc: TraceContext, st: Setup, n: int, wanted: list[Value]):
    """Compute the hoisted parts of a scan body (see `HoistPlan`) outside the loop. Returns
    (ids of nodes the body skips, values bound in the body, batched frontier values, their
    stacked arrays, count of batched nodes)."""
    import jax
    import jax.numpy as jnp

    hp = hoist_plan(tc, st.loop, wanted)
    skip: set[int] = set()
    bound: dict[int, Any] = {}
    nc = len(st.info.carried)
    if hp.invariant:
        vals, err = run_body(tc, st, None, [None] * nc, [None] * len(st.stacks),
                             hp.invariant_out, only=hp.invariant)
        tc.merge(st.scope.frame, err)
        skip.update(id(x) for x in hp.invariant)
        bound.update((v.uid, x) for v, x in zip(hp.invariant_out, vals))
    if not (hp.batched or hp.cells) or n < 2:
        return skip, bound, [], [], 0
    statics: dict[int, Any] = {}
    traced_vals: list = []  # Values, or cell nodes (their input projection)
    cell_ins = [v for c in hp.cells for v in (c.inputs[0], c.inputs[1],
                                                 c.inputs[3] if len(c.inputs) > 3 else None)]

    def pre(k, pieces):
        wanted_pre = hp.batched_out + [v for v in cell_ins if v is not None]
        vals, err = run_body(tc, st, k, [None] * nc, pieces, wanted_pre,
                             hoisted=(skip, bound), only=hp.batched)
        out = []
        statics.clear()
        traced_vals.clear()
        for v, x in zip(hp.batched_out, vals):
            if is_static(x):
                statics[v.uid] = x
            else:
                traced_vals.append(v)
                out.append(x)
        got = dict(zip([v.uid for v in wanted_pre], vals))
        for j, c in enumerate(hp.cells):
            x, w, b = (None if v is None else got[v.uid] for v in cell_ins[3 * j:3 * j + 3])
            traced_vals.append(c)
            out.append(cell_input_projection(c, x, w, b))
        return out, (err if err is not None else jnp.zeros((), np.int32))

    shapes = jax.eval_shape(pre, jax.ShapeDtypeStruct((), np.int64), _piece_avals(st))[0]
    size = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in shapes) * n
    if size > HOIST_MAX_BYTES:
        return skip, bound, [], [], 0
    stacked, err = jax.vmap(pre)(jnp.arange(n, dtype=np.int64), list(st.stacks))
    tc.merge(st.scope.frame, jnp.max(err))
    skip = skip | {id(x) for x in hp.batched}
    bound = {**bound, **statics}
    products = sum(1 for x in hp.batched if has(x, Trait.MATMUL)) + len(hp.cells)
    return skip, bound, list(traced_vals), list(stacked), products


def _scan(tc: TraceContext, st: Setup, n: int) -> list:
    import jax
    import jax.numpy as jnp

    loop, info = st.loop, st.info
    carried_res, concat_res, plain_res = _wanted(st)
    wanted = carried_res + concat_res + plain_res
    nc, ny = len(carried_res), len(concat_res)
    init_state = [_as_array(x) for x in st.carried0]
    plain_avals = probe(tc, st, plain_res)
    init_lasts = [jnp.zeros(a.shape, a.dtype) for a in plain_avals]
    skip, bound, batched_vals, batched, n_batched = _hoist(tc, st, n, wanted)
    n_sliced = len(st.stacks)
    xs_all = list(st.stacks) + batched
    tc.note(loop, True, f"lax.scan over {n} iterations" + (
        f"; {n_batched} matrix product(s) that read no carried value computed for all "
        "iterations at once before it" if n_batched else ""))

    def step(carry, xs):
        k, state, lasts, err = carry
        pre = None
        cells = []
        if skip or batched_vals:
            b = dict(bound)
            for v, x in zip(batched_vals, xs[n_sliced:]):
                if isinstance(v, Value):
                    b[v.uid] = x
                else:  # a cell's input projection for this iteration
                    tc.cell_inputs[id(v)] = x
                    cells.append(v)
            pre = (skip, b)
        try:
            vals, berr = run_body(tc, st, k, state, xs[:n_sliced], wanted, pre)
        finally:
            for c in cells:
                tc.cell_inputs.pop(id(c), None)
        new_state = [conform(loop, f"carried value '{c.param.name}'", v, s)
                     for c, v, s in zip(info.carried, vals[:nc], state)]
        ys = [_as_array(v) for v in vals[nc:nc + ny]]
        new_lasts = [conform(loop, "a last value", v, s) for v, s in zip(vals[nc + ny:], lasts)]
        if berr is not None:
            err = jnp.where(err != 0, err, berr)
        return (k + 1, new_state, new_lasts, err), ys

    init = (jnp.zeros((), np.int64), init_state, init_lasts, jnp.zeros((), np.int32))
    (k, state, lasts, err), ys = jax.lax.scan(step, init, xs_all, length=n)
    tc.merge(st.scope.frame, err)
    outs: list = [None] * len(loop.output_ports)
    for i, j in info.last_state.items():
        outs[i] = state[j]
    for i, v in info.last_direct.items():
        outs[i] = _direct(st, v)
    for i, x in zip(info.last_plain, lasts):
        outs[i] = x
    for i, y in zip(info.concat_idx, ys):
        port = loop.output_ports[i]
        outs[i] = finish_concat(jnp, loop, i, port, y, n, _length_of(st, port))
    return outs


class WhileParts:
    """cond/body functions of a while loop over the state
    ``(k, cond, carried, lasts, err, bufs, k0)``; `capacity` None: no buffers."""

    def __init__(self, tc: TraceContext, st: Setup, capacity: int | None):
        self.tc, self.st, self.capacity = tc, st, capacity
        carried_res, concat_res, plain_res = _wanted(st)
        cond_res = [st.loop.condition_result] if st.loop.condition_result is not None else []
        self.wanted = cond_res + carried_res + concat_res + plain_res
        self.n_cond, self.nc, self.ny = len(cond_res), len(carried_res), len(concat_res)
        lim = st.limit
        self.limit = INT64_MAX if lim is None else lim

    def pieces(self, k):
        import jax

        return [jax.lax.dynamic_index_in_dim(s, k, 0, keepdims=False) if not is_static(s)
                else jax.lax.dynamic_index_in_dim(_as_array(s), k, 0, keepdims=False)
                for s in self.st.stacks]

    def running(self, c):
        """Would the loop run iteration k, ignoring the precondition and the buffer?"""
        k, cond = c[0], c[1]
        return cond & (k < self.limit)

    def cond_fn(self, c):

        k = c[0]
        ok = self.running(c)
        if self.tc.max_it is not None:
            ok = ok & (k < self.tc.max_it)
        if self.capacity is not None:
            ok = ok & (k - c[6] < self.capacity)
        if self.st.has_pre:
            ok = ok & self.precondition(c)
        return ok

    def precondition(self, c):
        """The precondition for iteration k on the state `c` (sliced pieces clamped)."""
        import jax.numpy as jnp

        k = c[0]
        vals, _ = run_body(self.tc, self.st, k, c[2], self.pieces(k), [self.st.loop.precondition])
        return jnp.asarray(_scalar(self.st.loop, "precondition", vals[0])).astype(bool)

    def body_fn(self, c):
        import jax
        import jax.numpy as jnp

        k, cond, state, lasts, err, bufs, k0 = c
        st, loop = self.st, self.st.loop
        vals, berr = run_body(self.tc, st, k, state, self.pieces(k), self.wanted)
        i = 0
        if self.n_cond:
            cnd = _scalar(loop, "condition", _as_array(vals[0]))
            cond = cnd.astype(bool)
            i = 1
        new_state = [conform(loop, f"carried value '{cp.param.name}'", v, s)
                     for cp, v, s in zip(st.info.carried, vals[i:i + self.nc], state)]
        i += self.nc
        ys = vals[i:i + self.ny]
        i += self.ny
        new_lasts = [conform(loop, "a last value", v, s) for v, s in zip(vals[i:], lasts)]
        new_bufs = [jax.lax.dynamic_update_index_in_dim(b, _as_array(y, b.dtype), k - k0, 0)
                    for b, y in zip(bufs, ys)]
        for b, y in zip(bufs, ys):
            if tuple(y.shape) != tuple(b.shape[1:]):
                raise CannotLower(loop, "a concatenated output changes shape across iterations")
        if berr is not None:
            err = jnp.where(err != 0, err, berr)
        return (k + 1, cond, new_state, new_lasts, err, new_bufs, k0)

    def initial(self):
        import jax.numpy as jnp

        st = self.st
        _, concat_res, plain_res = _wanted(st)
        avals = probe(self.tc, st, concat_res + plain_res)
        ny = len(concat_res)
        bufs = ([jnp.zeros((self.capacity, *a.shape), a.dtype) for a in avals[:ny]]
                if self.capacity is not None else [])
        lasts = [jnp.zeros(a.shape, a.dtype) for a in avals[ny:]]
        cond0 = jnp.asarray(st.cond0, dtype=bool)
        return (jnp.zeros((), np.int64), cond0, [_as_array(x) for x in st.carried0], lasts,
                jnp.zeros((), np.int32), bufs, jnp.zeros((), np.int64))

    def run(self, init):
        import jax

        return jax.lax.while_loop(self.cond_fn, self.body_fn, init)

    def post_checks(self, frame: Frame, final, k_total=None):
        """Record the iteration-limit and zero-trip errors of a finished run."""
        tc, loop = self.tc, self.st.loop
        k = final[0]
        if tc.max_it is not None:
            bad = self.running(final) & (k >= tc.max_it)
            if self.capacity is not None:
                bad = bad & (k - final[6] < self.capacity)
            tc.check(frame, bad, f"{where(loop)}: {LIMIT_MESSAGE}", IterationLimitError)
        st = self.st
        if st.strict_after is not None:
            count, j = st.strict_after
            bad = (k == count) & final[1]
            if st.trip is not None:
                bad = bad & (st.trip > k)
            if st.has_pre:
                bad = bad & self.precondition(final)
            tc.check(frame, bad, beyond_message(loop, j, count, loop.input_ports[j]))
        if self.st.info.last_plain and self.capacity is None:
            i = self.st.info.last_plain[0]
            tc.check(frame, k == 0, zero_trip_message(loop, i))


def _while(tc: TraceContext, st: Setup) -> list:
    parts = WhileParts(tc, st, None)
    final = parts.run(parts.initial())
    k, cond, state, lasts, err, _, _ = final
    tc.merge(st.scope.frame, err)
    parts.post_checks(st.scope.frame, final)
    info, loop = st.info, st.loop
    outs: list = [None] * len(loop.output_ports)
    for i, j in info.last_state.items():
        outs[i] = state[j]
    for i, v in info.last_direct.items():
        outs[i] = _direct(st, v)
    for i, x in zip(info.last_plain, lasts):
        outs[i] = x
    return outs

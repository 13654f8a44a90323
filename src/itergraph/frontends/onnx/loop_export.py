"""Lowering the canonical `Loop` to ONNX ``Scan`` or ``Loop``.

**Scan** (opset 9+) is used when the loop has that form (see :mod:`.scan_export`).

**Loop** handles everything else:

- sliced inputs: the slice bounds and counts are computed before the loop (folded when the
  shapes are static); inside the body piece k is a ``Gather`` (axis dropped) or ``Slice``
  (axis kept) at the index computed from the iteration number;
- ``M`` = min(trip count, slice counts); a negative trip count means no iteration in ONNX,
  so where the loop says it means unbounded (``negative_trip_count``) a ``Where`` maps it to
  INT64_MAX;
- invariant inputs become outer-scope captures;
- ``Concat`` outputs are ONNX scan outputs rewritten after the loop (:mod:`.concat_export`);
- ``Last`` of a value that is not a carried result is a scan output whose last entry is
  taken after the loop (with zero iterations ONNX Runtime then fails on the ``Gather``);
- a ``precondition`` (TensorRT WHILE) becomes ONNX's condition: its computation is cloned
  before the loop on the initial state (iteration 0) to give ``cond``, and at the end of the
  body on the next state (iteration k+1), and-ed with ``condition_result`` when there is one.
  The precondition may depend on carried values, invariants, the iteration number and outer
  values, not on sliced pieces.
"""

from __future__ import annotations

import numpy as np
from onnx import helper

from ...errors import UnsupportedError, where
from ...ir.graph import Graph, Node, Value
from ...ir.loop import Concat, Last, Loop, Sliced
from ...ir.types import DataType, TensorType
from .concat_export import post_concat
from .emit import INT64_MAX, Emitter, Int
from .export_common import (
    bind_invariants,
    carried_type,
    copy_last,
    dim_of,
    dtype_of,
    emit_body,
    final_names,
    no_shape,
    norm_axis,
    ordered,
    rank_of,
    subgraph,
    value_info,
)
from .naming import Env
from .scan_export import emit_scan, scan_form
from .types import dtype_to_onnx, tensor_to_onnx

I64 = 7  # onnx.TensorProto.INT64

#: The `Loop` flags the ONNX writer acts on (`ir.loop.loop_flags`): ``negative_trip_count``
#: (a ``Where`` maps a negative count to INT64_MAX), ``strict_slices`` (pieces gathered out of
#: range fail instead of bounding the count), ``equal_slices`` (`scan_form`: sliced inputs
#: of unknown lengths may become a Scan, which requires equal lengths too). A loop with
#: ``equal_slices`` written as an ONNX Loop runs to the shortest input instead of failing:
#: ONNX has no op that raises, and on every input the loop runs without error its sliced
#: inputs have one length, so the values are the same.
HANDLES_LOOP_FLAGS = frozenset({"negative_trip_count", "strict_slices", "equal_slices"})
IGNORES_LOOP_FLAGS: dict[str, str] = {}


def required_opset(loop: Loop) -> int:
    if scan_form(loop):
        neg = any(s.axis < 0 for s in loop.sliced) or any(
            o.axis < 0 for o in loop.output_ports if isinstance(o, Concat))
        return 11 if neg else 9
    simple = (not loop.sliced and loop.precondition is None and all(
        isinstance(o, Last) and loop.carried_for_result(o.result) is not None
        or isinstance(o, Concat) and o.new_axis and o.axis == 0 and not o.reverse
        and o.length is None for o in loop.output_ports))
    if simple:
        guard = loop.trip_count is not None and loop.negative_trip_count == "unbounded"
        return 9 if guard else 1
    return 11


# Loop ------------------------------------------------------------------------------------


class _SliceInfo:
    def __init__(self, port: Sliced, axis: int, lo: Int, hi: Int, count: Int):
        self.port, self.axis, self.lo, self.hi, self.count = port, axis, lo, hi, count


def _slice_info(w, loop: Loop, env, E: Emitter, i: int, s: Sliced) -> _SliceInfo:
    x = w.name(env, s.value, where(loop))
    axis = norm_axis(loop, s.axis, rank_of(s.value), f"sliced input {i}")
    dim = E.dim(x, axis, dim_of(s.value, axis))

    def post(p: int) -> Int:
        return p if p >= 0 else E.add(dim, p + 1)

    a, b = post(s.start), post(s.end)
    if isinstance(a, int) and isinstance(b, int):
        lo, hi = min(a, b), max(a, b)
    elif s.start >= 0 and s.end < 0 and s.start == 0:
        lo, hi = 0, b  # the common full-range case: 0 <= dim + 1 + end
    else:
        lo, hi = E.min(a, b), E.max(a, b)
    lo, hi = E.max(lo, 0), E.min(hi, dim)
    st = abs(s.stride)
    if lo == 0 and hi == dim and s.part_size == 1 and st == 1:
        return _SliceInfo(s, axis, lo, hi, dim)  # the whole axis
    count = E.div_nonneg(E.max(E.add(E.sub(hi, lo), st - s.part_size), 0), st)
    return _SliceInfo(s, axis, lo, hi, count)


def _trip(w, loop: Loop, env, E: Emitter) -> Int | None:
    tc = loop.trip_count
    if tc is None:
        return None
    zero = loop.negative_trip_count == "zero"
    if tc.const is not None and np.asarray(tc.const).size == 1:
        n = int(np.asarray(tc.const).reshape(()))
        return (0 if zero else None) if n < 0 else n
    name = w.name(env, tc, where(loop))
    if dtype_of(tc) != DataType.INT64:
        name = E.op("Cast", [name], "trip_count", to=I64)
    if zero:
        return name  # ONNX Loop runs no iteration for a negative M as well
    neg = E.op("Less", [name, E.const(0, "zero")], "trip_negative")
    return E.op("Where", [neg, E.const(INT64_MAX, "unbounded"), name], "trip_count")


def _param_deps(body: Graph, target: Value) -> tuple[list[Node], set[int]]:
    """Body nodes `target` depends on (body order) and the body params it reaches."""
    producers = {o.uid: n for n in body.nodes for o in n.outputs}
    params = {v.uid for v in body.inputs}
    need: set[int] = set()
    reached: set[int] = set()
    stack = [target]
    while stack:
        v = stack.pop()
        if v.uid in params:
            reached.add(v.uid)
        n = producers.get(v.uid)
        if n is None or id(n) in need:
            continue
        need.add(id(n))
        stack.extend(n.reads())
    return [n for n in ordered(body) if id(n) in need], reached


def _clone_precondition(w, loop: Loop, base_env, nodes, E: Emitter, state: list[str],
                        iteration: Int, outside: bool) -> str:
    """Emit the precondition's computation with carried params bound to `state`."""
    body = loop.body
    pre = loop.precondition
    deps, reached = _param_deps(body, pre)
    allowed = {c.param.uid for c in loop.carried} | {p.param.uid for p in loop.invariant}
    if loop.iteration_param is not None:
        allowed.add(loop.iteration_param.uid)
    if reached - allowed:
        raise UnsupportedError(f"{where(loop)}: the precondition depends on a sliced input or "
                               "the condition parameter; ONNX Loop cannot evaluate it before "
                               "the iteration")
    env = Env(base_env)
    for c, name in zip(loop.carried, state):
        env.names[c.param.uid] = name
    ip = loop.iteration_param
    if ip is not None:
        k = E.name_of(iteration)
        if dtype_of(ip) not in (None, DataType.INT64):
            k = E.op("Cast", [k], "iteration", to=dtype_to_onnx(dtype_of(ip)))
        env.names[ip.uid] = k
    if outside:
        for p in loop.invariant:
            env.names[p.param.uid] = w.name(base_env, p.value, where(loop))
        used = {x.uid for n in deps for x in n.reads()} | {pre.uid}
        for v in body.initializers:
            if v.uid in used:
                E.op("Constant", [], out=w.define(env, v), value=tensor_to_onnx(v.const))
    for n in deps:
        w.node(n, env, nodes)
    return w.name(env, pre, where(loop))


def _emit_loop(w, loop: Loop, env, nodes) -> None:
    lname = where(loop)
    E = Emitter(nodes, w.namer, w.opset)
    infos = [_slice_info(w, loop, env, E, i, s) for i, s in enumerate(loop.sliced)]
    # strict slices: running past a piece is an error, so their counts do not bound M; the
    # body's Gather of piece k then fails (ONNX Runtime: index out of bounds), see _emit_piece
    bounds = [s.count for s in infos if not (loop.strict_slices and not s.port.keep_axis)]
    terms = [t for t in [_trip(w, loop, env, E), *bounds] if t is not None]
    m: Int | None = None
    for t in terms:
        m = t if m is None else E.min(m, t)
    m_name = "" if m is None else E.name_of(m)
    carried = loop.carried
    init_names = [w.name(env, c.value, lname) for c in carried]
    cond = "" if loop.initial_condition is None else _scalar(
        E, w.name(env, loop.initial_condition, lname), loop.initial_condition)
    if loop.precondition is not None:
        pre0 = _scalar(E, _clone_precondition(w, loop, env, nodes, E, init_names, 0,
                                              outside=True), loop.precondition)
        cond = pre0 if not cond else E.op("And", [cond, pre0], "cond")
    elif not cond and loop.condition_result is not None:
        cond = E.op("Constant", [], "cond_true", value=helper.make_tensor("t", 9, [], [True]))

    # body -------------------------------------------------------------------------------
    benv = Env(env)
    bnodes: list = []
    B = Emitter(bnodes, w.namer, w.opset)
    ip = loop.iteration_param
    iter_name = w.fresh(f"{loop.name or 'loop'}_iter")
    b_inputs = [value_info(iter_name, TensorType(DataType.INT64, ()))]
    if ip is not None:
        dtype, shape = loop.iteration_form()
        if dtype == np.int64 and shape == ():
            benv.names[ip.uid] = iter_name
        else:
            k = iter_name
            if dtype != np.int64:
                k = B.op("Cast", [k], "iteration", to=dtype_to_onnx(dtype_of(ip)))
            B.op("Identity", [_vector(B, k) if shape else k], out=w.define(benv, ip))
    cp = loop.condition_param
    if cp is not None and isinstance(cp.type, TensorType) and cp.type.shape:
        cond_in = w.fresh(f"{loop.name or 'loop'}_cond")
        B.op("Identity", [_vector(B, cond_in)], out=w.define(benv, cp))
    else:
        cond_in = w.define(benv, cp) if cp is not None else \
            w.fresh(f"{loop.name or 'loop'}_cond")
    b_inputs.append(value_info(cond_in, TensorType(DataType.BOOL, ())))
    b_inputs += [value_info(w.define(benv, c.param), c.param.type or c.value.type, shape=False)
                 for c in carried]
    bind_invariants(w, loop, env, benv)
    for info in infos:
        _emit_piece(w, loop, env, benv, B, info, iter_name, loop.strict_slices)
    inits = emit_body(w, loop.body, benv, bnodes)
    results = [w.name(benv, c.result, lname) for c in carried]
    cond_out = cond_in if loop.condition_result is None else _scalar(
        B, w.name(benv, loop.condition_result, lname), loop.condition_result)
    if loop.precondition is not None:
        nxt = _scalar(B, _clone_precondition(w, loop, benv, bnodes, B, results,
                                             B.add(iter_name, 1), outside=False),
                      loop.precondition)
        cond_out = B.op("And", [cond_out, nxt], "cond_next")
    concats = [o for o in loop.output_ports if isinstance(o, Concat)]
    finals, rest = final_names(w, loop, env, nodes, E)
    lasts = [o for o in rest if loop.carried_for_result(o.result) is None]
    scanned = concats + lasts
    outs = [(cond_out, TensorType(DataType.BOOL, ()), "cond_out")]
    outs += [(r, no_shape(carried_type(c)), c.result.name) for r, c in zip(results, carried)]
    outs += [(w.name(benv, o.result, lname), o.result.type, o.result.name) for o in scanned]
    b_outputs = w.outputs(bnodes, inits, outs)
    body = subgraph(w, f"{loop.name or 'loop'}_body", bnodes, b_inputs, b_outputs, inits)

    # node and post-processing ----------------------------------------------------------
    raw = []
    for o in scanned:
        plain = isinstance(o, Concat) and o.new_axis and o.axis == 0 and not o.reverse \
            and o.length is None
        raw.append(w.define(env, o.output) if plain else w.fresh(f"{o.output.name or 'scan'}_raw"))
    nodes.append(helper.make_node("Loop", [m_name, cond, *init_names], finals + raw,
                                  name=w.node_names.fresh(loop.name or "Loop"), body=body))
    for o, r in zip(scanned, raw):
        if isinstance(o, Last):
            E.op("Gather", [r, E.const(-1, "last")], out=w.define(env, o.output), axis=0)
        elif env.names.get(o.output.uid) != r:
            post_concat(w, loop, env, E, o, r)
    copy_last(w, loop, env, E, finals, [o for o in rest if o not in lasts])


def _vector(E: Emitter, name: str) -> str:
    """Scalar `name` as ``[1]``: the body declares the iteration number or condition with a
    rank above 0, which the canonical loop gives it so (`Loop.iteration_form`)."""
    if E.opset >= 13:
        return E.op("Unsqueeze", [name, E.const([0], "axes")], "vector")
    return E.op("Unsqueeze", [name], "vector", axes=[0])


def _scalar(E: Emitter, name: str, v: Value) -> str:
    """`name` as ONNX Loop wants a condition: a scalar. OpenVINO allows a 1-element tensor
    (``[1]``, ``[1, 1]``) and so does ONNX Runtime at run time (paddle2onnx writes ``[1]``
    conditions); such a value is reshaped to ``[]``, and so is one of unknown shape (a
    condition holds one element, and ONNX Runtime refuses a body whose scalar condition input
    meets a ``[1]`` it infers outside). A value known to be a scalar is left as it is."""
    t = v.type
    shape = t.shape if isinstance(t, TensorType) else None
    if shape == () or (shape is not None and not all(d == 1 for d in shape)):
        return name
    if E.opset >= 5:
        return E.op("Reshape", [name, E.const([], "scalar_shape")], "cond_scalar")
    axes = {} if shape is None else {"axes": list(range(len(shape)))}
    return E.op("Squeeze", [name], "cond_scalar", **axes)


def _emit_piece(w, loop, env, benv, B: Emitter, info: _SliceInfo, k: str,
                strict: bool = False) -> None:
    s = info.port
    x = w.name(env, s.value, where(loop))
    if s.stride > 0:
        start = B.add(info.lo, B.mul(k, s.stride))
    else:
        start = B.add(B.sub(info.hi, s.part_size), B.mul(k, s.stride))
    out = w.define(benv, s.param)
    if strict and not s.keep_axis and not (start == k and info.count is info.hi):
        # piece k past the end reads index `dim`, which Gather refuses (a negative start of a
        # reversed slice would otherwise wrap around)
        past = B.op("Less", [k, B.name_of(info.count)], "piece_in_range")
        dim = B.name_of(B.dim(x, info.axis, dim_of(s.value, info.axis)))
        start = B.op("Where", [past, B.name_of(start), dim], "piece_index")
    if not s.keep_axis:
        B.op("Gather", [x, B.name_of(start)], out=out, axis=info.axis)
    else:
        B.op("Slice", [x, B.vec1(start), B.vec1(B.add(start, s.part_size)),
                       B.const([info.axis], "axes")], out=out)


def emit_loop(w, loop: Loop, env, nodes: list) -> None:
    """Append the ONNX form of canonical `loop` to `nodes` (names defined in `env`)."""
    if scan_form(loop) and w.opset >= 9:
        emit_scan(w, loop, env, nodes)
    else:
        _emit_loop(w, loop, env, nodes)


__all__ = ["emit_loop", "required_opset", "scan_form"]

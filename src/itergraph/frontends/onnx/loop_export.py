"""Lowering the canonical `Loop` to ONNX ``Scan`` or ``Loop``.

**Scan** (opset 9+) is used when the loop has that form: no trip count, no conditions, no
precondition, no iteration parameter; every sliced input drops a full-range axis one element
at a time (``keep_axis=False``, ``part_size`` 1, stride ±1, start/end 0 and -1); every output
is ``Last`` of a carried result or ``Concat(new_axis=True)`` without ``length``; and, with
several sliced inputs, their lengths are equal (known statically, or the loop came from an
ONNX Scan, which requires it).

**Loop** handles everything else:

- sliced inputs: the slice bounds and counts are computed before the loop (folded when the
  shapes are static); inside the body piece k is a ``Gather`` (axis dropped) or ``Slice``
  (axis kept) at the index computed from the iteration number;
- ``M`` = min(trip count, slice counts); a negative trip count means unbounded (``Where``);
- invariant inputs become outer-scope captures;
- ``Concat`` outputs are ONNX scan outputs ``[n, ...]`` rewritten after the loop: reversed
  (a ``Slice`` with step -1 on the iteration axis), moved to `axis` (``Transpose``), merged
  into an existing axis (``Reshape``) and padded to ``length`` (``Concat`` with zeros from
  ``ConstantOfShape``, which fails at run time when the length is below the iteration count;
  when the element type is unknown a ``Pad`` is used instead and that check is lost);
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
import onnx
from onnx import helper

from ...errors import UnsupportedError, where
from ...ir.graph import Graph, Node, Value
from ...ir.loop import Carried, Concat, Invariant, Last, Loop, Sliced
from ...ir.types import DataType, TensorType
from .emit import Emitter, Int
from .types import dtype_to_onnx

I64 = onnx.TensorProto.INT64
INT64_MAX = 2**63 - 1


def _rank(v: Value | None) -> int | None:
    t = None if v is None else v.type
    return t.rank if isinstance(t, TensorType) else None


def _dim(v: Value, axis: int) -> int | None:
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and 0 <= axis < len(t.shape):
        d = t.shape[axis]
        return d if isinstance(d, int) else None
    return None


def _dtype(v: Value | None) -> DataType | None:
    t = None if v is None else v.type
    return t.dtype if isinstance(t, TensorType) else None


def _no_shape(t):
    """Carried values may change shape across iterations: declare their element type only."""
    return TensorType(t.dtype, None) if isinstance(t, TensorType) else t


def output_type(loop: Loop, port) -> TensorType | None:
    """The type of a loop output as far as the ports tell (for declaring graph outputs)."""
    r = port.result.type
    if isinstance(port, Last):
        c = loop.carried_for_result(port.result)
        return r if r is not None or c is None else c.value.type
    if not isinstance(r, TensorType) or r.shape is None:
        return TensorType(r.dtype) if isinstance(r, TensorType) else None
    shape = list(r.shape)
    axis = port.axis
    if port.new_axis:
        axis = axis + len(shape) + 1 if axis < 0 else axis
        shape.insert(axis, None)
    else:
        axis = axis + len(shape) if axis < 0 else axis
        shape[axis] = None
    return TensorType(r.dtype, tuple(shape))


# form selection ----------------------------------------------------------------------------


def scan_form(loop: Loop) -> bool:
    """Whether `loop` can be written as an ONNX Scan (see the module docstring)."""
    if any(x is not None for x in (loop.trip_count, loop.initial_condition, loop.condition_result,
                                   loop.condition_param, loop.precondition,
                                   loop.iteration_param)):
        return False
    sliced = loop.sliced
    if not sliced:
        return False
    for s in sliced:
        if s.keep_axis or s.part_size != 1 or abs(s.stride) != 1 or {s.start, s.end} != {0, -1}:
            return False
    for o in loop.output_ports:
        if isinstance(o, Last) and loop.carried_for_result(o.result) is None:
            return False
        if isinstance(o, Concat) and (not o.new_axis or o.length is not None):
            return False
    results = [c.result for c in loop.carried]
    results += [o.result for o in loop.output_ports if isinstance(o, Concat)]
    if any(_rank(r) is None for r in results):
        return False  # ONNX Runtime's Scan wants the shapes of its body outputs
    if len(sliced) > 1 and loop.origin != "onnx.Scan":
        lens = {_dim(s.value, s.axis) for s in sliced}
        if len(lens) != 1 or None in lens:
            return False
    return True


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
        return 9 if loop.trip_count is not None else 1
    return 11


# shared helpers ----------------------------------------------------------------------------


def _bind_invariants(w, loop: Loop, env, benv) -> None:
    for p in loop.invariant:
        benv.names[p.param.uid] = w.name(env, p.value, where(loop))


def _final_names(w, loop: Loop, env, nodes, E: Emitter) -> tuple[list[str], list]:
    """ONNX output names of the carried finals; and the Last ports left for later."""
    finals = []
    done: set[int] = set()
    for c in loop.carried:
        name = None
        for o in loop.output_ports:
            if isinstance(o, Last) and o.result is c.result and id(o) not in done:
                done.add(id(o))
                name = w.define(env, o.output)
                break
        finals.append(name or w.fresh(f"{loop.name or 'loop'}_final"))
    rest = [o for o in loop.output_ports if isinstance(o, Last) and id(o) not in done]
    return finals, rest


def _copy_last(w, loop: Loop, env, E: Emitter, finals: list[str], rest: list) -> list:
    """Last ports sharing a carried result with an earlier one: Identity of its final."""
    left = []
    for o in rest:
        c = loop.carried_for_result(o.result)
        if c is None:
            left.append(o)
            continue
        i = loop.carried.index(c)
        E.op("Identity", [finals[i]], out=w.define(env, o.output))
    return left


def _emit_body(w, body: Graph, benv, bnodes) -> list[onnx.TensorProto]:
    from .types import tensor_to_onnx
    from .writer import ordered

    inits = [tensor_to_onnx(v.const, w.define(benv, v)) for v in body.initializers]
    for n in ordered(body):
        w.node(n, benv, bnodes)
    return inits


def _subgraph(w, name: str, nodes, inputs, outputs, inits) -> onnx.GraphProto:
    return helper.make_graph(nodes, w.fresh(name), inputs, outputs, inits)


# Scan ------------------------------------------------------------------------------------


def _emit_scan(w, loop: Loop, env, nodes) -> None:
    from .writer import Env, value_info

    E = Emitter(nodes, w.namer, w.opset)
    lname = where(loop)
    benv = Env(env)
    carried, sliced = loop.carried, loop.sliced
    b_inputs = [value_info(w.define(benv, c.param), c.param.type or c.value.type, shape=False)
                for c in carried]
    b_inputs += [value_info(w.define(benv, s.param), s.param.type, shape=False) for s in sliced]
    _bind_invariants(w, loop, env, benv)
    bnodes: list = []
    inits = _emit_body(w, loop.body, benv, bnodes)
    concats = [o for o in loop.output_ports if isinstance(o, Concat)]
    outs = [(w.name(benv, c.result, lname), c.result.type, c.result.name) for c in carried]
    outs += [(w.name(benv, o.result, lname), o.result.type, o.result.name) for o in concats]
    b_outputs = w.outputs(bnodes, inits, outs)
    body = _subgraph(w, f"{loop.name or 'scan'}_body", bnodes, b_inputs, b_outputs, inits)
    finals, rest = _final_names(w, loop, env, nodes, E)
    scan_outs = [w.define(env, o.output) for o in concats]
    ins = [w.name(env, c.value, lname) for c in carried] + [w.name(env, s.value, lname)
                                                             for s in sliced]
    attrs = dict(body=body, num_scan_inputs=len(sliced),
                 scan_input_axes=[s.axis for s in sliced],
                 scan_input_directions=[1 if s.stride < 0 else 0 for s in sliced])
    if concats:
        attrs.update(scan_output_axes=[o.axis for o in concats],
                     scan_output_directions=[1 if o.reverse else 0 for o in concats])
    nodes.append(helper.make_node("Scan", ins, finals + scan_outs,
                                  name=w.node_names.fresh(loop.name or "Scan"), **attrs))
    left = _copy_last(w, loop, env, E, finals, rest)
    assert not left  # scan_form admits only Last of carried results


# Loop ------------------------------------------------------------------------------------


class _SliceInfo:
    def __init__(self, port: Sliced, axis: int, lo: Int, hi: Int, count: Int):
        self.port, self.axis, self.lo, self.hi, self.count = port, axis, lo, hi, count


def _norm_axis(loop: Loop, axis: int, rank: int | None, what: str) -> int:
    if axis >= 0:
        return axis
    if rank is None:
        raise UnsupportedError(f"{where(loop)}: {what} has negative axis {axis} and unknown rank; "
                               "the ONNX Loop lowering needs the rank")
    return axis + rank


def _slice_info(w, loop: Loop, env, E: Emitter, i: int, s: Sliced) -> _SliceInfo:
    x = w.name(env, s.value, where(loop))
    axis = _norm_axis(loop, s.axis, _rank(s.value), f"sliced input {i}")
    dim = E.dim(x, axis, _dim(s.value, axis))

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
    if tc.const is not None and np.asarray(tc.const).size == 1:
        n = int(np.asarray(tc.const).reshape(()))
        return None if n < 0 else n
    name = w.name(env, tc, where(loop))
    if _dtype(tc) != DataType.INT64:
        name = E.op("Cast", [name], "trip_count", to=I64)
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
        stack.extend(x for x in n.inputs if x is not None)
        for g in n.subgraphs():
            stack.extend(g.captures())
    from .writer import ordered

    return [n for n in ordered(body) if id(n) in need], reached


def _clone_precondition(w, loop: Loop, base_env, nodes, E: Emitter, state: list[str],
                        iteration: Int, outside: bool) -> str:
    """Emit the precondition's computation with carried params bound to `state`."""
    from .types import tensor_to_onnx
    from .writer import Env

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
    if loop.iteration_param is not None:
        env.names[loop.iteration_param.uid] = E.name_of(iteration)
    if outside:
        for p in loop.invariant:
            env.names[p.param.uid] = w.name(base_env, p.value, where(loop))
        used = {x.uid for n in deps for x in n.inputs if x is not None} | {pre.uid}
        for g in (sg for n in deps for sg in n.subgraphs()):
            used.update(v.uid for v in g.captures())
        for v in body.initializers:
            if v.uid in used:
                E.op("Constant", [], out=w.define(env, v), value=tensor_to_onnx(v.const))
    for n in deps:
        w.node(n, env, nodes)
    return w.name(env, pre, where(loop))


def _emit_loop(w, loop: Loop, env, nodes) -> None:
    from .writer import Env, value_info

    lname = where(loop)
    E = Emitter(nodes, w.namer, w.opset)
    infos = [_slice_info(w, loop, env, E, i, s) for i, s in enumerate(loop.sliced)]
    terms = [t for t in [_trip(w, loop, env, E), *(s.count for s in infos)] if t is not None]
    m: Int | None = None
    for t in terms:
        m = t if m is None else E.min(m, t)
    m_name = "" if m is None else E.name_of(m)
    carried = loop.carried
    init_names = [w.name(env, c.value, lname) for c in carried]
    cond = "" if loop.initial_condition is None else w.name(env, loop.initial_condition, lname)
    if loop.precondition is not None:
        pre0 = _clone_precondition(w, loop, env, nodes, E, init_names, 0, outside=True)
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
        if _dtype(ip) in (None, DataType.INT64):
            benv.names[ip.uid] = iter_name
        else:
            B.op("Cast", [iter_name], out=w.define(benv, ip), to=dtype_to_onnx(_dtype(ip)))
    cp = loop.condition_param
    cond_in = w.define(benv, cp) if cp is not None else w.fresh(f"{loop.name or 'loop'}_cond")
    b_inputs.append(value_info(cond_in, TensorType(DataType.BOOL, ())))
    b_inputs += [value_info(w.define(benv, c.param), c.param.type or c.value.type, shape=False)
                 for c in carried]
    _bind_invariants(w, loop, env, benv)
    for info in infos:
        _emit_piece(w, loop, env, benv, B, info, iter_name)
    inits = _emit_body(w, loop.body, benv, bnodes)
    results = [w.name(benv, c.result, lname) for c in carried]
    cond_out = cond_in if loop.condition_result is None else w.name(benv, loop.condition_result,
                                                                     lname)
    if loop.precondition is not None:
        nxt = _clone_precondition(w, loop, benv, bnodes, B, results, B.add(iter_name, 1),
                                  outside=False)
        cond_out = B.op("And", [cond_out, nxt], "cond_next")
    concats = [o for o in loop.output_ports if isinstance(o, Concat)]
    finals, rest = _final_names(w, loop, env, nodes, E)
    lasts = [o for o in rest if loop.carried_for_result(o.result) is None]
    scanned = concats + lasts
    outs = [(cond_out, TensorType(DataType.BOOL, ()), "cond_out")]
    outs += [(r, _no_shape(c.result.type), c.result.name) for r, c in zip(results, carried)]
    outs += [(w.name(benv, o.result, lname), o.result.type, o.result.name) for o in scanned]
    b_outputs = w.outputs(bnodes, inits, outs)
    body = _subgraph(w, f"{loop.name or 'loop'}_body", bnodes, b_inputs, b_outputs, inits)

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
            _post_concat(w, loop, env, E, o, r)
    _copy_last(w, loop, env, E, finals, [o for o in rest if o not in lasts])


def _emit_piece(w, loop, env, benv, B: Emitter, info: _SliceInfo, k: str) -> None:
    s = info.port
    x = w.name(env, s.value, where(loop))
    if s.stride > 0:
        start = B.add(info.lo, B.mul(k, s.stride))
    else:
        start = B.add(B.sub(info.hi, s.part_size), B.mul(k, s.stride))
    out = w.define(benv, s.param)
    if not s.keep_axis:
        B.op("Gather", [x, B.name_of(start)], out=out, axis=info.axis)
    else:
        B.op("Slice", [x, B.vec1(start), B.vec1(B.add(start, s.part_size)),
                       B.const([info.axis], "axes")], out=out)


def _post_concat(w, loop: Loop, env, E: Emitter, o: Concat, raw: str) -> None:
    """Turn ONNX scan output `raw` (``[n, *elem]``) into the canonical concat output."""
    i = loop.output_ports.index(o)
    er = _rank(o.result)
    if er is None and o.output.type is not None and _rank(o.output) is not None:
        er = _rank(o.output) - (1 if o.new_axis else 0)
    cur = raw
    if o.reverse:
        cur = E.reverse(cur, 0)
    if o.new_axis:
        axis = _norm_axis(loop, o.axis, None if er is None else er + 1, f"output {i}")
        if axis != 0:
            if er is None:
                raise UnsupportedError(f"{where(loop)}: output {i} concatenates on axis {axis} "
                                       "but the rank of its body value is unknown")
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, er + 1))
            cur = E.op("Transpose", [cur], "concat_t", perm=perm)
    else:
        if er is None:
            raise UnsupportedError(f"{where(loop)}: output {i} concatenates on an existing axis "
                                   "but the rank of its body value is unknown")
        axis = _norm_axis(loop, o.axis, er, f"output {i}")
        if axis != 0:
            perm = list(range(1, axis + 1)) + [0] + list(range(axis + 1, er + 1))
            cur = E.op("Transpose", [cur], "concat_t", perm=perm)
        shape = E.shape(cur)
        merged = E.mul(E.dim(cur, axis), E.dim(cur, axis + 1))
        parts = []
        if axis > 0:
            parts.append(E.slice(shape, [0], [axis], [0]))
        parts.append(E.vec1(merged))
        if axis + 2 <= er:
            parts.append(E.slice(shape, [axis + 2], [INT64_MAX], [0]))
        new_shape = parts[0] if len(parts) == 1 else E.op("Concat", parts, "shape", axis=0)
        cur = E.op("Reshape", [cur, new_shape], "concat")
    if o.length is not None:
        cur = _pad(w, loop, env, E, o, cur, axis, er if o.new_axis is False else
                   (None if er is None else er + 1), i)
    last = E.nodes[-1]
    if last.output and last.output[0] == cur:
        name = w.define(env, o.output)
        last.output[0] = name
    else:  # pragma: no cover - every path above ends with a node making `cur`
        E.op("Identity", [cur], out=w.define(env, o.output))


def _pad(w, loop, env, E: Emitter, o: Concat, cur: str, axis: int, rank: int | None,
         i: int) -> str:
    length = w.name(env, o.length, where(loop))
    if _dtype(o.length) != DataType.INT64:
        length = E.op("Cast", [length], "length", to=I64)
    amount = E.sub(length, E.dim(cur, axis))
    dt = _dtype(o.result)
    if dt is not None and dt != DataType.STRING:
        shape = E.shape(cur)
        parts = []
        if axis > 0:
            parts.append(E.slice(shape, [0], [axis], [0]))
        parts.append(E.vec1(amount))
        if rank is None or axis + 1 < rank:
            parts.append(E.slice(shape, [axis + 1], [INT64_MAX], [0]))
        block_shape = parts[0] if len(parts) == 1 else E.op("Concat", parts, "pad_shape", axis=0)
        from .types import tensor_to_onnx

        zero = tensor_to_onnx(np.zeros((1,), dtype=helper.tensor_dtype_to_np_dtype(
            dtype_to_onnx(dt))))
        zeros = E.op("ConstantOfShape", [block_shape], "pad_zeros", value=zero)
        return E.op("Concat", [cur, zeros], "padded", axis=axis)
    if rank is None:
        raise UnsupportedError(f"{where(loop)}: output {i} is padded to a length but neither its "
                               "element type nor its rank is known")
    pads = E._vec([0] * (rank + axis) + [amount] + [0] * (rank - axis - 1))
    return E.op("Pad", [cur, pads], "padded")


def emit_loop(w, loop: Loop, env, nodes: list) -> None:
    """Append the ONNX form of canonical `loop` to `nodes` (names defined in `env`)."""
    if scan_form(loop) and w.opset >= 9:
        _emit_scan(w, loop, env, nodes)
    else:
        _emit_loop(w, loop, env, nodes)


__all__ = ["Carried", "Invariant", "emit_loop", "required_opset", "scan_form"]

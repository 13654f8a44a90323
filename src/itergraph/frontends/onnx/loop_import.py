"""ONNX ``Loop`` (every version: 1, 11, 13, 16, 19, 21, 23, 24, 25) -> canonical `Loop`.

Node ``Loop(M, cond, v_1..v_N) -> (v_final_1..v_final_N, scan_1..scan_K)`` with body
``(iter_num, cond_in, v_in_1..v_in_N) -> (cond_out, v_out_1..v_out_N, so_1..so_K)`` becomes:

- ``trip_count`` = M (``None`` when omitted), ``initial_condition`` = cond (or ``None``),
- ``iteration_param`` = body input 0, ``condition_param`` = body input 1,
  ``condition_result`` = body output 0,
- ``Carried(v_i, v_in_i, v_out_i)`` with a ``Last`` output for each loop-carried value,
- a ``Concat(so_j, axis=0, new_axis=True)`` output for each scan output.

A negative ``M`` runs no iteration (ONNX Runtime and the reference evaluator agree):
``negative_trip_count="zero"``.

Documented leniency: the TorchScript exporter at opset 7 writes the unbounded trip count of a
``while`` loop as ``Cast(to=int64)`` of the float constant 2**63, which is out of int64's
range: x86 (and so ONNX Runtime) turns it into INT64_MIN, i.e. no iteration, where PyTorch
and OpenVINO run the loop. Such an ``M`` (a cast to an integer type of a constant float at
least 2**63 in size) reads as absent, with a `LeniencyWarning` naming the node.

The versions differ only in the types they allow (sequences from 13, optionals from 16, new
element types later), which the conversion does not depend on but checks: a body value of a
type the node's version does not allow is a `ModelError`, as are a body whose input count is
not 2 + N (checked before the body is read), an iteration number or condition of the wrong
type, a trip count or condition that statically holds more than one element, and a carried
value whose type changes (an optional and its contents count as one type). An error inside
the body names the Loop too.
"""

from __future__ import annotations

import warnings

import numpy as np
import onnx

from ...errors import Error, LeniencyWarning, ModelError
from ...ir.graph import Graph, Node, Value
from ...ir.loop import Carried, Concat, Last, Loop
from ...ir.static_values import const_value
from ...ir.types import DataType, TensorType
from .node_import import where
from .schema_check import allowed_types, type_string
from .scope import Scope


def import_loop(r, p: onnx.NodeProto, scope: Scope, inputs: list[Value | None],
                outputs: list[Value], version: int) -> Loop:
    if len(inputs) < 2:
        raise ModelError(f"{where(p)}: expects at least 2 inputs (M, cond; either may be the "
                         f"empty name), got {len(inputs)}")
    m, cond, *init = inputs
    n = len(init)
    for i, v in enumerate(init):
        if v is None:
            raise ModelError(f"{where(p)}: loop-carried input {i} (node input {i + 2}) is empty")
    _check_arity_first(p, n + 2)
    body = body_in_context(r, p, scope)
    if len(body.inputs) != n + 2:
        raise ModelError(f"{where(p)}: body has {len(body.inputs)} inputs; expected 2 + N = "
                         f"{n + 2} (iteration number, condition, {n} loop-carried values)")
    k = len(body.outputs) - 1 - n
    if k < 0:
        raise ModelError(f"{where(p)}: body has {len(body.outputs)} outputs; expected at least "
                         f"1 + N = {n + 1} (condition, {n} loop-carried values)")
    if len(outputs) != n + k:
        raise ModelError(f"{where(p)}: has {len(outputs)} outputs; the body defines N + K = "
                         f"{n + k} ({n} loop-carried values, {k} scan outputs)")
    iter_param, cond_param = body.inputs[0], body.inputs[1]
    cond_out = body.outputs[0]
    for v, what in ((m, "trip count M"), (cond, "condition cond")):
        _check_one_element(p, v, what)
    _check_type(p, iter_param, "tensor(int64)", "the body's iteration number (input 0)")
    _check_type(p, cond_param, "tensor(bool)", "the body's condition (input 1)")
    _check_type(p, cond_out, "tensor(bool)", "the body's condition (output 0)")
    _check_condition_rank(p, cond, cond_param)
    for i in range(n):
        check_carried(p, f"loop-carried value {i}", init[i], body.inputs[2 + i],
                      body.outputs[1 + i], outputs[i])
    for j in range(k):
        check_scan_output(p, f"scan output {j}", body.outputs[1 + n + j], outputs[n + j])
    check_allowed(p, "Loop", version, 2,
                  [(f"loop-carried value {i}", body.inputs[2 + i]) for i in range(n)]
                  + [(f"scan output {j}", body.outputs[1 + n + j]) for j in range(k)])
    if _overflowing_unbounded(m):
        warnings.warn(f"{where(p)}: trip count M is a float constant of 2**63 or more cast "
                      "to an integer (how the TorchScript exporter writes 'unbounded'); "
                      "read as no trip count", LeniencyWarning, stacklevel=2)
        m = None
    cond_param = _scalar_condition(body, cond_param, version)
    carried = [Carried(init[i], body.inputs[2 + i], body.outputs[1 + i]) for i in range(n)]
    outs: list = [Last(body.outputs[1 + i], outputs[i]) for i in range(n)]
    outs += [Concat(body.outputs[1 + n + j], outputs[n + j], axis=0, new_axis=True)
             for j in range(k)]
    return Loop(body, carried, outs, trip_count=m, initial_condition=cond,
                condition_result=cond_out, condition_param=cond_param,
                iteration_param=iter_param, name=p.name, origin="onnx.Loop",
                origin_attrs={"opset": version, "version": r.since(p, version)},
                negative_trip_count="zero")


def _check_condition_rank(p: onnx.NodeProto, cond: Value | None, cond_param: Value) -> None:
    """The body's condition input declared of another rank than the node's `cond`: ONNX
    Runtime's inference refuses it at load (without a `cond`, a ``bool[1]`` input is read by
    `_scalar_condition`)."""
    ranks = [v.type.rank if v is not None and isinstance(v.type, TensorType) else None
             for v in (cond, cond_param)]
    if None not in ranks and ranks[0] != ranks[1]:
        raise ModelError(f"{where(p)}: the condition cond ('{cond.name}') has rank {ranks[0]} "
                         f"but the body declares its condition input '{cond_param.name}' of "
                         f"rank {ranks[1]}")


def _scalar_condition(body: Graph, cond_param: Value, version: int) -> Value:
    """The body's condition input as a scalar. A body that declares it with a rank above 0
    (``bool[1]``) gets it as ``[1]`` from ONNX Runtime, every iteration (as the iteration
    number, `Loop.iteration_form`): the body then reads a ``Reshape`` of the scalar to
    ``[1]``."""
    t = cond_param.type
    if not (isinstance(t, TensorType) and t.shape):
        return cond_param
    scalar = Value(f"{cond_param.name}_scalar", TensorType(t.dtype, ()))
    cond_param.type = TensorType(t.dtype, (1,))
    shape = Value(f"{cond_param.name}_shape", TensorType(DataType.INT64, (1,)),
                  const=np.ones(1, np.int64))
    body.initializers.append(shape)
    body.nodes.insert(0, Node("Reshape", [scalar, shape], [cond_param],
                              name=f"{cond_param.name}_reshape", version=max(version, 5)))
    body.inputs[1] = scalar
    return scalar


def _overflowing_unbounded(m: Value | None) -> bool:
    cast = m.producer if m is not None else None
    if cast is None or cast.op_type != "Cast" or cast.domain not in ("", "ai.onnx"):
        return False
    src = cast.inputs[0]
    value = const_value(src)
    if value is None or value.size != 1 or value.dtype.kind != "f":
        return False
    return bool(abs(float(value.reshape(-1)[0])) >= 2.0**63)


def _check_arity_first(p: onnx.NodeProto, n_inputs: int) -> None:
    """The body's input count, checked before the body is read: a body that lacks an input
    would otherwise be reported as a body node reading an undefined value."""
    for a in p.attribute:
        if a.name == "body" and a.type == onnx.AttributeProto.GRAPH and \
                len(body_inputs(a.g)) != n_inputs:
            raise ModelError(f"{where(p)}: body has {len(body_inputs(a.g))} inputs; expected "
                             f"2 + N = {n_inputs} (iteration number, condition, "
                             f"{n_inputs - 2} loop-carried values)")


def body_inputs(g: onnx.GraphProto) -> list[str]:
    """The inputs of body `g` that are not initializers: before IR version 4 initializers were
    listed among a graph's inputs too (tf2onnx still writes them so at low opsets)."""
    inits = {t.name for t in g.initializer} | {t.values.name for t in g.sparse_initializer}
    return [vi.name for vi in g.input if vi.name not in inits]


def body_in_context(r, p: onnx.NodeProto, scope: Scope) -> Graph:
    """`p`'s body; an error inside it names `p` too (the same error class)."""
    try:
        return r.body(p, scope)
    except Error as e:
        if str(e).startswith(where(p)):
            raise
        raise type(e)(f"{where(p)}: in its body: {e}") from e


def _check_one_element(p: onnx.NodeProto, v: Value | None, what: str) -> None:
    t = v.type if v is not None else None
    if isinstance(t, TensorType) and t.shape is not None and all(
            isinstance(d, int) for d in t.shape):
        count = 1
        for d in t.shape:
            count *= d
        if count != 1:
            raise ModelError(f"{where(p)}: {what} ('{v.name}') has shape {list(t.shape)}; it "
                             "must hold one element")


def _check_type(p: onnx.NodeProto, v: Value, want: str, what: str) -> None:
    ts = type_string(v.type)
    if ts is not None and ts != want:
        raise ModelError(f"{where(p)}: {what} '{v.name}' is declared {ts}; it must be {want}")


def check_carried(p: onnx.NodeProto, what: str, init: Value, param: Value,
                  result: Value, final: Value | None = None) -> None:
    """A carried value keeps one type: the initial value, the body's input and its output,
    and the node's output where the file declares it (an optional and its contents count as
    one type: a body may return the contents). ONNX Runtime refuses a declared final value
    of another type at load; running it would hand back a type the file does not declare."""
    roles = [(init, "enters the loop as"), (param, "the body reads it as"),
             (result, "the body returns")]
    if final is not None:
        roles.append((final, "the node's output is declared"))
    types = [(_unwrapped(type_string(v.type)), role, v) for v, role in roles]
    known = [t for t in types if t[0] is not None]
    for ts, role, v in known[1:]:
        if ts != known[0][0]:
            raise ModelError(f"{where(p)}: {what}: {known[0][1]} {known[0][0]} "
                             f"('{known[0][2].name}') but {role} {ts} ('{v.name}'); a carried "
                             "value keeps one type")


def check_scan_output(p: onnx.NodeProto, what: str, step: Value, stacked: Value) -> None:
    """A scan output holds the element type of the per-step value the body returns: a node
    output declared of another is refused, as ONNX Runtime refuses it at load."""
    ts, declared = _element(step), _element(stacked)
    if ts is not None and declared is not None and ts != declared:
        raise ModelError(f"{where(p)}: {what}: the body returns {ts} ('{step.name}') but the "
                         f"node's output '{stacked.name}' is declared {declared}")


def _element(v: Value) -> str | None:
    """The ONNX type string of `v`'s element type when `v` is a tensor of a known one."""
    t = v.type
    return type_string(TensorType(t.dtype, None)) if isinstance(t, TensorType) and \
        t.dtype is not None else None


def check_allowed(p: onnx.NodeProto, op: str, version: int, index: int,
                  values: list[tuple[str, Value]]) -> None:
    """Body values of a loop hold types the op's version allows for its variadic input
    `index` (``Loop``-13 carries no optional and no bfloat16: those start with Loop-16)."""
    allowed = allowed_types(op, version, index)
    if not allowed:
        return
    for what, v in values:
        ts = type_string(v.type)
        if ts is not None and ts not in allowed:
            since = onnx.defs.get_schema(op, version, "").since_version
            raise ModelError(f"{where(p)}: {what} ('{v.name}') is {ts}, a type {op}-{since} "
                             f"(opset {version}) cannot hold; a newer opset may allow it")


def _unwrapped(ts: str | None) -> str | None:
    while ts is not None and ts.startswith("optional("):
        ts = ts[len("optional("):-1]
    return ts

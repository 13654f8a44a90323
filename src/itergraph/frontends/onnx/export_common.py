"""Helpers shared by the ONNX writer and its Scan and Loop lowerings of the canonical loop.

The writer object they take (``w``) is duck-typed: it names values (``name``, ``define``,
``fresh``), writes nodes (``node``) and graph outputs (``outputs``); see :mod:`.writer`.
"""

from __future__ import annotations

import onnx
from onnx import helper

from ...errors import UnsupportedError, where
from ...ir.graph import Graph, Node, Value
from ...ir.loop import Last, Loop
from ...ir.traversal import toposort
from ...ir.types import DataType, MapType, OptionalType, SequenceType, TensorType
from .emit import Emitter
from .types import tensor_to_onnx, type_to_onnx


def ordered(g: Graph) -> list[Node]:
    """`g`'s nodes in topological order (captures in subgraphs count), without editing `g`."""
    tmp = Graph(g.name, nodes=g.nodes)
    toposort(tmp)
    return tmp.nodes


def declarable(t) -> bool:
    """Whether an IR type is complete enough to declare in ONNX (element types known)."""
    if isinstance(t, TensorType):
        return t.dtype is not None
    if isinstance(t, SequenceType | OptionalType):
        return t.elem is not None and declarable(t.elem)
    if isinstance(t, MapType):
        return t.key is not None and t.value is not None and declarable(t.value)
    return False


def value_info(name: str, t, shape: bool = True) -> onnx.ValueInfoProto:
    """``ValueInfoProto`` `name` of IR type `t` (untyped when `t` is not `declarable`;
    with only its rank unless `shape`)."""
    vi = onnx.ValueInfoProto(name=name)
    if declarable(t):
        if not shape:
            t = no_shape(t)
        vi.type.CopyFrom(type_to_onnx(t))
    return vi


def rank_of(v: Value | None) -> int | None:
    t = None if v is None else v.type
    return t.rank if isinstance(t, TensorType) else None


def dim_of(v: Value, axis: int) -> int | None:
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and 0 <= axis < len(t.shape):
        d = t.shape[axis]
        return d if isinstance(d, int) else None
    return None


def dtype_of(v: Value | None) -> DataType | None:
    t = None if v is None else v.type
    return t.dtype if isinstance(t, TensorType) else None


def no_shape(t):
    """Carried values may change shape across iterations, not rank: declare their element type
    and rank only (the rank lets ONNX shape inference give the loop's outputs a shape, which
    the checker wants on the main graph)."""
    if not isinstance(t, TensorType):
        return t
    return TensorType(t.dtype, None if t.shape is None else (None,) * len(t.shape))


def carried_type(c):
    """The type of carried value `c` as far as its result tells, else (result rank unknown) as
    its parameter or initial value declares it, with the rank only: the value the body gives
    back is the next iteration's parameter, so it has the parameter's element type and rank."""
    r = c.result.type
    if isinstance(r, TensorType) and r.shape is not None:
        return r
    p = c.param.type if isinstance(c.param.type, TensorType) else c.value.type
    if not isinstance(p, TensorType) or r is not None and (
            not isinstance(r, TensorType) or r.dtype != p.dtype):
        return r
    return no_shape(p)


def output_type(loop: Loop, port) -> TensorType | None:
    """The type of a loop output as far as the ports tell (for declaring graph outputs)."""
    r = port.result.type
    if isinstance(port, Last):
        c = loop.carried_for_result(port.result)
        return r if c is None else carried_type(c)
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


def norm_axis(loop: Loop, axis: int, rank: int | None, what: str) -> int:
    if axis >= 0:
        return axis
    if rank is None:
        raise UnsupportedError(f"{where(loop)}: {what} has negative axis {axis} and unknown rank; "
                               "the ONNX Loop lowering needs the rank")
    return axis + rank


def bind_invariants(w, loop: Loop, env, benv) -> None:
    for p in loop.invariant:
        benv.names[p.param.uid] = w.name(env, p.value, where(loop))


def final_names(w, loop: Loop, env, nodes, E: Emitter) -> tuple[list[str], list]:
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


def copy_last(w, loop: Loop, env, E: Emitter, finals: list[str], rest: list) -> list:
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


def emit_body(w, body: Graph, benv, bnodes) -> list[onnx.TensorProto]:
    inits = [tensor_to_onnx(v.const, w.define(benv, v)) for v in body.initializers]
    for n in ordered(body):
        w.node(n, benv, bnodes)
    return inits


def subgraph(w, name: str, nodes, inputs, outputs, inits) -> onnx.GraphProto:
    return helper.make_graph(nodes, w.fresh(name), inputs, outputs, inits)



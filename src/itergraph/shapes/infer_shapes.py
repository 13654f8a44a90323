"""`infer-shapes`: static element types and shapes of every value, through loops at any depth.

Ordinary standard-domain ops are inferred by ONNX's own per-node inference
(`onnx.shape_inference.infer_node_outputs` with the op's schema at the node's opset), given
the types of the inputs and the values of the inputs known before the run
(`ir.static_values`: constants and ``Shape``-of-static-shape expressions, which is what
lets ``Reshape(x, Concat(Shape(x)[0], -1))`` get a static shape). ``If`` joins its branches.
The canonical `Loop` is inferred here (see `InferShapes`).
"""

from __future__ import annotations

from contextvars import ContextVar

import onnx
from onnx import helper

from ..errors import Error
from ..frontends.onnx.attributes import attr_to_onnx
from ..frontends.onnx.export_common import declarable
from ..frontends.onnx.node_export import attr_kind
from ..frontends.onnx.types import tensor_to_onnx, type_from_onnx, type_to_onnx
from ..ir.graph import Graph, Node, Value
from ..ir.inference import set_graph_inference, set_node_inference
from ..ir.loop import Concat, Invariant, Last, Loop, Sliced
from ..ir.static_values import static_int, static_value
from ..ir.types import DataType, OptionalType, SequenceType, TensorType
from ..passes.base import Pass
from ..passes.dead_ports import const_trip_count, slice_count
from ..passes.fold_trip_count import shape_source, walks_whole_axis
from .contrib_types import DOMAIN, contrib_output_types

#: Meta key on a value whose type this pass wrote: the ONNX writer declares it in value_info.
INFERRED = "value_info"
#: Passes over a loop body before carried types settle (each pass can only widen a type).
MAX_ROUNDS = 4


class InferShapes(Pass):
    """Write the element type and shape of every value into its IR type.

    Applies to: every value of every graph at any depth, in graph order. A standard-domain
    op without subgraphs gets ONNX's inference for its schema; an ``If`` the join of its two
    branches; a canonical ``Loop``:

    - a ``Sliced`` parameter has the outer value's type with the sliced axis of length
      ``part_size`` (kept axis) or removed; an ``Invariant`` parameter the outer value's type;
      the iteration parameter is int64 and the condition parameter bool, both scalars;
    - a ``Carried`` parameter starts as its initial value's type and is joined with its
      result's type after inferring the body, until nothing changes: a dimension that is the
      same in every iteration stays, one that changes becomes unknown (a changing rank makes
      the shape unknown);
    - a ``Last`` output has its result's type (joined with the initial value's for a carried
      result: zero iterations give the initial value); a ``Concat`` output has the per-step
      type with the iteration count inserted (new axis) or multiplied into the axis, that
      count being static when the trip count and every slice count are static and no
      condition can end the loop earlier (a static ``length`` pads to itself), or the
      symbolic dim (``"seq"``) when every bound is that one dim of a shape (a trip count
      ``Gather(Shape(x), k)``, a sliced input walking its whole axis).

    An inferred type is merged with what the file declared: a known dimension beats an
    unknown one; where both are known the inferred one is kept. Values whose type was
    written are marked (``meta["value_info"]``), so the ONNX writer declares them in the
    graph's ``value_info``, and the OpenVINO writer gives their ports these dimensions.

    Returns: the number of values whose type changed.

    Guarantees: no node, port or value is added or removed, so every output keeps its value.
    A node whose inference fails keeps its declared output types.
    """

    name = "infer_shapes"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        before = {v.uid: v.type for v in _values(graph)}
        _infer_graph(graph, graph.opset("") or 21)
        return sum(1 for v in _values(graph) if v.type != before.get(v.uid))


infer_shapes = InferShapes()


def _values(graph: Graph) -> list[Value]:
    out = list(graph.inputs)
    for _, n in graph.walk():
        out.extend(n.outputs)
        for g in n.subgraphs():
            out.extend(g.inputs)
    return out


def _set(v: Value, t) -> None:
    merged = merge(v.type, t)
    if merged is not None and merged != v.type:
        v.type = merged
    if v.type is not None:
        v.meta[INFERRED] = True


def merge(declared, inferred):
    """`inferred` completed by `declared` where it knows less (dimension by dimension)."""
    if inferred is None:
        return declared
    if not isinstance(declared, TensorType) or not isinstance(inferred, TensorType):
        return inferred if declared is None or type(declared) is type(inferred) else declared
    dtype = inferred.dtype or declared.dtype
    if inferred.shape is None:
        return TensorType(dtype, declared.shape)
    if declared.shape is None or len(declared.shape) != len(inferred.shape):
        return TensorType(dtype, inferred.shape)
    dims = tuple(i if isinstance(i, int) else d if isinstance(d, int) else i if i is not None
                 else d for d, i in zip(declared.shape, inferred.shape, strict=True))
    return TensorType(dtype, dims)


def join(a, b):
    """The type both `a` and `b` have: dims that differ (or are unknown in one) are None."""
    if a is None or b is None:
        return None
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        dtype = a.dtype if a.dtype == b.dtype else None
        if a.shape is None or b.shape is None or len(a.shape) != len(b.shape):
            return TensorType(dtype, None)
        return TensorType(dtype, tuple(x if x == y else None
                                       for x, y in zip(a.shape, b.shape, strict=True)))
    if isinstance(a, SequenceType) and isinstance(b, SequenceType):
        return SequenceType(join(a.elem, b.elem))
    if isinstance(a, OptionalType) and isinstance(b, OptionalType):
        return OptionalType(join(a.elem, b.elem))
    return a if a == b else None


def infer_graph(graph: Graph, opset: int) -> None:
    """Infer the types of `graph`'s node outputs (subgraphs included) from the types its
    inputs have now, in place; a node whose inference fails keeps its declared types."""
    _infer_graph(graph, opset)


def _infer_graph(graph: Graph, opset: int) -> None:
    for n in graph.nodes:
        try:
            if isinstance(n, Loop):
                _infer_loop(n, opset)
            elif n.op_type == "If" and n.domain == "":
                _infer_if(n, opset)
            elif not n.subgraphs():
                _infer_node(n, opset)
        except (Error, onnx.shape_inference.InferenceError, onnx.checker.ValidationError,
                onnx.defs.SchemaError, ValueError, TypeError, KeyError, IndexError):
            continue  # the declared types stay


def _infer_node(n: Node, opset: int) -> None:
    for v, t in zip(n.outputs, node_output_types(n, opset), strict=True):
        if t is not None:
            _set(v, t)


def node_output_types(n: Node, opset: int) -> list:
    """ONNX's inference of standard-domain node `n`'s output types from its inputs' types and
    known values (None where it finds nothing); raises what ONNX's inference raises."""
    none = [None] * len(n.outputs)
    if n.domain == DOMAIN and not n.subgraphs():
        return contrib_output_types(n)
    if n.domain != "" or n.subgraphs():
        return none
    version = n.version or opset
    schema = onnx.defs.get_schema(n.op_type, version, "")
    names = ["" if v is None else f"in{i}" for i, v in enumerate(n.inputs)]
    types, data = {}, {}
    for name, v in zip(names, n.inputs, strict=True):
        if v is None:
            continue
        if not declarable(v.type):
            return none  # ONNX inference wants every input's type
        types[name] = type_to_onnx(v.type)
        known = static_value(v)
        if known is not None:
            data[name] = tensor_to_onnx(known, name)
    proto = helper.make_node(n.op_type, names, [f"out{i}" for i in range(len(n.outputs))])
    proto.attribute.extend(attr_to_onnx(k, val, attr_kind(n, k, version), _no_graph)
                           for k, val in n.attrs.items())
    found = onnx.shape_inference.infer_node_outputs(
        schema, proto, types, data, opset_imports=[helper.make_opsetid("", version)])
    out = []
    for i in range(len(n.outputs)):
        tp = found.get(f"out{i}")
        out.append(None if tp is None else type_from_onnx(tp))
    return out


def _no_graph(_g):
    raise TypeError("a node with a subgraph attribute is not inferred per node")


def _infer_if(n: Node, opset: int) -> None:
    branches = n.subgraphs()
    for g in branches:
        _infer_graph(g, opset)
    for i, v in enumerate(n.outputs):
        types = [g.outputs[i].type for g in branches if i < len(g.outputs)]
        if len(types) == 2:
            _set(v, join(*types))


def _piece_type(s: Sliced):
    t = s.value.type
    if not isinstance(t, TensorType) or t.shape is None:
        return t
    axis = s.axis % len(t.shape) if -len(t.shape) <= s.axis < len(t.shape) else None
    if axis is None:
        return TensorType(t.dtype, None)
    dims = list(t.shape)
    if s.keep_axis:
        dims[axis] = s.part_size
    else:
        del dims[axis]
    return TensorType(t.dtype, tuple(dims))


#: when set, an ONNX Loop's carried parameters get their initial value's element type but not
#: its shape, as ONNX's inference of a Loop gives them (the shape may change between
#: iterations): what ONNX Runtime's zero-iteration outputs are made of (`complete_step_types`)
_ONNX_LOOP_STATE: ContextVar[bool] = ContextVar("_ONNX_LOOP_STATE", default=False)


def _elem_only(t):
    return TensorType(t.dtype, None) if isinstance(t, TensorType) else t


def _snapshot(g: Graph) -> dict[int, tuple[Value, object]]:
    return {v.uid: (v, v.type) for v in _values(g)}


def _infer_loop(loop: Loop, opset: int) -> None:
    body = loop.body
    for p in loop.input_ports:
        if isinstance(p, Sliced):
            _set(p.param, _piece_type(p))
        elif isinstance(p, Invariant):
            _set(p.param, p.value.type)
    if loop.iteration_param is not None:
        _set(loop.iteration_param, TensorType(DataType.INT64, ()))
    if loop.condition_param is not None:
        _set(loop.condition_param, TensorType(DataType.BOOL, ()))
    onnx_loop = _ONNX_LOOP_STATE.get() and loop.origin == "onnx.Loop"
    state = {c.param.uid: merge(c.param.type, _elem_only(c.value.type) if onnx_loop
                                else c.value.type) for c in loop.carried}
    saved = _snapshot(body)
    for rnd in range(MAX_ROUNDS + 1):
        for v, t in saved.values():
            v.type = t
        for c in loop.carried:
            c.param.type = state[c.param.uid]
            c.param.meta[INFERRED] = True
        _infer_graph(body, opset)
        new = {c.param.uid: join(state[c.param.uid], c.result.type) for c in loop.carried}
        if new == state:
            break
        state = new
        if rnd == MAX_ROUNDS - 1:  # not settled: keep only what every round agreed on
            state = {k: TensorType(t.dtype, None) if isinstance(t, TensorType) else None
                     for k, t in state.items()}
    count = _iterations(loop)
    for p in loop.output_ports:
        if isinstance(p, Last):
            c = loop.carried_for_result(p.result)
            t = p.result.type if c is None else join(c.param.type, p.result.type)
            _set(p.output, t)
        elif isinstance(p, Concat):
            _set(p.output, _concat_type(p, count))


def _iterations(loop: Loop) -> int | str | None:
    """The loop's iteration count when it is known before the run: an int, or the symbolic
    dim (``"seq"``) that every bound of the loop is; else None."""
    for v in (loop.initial_condition, loop.condition_result):
        if v is not None and not _always_true(v, loop):
            return None
    if loop.precondition is not None or loop.strict_slices:
        return None
    bounds: list[int | str | None] = []
    if loop.trip_count is not None:
        t = const_trip_count(loop)
        src = shape_source(loop.trip_count) if t is None else None
        bounds.append(t if src is None else _dim(*src))
    for s in loop.sliced:
        c = slice_count(s)
        if c is None and walks_whole_axis(s, s.value, s.axis):
            c = _dim(s.value, s.axis)
        bounds.append(c)
    if not bounds or any(b is None for b in bounds):
        return None
    if all(isinstance(b, int) for b in bounds):
        return min(bounds)
    return bounds[0] if len(set(bounds)) == 1 else None


def _dim(v: Value, axis: int) -> int | str | None:
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and 0 <= axis < len(t.shape):
        return t.shape[axis]
    return None


def _always_true(v: Value, loop: Loop) -> bool:
    """Whether condition `v` is true in every iteration: a static true, or the incoming
    condition passed through ``Identity`` nodes (then true as long as the loop runs)."""
    for _ in range(64):
        if v is loop.condition_param and v is not None:
            return True
        known = static_value(v)
        if known is not None:
            return known.size == 1 and bool(known.reshape(()))
        n = v.producer
        if n is None or n.op_type != "Identity" or n.domain != "" or not n.inputs:
            return False
        v = n.inputs[0]
    return False


def _concat_type(p: Concat, count: int | str | None):
    t = p.result.type
    if not isinstance(t, TensorType):
        return None
    if p.length is not None:
        length = static_int(p.length)
        count = length if length is not None and isinstance(count, int) and length >= count \
            else None
    if t.shape is None:
        return TensorType(t.dtype, None)
    dims = list(t.shape)
    if p.new_axis:
        rank = len(dims) + 1
        if not -rank <= p.axis < rank:
            return TensorType(t.dtype, None)
        dims.insert(p.axis % rank, count)
    else:
        if not -len(dims) <= p.axis < len(dims):
            return TensorType(t.dtype, None)
        axis = p.axis % len(dims)
        d = dims[axis]
        dims[axis] = d * count if isinstance(d, int) and isinstance(count, int) else \
            count if d == 1 else None
    return TensorType(t.dtype, tuple(dims))



def _incomplete(t) -> bool:
    return not isinstance(t, TensorType) or t.shape is None or \
        not all(isinstance(d, int) for d in t.shape)


def _filled(declared, inferred):
    """`declared` with what `inferred` knows where it knows nothing (unknown or symbolic dims,
    no shape, no element type); None when it adds nothing or the two contradict."""
    if not isinstance(inferred, TensorType) or inferred.shape is None:
        return None
    if declared is None:
        return inferred
    if not isinstance(declared, TensorType):
        return None
    dtype = declared.dtype or inferred.dtype
    if declared.shape is None:
        return TensorType(dtype, inferred.shape)
    if len(declared.shape) != len(inferred.shape):
        return None
    dims = tuple(d if isinstance(d, int) else i if isinstance(i, int) else d
                 for d, i in zip(declared.shape, inferred.shape, strict=True))
    out = TensorType(dtype, dims)
    return None if out == declared else out


def _scalar_params(loop: Loop) -> bool:
    """Whether `loop`'s iteration and condition parameters are not declared of another shape
    than the scalars inference gives them (a body declaring ``[1]`` keeps its own reading)."""
    for v in (loop.iteration_param, loop.condition_param):
        t = v.type if v is not None else None
        if isinstance(t, TensorType) and t.shape not in (None, ()):
            return False
    return True


def complete_step_types(graph: Graph) -> int:
    """Give the per-step values of loops' concatenated outputs what inference knows of their
    shapes where the file leaves it out (an unknown or symbolic dimension, no shape).

    A loop that runs no iteration stacks zero entries of the per-step value's static shape,
    unknown dimensions as 0; ONNX Runtime takes that shape from its own inference of the body
    (a ``[1, 8]`` step declared ``[N, 8]`` or undeclared gives ``(0, 1, 8)``, not
    ``(0, 0, 8)``), so this does the same, once, when a model is loaded: both backends and
    both writers then see the one shape. Runs `infer_shapes` on a copy; inference that fails
    changes nothing. Returns the number of values whose type was completed."""
    from ..ir.clone import clone_graph

    targets = [p.result for _, n in graph.walk() if isinstance(n, Loop) and _scalar_params(n)
               for p in n.output_ports if isinstance(p, Concat) and _incomplete(p.result.type)]
    if not targets:
        return 0
    mapping: dict = {}
    token = _ONNX_LOOP_STATE.set(True)
    try:
        copy = clone_graph(graph, mapping)
        infer_shapes(copy)
    except Exception:  # noqa: BLE001 - a hint: a model inference cannot read keeps its types
        return 0
    finally:
        _ONNX_LOOP_STATE.reset(token)
    done = 0
    for v in targets:
        twin = mapping.get(v.uid)
        t = _filled(v.type, twin.type if twin is not None else None)
        if t is not None:
            v.type = t
            done += 1
    return done


set_node_inference(node_output_types)
set_graph_inference(infer_shapes)

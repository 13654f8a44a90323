"""What shape inference tells the IR writer that the file does not say: one pass, on a copy.

`known_shapes(graph, copied=...)` runs the inference `ir.inference` holds
(`shapes.infer_shapes` installs it) once, over a scratch copy of the graph written, and gives
the writer two things from it:

- **types for untyped values**: some converters declare no type for intermediate values
  (paddle2onnx writes no ``value_info``), so a value may have no known rank, and layers that
  need one (``GlobalAveragePool``'s axes, ``Resize``'s scales) could not be written. A
  top-level value that a node without subgraphs outputs, and that the file
  left without a shape (or without any type: the outputs of ONNX Runtime's fused operators),
  takes the type inference found; a value the file typed keeps its
  type, and one inference cannot type stays untyped (the outputs of ``If`` and ``Loop`` are
  left as they are: where their branches or bodies know nothing, OpenVINO infers them). The
  ports of the written IR still state only what the file did: OpenVINO infers the rest;
- **`Inferred`**, for the writer's check that both branches of an ``If`` return each output
  with one rank (OpenVINO's If-8 output otherwise has a dynamic rank, which its CPU plugin
  does not compile): the rank inference wrote for each value at any depth (a declared type
  that inference did not confirm is left out: converters declare some branch outputs with a
  wrong rank that ONNX Runtime ignores), and the ``If`` conditions known before the run
  (OpenVINO folds such an ``If`` to its branch, so its branches may differ).

The pass runs only where it can matter: a graph holding an ``If`` or an untyped value as above.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.clone import clone_graph
from ...ir.graph import MICROSOFT_DOMAIN as CONTRIB
from ...ir.graph import Graph, Node, Value
from ...ir.inference import infer_graph_types
from ...ir.static_values import static_value
from ...ir.types import TensorType

#: ONNX Runtime's operator domain, whose fused transformer operators inference types
#: the meta key of a value whose type inference wrote (`shapes.infer_shapes.INFERRED`)
INFERRED = "value_info"


@dataclass
class Inferred:
    """`ranks`: value uid -> rank inference wrote; `static_conditions`: the uids of the
    ``If`` conditions known before the run once shapes are inferred. Uids are those of the
    graph `known_shapes` returns."""

    ranks: dict[int, int] = field(default_factory=dict)
    static_conditions: set[int] = field(default_factory=set)


def known_shapes(graph: Graph, *, copied: bool) -> tuple[Graph, Inferred]:
    """`graph` with the types inference finds for its untyped values, and what inference
    found (see the module). `copied`: `graph` is the writer's own copy, so it may be changed in
    place; otherwise a copy is returned where a type is added."""
    untyped = [n for n in graph.nodes if _typable(n)]
    if not untyped and not _has_if(graph):
        return graph, Inferred()
    if untyped and not copied:
        graph = clone_graph(graph)
        untyped = [n for n in graph.nodes if _typable(n)]
    mapping: dict[int, Value] = {}
    scratch = clone_graph(graph, mapping)
    if not infer_graph_types(scratch):
        return graph, Inferred()
    for n in untyped:
        for v in n.outputs:
            if v is not None and _shapeless(v):
                _take(v, mapping[v.uid].type)
    return graph, _found(scratch, mapping)


def _shapeless(v: Value) -> bool:
    return v.type is None or isinstance(v.type, TensorType) and v.type.shape is None


def _typable(n: Node) -> bool:
    """`n` is a node without subgraphs, of the standard domain or one of ONNX Runtime's
    fused operators (`shapes.contrib_types`), with an output of unknown shape."""
    return n.domain in ("", CONTRIB) and not n.subgraphs() and \
        any(v is not None and _shapeless(v) for v in n.outputs)


def _take(v: Value, found) -> None:
    if not isinstance(found, TensorType):
        return
    if v.type is None:
        v.type = found
    elif found.shape is not None:
        v.type = TensorType(v.type.dtype or found.dtype, found.shape)


def _found(scratch: Graph, mapping: dict[int, Value]) -> Inferred:
    found = Inferred()
    original = {v.uid: uid for uid, v in mapping.items()}
    for uid, v in mapping.items():
        t = v.type
        if v.meta.get(INFERRED) and isinstance(t, TensorType) and t.shape is not None:
            found.ranks[uid] = len(t.shape)
    for cond in _conditions(scratch):
        if cond.uid in original and static_value(cond) is not None:
            found.static_conditions.add(original[cond.uid])
    return found


def _has_if(graph: Graph) -> bool:
    return any((n.op_type == "If" and n.domain == "") or any(_has_if(g) for g in n.subgraphs())
               for n in graph.nodes)


def _conditions(graph: Graph):
    for n in graph.nodes:
        if n.op_type == "If" and n.domain == "" and n.inputs and n.inputs[0] is not None:
            yield n.inputs[0]
        for g in n.subgraphs():
            yield from _conditions(g)

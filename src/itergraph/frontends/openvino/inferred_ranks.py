"""Ranks that shape inference finds for the values of a graph holding an ``If``, for the
writer's check that both branches of an ``If`` return each output with one rank (OpenVINO's
If-8 output otherwise has a dynamic rank, which its CPU plugin does not compile).

`inferred_ranks(graph)` infers the shapes of a copy of `graph` (the graph written is left
as it is) with the inference `ir.inference` holds (`shapes.infer_shapes` installs it), and
gives ``{value uid: rank}`` for the values whose type inference wrote, at any depth; a
declared type that inference did not confirm is left out (converters declare some branch
outputs with a wrong rank that ONNX Runtime ignores), and the values known before the run
(an ``If`` on such a condition is folded by OpenVINO: its branches may differ). Empty for a
graph without ``If``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...ir.clone import clone_graph
from ...ir.graph import Graph
from ...ir.inference import infer_graph_types
from ...ir.static_values import static_value
from ...ir.types import TensorType

#: the meta key of a value whose type inference wrote (`shapes.infer_shapes.INFERRED`)
INFERRED = "value_info"


def _has_if(graph: Graph) -> bool:
    return any((n.op_type == "If" and n.domain == "") or any(_has_if(g) for g in n.subgraphs())
               for n in graph.nodes)


@dataclass
class Inferred:
    """`ranks`: value uid -> rank inference wrote; `static_conditions`: the uids of the
    ``If`` conditions known before the run once shapes are inferred (OpenVINO folds such an
    ``If`` to its branch, so its branches may differ in rank)."""

    ranks: dict[int, int] = field(default_factory=dict)
    static_conditions: set[int] = field(default_factory=set)


def inferred_ranks(graph: Graph) -> Inferred:
    if not _has_if(graph):
        return Inferred()
    mapping: dict = {}
    copy = clone_graph(graph, mapping)
    if not infer_graph_types(copy):
        return Inferred()
    found = Inferred()
    original = {v.uid: uid for uid, v in mapping.items()}
    for uid, v in mapping.items():
        t = v.type
        if v.meta.get(INFERRED) and isinstance(t, TensorType) and t.shape is not None:
            found.ranks[uid] = len(t.shape)
    for cond in _conditions(copy):
        if cond.uid in original and static_value(cond) is not None:
            found.static_conditions.add(original[cond.uid])
    return found


def _conditions(graph: Graph):
    for n in graph.nodes:
        if n.op_type == "If" and n.domain == "" and n.inputs and n.inputs[0] is not None:
            yield n.inputs[0]
        for g in n.subgraphs():
            yield from _conditions(g)

"""Ranks that shape inference finds for the values of a graph holding an ``If``, for the
writer's check that both branches of an ``If`` return each output with one rank (OpenVINO's
If-8 output otherwise has a dynamic rank, which its CPU plugin does not compile).

`inferred_ranks(graph)` infers the shapes of a copy of `graph` (the graph written is left
as it is) with the inference `ir.inference` holds (`shapes.infer_shapes` installs it), and
gives ``{value uid: rank}`` for the values whose type inference wrote, at any depth; a
declared type that inference did not confirm is left out (converters declare some branch
outputs with a wrong rank that ONNX Runtime ignores). Empty for a graph without ``If``.
"""

from __future__ import annotations

from ...ir.clone import clone_graph
from ...ir.graph import Graph
from ...ir.inference import infer_graph_types
from ...ir.types import TensorType

#: the meta key of a value whose type inference wrote (`shapes.infer_shapes.INFERRED`)
INFERRED = "value_info"


def _has_if(graph: Graph) -> bool:
    return any((n.op_type == "If" and n.domain == "") or any(_has_if(g) for g in n.subgraphs())
               for n in graph.nodes)


def inferred_ranks(graph: Graph) -> dict[int, int]:
    if not _has_if(graph):
        return {}
    mapping: dict = {}
    copy = clone_graph(graph, mapping)
    if not infer_graph_types(copy):
        return {}
    out = {}
    for uid, v in mapping.items():
        t = v.type
        if v.meta.get(INFERRED) and isinstance(t, TensorType) and t.shape is not None:
            out[uid] = len(t.shape)
    return out

"""Shapes the writer can know although the file does not say them.

Some converters declare no type for intermediate values (paddle2onnx writes no
``value_info``), so a value the writer reaches may have no known rank, and layers that need
one (``GlobalAveragePool``'s axes, ``Resize``'s scales) could not be written. `with_shapes`
gives such values the type ONNX's own inference of their node finds from its inputs' types
(`ir.inference.node_output_types`), node by node in graph order, on a copy; a value the file
typed keeps its type, and a node ONNX cannot infer keeps its outputs untyped. The ports of
the written IR still state only what the file did: OpenVINO infers the rest itself.
"""

from __future__ import annotations

from ...ir.clone import clone_graph
from ...ir.graph import Graph, Node
from ...ir.inference import node_output_types
from ...ir.types import TensorType


def _untyped(node: Node) -> bool:
    return any(v is not None and isinstance(v.type, TensorType) and v.type.shape is None
               for v in node.outputs)


def with_shapes(graph: Graph, *, copied: bool) -> Graph:
    """`graph` with the shapes ONNX's inference finds for its untyped top-level values (see
    the module); `copied`: `graph` is the writer's own copy, so it may be changed in place."""
    if not any(_untyped(n) and n.domain == "" and not n.subgraphs() for n in graph.nodes):
        return graph
    if not copied:
        graph = clone_graph(graph)
    opset = graph.opset("") or 21
    for n in graph.nodes:
        if n.domain != "" or n.subgraphs() or not _untyped(n):
            continue
        try:
            found = node_output_types(n, opset)
        except Exception:  # noqa: BLE001 - ONNX's inference refuses: the values stay untyped
            continue
        for v, t in zip(n.outputs, found, strict=False):
            if (v is not None and isinstance(t, TensorType) and t.shape is not None
                    and isinstance(v.type, TensorType) and v.type.shape is None):
                v.type = TensorType(v.type.dtype or t.dtype, t.shape)
    return graph

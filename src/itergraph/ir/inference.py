"""ONNX's type inference of one node, as a hook: it lives above the IR (`shapes.infer_shapes`
needs the ONNX frontend's conversions), which installs it when imported; the passes below
that layer ask through `node_output_types` and learn nothing where it is not installed, as
the ONNX-free layers must."""

from __future__ import annotations

from collections.abc import Callable

_infer: Callable | None = None


def set_node_inference(fn: Callable) -> None:
    """Install ``fn(node, opset) -> [type or None per output]`` (`shapes.infer_shapes`)."""
    global _infer
    _infer = fn


def node_output_types(node, opset: int) -> list:
    """The installed inference of `node`'s output types (None per output where it finds
    nothing, or none is installed); raises what the inference raises."""
    if _infer is None:
        return [None] * len(node.outputs)
    return _infer(node, opset)


_infer_graph: Callable | None = None


def set_graph_inference(fn: Callable) -> None:
    """Install ``fn(graph)``, which writes the inferred type of every value of `graph` (at
    any depth) into it and marks each such value ``meta["value_info"]``
    (`shapes.infer_shapes`)."""
    global _infer_graph
    _infer_graph = fn


def infer_graph_types(graph) -> bool:
    """Run the installed graph inference on `graph` in place; False where none is installed."""
    if _infer_graph is None:
        return False
    _infer_graph(graph)
    return True

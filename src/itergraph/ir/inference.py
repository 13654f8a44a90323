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

"""ONNX frontend: `read` (ModelProto / path / bytes -> IR Graph) and `write` (IR -> ModelProto)."""

from .reader import UnsupportedOpsetError, read


def write(graph, opset=None, **kwargs):
    """IR `Graph` -> ``onnx.ModelProto`` (see :mod:`.writer`)."""
    from .writer import write as _write

    return _write(graph, opset, **kwargs)


__all__ = ["UnsupportedOpsetError", "read", "write"]

"""``Reshape``'s target shape, as both backends read it."""

from __future__ import annotations

from ...errors import ExecutionError, where


def reshape_target(node, shape, in_shape, allowzero: bool) -> list[int]:
    """The target `shape` of a ``Reshape`` `node` for an input of `in_shape`: an entry 0
    copies the input's dim there (unless `allowzero`, when it is a dim of 0); -1 stays, for
    the reshape to infer."""
    s = [int(d) for d in shape]
    if not allowzero:
        for i, d in enumerate(s):
            if d == 0:
                if i >= len(in_shape):
                    raise ExecutionError(f"{where(node)}: shape entry {i} is 0 (copy) but the "
                                         f"input has rank {len(in_shape)}")
                s[i] = in_shape[i]
    return s


def shape_not_a_vector(node, shape) -> str:
    """Reshape's target must be a vector (ONNX Runtime: "A shape tensor must be a vector")."""
    return f"{where(node)}: the target shape (input 1) has shape {list(shape)}, not a vector"

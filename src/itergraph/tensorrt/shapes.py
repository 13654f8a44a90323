"""Static shape helpers with TensorRT's rules. A dimension of ``-1`` is unknown until run time."""

from __future__ import annotations

from ..errors import ModelError

Shape = tuple[int, ...]


def broadcast(shapes: list[Shape], what: str) -> Shape:
    """TensorRT broadcasting: equal ranks; on each axis the sizes agree or are 1."""
    ranks = {len(s) for s in shapes}
    if len(ranks) != 1:
        raise ModelError(
            f"{what}: inputs must have the same rank (TensorRT broadcasting), got shapes "
            + ", ".join(str(s) for s in shapes)
        )
    out = []
    for axis, dims in enumerate(zip(*shapes)):
        known = {d for d in dims if d not in (1, -1)}
        if len(known) > 1:
            raise ModelError(
                f"{what}: sizes {sorted(known)} on axis {axis} cannot be broadcast together "
                f"(shapes {', '.join(str(s) for s in shapes)})"
            )
        if known:
            out.append(known.pop())
        elif -1 in dims:
            out.append(-1)
        else:
            out.append(1)
    return tuple(out)


def norm_axis(axis: int, rank: int, what: str) -> int:
    """`axis` in ``[-rank, rank)`` resolved to ``[0, rank)``."""
    if not -rank <= axis < rank:
        raise ModelError(f"{what}: axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def same_dims(a: Shape, b: Shape) -> bool:
    """Could shapes `a` and `b` be equal (unknown dims match anything)?"""
    return len(a) == len(b) and all(x == y or -1 in (x, y) for x, y in zip(a, b))


def merge(a: Shape, b: Shape) -> Shape:
    """The shape known to both `a` and `b` (dims that differ become unknown)."""
    return tuple(x if x == y else -1 for x, y in zip(a, b))


def volume(shape: Shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def ir_shape(shape: Shape) -> tuple:
    """The IR form of a shape: unknown dims are ``None``."""
    return tuple(None if d < 0 else d for d in shape)

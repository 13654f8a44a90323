"""Reduction facts shared by both backends."""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError, where


def extreme_identity(dtype, low: bool):
    """What ReduceMax (`low`) / ReduceMin of an empty set gives: the dtype's lowest/highest."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return -np.inf if low else np.inf
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min if low else info.max
    if dtype.kind == "b":
        return not low
    return 0


def reduction_axes(node, axes, rank: int) -> tuple[int, ...]:
    """A reduction's `axes` in ``[-rank, rank)`` resolved to ``[0, rank)``, each once, in
    order: ONNX Runtime reduces over the set (``[0, 0]`` is ``[0]``). One out of range is an
    `ExecutionError` naming the node. Vectorised: an attribute may hold a million entries."""
    arr = np.asarray(axes, dtype=np.int64).reshape(-1)
    top = max(rank, 1)  # a 0-D input: axis 0 (or -1) names "everything", as NumPy's scalar
    bad = arr[(arr < -top) | (arr >= top)]
    if bad.size:
        raise ExecutionError(f"{where(node)}: axis {int(bad[0])} out of range for rank {rank}")
    return tuple(sorted(set(np.where(arr < 0, arr + rank, arr).tolist())))

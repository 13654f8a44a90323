"""The shape rules of ``GatherND`` and ``ScatterND``, for both backends.

``indices`` of shape ``[..., k]`` address the first ``k`` axes of ``data`` (after
``batch_dims`` leading axes, GatherND only); negative entries count from the end::

    GatherND:  out[b..., i...] = data[b..., *indices[b..., i..., :]]
    ScatterND: out = copy(data); for i in ndindex(indices.shape[:-1]):
                   out[*indices[i]] = updates[i]          (or combined by `reduction`)
"""

from __future__ import annotations

from ...errors import ExecutionError, where


def index_depth(node, data_shape, indices_shape, batch_dims: int = 0) -> int:
    """``k``, the length of the index vectors, checked against `data`'s rank."""
    if batch_dims < 0:  # ONNX Runtime refuses it (and dies of -2**31)
        raise ExecutionError(f"{where(node)}: batch_dims must not be negative, got {batch_dims}")
    if len(indices_shape) < 1 + batch_dims:
        raise ExecutionError(f"{where(node)}: indices of shape {list(indices_shape)} need at "
                             f"least rank {batch_dims + 1}")
    k = int(indices_shape[-1])
    if tuple(data_shape[:batch_dims]) != tuple(indices_shape[:batch_dims]):
        raise ExecutionError(f"{where(node)}: the first {batch_dims} axes of data "
                             f"{list(data_shape)} and indices {list(indices_shape)} differ")
    if k < 1 or k + batch_dims > len(data_shape):
        raise ExecutionError(f"{where(node)}: index vectors of length {k} for data of rank "
                             f"{len(data_shape)}")
    return k


def check_updates(node, data_shape, indices_shape, updates_shape) -> int:
    """ScatterND: `updates` must be ``indices.shape[:-1] + data.shape[k:]``; returns ``k``."""
    k = index_depth(node, data_shape, indices_shape)
    want = tuple(indices_shape[:-1]) + tuple(data_shape[k:])
    if tuple(updates_shape) != want:
        raise ExecutionError(f"{where(node)}: updates of shape {list(updates_shape)} where "
                             f"indices {list(indices_shape)} and data {list(data_shape)} "
                             f"need {list(want)}")
    return k


def out_of_range(node, what: str) -> ExecutionError:
    return ExecutionError(f"{where(node)}: {what} index out of range for the data's axes")

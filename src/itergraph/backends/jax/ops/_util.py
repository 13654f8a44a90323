"""Helpers shared by the rule modules: attribute readers, dtype handling, legacy broadcast.

Attribute readers are the NumPy backend's (one reading of ONNX attributes for both backends).
"""

from __future__ import annotations

import numpy as np

from ....ir.attributes import (
    attr,
    attr_floats,
    attr_ints,
    attr_or_default,
    attr_str,
    attr_strs,
    np_dtype,
)

__all__ = ["attr", "attr_floats", "attr_ints", "attr_or_default", "attr_str", "attr_strs",
           "np_dtype", "astype", "norm_axis", "precision"]

_precision: list = []


def precision():
    """Matrix-product precision giving full float32 results (as NumPy) on every device.

    That is XLA's default on CPU, where asking for "highest" selects a much slower kernel;
    on GPU/TPU the default would use TF32/bfloat16, so "highest" is requested there."""
    if not _precision:
        import jax

        _precision.append(None if jax.default_backend() == "cpu" else "highest")
    return _precision[0]


def astype(cx, x, dtype):
    """`x` with element type `dtype` (no copy when it already has it)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    return x.astype(dtype) if cx.folding else cx.xp.asarray(x).astype(dtype)


def norm_axis(cx, axis: int, rank: int) -> int:
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < max(rank, 1):
        from ....errors import ExecutionError, where

        raise ExecutionError(f"{where(cx.node)}: axis {axis} out of range for rank {rank}")
    return a

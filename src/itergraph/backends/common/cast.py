"""ONNX ``Cast`` on NumPy arrays, every element type included, shared by both backends.

Between the ordinary NumPy types a cast is ``astype``. Casts that involve the ``ml_dtypes``
types (bfloat16, float8, float4, int4, ...) follow the ONNX reference rules (``saturate`` for
float8, ``round_mode`` for float8e8m0). Casting to string gives NumPy's text form of each
element; casting from strings parses them (through float32 for the ``ml_dtypes`` types).
The NumPy backend's ``Cast``/``CastLike`` kernels use it, and the JAX backend for the casts
XLA has no type for, when their input is known at trace time.
"""

from __future__ import annotations

import numpy as np

from .attributes import attr, attr_str

_PLAIN = frozenset("biufc")


def _plain(dt: np.dtype) -> bool:
    return dt.kind in _PLAIN and dt.type.__module__ == "numpy"


def cast(x: np.ndarray, to: np.dtype, saturate: bool = True, round_mode: str = "up"):
    """`x` cast to `to` as ONNX ``Cast`` does (see the module docstring)."""
    if x.dtype == to:
        return x
    if to.kind == "O":
        return x.astype(np.str_).astype(object)
    if x.dtype.kind == "O":
        if not _plain(to):
            x = x.astype(np.float32)
        else:
            return x.astype(to)
    if _plain(x.dtype) and _plain(to):
        return x.astype(to)
    from onnx.helper import np_dtype_to_tensor_dtype
    from onnx.reference.ops.op_cast import cast_to

    try:
        return cast_to(x, np_dtype_to_tensor_dtype(to), saturate, round_mode)
    except TypeError:
        return cast_to(x, np_dtype_to_tensor_dtype(to), saturate)


def cast_options(node) -> tuple[bool, str]:
    """(saturate, round_mode) of a ``Cast``/``CastLike`` node (defaults: True, "up")."""
    return bool(attr(node, "saturate", 1)), attr_str(node, "round_mode", "up")

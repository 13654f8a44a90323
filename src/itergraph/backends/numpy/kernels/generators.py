"""Kernels that make tensors: Constant, ConstantOfShape, Range, Cast, CastLike.

Cast between the ordinary NumPy types is ``astype``; casts that involve the ``ml_dtypes`` types
(bfloat16, float8, float4, int4, ...) follow the ONNX reference rules (``saturate`` for float8,
``round_mode`` for float8e8m0). Casting to string gives NumPy's text form of each element.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ...common.attributes import attr, attr_str, constant_value, np_dtype
from . import kernel

# ----------------------------------------------------------------------------- Constant

@kernel("Constant", since=1)
def _constant(node, ctx):
    value = constant_value(node)
    return lambda: value


@kernel("ConstantOfShape", since=9)
def _constant_of_shape(node, ctx):
    """ConstantOfShape: a tensor of shape `input` filled with the one-element `value`
    (default float32 zero)."""
    v = node.attrs.get("value")
    if v is None:
        fill = np.zeros((), dtype=np.float32)
    else:
        v = np.asarray(v)
        if v.size != 1:
            raise ModelError(f"{where(node)}: 'value' must hold one element, has {v.size}")
        fill = v.reshape(())
    dtype = fill.dtype

    def fn(shape):
        dims = tuple(int(d) for d in shape.reshape(-1))
        if any(d < 0 for d in dims):
            raise ExecutionError(f"{where(node)}: negative dimension in shape {list(dims)}")
        return np.full(dims, fill, dtype=dtype)

    return fn


@kernel("Range", since=11)
def _range(node, ctx):
    """Range: ``max(ceil((limit - start) / delta), 0)`` elements ``start + i * delta``."""
    stash = attr(node, "stash_type")

    def fn(start, limit, delta):
        dtype = start.dtype
        start, limit, delta = start.reshape(()), limit.reshape(()), delta.reshape(())
        if delta == 0:
            raise ExecutionError(f"{where(node)}: delta must not be 0")
        if dtype.kind in "iu":
            s, lim, d = int(start), int(limit), int(delta)
            n = max(-((s - lim) // d), 0)
            return (s + np.arange(n, dtype=np.int64) * d).astype(dtype)
        compute = np.dtype(np.float64)
        if stash is not None and dtype.itemsize == 2:
            compute = np_dtype(int(stash), node)
        return np.arange(
            start.astype(compute).item(), float(limit), float(delta), dtype=compute
        ).astype(dtype)

    return fn


# ----------------------------------------------------------------------------- Cast

_PLAIN = frozenset("biufc")


def _plain(dt: np.dtype) -> bool:
    return dt.kind in _PLAIN and dt.type.__module__ == "numpy"


def _caster(node, saturate: bool, round_mode: str):
    def cast(x: np.ndarray, to: np.dtype) -> np.ndarray:
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

    return cast


@kernel("Cast", since=1)
def _cast(node, ctx):
    to = node.attrs.get("to")
    if to is None:
        raise ModelError(f"{where(node)}: Cast needs the 'to' attribute")
    dtype = np_dtype(to, node)
    cast = _caster(node, bool(attr(node, "saturate", 1)), attr_str(node, "round_mode", "up"))
    return lambda x: cast(x, dtype)


@kernel("CastLike", since=15)
def _cast_like(node, ctx):
    cast = _caster(node, bool(attr(node, "saturate", 1)), attr_str(node, "round_mode", "up"))
    return lambda x, like: cast(x, like.dtype)

"""Kernels that make tensors: Constant, ConstantOfShape, Range, Cast, CastLike.

Cast and CastLike follow `backends.common.cast` (ONNX rules for every element type).
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr, constant_value, fill_value, np_dtype
from ...common.cast import cast, cast_options
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
    fill = fill_value(node)
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

@kernel("Cast", since=1)
def _cast(node, ctx):
    to = node.attrs.get("to")
    if to is None:
        raise ModelError(f"{where(node)}: Cast needs the 'to' attribute")
    dtype = np_dtype(to, node)
    saturate, round_mode = cast_options(node)
    wide = dtype in _WIDE_INTS

    def fn(x):
        if wide and x.__class__ is np.ndarray and x.dtype in _FLOATS and x.size:
            # every value finite and in range (NaN fails both tests): the truncating C cast
            # `cast` makes of the rest is NumPy's own; two reductions, no masks
            lim = _LIMITS[dtype, x.dtype]
            if x.min() >= -lim and x.max() < lim:
                return x.astype(dtype)
        return cast(x, dtype, saturate, round_mode)

    return fn


_WIDE_INTS = (np.dtype(np.int32), np.dtype(np.int64))
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: 2**(bits - 1) of each wide integer type in each float type (exact: a power of two)
_LIMITS = {(i, f): f.type(2.0 ** (i.itemsize * 8 - 1)) for i in _WIDE_INTS for f in _FLOATS}


@kernel("CastLike", since=15)
def _cast_like(node, ctx):
    saturate, round_mode = cast_options(node)
    return lambda x, like: cast(x, like.dtype, saturate, round_mode)

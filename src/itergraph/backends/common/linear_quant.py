"""ONNX ``QuantizeLinear`` and ``DequantizeLinear`` to and from the 8-, 16- and 32-bit
integers, for both backends (`xp`: NumPy, or jax.numpy while tracing)::

    DequantizeLinear: y = (x - zero_point) * scale                 # in the scale's type
    QuantizeLinear:   y = clip(round_half_even(x / scale) + zero_point, T.min, T.max)

`scale` and `zero_point` are one value (per tensor), a vector along `axis` (per axis), or,
with ``block_size`` (opset 21), an array of `x`'s rank whose `axis` holds one entry per
block of ``block_size`` elements. Other element types (4-bit, float8, float4) are left to the
reference implementation: `native` says which.
"""

from __future__ import annotations

import numpy as np

from ...errors import ExecutionError, where
from ...ir.types import DataType

_INTEGERS = {np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32)}


def native(quantized_dtype, scale_dtype, quantizing: bool) -> bool:
    """Whether this module computes the op for these element types (int32 is a
    DequantizeLinear input only)."""
    q = np.dtype(quantized_dtype)
    return (q in _INTEGERS and not (quantizing and q.itemsize > 2)
            and np.dtype(scale_dtype).kind == "f")


def quantized_type(node, zero_point):
    """QuantizeLinear's output type: the zero point's, else ``output_dtype``, else uint8."""
    if zero_point is not None:
        return zero_point.dtype
    t = DataType.from_onnx(int(node.attrs.get("output_dtype") or 0))
    return t.numpy if t is not None else np.dtype(np.uint8)


def expand(node, xp, param, x_shape, axis: int, block: int):
    """`param` (scale or zero point) shaped to broadcast against an `x` of `x_shape`."""
    rank = len(x_shape)
    shape = tuple(param.shape)
    if len(shape) == 0 or (shape == (1,) and block == 0):
        return xp.reshape(param, ())
    a = axis + rank if axis < 0 else axis
    if not 0 <= a < rank:
        raise ExecutionError(f"{where(node)}: axis {axis} is out of range for rank {rank}")
    if block:
        want = tuple(-(-d // block) if i == a else d for i, d in enumerate(x_shape))
        if shape != want:
            raise ExecutionError(f"{where(node)}: a scale of shape {list(shape)} for blocks of "
                                 f"{block} along axis {a} of {list(x_shape)} (need {list(want)})")
        return xp.take(xp.repeat(param, block, axis=a), np.arange(x_shape[a]), axis=a)
    if len(shape) != 1 or shape[0] != x_shape[a]:
        raise ExecutionError(f"{where(node)}: a scale of shape {list(shape)} for axis {a} of "
                             f"{list(x_shape)}")
    return xp.reshape(param, (-1,) + (1,) * (rank - 1 - a))


def dequantize(node, xp, x, scale, zero_point, axis: int, block: int, out_dtype):
    s = expand(node, xp, scale, x.shape, axis, block)
    v = x.astype(np.int64)
    if zero_point is not None:
        v = v - expand(node, xp, zero_point, x.shape, axis, block).astype(np.int64)
    work = np.float32 if np.dtype(out_dtype).itemsize < 4 else out_dtype
    return (v.astype(work) * s.astype(work)).astype(out_dtype)


def quantize(node, xp, x, scale, zero_point, axis: int, block: int, out_dtype):
    s = expand(node, xp, scale, x.shape, axis, block).astype(np.float32)
    q = xp.round(x.astype(np.float32) / s)
    if zero_point is not None:
        q = q + expand(node, xp, zero_point, x.shape, axis, block).astype(np.float32)
    info = np.iinfo(out_dtype)
    return xp.clip(q, info.min, info.max).astype(out_dtype)

"""The ``com.microsoft`` quantization operators node by node, for NumPy and ``jax.numpy``
alike (`xp`): attributes and the per-tensor / per-axis / per-column forms of their scales
and zero points read and checked, the arithmetic in `ms_quant`. Each function takes the
node, `xp` and the node's inputs (``None`` for an omitted optional one) and returns the
output.

``QuantizeLinear``/``DequantizeLinear`` (com.microsoft 1) are ONNX's opset-13 ops: a scale
and zero point per tensor or per ``axis`` (default 1); outputs uint8, int8, uint16, int16.
``QGemm``: ``acc = (A' - a_zp) @ (B' - b_zp)`` in int32 (+ the int32 ``C``), ``y =
float(acc) * (alpha * a_scale * b_scale)``; with ``y_scale`` the result is quantized with
``y_scale``/``y_zero_point``, else it is the float ``y``. Forms ONNX Runtime refuses too
(blocked scales, per-row zero points of A) are refused with an `UnsupportedError` naming the
node.
"""

from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, UnsupportedError, where
from ..ir.attributes import attr
from . import ms_quant as mq
from .ms_nbits import matmul_nbits
from .ms_qsoftmax import qlinear_softmax


def per_axis(node, v, x, axis: int):
    """A scale/zero point shaped to broadcast along `axis` of `x` (per tensor: 0-d)."""
    if v is None or v.ndim == 0 or v.size == 1:
        return None if v is None else v.reshape(())
    if v.ndim != 1:
        raise UnsupportedError(f"{where(node)}: a {v.ndim}-D scale/zero point (blocked "
                               "quantization) is not supported")
    a = axis + x.ndim if axis < 0 else axis
    if not 0 <= a < x.ndim or x.shape[a] != v.shape[0]:
        raise ExecutionError(f"{where(node)}: per-axis scale of {v.shape[0]} entries does "
                             f"not match axis {axis} of {tuple(x.shape)}")
    return v.reshape((-1,) + (1,) * (x.ndim - a - 1))


def scalar(node, v, what: str):
    """A per-tensor parameter as 0-d (None stays None)."""
    if v is not None and v.size != 1:
        raise UnsupportedError(f"{where(node)}: {what} must be one value (per tensor), got "
                               f"shape {tuple(v.shape)}")
    return None if v is None else v.reshape(())


def per_column(node, v, b, what: str):
    """b_scale / b_zero_point: per tensor (0-d), or per column of B (``[N]``)."""
    if v is None or v.size == 1:
        return None if v is None else v.reshape(())
    if v.ndim == 1 and v.shape[0] == b.shape[-1]:
        return v
    raise UnsupportedError(f"{where(node)}: {what} of shape {tuple(v.shape)} (only per tensor "
                           "or per column of B)")


def quantize_linear(node, xp, x, scale, zp=None):
    axis = int(attr(node, "axis", 1))
    out = np.dtype(np.uint8 if zp is None else zp.dtype)
    if out not in mq.RANGES:
        raise UnsupportedError(f"{where(node)}: output type {out} is not supported (uint8, "
                               "int8, uint16, int16)")
    return mq.quantize(xp, x, per_axis(node, scale, x, axis), per_axis(node, zp, x, axis), out)


def dequantize_linear(node, xp, x, scale, zp=None):
    axis = int(attr(node, "axis", 1))
    y = mq.dequantize(xp, x, per_axis(node, scale, x, axis), per_axis(node, zp, x, axis))
    return y.astype(scale.dtype)


def _product(xp, memo, product):
    """``(a, azp, b, bzp) -> int32`` product: the backend's `product` where it gives one,
    else `ms_quant.int_matmul`."""
    if product is not None:
        return product
    return lambda a, azp, b, bzp: mq.int_matmul(xp, a, azp, b, bzp, memo)


def dynamic_quantize_matmul(node, xp, a, b, b_scale, b_zp=None, bias=None, *, memo=None,
                            product=None):
    qa, sa, za = mq.dynamic_quantize(xp, a)
    acc = _product(xp, memo, product)(qa, za, b, per_column(node, b_zp, b, "b_zero_point"))
    mult = sa * per_column(node, b_scale, b, "b_scale").astype(np.float32)
    return mq.scaled(xp, acc, mult, bias)


def matmul_integer_to_float(node, xp, a, b, a_scale, b_scale, a_zp=None, b_zp=None,
                            bias=None, *, memo=None, product=None):
    sa = scalar(node, a_scale, "a_scale").astype(np.float32)
    acc = _product(xp, memo, product)(a, scalar(node, a_zp, "a_zero_point"), b,
                                      per_column(node, b_zp, b, "b_zero_point"))
    mult = sa * per_column(node, b_scale, b, "b_scale").astype(np.float32)
    return mq.scaled(xp, acc, mult, bias)


_PARAMS = ("A_scale", "A_zero_point", "B_scale", "B_zero_point", "C_scale", "C_zero_point")


def qlinear_binary(op):
    """``QLinearAdd`` / ``QLinearMul`` (`op` the `ms_quant` function)."""
    def fn(node, xp, a, sa, za, b, sb, zb, sc, zc=None):
        sa, za, sb, zb, sc, zc = (scalar(node, v, n)
                                  for v, n in zip((sa, za, sb, zb, sc, zc), _PARAMS))
        return op(xp, a, sa, za, b, sb, zb, sc, zc, np.dtype(a.dtype))

    return fn


def sigmoid(xp, v):
    return (1 / (1 + xp.exp(-v.astype(np.float64)))).astype(np.float32)


def _activation(node):
    if node.op_type == "QLinearSigmoid":
        return sigmoid
    alpha = np.float32(attr(node, "alpha", 0.01))
    return lambda xp, v: xp.where(v >= 0, v, v * alpha)


def qlinear_lookup(node, xp, x, sx, zx, sy, zy=None):
    """``QLinearSigmoid`` / ``QLinearLeakyRelu`` (``alpha``, default 0.01)."""
    if np.dtype(x.dtype) not in (np.dtype(np.uint8), np.dtype(np.int8)):
        raise UnsupportedError(f"{where(node)}: input type {x.dtype} (uint8 or int8)")
    fn = _activation(node)
    return mq.lookup(xp, x, scalar(node, sx, "X_scale"), scalar(node, zx, "X_zero_point"),
                     scalar(node, sy, "Y_scale"), scalar(node, zy, "Y_zero_point"),
                     lambda v: fn(xp, v), np.dtype(x.dtype))


def qlinear_concat(node, xp, sy, zy, *triples):
    """Each input requantized to the output's scale and zero point, then concatenated
    (requantizing with equal parameters gives the codes back, so it is done for every
    input)."""
    if len(triples) % 3:
        raise ExecutionError(f"{where(node)}: inputs after Y_scale, Y_zero_point come in "
                             f"(X, X_scale, X_zero_point) triples, got {len(triples)}")
    sy, zy = scalar(node, sy, "Y_scale"), scalar(node, zy, "Y_zero_point")
    parts = [mq.requantize(xp, x, scalar(node, sx, "X_scale"), scalar(node, zx, "X_zero_point"),
                           sy, zy)
             for x, sx, zx in (triples[i:i + 3] for i in range(0, len(triples), 3))]
    return xp.concatenate(parts, axis=int(attr(node, "axis")))


def qlinear_global_average_pool(node, xp, x, sx, zx, sy, zy=None):
    return mq.global_average_pool(xp, x, scalar(node, sx, "x_scale"),
                                  scalar(node, zx, "x_zero_point"), scalar(node, sy, "y_scale"),
                                  scalar(node, zy, "y_zero_point"),
                                  bool(attr(node, "channels_last", 0)))


def qgemm(node, xp, a, sa, za, b, sb, zb, c=None, sy=None, zy=None):
    a2 = xp.transpose(a) if attr(node, "transA", 0) else a
    b2 = xp.transpose(b) if attr(node, "transB", 0) else b
    alpha = np.float32(attr(node, "alpha", 1.0))
    acc = mq.int_matmul(xp, a2, scalar(node, za, "a_zero_point"), b2,
                        per_column(node, zb, b2, "b_zero_point"))
    if c is not None:
        acc = acc + c.astype(np.int32)
    mult = alpha * scalar(node, sa, "a_scale").astype(np.float32) \
        * per_column(node, sb, b2, "b_scale").astype(np.float32)
    y = acc.astype(np.float32) * mult
    if sy is None:
        return y
    out = np.dtype(np.uint8 if zy is None else zy.dtype)
    return mq.quantize(xp, y, scalar(node, sy, "y_scale"), scalar(node, zy, "y_zero_point"), out)


def qlinear_average_pool_io(node, xp, x, sx, zx, sy, zy, pool):
    """``QLinearAveragePool``: dequantize, ``pool`` (an ``AveragePool`` over NCHW float32),
    quantize back; ``channels_last`` inputs are moved to NCHW and back."""
    nhwc = bool(attr(node, "channels_last", 0))
    v = mq.dequantize(xp, x, scalar(node, sx, "x_scale"), scalar(node, zx, "x_zero_point"))
    if nhwc:
        v = xp.moveaxis(v, -1, 1)
    y = pool(v)
    if nhwc:
        y = xp.moveaxis(y, 1, -1)
    return mq.quantize(xp, y, scalar(node, sy, "y_scale"), scalar(node, zy, "y_zero_point"),
                       np.dtype(x.dtype))


# op -> node-level function, for the backends' registrations (those taking a keyword ``memo``
# keep their constant B's float64 form in an `ms_quant.Memo`; their keyword ``product``
# replaces the integer product, `ms_quant.int_matmul`, by the backend's own)
OPS = {
    "QuantizeLinear": quantize_linear,
    "DequantizeLinear": dequantize_linear,
    "DynamicQuantizeMatMul": dynamic_quantize_matmul,
    "MatMulIntegerToFloat": matmul_integer_to_float,
    "QLinearAdd": qlinear_binary(mq.qlinear_add),
    "QLinearMul": qlinear_binary(mq.qlinear_mul),
    "QLinearSigmoid": qlinear_lookup,
    "QLinearLeakyRelu": qlinear_lookup,
    "QLinearConcat": qlinear_concat,
    "QLinearGlobalAveragePool": qlinear_global_average_pool,
    "QGemm": qgemm,
    "QLinearSoftmax": qlinear_softmax,
    "MatMulNBits": matmul_nbits,
}

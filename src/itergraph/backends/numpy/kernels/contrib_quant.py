"""NumPy kernels of ONNX Runtime's quantization operators (domain ``com.microsoft``):
``QuantizeLinear``, ``DequantizeLinear``, ``DynamicQuantizeMatMul``, ``MatMulIntegerToFloat``,
``QLinearAdd``, ``QLinearMul``, ``QLinearSigmoid``, ``QLinearLeakyRelu``, ``QLinearConcat``,
``QLinearAveragePool``, ``QLinearGlobalAveragePool`` and ``QGemm``. The arithmetic (shared
with the JAX backend) and each op's formula are in `backends.common.ms_quant`.

``QuantizeLinear``/``DequantizeLinear`` (com.microsoft 1) are ONNX's opset-13 ops: a scale
and zero point per tensor or per ``axis`` (default 1). ``QLinearAveragePool`` dequantizes,
averages as ``AveragePool`` (float32) and quantizes back. ``QGemm``: ``acc = (A' - a_zp) @
(B' - b_zp)`` in int32 (+ the int32 ``C``), ``y = float(acc) * (alpha * a_scale * b_scale)``;
with ``y_scale`` the result is quantized with ``y_scale``/``y_zero_point``, else it is the
float ``y``.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, UnsupportedError, where
from ...common import ms_quant as mq
from ...common.attributes import attr
from . import kernel
from .pool import _average_pool

DOMAIN = mq.DOMAIN


def _per_axis(node, v, x, axis):
    """A scale/zero point shaped to broadcast along `axis` of `x` (per-tensor: as is)."""
    if v is None or v.ndim == 0 or v.size == 1:
        return None if v is None else v.reshape(())
    if v.ndim != 1:
        raise UnsupportedError(f"{where(node)}: a {v.ndim}-D scale/zero point (blocked "
                               "quantization) is not supported")
    a = axis + x.ndim if axis < 0 else axis
    if not 0 <= a < x.ndim or x.shape[a] != v.shape[0]:
        raise ExecutionError(f"{where(node)}: per-axis scale of {v.shape[0]} entries does "
                             f"not match axis {axis} of {x.shape}")
    return v.reshape((-1,) + (1,) * (x.ndim - a - 1))


def _scalar(node, v, what):
    if v is not None and v.size != 1:
        raise UnsupportedError(f"{where(node)}: {what} must be one value (per-tensor), got "
                               f"shape {v.shape}")
    return None if v is None else v.reshape(())


@kernel("QuantizeLinear", domain=DOMAIN)
def _quantize_linear(node, ctx):
    axis = int(attr(node, "axis", 1))

    def fn(x, scale, zp=None):
        out = np.uint8 if zp is None else zp.dtype
        if np.dtype(out) not in mq.RANGES:
            raise UnsupportedError(f"{where(node)}: output type {np.dtype(out)} is not "
                                   "supported (uint8, int8, uint16, int16)")
        return mq.quantize(np, x, _per_axis(node, scale, x, axis),
                           _per_axis(node, zp, x, axis), out)

    return fn


@kernel("DequantizeLinear", domain=DOMAIN)
def _dequantize_linear(node, ctx):
    axis = int(attr(node, "axis", 1))

    def fn(x, scale, zp=None):
        s = _per_axis(node, scale, x, axis)
        y = mq.dequantize(np, x, s, _per_axis(node, zp, x, axis))
        return y.astype(scale.dtype, copy=False)

    return fn


def _b_param(node, v, b, what):
    """b_scale / b_zero_point: per tensor, or per column ``[N]``."""
    if v is None or v.size == 1:
        return None if v is None else v.reshape(())
    if v.ndim == 1 and v.shape[0] == b.shape[-1]:
        return v
    raise UnsupportedError(f"{where(node)}: {what} of shape {v.shape} (only per tensor or "
                           f"per column of B)")


@kernel("DynamicQuantizeMatMul", domain=DOMAIN)
def _dynamic_quantize_matmul(node, ctx):
    def fn(a, b, b_scale, b_zp=None, bias=None):
        qa, sa, za = mq.dynamic_quantize(np, a)
        acc = mq.int_matmul(np, qa, za, b, _b_param(node, b_zp, b, "b_zero_point"))
        mult = sa * _b_param(node, b_scale, b, "b_scale").astype(np.float32)
        return mq.scaled(np, acc, mult, bias)

    return fn


@kernel("MatMulIntegerToFloat", domain=DOMAIN)
def _matmul_integer_to_float(node, ctx):
    def fn(a, b, a_scale, b_scale, a_zp=None, b_zp=None, bias=None):
        sa = _scalar(node, a_scale, "a_scale").astype(np.float32)
        acc = mq.int_matmul(np, a, _scalar(node, a_zp, "a_zero_point"), b,
                            _b_param(node, b_zp, b, "b_zero_point"))
        mult = sa * _b_param(node, b_scale, b, "b_scale").astype(np.float32)
        return mq.scaled(np, acc, mult, bias)

    return fn


def _binary(op):
    def factory(node, ctx):
        def fn(a, sa, za, b, sb, zb, sc, zc=None):
            args = [_scalar(node, v, n) for v, n in
                    ((sa, "A_scale"), (za, "A_zero_point"), (sb, "B_scale"),
                     (zb, "B_zero_point"), (sc, "C_scale"), (zc, "C_zero_point"))]
            sa_, za_, sb_, zb_, sc_, zc_ = args
            return op(np, a, sa_, za_, b, sb_, zb_, sc_, zc_, a.dtype)

        return fn

    return factory


kernel("QLinearAdd", domain=DOMAIN)(_binary(mq.qlinear_add))
kernel("QLinearMul", domain=DOMAIN)(_binary(mq.qlinear_mul))


def sigmoid(xp, v):
    return (1 / (1 + xp.exp(-v.astype(np.float64)))).astype(np.float32)


def leaky_relu(alpha: float):
    a = np.float32(alpha)

    def fn(xp, v):
        return xp.where(v >= 0, v, v * a)

    return fn


def _lookup(fn_of_node):
    def factory(node, ctx):
        f = fn_of_node(node)

        def fn(x, sx, zx, sy, zy=None):
            if x.dtype not in (np.uint8, np.int8):
                raise UnsupportedError(f"{where(node)}: input type {x.dtype} (uint8/int8)")
            return mq.lookup(np, x, _scalar(node, sx, "X_scale"), _scalar(node, zx, "X_zero_point"),
                             _scalar(node, sy, "Y_scale"), _scalar(node, zy, "Y_zero_point"),
                             lambda v: f(np, v), x.dtype)

        return fn

    return factory


kernel("QLinearSigmoid", domain=DOMAIN)(_lookup(lambda node: sigmoid))
kernel("QLinearLeakyRelu", domain=DOMAIN)(
    _lookup(lambda node: leaky_relu(float(attr(node, "alpha", 0.01)))))


@kernel("QLinearConcat", domain=DOMAIN)
def _qlinear_concat(node, ctx):
    axis = int(attr(node, "axis"))

    def fn(sy, zy, *triples):
        if len(triples) % 3:
            raise ExecutionError(f"{where(node)}: inputs after Y_scale, Y_zero_point come in "
                                 f"(X, X_scale, X_zero_point) triples, got {len(triples)}")
        sy_, zy_ = _scalar(node, sy, "Y_scale"), _scalar(node, zy, "Y_zero_point")
        parts = []
        for i in range(0, len(triples), 3):
            x, sx, zx = triples[i:i + 3]
            sx_, zx_ = _scalar(node, sx, "X_scale"), _scalar(node, zx, "X_zero_point")
            same = (np.float32(sx_) == np.float32(sy_)
                    and (0 if zx_ is None else int(zx_)) == (0 if zy_ is None else int(zy_)))
            parts.append(x if same else mq.requantize(np, x, sx_, zx_, sy_, zy_))
        return np.concatenate(parts, axis=axis)

    return fn


@kernel("QLinearAveragePool", domain=DOMAIN)
def _qlinear_average_pool(node, ctx):
    pool = _average_pool(node, ctx)
    nhwc = bool(attr(node, "channels_last", 0))

    def fn(x, sx, zx, sy, zy=None):
        sx_, zx_, sy_, zy_ = (_scalar(node, v, n) for v, n in
                              ((sx, "x_scale"), (zx, "x_zero_point"), (sy, "y_scale"),
                               (zy, "y_zero_point")))
        v = mq.dequantize(np, x, sx_, zx_)
        if nhwc:
            v = np.moveaxis(v, -1, 1)
        y = pool(v)
        if nhwc:
            y = np.moveaxis(y, 1, -1)
        return mq.quantize(np, y, sy_, zy_, x.dtype)

    return fn


@kernel("QLinearGlobalAveragePool", domain=DOMAIN)
def _qlinear_global_average_pool(node, ctx):
    nhwc = bool(attr(node, "channels_last", 0))

    def fn(x, sx, zx, sy, zy=None):
        return mq.global_average_pool(np, x, _scalar(node, sx, "x_scale"),
                                      _scalar(node, zx, "x_zero_point"),
                                      _scalar(node, sy, "y_scale"),
                                      _scalar(node, zy, "y_zero_point"), nhwc)

    return fn


@kernel("QGemm", domain=DOMAIN)
def _qgemm(node, ctx):
    ta = bool(attr(node, "transA", 0))
    tb = bool(attr(node, "transB", 0))
    alpha = np.float32(attr(node, "alpha", 1.0))

    def fn(a, sa, za, b, sb, zb, c=None, sy=None, zy=None):
        a2 = a.T if ta else a
        b2 = b.T if tb else b
        sa_ = _scalar(node, sa, "a_scale").astype(np.float32)
        zb_ = _b_param(node, zb, b2, "b_zero_point")
        acc = mq.int_matmul(np, a2, _scalar(node, za, "a_zero_point"), b2, zb_)
        if c is not None:
            acc = acc + c.astype(np.int32)
        mult = alpha * sa_ * _b_param(node, sb, b2, "b_scale").astype(np.float32)
        y = acc.astype(np.float32) * mult
        if sy is None:
            return y
        out = np.uint8 if zy is None else zy.dtype
        return mq.quantize(np, y, _scalar(node, sy, "y_scale"), _scalar(node, zy, "y_zero_point"),
                           out)

    return fn

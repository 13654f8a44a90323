"""JAX lowerings of ONNX's ``DynamicQuantizeLinear``, ``MatMulInteger`` and ``ConvInteger``:
the NumPy kernels' arithmetic (`backends.numpy.kernels.quant_int`) over ``jax.numpy``, the
integer products as float products (exact: float64, or float32 where the constant weight's
magnitudes bound every partial sum below 2**24, `ms_quant.centered_weight`) and ``ConvInteger``
through ``Conv``'s lowering. A constant weight is centered on its zero point once, on the
host (`OpContext.prepared`), not in every call."""

from __future__ import annotations

import numpy as np

from ....semantics import ms_quant as mq
from ..table import lowering
from .conv import lower_conv


def _centered_weight(cx, w, zp, a_dtype, axes: tuple[int, ...]):
    """``w - zp`` in the narrowest exact float type (`ms_quant.centered_weight`), prepared
    once when `w` and `zp` are constants; else float64, computed in the trace."""
    if zp is None or isinstance(zp, np.ndarray):
        z = None if zp is None else (zp.shape, zp.dtype.str, zp.tobytes())
        wc = cx.prepared(w, ("centered", z, np.dtype(a_dtype).str, axes),
                         lambda v: mq.centered_weight(v, zp, a_dtype, axes))
        if wc is not None:
            return wc
    return mq.centered(cx.xp, w, zp)


@lowering("DynamicQuantizeLinear", since=11)
def _dynamic_quantize_linear(cx, x):
    y, scale, zp = mq.dynamic_quantize(cx.xp, x)
    cx.check(~cx.xp.isfinite(scale), mq.NONFINITE)
    return y, scale, zp


@lowering("MatMulInteger", since=10)
def _matmul_integer(cx, a, b, azp=None, bzp=None):
    bc = _centered_weight(cx, b, bzp, a.dtype, (-2,))
    return mq.int_matmul(cx.xp, a, mq.a_row_zero_point(a, azp), b, bzp, bc=bc)


@lowering("ConvInteger", since=10)
def _conv_integer(cx, x, w, xzp=None, wzp=None):
    xp = cx.xp
    wc = _centered_weight(cx, w, mq.channel_zero_point(w, wzp), x.dtype,
                          tuple(range(1, w.ndim)))
    y = lower_conv(cx, mq.centered(xp, x, None if xzp is None else xzp.reshape(()), wc.dtype), wc)
    return mq.to_int32(xp, y)

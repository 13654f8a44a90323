"""JAX lowerings of ONNX's ``DynamicQuantizeLinear``, ``MatMulInteger`` and ``ConvInteger``:
the NumPy kernels' arithmetic (`backends.numpy.kernels.quant_int`) over ``jax.numpy``, the
integer products as float products (exact: float64, or float32 where the constant weight's
magnitudes bound every partial sum below 2**24, `ms_quant.centered_weight`) and ``ConvInteger``
through ``Conv``'s lowering. A ``MatMulInteger`` or ``ConvInteger`` with a large constant
weight is one int8 product instead (`int8_dot`). A constant weight is centered on its zero
point once, on the host (`OpContext.prepared`), not in every call."""

from __future__ import annotations

import numpy as np

from ....semantics import ms_quant as mq
from ..table import lowering
from . import conv, int8_dot
from ._util import attr_ints, attr_or_default


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
    return int_product(cx, a, mq.a_row_zero_point(a, azp), b, bzp)


def int_product(cx, a, azp, b, bzp):
    """``(a - azp) @ (b - bzp)`` in int32, exactly (`azp` as `ms_quant.a_row_zero_point`
    shapes it, `bzp` per tensor or per column): `int8_dot`'s product for a large constant
    B, else the exact float product of B centered once (`_centered_weight`)."""
    if int8_dot.applies(a, b, bzp):
        y = int8_dot.product(cx, a, azp, b, bzp)
        if y is not None:
            return y
    bc = _centered_weight(cx, b, bzp, a.dtype, (-2,))
    return mq.int_matmul(cx.xp, a, azp, b, bzp, bc=bc)


@lowering("ConvInteger", since=10)
def conv_integer(cx, x, w, xzp=None, wzp=None):
    """``ConvInteger`` (also `qlinear`'s): int32, exactly."""
    y = _int8_conv(cx, x, w, xzp, wzp)
    if y is not None:
        return y
    xp = cx.xp
    wc = _centered_weight(cx, w, mq.channel_zero_point(w, wzp), x.dtype,
                          tuple(range(1, w.ndim)))
    xc = mq.centered(xp, x, None if xzp is None else xzp.reshape(()), wc.dtype)
    y = conv.lower_conv(cx, xc, wc)
    return mq.to_int32(xp, y)


def _int8_conv(cx, x, w, xzp, wzp):
    """A ``ConvInteger`` of one group with a large constant weight as `int8_dot`'s product
    over its column matrix (`conv.stacked_windows`, padded with X's zero point: a padded
    position counts as zero); None where that does not apply."""
    if not (int8_dot.eight_bit(x, w) and x.ndim >= 3 and w.ndim == x.ndim
            and int(attr_or_default(cx.node, "group")) == 1
            and int8_dot.known_zero_point(wzp, w.shape[0])
            and (xzp is None or xzp.size == 1)):
        return None
    kernel = attr_ints(cx.node, "kernel_shape") or list(w.shape[2:])
    kernel, strides, dilations, pads = conv.geometry(cx, x, kernel)
    if list(kernel) != list(w.shape[2:]) or w.shape[1] != x.shape[1] or any(
            a < 0 or c < 0 for a, c in pads):
        return None
    spans = [i + a + c - (k - 1) * d - 1 for i, k, d, (a, c) in
             zip(x.shape[2:], kernel, dilations, pads)]
    if any(v < 0 for v in spans):
        return None  # an empty window: the general path words the error
    positions = x.shape[0] * int(np.prod([v // s + 1 for v, s in zip(spans, strides)]))
    k = int(np.prod(w.shape[1:]))
    if k < int8_dot.MIN_CONV_TERMS or not int8_dot.worth(positions * k, (k, w.shape[0])):
        return None
    za = None if xzp is None else xzp.reshape(())
    cols, out = conv.stacked_windows(cx, conv.channels_last(cx, x), kernel, strides,
                                     dilations, pads, 0 if za is None else za)
    y = int8_dot.product(cx, cols, za, w, None if wzp is None else wzp.reshape(-1),
                         ("taps-channels", lambda v: conv.taps_channels(v).T))
    if y is None:
        return None
    return conv.channels_first(cx, cx.xp.reshape(y, (x.shape[0], *out, w.shape[0])))

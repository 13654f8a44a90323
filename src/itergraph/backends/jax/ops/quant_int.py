"""JAX lowerings of ONNX's ``DynamicQuantizeLinear``, ``MatMulInteger`` and ``ConvInteger``:
the NumPy kernels' arithmetic (`backends.numpy.kernels.quant_int`) over ``jax.numpy``, the
integer products as float64 products (exact) and ``ConvInteger`` through ``Conv``'s
lowering."""

from __future__ import annotations

from ....semantics import ms_quant as mq
from ..table import lowering
from .conv import _conv


@lowering("DynamicQuantizeLinear", since=11)
def _dynamic_quantize_linear(cx, x):
    return mq.dynamic_quantize(cx.xp, x)


@lowering("MatMulInteger", since=10)
def _matmul_integer(cx, a, b, azp=None, bzp=None):
    return mq.int_matmul(cx.xp, a, mq.a_row_zero_point(a, azp), b, bzp)


@lowering("ConvInteger", since=10)
def _conv_integer(cx, x, w, xzp=None, wzp=None):
    xp = cx.xp
    y = _conv(cx, mq.centered(xp, x, None if xzp is None else xzp.reshape(())),
              mq.centered(xp, w, mq.channel_zero_point(w, wzp)))
    return mq.to_int32(xp, y)

"""JAX lowerings of ONNX's ``QLinearMatMul`` and ``QLinearConv`` (the QOperator form of
statically quantized models): the exact int32 product of ``MatMulInteger`` / ``ConvInteger``
(`quant_int`: an int8 product for a large constant weight), ``QLinearConv``'s int32 bias
added, then ONNX Runtime's requantization (`ms_quant.requantize_product`: the float32
multiplier ``fl(fl(a_scale * b_scale) / y_scale)``, per column or output channel)."""

from __future__ import annotations

import numpy as np

from ....semantics import ms_quant as mq
from ....semantics.ms_quant_ops import per_column, scalar
from ..table import lowering
from .quant_int import conv_integer, int_product


def _out_type(node, y_zp):
    dtype = np.dtype(y_zp.dtype)
    if dtype not in mq.RANGES:
        from ....errors import UnsupportedError, where

        raise UnsupportedError(f"{where(node)}: output type {dtype} is not supported")
    return dtype


@lowering("QLinearMatMul", since=10)
def _qlinear_matmul(cx, a, a_s, a_z, b, b_s, b_z, y_s, y_z):
    acc = int_product(cx, a, mq.a_row_zero_point(a, a_z), b,
                      per_column(cx.node, b_z, b, "b_zero_point"))
    mult = mq.product_multiplier(cx.xp, scalar(cx.node, a_s, "a_scale"),
                                 per_column(cx.node, b_s, b, "b_scale"),
                                 scalar(cx.node, y_s, "y_scale"))
    return mq.requantize_product(cx.xp, acc, mult, y_z, _out_type(cx.node, y_z))


@lowering("QLinearConv", since=10)
def _qlinear_conv(cx, x, x_s, x_z, w, w_s, w_z, y_s, y_z, b=None):
    xp = cx.xp
    acc = conv_integer(cx, x, w, x_z, w_z)
    channel = (1, -1) + (1,) * (x.ndim - 2)
    if b is not None:
        acc = acc + xp.reshape(xp.asarray(b).astype(np.int32), channel)
    mult = mq.product_multiplier(xp, scalar(cx.node, x_s, "x_scale"), w_s,
                                 scalar(cx.node, y_s, "y_scale"))
    return mq.requantize_product(xp, acc, xp.reshape(mult, channel) if np.ndim(mult) else mult,
                                 y_z, _out_type(cx.node, y_z))

"""NumPy kernels of ONNX's integer quantization ops ``DynamicQuantizeLinear``,
``MatMulInteger`` and ``ConvInteger`` (what ONNX Runtime's dynamic quantizer writes), in
place of ``onnx.reference``'s: the arithmetic of `semantics.ms_quant`.

- ``DynamicQuantizeLinear``: ONNX Runtime's (uint8) parameters and rounding.
- ``MatMulInteger``: ``(A - a_zero_point) @ (B - b_zero_point)`` in int32, the zero points per
  tensor, per row of A (``[M]``) or per column of B (``[N]``); one float BLAS product, exact
  (`semantics.exact_int`); a large constant B of the float32 form is kept as int8/int16 column
  blocks multiplied one at a time (`semantics.int_blocks`: the same exact result, a quarter
  of the memory traffic).
- ``ConvInteger``: ``Conv(X - x_zero_point, W - w_zero_point)`` in int32 (``w_zero_point`` per
  tensor or per output channel), ``Conv``'s kernel over float32 or float64 as
  `semantics.exact_int` finds exact; padding contributes zero, as ONNX Runtime pads with
  the zero point.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ....ir.attributes import const_input
from ....semantics import exact_int
from ....semantics import ms_quant as mq
from . import kernel
from .conv_nd import conv_kernel


@kernel("DynamicQuantizeLinear", since=11)
def _dynamic_quantize_linear(node, ctx):
    def fn(x):
        y, scale, zp = mq.dynamic_quantize(np, x)
        if not np.isfinite(scale):
            raise ExecutionError(f"{where(node)}: {mq.NONFINITE}")
        return y, scale, zp

    return fn


@kernel("MatMulInteger", since=10)
def _matmul_integer(node, ctx):
    memo = mq.Memo(const_input(node, 1))

    def fn(a, b, azp=None, bzp=None):
        return mq.int_matmul(np, a, mq.a_row_zero_point(a, azp), b, bzp, memo)

    return fn


def matmul_integer_float(node):
    """``fn(a, b, azp=None, bzp=None)``: MatMulInteger's product as float32 and a bound of
    its magnitudes (`exact_int.float_product`), or None where float32 is not exact."""
    memo = mq.Memo(const_input(node, 1))

    def fn(a, b, azp=None, bzp=None):
        if a.dtype not in exact_int.RANGES or b.dtype not in exact_int.RANGES:
            return None
        op = memo.operand(b, bzp, (max(np.ndim(b) - 2, 0),))
        return exact_int.float_product(np.matmul, a, mq.a_row_zero_point(a, azp), op)

    return fn


@kernel("ConvInteger", since=10)
def _conv_integer(node, ctx):
    operands, pair = _conv_integer_parts(node)

    def fn(x, w, xzp=None, wzp=None):
        return exact_int.product(pair, x, None if xzp is None else xzp.reshape(()),
                                 operands(w, wzp))

    return fn


def conv_integer_float(node):
    """``fn(x, w, xzp=None, wzp=None)``: ConvInteger's result as float32 and a bound of its
    magnitudes (`exact_int.float_product`), or None where float32 is not exact."""
    operands, pair = _conv_integer_parts(node)

    def fn(x, w, xzp=None, wzp=None):
        if x.dtype not in exact_int.RANGES or w.dtype not in exact_int.RANGES:
            return None
        return exact_int.float_product(pair, x, None if xzp is None else xzp.reshape(()),
                                       operands(w, wzp))

    return fn


def _conv_integer_parts(node):
    """``(operands(w, wzp), pair(x, w))``: W prepared (`ms_quant.Memo`), and the float Conv
    `exact_int.product` calls."""
    conv = conv_kernel(node, const_input(node, 1))
    memo = mq.Memo(const_input(node, 1))

    def operands(w, wzp):
        return memo.operand(w, mq.channel_zero_point(w, wzp), tuple(range(1, w.ndim)))

    def pair(x, w):  # `exact_int.product` may hand over the two halves of x stacked
        if x.ndim == w.ndim:
            return conv(x, w)
        y = conv(x.reshape(-1, *x.shape[2:]), w)
        return y.reshape(2, -1, *y.shape[1:])

    return operands, pair

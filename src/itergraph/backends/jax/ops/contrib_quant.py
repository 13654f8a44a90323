"""JAX lowerings of ONNX Runtime's ``com.microsoft`` quantization and fused operators: the
same node-level functions as the NumPy kernels (`semantics.ms_quant_ops`,
`semantics.ms_fused`) over ``jax.numpy``, so integer results are the NumPy backend's
bit for bit. ``QLinearAveragePool`` pools with ``AveragePool``'s lowering, ``FusedGemm`` and
``FusedConv`` run ``Gemm`` / ``Conv``'s. ``DynamicQuantizeMatMul`` and
``MatMulIntegerToFloat`` take their integer product from `quant_int.int_product`.
``DynamicQuantizeLSTM``: `quant_lstm`.
"""

from __future__ import annotations

from ....semantics import ms_fused as mf
from ....semantics import ms_quant_ops as ops
from ....semantics.ms_quant import DOMAIN
from ..table import lowering
from ._util import precision
from .conv import lower_avg_pool, lower_conv
from .nn import _gemm
from .quant_int import int_product

_INT_PRODUCT = ("DynamicQuantizeMatMul", "MatMulIntegerToFloat")


def _rule(fn):
    def rule(cx, *inputs):
        return fn(cx.node, cx.xp, *inputs)

    return rule


def _int_rule(fn):
    """A rule whose integer product is `quant_int.int_product` (an int8 product for a large
    constant B, else float32 where exact) rather than `ms_quant.int_matmul`'s float64 one."""
    def rule(cx, *inputs):
        return fn(cx.node, cx.xp, *inputs,
                  product=lambda a, azp, b, bzp: int_product(cx, a, azp, b, bzp))

    return rule


for _op, _fn in ops.OPS.items():
    lowering(_op, domain=DOMAIN)(_rule(_fn) if _op not in _INT_PRODUCT else _int_rule(_fn))


@lowering("QLinearAveragePool", domain=DOMAIN)
def _qlinear_average_pool(cx, x, sx, zx, sy, zy=None):
    return ops.qlinear_average_pool_io(cx.node, cx.xp, x, sx, zx, sy, zy,
                                       lambda v: lower_avg_pool(cx, v))


@lowering("FusedMatMul", domain=DOMAIN)
def _fused_matmul(cx, a, b):
    xp = cx.xp
    return mf.fused_matmul(cx.node, xp, a, b,
                           lambda p, q: xp.matmul(p, q, precision=precision()))


@lowering("FusedGemm", domain=DOMAIN)
def _fused_gemm(cx, a, b, c=None):
    act = mf.activation(cx.node, cx.xp, conv=False)
    y = _gemm(cx, a, b, c)
    return y if act is None else act(y).astype(y.dtype)


@lowering("FusedConv", domain=DOMAIN)
def _fused_conv(cx, x, w, b=None, z=None):
    act = mf.activation(cx.node, cx.xp, conv=True)
    y = lower_conv(cx, x, w, b)
    if z is not None:
        y = y + z
    return y if act is None else act(y).astype(y.dtype)

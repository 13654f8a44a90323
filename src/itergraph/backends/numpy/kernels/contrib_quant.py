"""NumPy kernels of ONNX Runtime's quantization operators (domain ``com.microsoft``):
``QuantizeLinear``, ``DequantizeLinear``, ``DynamicQuantizeMatMul``, ``MatMulIntegerToFloat``,
``QLinearAdd``, ``QLinearMul``, ``QLinearSigmoid``, ``QLinearLeakyRelu``, ``QLinearConcat``,
``QLinearGlobalAveragePool``, ``QGemm`` (node by node in `semantics.ms_quant_ops`, the
arithmetic and each formula in `semantics.ms_quant`) and ``QLinearAveragePool``
(dequantize, ``AveragePool``'s kernel in float32, quantize).
"""

from __future__ import annotations

import numpy as np

from ....ir.attributes import const_input
from ....semantics import ms_quant as mq
from ....semantics import ms_quant_ops as ops
from . import kernel
from .pool import _average_pool

DOMAIN = mq.DOMAIN


_MEMO = {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"}


def _factory(op, fn):
    def factory(node, ctx):
        if op in _MEMO:
            memo = mq.Memo(const_input(node, 1))

            def run(*inputs):
                return fn(node, np, *inputs, memo=memo)
        else:
            def run(*inputs):
                return fn(node, np, *inputs)

        return run

    return factory


for _op, _fn in ops.OPS.items():
    kernel(_op, domain=DOMAIN)(_factory(_op, _fn))


@kernel("QLinearAveragePool", domain=DOMAIN)
def _qlinear_average_pool(node, ctx):
    pool = _average_pool(node, ctx)

    def fn(x, sx, zx, sy, zy=None):
        return ops.qlinear_average_pool_io(node, np, x, sx, zx, sy, zy, pool)

    return fn

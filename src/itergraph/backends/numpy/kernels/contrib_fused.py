"""NumPy kernels of ONNX Runtime's fused float operators (domain ``com.microsoft``):
``FusedMatMul``, ``FusedGemm`` and ``FusedConv`` (semantics in `semantics.ms_fused`);
``FusedGemm`` and ``FusedConv`` run ``Gemm`` / ``Conv``'s own kernels, then the activation.
"""

from __future__ import annotations

import numpy as np

from ....ir.attributes import const_input
from ....semantics import ms_fused as mf
from . import kernel
from .conv_nd import conv_kernel
from .nn import _gemm

DOMAIN = mf.DOMAIN


@kernel("FusedMatMul", domain=DOMAIN)
def _fused_matmul(node, ctx):
    def fn(a, b):
        return mf.fused_matmul(node, np, a, b)

    return fn


@kernel("FusedGemm", domain=DOMAIN)
def _fused_gemm(node, ctx):
    gemm = _gemm(node, ctx)
    act = mf.activation(node, np, conv=False)

    def fn(a, b, c=None):
        y = gemm(a, b, c)
        return y if act is None else act(y).astype(y.dtype, copy=False)

    return fn


@kernel("FusedConv", domain=DOMAIN)
def _fused_conv(node, ctx):
    conv = conv_kernel(node, const_input(node, 1))
    act = mf.activation(node, np, conv=True)

    def fn(x, w, b=None, z=None):
        y = conv(x, w, b)
        if z is not None:
            y = y + z
        return y if act is None else act(y).astype(y.dtype, copy=False)

    return fn

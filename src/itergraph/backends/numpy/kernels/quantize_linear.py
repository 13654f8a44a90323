"""``QuantizeLinear`` and ``DequantizeLinear`` (`backends.common.linear_quant`); element
types that module leaves to the reference run on the domain's default kernel."""

from __future__ import annotations

import numpy as np

from ....ir.attributes import attr
from ...common import linear_quant as lq
from . import default_factory, kernel


def _kernel(node, ctx, quantizing: bool):
    axis, block = int(attr(node, "axis", 1)), int(attr(node, "block_size", 0))
    fallback = []

    def fn(*args):
        x, scale = args[:2]
        zero_point = args[2] if len(args) > 2 else None
        if quantizing:
            target = lq.quantized_type(node, zero_point)
            if lq.native(target, scale.dtype, True) and x.dtype.kind == "f":
                return lq.quantize(node, np, x, scale, zero_point, axis, block, target)
        elif lq.native(x.dtype, scale.dtype, False):
            return lq.dequantize(node, np, x, scale, zero_point, axis, block, scale.dtype)
        if not fallback:
            fallback.append(default_factory("")(node, ctx))
        return fallback[0](*args)

    return fn


@kernel("QuantizeLinear", since=10)
def _quantize(node, ctx):
    return _kernel(node, ctx, True)


@kernel("DequantizeLinear", since=10)
def _dequantize(node, ctx):
    return _kernel(node, ctx, False)

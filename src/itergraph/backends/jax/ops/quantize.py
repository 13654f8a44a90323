"""Quantisation rules: ONNX QuantizeLinear and DequantizeLinear to and from 8-, 16- and 32-bit
integers (math in `backends.common.linear_quant`), and the ``org.openvinotoolkit`` domain's
FakeQuantize (math in `backends.common.fake_quantize`)."""

from __future__ import annotations

from ...common import linear_quant as lq
from ...common.fake_quantize import DOMAIN, fake_quantize
from ..table import lowering
from ._util import attr


@lowering("FakeQuantize", domain=DOMAIN)
def _fake_quantize(cx, x, il, ih, ol, oh):
    return fake_quantize(cx.xp, x, il, ih, ol, oh, int(attr(cx.node, "levels")))


def _axis_block(cx) -> tuple[int, int]:
    return int(attr(cx.node, "axis", 1)), int(attr(cx.node, "block_size", 0))


@lowering("QuantizeLinear", since=10, fold=True)
def _quantize_linear(cx, x, scale, zero_point=None):
    target = lq.quantized_type(cx.node, zero_point)
    if not (lq.native(target, scale.dtype, True) and x.dtype.kind == "f"):
        cx.fail(f"QuantizeLinear of {x.dtype} to {target} is not lowered")
    return lq.quantize(cx.node, cx.xp, x, scale, zero_point, *_axis_block(cx), target)


@lowering("DequantizeLinear", since=10, fold=True)
def _dequantize_linear(cx, x, scale, zero_point=None):
    if not lq.native(x.dtype, scale.dtype, False):
        cx.fail(f"DequantizeLinear of {x.dtype} is not lowered")
    return lq.dequantize(cx.node, cx.xp, x, scale, zero_point, *_axis_block(cx), scale.dtype)

"""The form in which the OpenVINO writer writes a reduction that drops its reduced axes.

OpenVINO 2026.4's CPU plugin computes ``Reduce*(x, axes, keep_dims=false)`` followed by an
elementwise op with a per-column constant wrongly when `x` is 3-D and the last axis is
reduced: it fuses the elementwise op into the reduction and broadcasts the constant along
the wrong axis (``c - x.sum(-1)`` with ``c`` of shape ``[1, C]`` and ``x`` of shape
``[N, C, K]`` subtracts ``c[n]`` from row ``n``: skl2onnx's ``GaussianNB``). Its own ONNX
frontend makes the same graph. A reduction that keeps its axes, then ``Squeeze`` of them, is
computed right, so `reduce_layer` writes every ``keep_dims=false`` reduction so.
"""

from __future__ import annotations

from ...ir.types import DataType
from .net_writer import NetWriter, Out


def reduce_layer(w: NetWriter, ov_type: str, version: str, x: Out, axes: Out, keep: bool,
                 dtype: DataType | None) -> Out:
    """OpenVINO's `ov_type` (``ReduceSum``, ``ReduceMax``, ...) of `x` over `axes` (a port
    of axis numbers, negative ones from the end), the reduced axes kept where `keep`."""
    y = w.one(ov_type, version, [x, axes], {"keep_dims": True}, dtype=dtype)
    if keep:
        return y
    return w.one("Squeeze", "opset1", [y, axes], dtype=dtype)

"""Translator of OpenVINO's ``BinaryConvolution-1`` (mode ``xnor-popcount``) into ONNX ops.

Data and filters hold 0/1 values standing for -1/+1; the filters are a ``u1`` constant. Each
output is ``2 * P - B`` over its window: ``B`` window elements (channels x kernel), ``P`` of
them where the input equals the filter bit (XNOR, then popcount). Padding reads
``pad_value`` (compared with the bit as any input value is, so a value that is neither 0 nor
1 matches no bit). Strides, dilations and ``auto_pad`` are those of ``Convolution``.

As ONNX: the data padded with ``pad_value``; with ``a = [x == 1]`` and ``z = [x == 0]``, an
element contributes ``2 [x == w] - 1 = 2w (a - z) + (2z - 1)``, so one ``Conv`` of
``[a - z, 2z - 1]`` (channels stacked) with filters ``[2w, 1]`` gives the sum exactly.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import Builder, dtype_of
from ...import_table import importer
from ...netparse import Layer
from .read import Geometry, _check_rank, _weights_shape

BOOL = DataType.BOOL


@importer("BinaryConvolution", since=1)
def _binary_convolution(b: Builder, layer: Layer, x):
    if len(x) != 2:
        raise ModelError(f"{layer.where()}: BinaryConvolution takes 2 inputs, got {len(x)}")
    mode = (layer.attr("mode", required=True) or "").strip().lower()
    if mode != "xnor-popcount":
        raise UnsupportedError(f"{layer.where()}: mode '{mode}' (only xnor-popcount exists)")
    pad_value = layer.float_attr("pad_value", 0.0)
    ws = _weights_shape(b, layer, x[1])
    n = len(ws) - 2
    _check_rank(layer, x[0], n)
    w = b.need_const(x[1], layer, "the filters").astype(np.float32)
    dt = dtype_of(x[0])
    if dt is None or not dt.is_floating:
        raise ModelError(f"{layer.where()}: BinaryConvolution takes floating-point data, "
                         f"got {dt}")
    g = Geometry(layer, ws[2:], x[0])
    if g.mode != "NOTSET":
        raise UnsupportedError(f"{layer.where()}: auto_pad needs a static spatial input shape")
    np_dt = dt.numpy
    data = x[0]
    if any(g.begin) or any(g.end):
        pads = b.i64([0, 0, *g.begin, 0, 0, *g.end])
        data = b.op("Pad", [data, pads, b.const(np.asarray(pad_value, np_dt))],
                    {"mode": "constant"}, dtype=dt)

    def bit(v):
        return b.cast(b.op("Equal", [data, b.const(np.asarray(v, np_dt))], dtype=BOOL), dt)

    ones, zeros = bit(1), bit(0)
    signed = b.op("Sub", [ones, zeros], dtype=dt)
    bias = b.op("Sub", [b.op("Add", [zeros, zeros], dtype=dt), b.const(np.asarray(1, np_dt))],
                dtype=dt)
    stacked = b.op("Concat", [signed, bias], {"axis": 1}, dtype=dt)
    filters = np.concatenate([2 * w, np.ones_like(w)], axis=1).astype(np_dt)
    attrs = {"kernel_shape": list(ws[2:]), "strides": list(g.strides),
             "pads": [0] * (2 * n)}
    if any(d != 1 for d in g.dilations):
        attrs["dilations"] = list(g.dilations)
    return b.op("Conv", [stacked, b.const(filters)], attrs, dtype=dt)

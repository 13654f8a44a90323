"""Translator of OpenVINO ``SliceScatter-15``: `data` with the elements a ``Slice-8`` of the
same ``start``/``stop``/``step``/``axes`` would read replaced by `updates`.

ONNX has no such op; the translation slices a tensor of flat positions (``Range`` over the
element count, shaped like `data`) with ONNX ``Slice`` (whose clamping and negative-step rules
are ``Slice-8``'s) and writes `updates` there with ``ScatterElements`` on the flattened data.
"""

from __future__ import annotations

from .....errors import ModelError
from .....ir.types import DataType
from ...builder import Builder
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64


@importer("SliceScatter", since=15)
def _slice_scatter(b: Builder, layer: Layer, x):
    if len(x) not in (5, 6):
        raise ModelError(f"{layer.where()}: SliceScatter takes 5 or 6 inputs, got {len(x)}")
    data, updates = x[0], x[1]
    dt = out_dtype(layer, x)
    shape = b.op("Shape", [data], dtype=I64)
    count = b.op("Size", [data], dtype=I64)
    flat = b.op("Range", [b.i64(0), count, b.i64(1)], dtype=I64)
    positions = b.op("Reshape", [flat, shape], dtype=I64)
    axes = b.i64_vector(x[5]) if len(x) > 5 and x[5] is not None else None
    picked = b.op("Slice", [positions, b.i64_vector(x[2]), b.i64_vector(x[3]), axes,
                            b.i64_vector(x[4])], dtype=I64)
    out = b.op("ScatterElements", [b.op("Reshape", [data, b.i64([-1])], dtype=dt),
                                   b.op("Reshape", [picked, b.i64([-1])], dtype=I64),
                                   b.op("Reshape", [updates, b.i64([-1])], dtype=dt)],
               {"axis": 0}, dtype=dt)
    return b.op("Reshape", [out, shape], dtype=dt)

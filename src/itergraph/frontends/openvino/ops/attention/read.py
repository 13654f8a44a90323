"""``ScaledDotProductAttention-13`` as ONNX ops (``MatMul``, ``Softmax``, ``Where``), after the
OpenVINO specification (checked against OpenVINO in tests/openvino/opset)::

    w = query @ transpose(key, last two axes) * scale + bias
    y = softmax(w, axis=-1) @ value

``scale`` defaults to ``1 / sqrt(query.shape[-1])``. ``bias`` is ``-inf`` above the diagonal
(column > row, the top-left aligned lower triangle) when ``causal``, else the attention mask:
added when it is a number, ``0`` where true and ``-inf`` where false when boolean, nothing when
absent.
"""

from __future__ import annotations

import numpy as np

from .....ir.types import DataType
from ...builder import Builder, dtype_of, require_rank, shape_of
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64 = DataType.INT64


def _dim(b: Builder, v, axis: int):
    """Dim `axis` of `v` as an int64 scalar (a constant when static)."""
    shape = shape_of(v)
    if shape is not None and isinstance(shape[axis], int):
        return b.i64(shape[axis])
    s = b.op("Shape", [v], dtype=I64)
    return b.op("Gather", [s, b.i64(axis)], {"axis": 0}, dtype=I64)


@importer("ScaledDotProductAttention", since=13)
def _sdpa(b: Builder, layer: Layer, x):
    q, k, v = x[:3]
    mask = x[3] if len(x) > 3 else None
    scale = x[4] if len(x) > 4 else None
    dt = out_dtype(layer, x)
    npdt = to_numpy(dt) if dt is not None else np.float32
    r = require_rank(layer, k, 1)
    perm = list(range(r - 2)) + [r - 1, r - 2]
    w = b.op("MatMul", [q, b.transpose(k, perm)], dtype=dt)
    if scale is None:
        e = shape_of(q)[-1] if shape_of(q) is not None else None
        if isinstance(e, int):
            scale = b.const(np.array(1 / np.sqrt(e), npdt))
        else:
            ef = b.cast(_dim(b, q, -1), dt)
            scale = b.op("Reciprocal", [b.op("Sqrt", [ef], dtype=dt)], dtype=dt)
    w = b.op("Mul", [w, scale], dtype=dt)
    zero, ninf = b.const(np.array(0, npdt)), b.const(np.array(-np.inf, npdt))
    if layer.bool_attr("causal", False):
        one = b.i64(1)
        rows = b.op("Range", [b.i64(0), _dim(b, q, -2), one], dtype=I64)
        cols = b.op("Range", [b.i64(0), _dim(b, k, -2), one], dtype=I64)
        above = b.op("Greater", [cols, b.unsqueeze(rows, [1])], dtype=DataType.BOOL)
        w = b.op("Add", [w, b.op("Where", [above, ninf, zero], dtype=dt)], dtype=dt)
    elif mask is not None:
        if dtype_of(mask) == DataType.BOOL:
            mask = b.op("Where", [mask, zero, ninf], dtype=dt)
        w = b.op("Add", [w, b.cast(mask, dt)], dtype=dt)
    p = b.op("Softmax", [w], {"axis": -1}, dtype=dt)
    return b.op("MatMul", [p, v], dtype=dt)

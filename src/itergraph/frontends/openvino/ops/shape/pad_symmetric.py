"""OpenVINO ``Pad`` with ``pad_mode="symmetric"`` in ONNX ops (ONNX ``Pad`` has ``reflect``,
which leaves out the edge element, but no mirror that repeats it).

Along each padded axis of length ``n`` the output reads the input at the positions
``i = -pads_begin .. n + pads_end - 1`` mirrored about the edges, edge included::

    a = -1 - i  where i < 0,           else i
    j = 2n - 1 - a  where a >= n,      else a

(``[a b c d]`` padded by 2 on both sides is ``[b a a b c d d c]``), one ``Gather`` per axis.
Negative pads crop the same way (the range starts or stops inside the axis). Pads are
constants or computed at run time; the input's rank must be known.
"""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError
from .....ir.graph import Value
from .....ir.types import DataType, TensorType
from ...builder import Builder, rank_of, shape_of
from ...netparse import Layer

I64 = DataType.INT64


def _pad_of(b: Builder, pads: Value, known, axis: int):
    """Pad `axis` of the int64 vector `pads`: a Python int when constant, else a scalar."""
    if known is not None:
        return int(known[axis])
    return b.op("Gather", [pads, b.i64(axis)], {"axis": 0}, dtype=I64)


def _value(b: Builder, v) -> Value:
    return b.i64(v) if isinstance(v, int) else v


def symmetric_pad(b: Builder, layer: Layer, data: Value, lo: Value, hi: Value,
                  dt: DataType | None) -> Value:
    """`data` padded by the int64 vectors `lo`/`hi` in OpenVINO's ``symmetric`` mode."""
    rank = rank_of(data)
    if rank is None:
        raise UnsupportedError(f"{layer.where()}: Pad with pad_mode 'symmetric' needs the rank "
                               "of its input, which is unknown")
    lo_c, hi_c = b.value_of(lo), b.value_of(hi)
    lo_c = None if lo_c is None else np.asarray(lo_c).reshape(-1)
    hi_c = None if hi_c is None else np.asarray(hi_c).reshape(-1)
    dims = list(shape_of(data) or [None] * rank)
    y = data
    for axis in range(rank):
        before, after = _pad_of(b, lo, lo_c, axis), _pad_of(b, hi, hi_c, axis)
        if before == 0 and after == 0:
            continue
        n = b.op("Gather", [b.op("Shape", [y], dtype=I64), b.i64(axis)], {"axis": 0}, dtype=I64)
        start = b.i64(-before) if isinstance(before, int) else \
            b.op("Neg", [before], dtype=I64)
        stop = b.op("Add", [n, _value(b, after)], dtype=I64)
        i = b.op("Range", [start, stop, b.i64(1)], dtype=I64)
        a = b.op("Where", [b.op("Less", [i, b.i64(0)], dtype=DataType.BOOL),
                           b.op("Sub", [b.i64(-1), i], dtype=I64), i], dtype=I64)
        last = b.op("Sub", [b.op("Add", [n, n], dtype=I64), b.i64(1)], dtype=I64)
        j = b.op("Where", [b.op("GreaterOrEqual", [a, n], dtype=DataType.BOOL),
                           b.op("Sub", [last, a], dtype=I64), a], dtype=I64)
        y = b.op("Gather", [y, j], {"axis": axis}, dtype=dt)
        d = dims[axis]
        dims[axis] = d + before + after if all(isinstance(v, int) for v in (d, before, after)) \
            else None
        y.type = TensorType(dt, tuple(dims)) if dt is not None else y.type
    return y

"""ONNX Runtime's ``QLinearSoftmax`` as standard ONNX nodes (`contrib_expand`), computing the
codes its CPU kernel computes (`semantics.ms_qsoftmax`) for rows of fewer than 16 codes:

    k = ReduceMax(x) - x                      # int32, in [0, 255]
    e = Gather(table, k)                      # ORT's float32 exp table, built here
    total = ((e[0] + e[1]) + e[2]) + ...      # float32, in MLAS's order for short rows
    v = e * (1 / total * floor(1 / y_scale)) + y_zero_point
    y = Cast(Clip(Round(v), lo, hi))          # two roundings, as MLAS's scalar tail

Longer rows are summed in 16 lanes and rounded with a fused multiply-add (MLAS's vector
path), which standard ops do not spell exactly: refused, as are computed scales and rows of
a length not known when writing.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ...errors import UnsupportedError, where
from ...ir.attributes import attr
from ...semantics import ms_qsoftmax as qs
from ...semantics import ms_quant as mq

#: rows this long and longer take MLAS's vector path (16 lanes, fused multiply-add)
VECTOR_ROW = 16


def _row(node, shape) -> tuple[int, int]:
    """The softmax axis and the row length, when the rows lie along one axis of static
    length below `VECTOR_ROW`."""
    opset = int(attr(node, "opset", 13))
    axis = int(attr(node, "axis", 1 if opset < 13 else -1))
    r = None if shape is None else len(shape)
    if r is None or not -r <= axis < r:
        raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs the input's rank "
                               f"(axis {axis})")
    axis %= r
    if opset < 13 and axis != r - 1:
        raise UnsupportedError(f"{where(node)}: rows of several axes (opset {opset} < 13, "
                               f"axis {axis} of rank {r}) are not written")
    d = shape[axis]
    if not isinstance(d, int) or d >= VECTOR_ROW:
        raise UnsupportedError(
            f"{where(node)}: written for rows of fewer than {VECTOR_ROW} codes of a length "
            f"known when writing (here {d}): longer rows are rounded with ONNX Runtime's "
            "fused multiply-add, which OpenVINO has no op for")
    return axis, d


def qlinear_softmax(b, node, dt: np.dtype) -> None:
    """Append the nodes to expansion builder `b` (`contrib_expand._Builder`); `dt` is the
    8-bit type of the codes."""
    sx, _, sy, zy = b.needs_const(1, 2, 3, 4)
    axis, d = _row(node, b.shape(0))
    table = qs.exp_scaled(np, -np.arange(256, dtype=np.float64), d, sx)
    at = b.init(np.array([axis], np.int64))
    codes = b.op("Cast", [b.input(0)], to=TensorProto.INT32)
    top = b.op("ReduceMax", [codes, at], keepdims=1)
    e = b.op("Gather", [b.init(table), b.op("Sub", [top, codes])], axis=0)
    total = None
    for j in range(d):
        part = b.op("Slice", [e, b.init(np.array([j], np.int64)),
                              b.init(np.array([j + 1], np.int64)), at])
        total = part if total is None else b.op("Add", [total, part])
    inv = b.op("Div", [b.init(np.float32(1)), total])
    scale = b.op("Mul", [inv, b.init(qs.y_factor(np, sy))])
    v = b.op("Mul", [e, scale])
    if zy is not None:
        v = b.op("Add", [v, b.init(np.asarray(zy, np.float32).reshape(()))])
    lo, hi = mq.qrange(dt)
    clipped = b.op("Clip", [b.op("Round", [v]), b.init(np.float32(lo)), b.init(np.float32(hi))])
    b.op("Cast", [clipped], out=0, to=TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8)

"""Translators of OpenVINO detection ops: ``NonMaxSuppression-1/3/4/5/9`` as ONNX
``NonMaxSuppression`` (checked against OpenVINO in tests/openvino/opset).

OpenVINO semantics kept:
- ``box_encoding`` ``corner``/``center`` is ONNX ``center_point_box`` 0/1; a box is
  suppressed from an IoU equal to ``iou_threshold`` on (ONNX: above it), so a threshold of
  0 (the default) keeps one box per class, even among boxes that do not overlap; a missing
  ``max_output_boxes_per_class`` selects nothing;
- the selected indices are rows ``(batch, class, box)``, one per selected box: the CPU plugin
  returns exactly those rows in every version (the specification of versions 1-4 pads them
  with -1 to the largest possible count; the plugin does not, and is followed here);
- ``sort_result_descending=true`` orders all rows by score, highest first (ties: earlier row
  first), ``false`` keeps ONNX's order (batch, class, then score);
- versions 5 and 9 add ``selected_scores`` rows ``(batch, class, score)`` in the scores' type
  and ``valid_outputs``, the row count as a 1-element tensor; ``output_type`` (``i64``,
  ``i32``) types the indices and the count;
- ``soft_nms_sigma`` (versions 5, 9) other than 0 (Soft-NMS) has no ONNX counterpart and is
  refused.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import Builder, dtype_of, onnx_type
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer

I64, F32 = DataType.INT64, DataType.FLOAT32


def _one(b: Builder, v, dt: DataType, default):
    if v is None:
        return b.const(np.array([default], to_numpy(dt)))
    v = b.cast(v, dt)
    c = b.value_of(v)
    if c is not None:
        return b.const(c.reshape(1))
    return b.op("Reshape", [v, b.i64([1])], dtype=dt)


def _iou(b: Builder, v):
    """ONNX suppresses above the IoU threshold, OpenVINO from it on: the next float below a
    constant threshold (a run-time one is taken as it is). ``None`` for a threshold of 0 or
    less, with which every box but the best of its class is suppressed (ONNX refuses it)."""
    t = _one(b, v, F32, 0.0)
    c = b.value_of(t)
    if c is None:
        return t
    if np.all(c <= 0):
        return None
    return b.const(np.nextafter(c.astype(np.float32), np.float32(-np.inf)))


def _nms(b: Builder, layer: Layer, x, version: int):
    boxes, scores = x[0], x[1]
    arg = lambda i: x[i] if len(x) > i else None  # noqa: E731
    sigma = arg(5)
    if sigma is not None:
        s = b.need_const(sigma, layer, "soft_nms_sigma")
        if np.any(s != 0):
            raise UnsupportedError(f"{layer.where()}: Soft-NMS (soft_nms_sigma={float(s)}) has "
                                   "no ONNX counterpart")
    enc = (layer.attr("box_encoding", "corner") or "corner").strip().lower()
    if enc not in ("corner", "center"):
        raise ModelError(f"{layer.where()}: box_encoding '{enc}' is not corner or center")
    out_type = (layer.attr("output_type", "i64") or "i64").strip().lower()
    if out_type not in ("i64", "i32"):
        raise ModelError(f"{layer.where()}: output_type '{out_type}' is not i64 or i32")
    score_dt = dtype_of(scores) or F32
    max_out, iou = _one(b, arg(2), I64, 0), _iou(b, arg(3))
    if iou is None:
        iou = b.const(np.zeros(1, np.float32))
        max_out = b.op("Min", [max_out, b.i64([1])], dtype=I64)
    sel = b.op("NonMaxSuppression", [b.cast(boxes, F32), b.cast(scores, F32), max_out, iou,
                                     _one(b, arg(4), F32, -np.inf)],
               {"center_point_box": int(enc == "center")}, dtype=I64)
    values = None
    if layer.bool_attr("sort_result_descending", True):
        values = b.op("GatherND", [b.cast(scores, F32), sel], dtype=F32)
        count = b.op("Shape", [values], dtype=I64)
        order = b.op("TopK", [values, count], {"largest": 1, "sorted": 1}, outputs=2)[1]
        sel = b.op("Gather", [sel, order], {"axis": 0}, dtype=I64)
        values = b.op("Gather", [values, order], {"axis": 0}, dtype=F32)
    idx_dt = DataType.INT32 if out_type == "i32" else I64
    outs = [b.cast(sel, idx_dt)]
    if version >= 5:
        if values is None:
            values = b.op("GatherND", [b.cast(scores, F32), sel], dtype=F32)
        head = b.op("Slice", [sel, b.i64([0]), b.i64([2]), b.i64([1])], dtype=I64)
        rows = b.op("Concat", [b.op("Cast", [head], {"to": onnx_type(F32)}, dtype=F32),
                               b.unsqueeze(values, [1])], {"axis": 1}, dtype=F32)
        outs.append(b.cast(rows, score_dt))
        count = b.op("Slice", [b.op("Shape", [sel], dtype=I64), b.i64([0]), b.i64([1])],
                     dtype=I64)
        outs.append(b.cast(count, idx_dt))
    return outs


@importer("NonMaxSuppression", since=1)
def _nms1(b: Builder, layer: Layer, x):
    return _nms(b, layer, x, 1)


@importer("NonMaxSuppression", since=5)
def _nms5(b: Builder, layer: Layer, x):
    return _nms(b, layer, x, 5)

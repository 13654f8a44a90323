"""ONNX detection ops -> OpenVINO layers: ``NonMaxSuppression`` is ``NonMaxSuppression-9``
with ``sort_result_descending=false`` (ONNX's order: batch, class, then score) and
``center_point_box`` as ``box_encoding``; a constant IoU threshold becomes the next float
above it (OpenVINO suppresses from the threshold on, ONNX above it). OpenVINO's CPU plugin
returns one row per selected box, as ONNX does."""

from __future__ import annotations

import numpy as np

from ...ir.graph import Node
from ...ir.types import DataType
from .export_table import exporter
from .net_writer import NetWriter

I64 = DataType.INT64


@exporter("NonMaxSuppression", since=10)
def _nms(w: NetWriter, node: Node, ins):
    ins = list(ins) + [None] * (5 - len(ins))
    defaults = [np.int64(0), np.float32(0), np.float32(-np.inf)]
    extra = [o if o is not None else w.const(d) for o, d in zip(ins[2:5], defaults)]
    iou = node.inputs[3].const if len(node.inputs) > 3 and node.inputs[3] is not None \
        else np.float32(0)
    if iou is not None:  # OpenVINO suppresses from the threshold on, ONNX above it
        up = np.nextafter(np.asarray(iou, np.float32), np.float32(np.inf))
        extra[1] = w.const(np.maximum(up, np.finfo(np.float32).tiny))  # no denormal
    data = {"box_encoding": "center" if node.attrs.get("center_point_box", 0) else "corner",
            "sort_result_descending": False, "output_type": "i64"}
    outs = w.layer("NonMaxSuppression", "opset9", [ins[0], ins[1], *extra], data,
                   [(I64, (None, 3)), (ins[1].dtype, (None, 3)), (I64, (1,))])
    return outs[0]

"""ONNX detection ops -> OpenVINO layers. ``RoiAlign`` (``avg``) is ``ROIAlign-9``: ONNX's
``half_pixel`` is OpenVINO's ``half_pixel_for_nn`` (a box corner ``x * scale - 0.5``, as
OpenVINO's own ONNX frontend writes it) and ``output_half_pixel`` its ``asymmetric``; ONNX's
``max`` mode (the largest of the bin's bilinear-weighted samples) has no OpenVINO form and is
refused. ``MaxRoiPool`` is ``ROIPooling-2`` (``max``).
``NonMaxSuppression`` is ``NonMaxSuppression-9``
with ``sort_result_descending=false`` (ONNX's order: batch, class, then score) and
``center_point_box`` as ``box_encoding``; the IoU threshold becomes the next float above it
(OpenVINO suppresses from the threshold on, ONNX above it), computed when it is given at run
time. OpenVINO's CPU plugin
returns one row per selected box, as ONNX does."""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter

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
    elif ins[3].dtype == DataType.FLOAT32:
        extra[1] = _next_above(w, ins[3])
    data = {"box_encoding": "center" if attr_or_default(node, "center_point_box") else "corner",
            "sort_result_descending": False, "output_type": "i64"}
    outs = w.layer("NonMaxSuppression", "opset9", [ins[0], ins[1], *extra], data,
                   [(I64, (None, 3)), (ins[1].dtype, (None, 3)), (I64, (1,))])
    return outs[0]


def _next_above(w: NetWriter, t):
    """The float32 after `t` (a threshold given at run time), for normal `t`:
    ``t + |t| * 0.75 * 2**-23`` adds between 0.75 and 1.5 units in the last place, which round
    to one; at least the smallest normal float."""
    f = DataType.FLOAT32
    step = w.one("Multiply", "opset1", [w.one("Abs", "opset1", [t], dtype=f),
                                        w.const(np.float32(0.75 * 2.0 ** -23))], dtype=f)
    up = w.one("Add", "opset1", [t, step], dtype=f)
    return w.one("Maximum", "opset1", [up, w.const(np.finfo(np.float32).tiny)], dtype=f)


@exporter("RoiAlign", since=10)
def _roi_align(w: NetWriter, node: Node, ins):
    ctm = attr_or_default(node, "coordinate_transformation_mode")
    ctm = ctm.decode() if isinstance(ctm, bytes) else ctm
    mode = attr_or_default(node, "mode")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode != "avg":
        raise UnsupportedError(f"{where(node)}: RoiAlign mode '{mode}' has no OpenVINO form "
                               "(OpenVINO's ROIAlign max takes the largest bilinear sample, "
                               "ONNX weights the samples first)")
    if ctm not in ("half_pixel", "output_half_pixel"):
        raise UnsupportedError(f"{where(node)}: RoiAlign coordinate_transformation_mode "
                               f"'{ctm}' is not half_pixel or output_half_pixel")
    data = {"pooled_h": int(attr_or_default(node, "output_height")),
            "pooled_w": int(attr_or_default(node, "output_width")),
            "sampling_ratio": int(attr_or_default(node, "sampling_ratio")),
            "spatial_scale": float(attr_or_default(node, "spatial_scale")),
            "mode": mode,
            "aligned_mode": "half_pixel_for_nn" if ctm == "half_pixel" else "asymmetric"}
    return w.one("ROIAlign", "opset9", ins[:3], data, dtype=ins[0].dtype)


@exporter("MaxRoiPool", since=1)
def _max_roi_pool(w: NetWriter, node: Node, ins):
    h, wd = (int(v) for v in node.attrs["pooled_shape"])
    data = {"pooled_h": h, "pooled_w": wd, "output_size": [h, wd],
            "spatial_scale": float(attr_or_default(node, "spatial_scale")), "method": "max"}
    return w.one("ROIPooling", "opset2", ins[:2], data, dtype=ins[0].dtype)

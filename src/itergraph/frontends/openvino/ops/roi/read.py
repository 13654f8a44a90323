"""Translators of OpenVINO region-of-interest ops: ``ROIAlign-3/9`` as ONNX ``RoiAlign-16``,
``ROIPooling-2`` (``max``) as ONNX ``MaxRoiPool`` (checked against OpenVINO in
tests/openvino/opset).

OpenVINO semantics kept:
- ``ROIAlign`` takes the boxes ``[N, 4]`` and their batch indices as ONNX does. With
  ``mode="avg"``, ``aligned_mode="asymmetric"`` (version 3 always) is ONNX's
  ``output_half_pixel`` and ``half_pixel_for_nn`` is ONNX's ``half_pixel`` (a box corner
  ``x * scale - 0.5``; OpenVINO's own ONNX frontend maps it so). OpenVINO's ``half_pixel``
  computes ``(x + 0.5) * scale - 0.5``: ONNX's ``half_pixel`` on boxes moved by half a pixel.
  The CPU plugin's ``max`` (the largest bilinear sample) differs from ONNX's (ONNX Runtime and
  ``onnx.reference`` agree with each other there) and is refused;
- ``ROIPooling`` boxes are rows ``(batch, x1, y1, x2, y2)`` as in ONNX ``MaxRoiPool``;
  ``method="bilinear"`` has no ONNX counterpart and is refused.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from ...builder import Builder
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype


def _roi_align(b: Builder, layer: Layer, x, aligned: str):
    mode = (layer.attr("mode", "avg") or "avg").strip().lower()
    if mode not in ("avg", "max"):
        raise ModelError(f"{layer.where()}: mode '{mode}' is not avg or max")
    if aligned not in ("asymmetric", "half_pixel_for_nn", "half_pixel"):
        raise ModelError(f"{layer.where()}: aligned_mode '{aligned}' is not asymmetric, "
                         "half_pixel_for_nn or half_pixel")
    if mode != "avg":
        raise UnsupportedError(f"{layer.where()}: ROIAlign mode '{mode}' computes otherwise "
                               "than ONNX RoiAlign (OpenVINO takes the largest bilinear sample)")
    ctm = "output_half_pixel" if aligned == "asymmetric" else "half_pixel"
    attrs = {"mode": mode, "output_height": layer.int_attr("pooled_h", required=True),
             "output_width": layer.int_attr("pooled_w", required=True),
             "sampling_ratio": layer.int_attr("sampling_ratio", 0),
             "spatial_scale": layer.float_attr("spatial_scale", 1.0),
             "coordinate_transformation_mode": ctm}
    dt = out_dtype(layer, x)
    boxes = b.cast(x[1], dt)
    if aligned == "half_pixel":
        boxes = b.op("Add", [boxes, b.const(np.array(0.5, dt.numpy))], dtype=dt)
    return b.op("RoiAlign", [x[0], boxes, b.to_i64(x[2])], attrs, dtype=dt)


@importer("ROIAlign", since=3)
def _roi_align3(b: Builder, layer: Layer, x):
    return _roi_align(b, layer, x, "asymmetric")


@importer("ROIAlign", since=9)
def _roi_align9(b: Builder, layer: Layer, x):
    aligned = (layer.attr("aligned_mode", "asymmetric") or "asymmetric").strip().lower()
    return _roi_align(b, layer, x, aligned)


@importer("ROIPooling", since=2)
def _roi_pooling(b: Builder, layer: Layer, x):
    method = (layer.attr("method", "max") or "max").strip().lower()
    if method != "max":
        raise UnsupportedError(f"{layer.where()}: ROIPooling method '{method}' has no ONNX "
                               "counterpart")
    size = [layer.int_attr("pooled_h", required=True), layer.int_attr("pooled_w", required=True)]
    dt = out_dtype(layer, x)
    return b.op("MaxRoiPool", [x[0], b.cast(x[1], dt)],
                {"pooled_shape": size, "spatial_scale": layer.float_attr("spatial_scale", 1.0)},
                dtype=dt)

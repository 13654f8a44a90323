"""Translators of OpenVINO's ROI pooling ops with no ONNX counterpart into ops of the
``org.openvinotoolkit`` domain, inputs and attributes kept (semantics in
`backends.common.roi_pool_ov`): ``PSROIPooling-1`` (``average``, ``bilinear``),
``DeformablePSROIPooling-1`` (``bilinear_deformable``, with or without offsets) and
``ROIAlignRotated-15``."""

from __future__ import annotations

from .....errors import ModelError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...builder import Builder
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype


def _mode(layer: Layer, default: str, allowed) -> str:
    v = (layer.attr("mode", default) or default).strip().lower()
    if v not in allowed:
        raise ModelError(f"{layer.where()}: mode '{v}' is not one of {', '.join(allowed)}")
    return v


def _positive(layer: Layer, key: str, default: int | None = None) -> int:
    v = layer.int_attr(key, default, required=default is None)
    if v <= 0:
        raise ModelError(f"{layer.where()}: {key}={v} is not positive")
    return v


@importer("PSROIPooling", since=1)
def _psroi(b: Builder, layer: Layer, x):
    if len(x) != 2:
        raise ModelError(f"{layer.where()}: PSROIPooling takes 2 inputs, got {len(x)}")
    attrs = {"output_dim": _positive(layer, "output_dim"),
             "group_size": _positive(layer, "group_size", 1),
             "spatial_scale": layer.float_attr("spatial_scale", 1.0),
             "spatial_bins_x": _positive(layer, "spatial_bins_x", 1),
             "spatial_bins_y": _positive(layer, "spatial_bins_y", 1),
             "mode": _mode(layer, "average", ("average", "bilinear"))}
    dt = out_dtype(layer, x)
    return b.op("PSROIPooling", [x[0], b.cast(x[1], dt)], attrs, dtype=dt, domain=DOMAIN)


@importer("DeformablePSROIPooling", since=1)
def _deformable_psroi(b: Builder, layer: Layer, x):
    if len(x) not in (2, 3):
        raise ModelError(f"{layer.where()}: DeformablePSROIPooling takes 2 or 3 inputs, got "
                         f"{len(x)}")
    attrs = {"output_dim": _positive(layer, "output_dim"),
             "spatial_scale": layer.float_attr("spatial_scale", 1.0),
             "group_size": _positive(layer, "group_size", 1),
             "mode": _mode(layer, "bilinear_deformable", ("bilinear_deformable",)),
             "spatial_bins_x": _positive(layer, "spatial_bins_x", 1),
             "spatial_bins_y": _positive(layer, "spatial_bins_y", 1),
             "trans_std": layer.float_attr("trans_std", 1.0),
             "part_size": _positive(layer, "part_size", 1)}
    dt = out_dtype(layer, x)
    return b.op("DeformablePSROIPooling", [x[0]] + [b.cast(v, dt) for v in x[1:]], attrs,
                dtype=dt, domain=DOMAIN)


@importer("ROIAlignRotated", since=15)
def _roi_align_rotated(b: Builder, layer: Layer, x):
    if len(x) != 3:
        raise ModelError(f"{layer.where()}: ROIAlignRotated takes 3 inputs, got {len(x)}")
    ratio = layer.int_attr("sampling_ratio", 0)
    if ratio < 0:
        raise ModelError(f"{layer.where()}: sampling_ratio={ratio} is negative")
    attrs = {"pooled_h": _positive(layer, "pooled_h"), "pooled_w": _positive(layer, "pooled_w"),
             "sampling_ratio": ratio, "spatial_scale": layer.float_attr("spatial_scale", 1.0),
             "clockwise_mode": int(layer.bool_attr("clockwise_mode"))}
    dt = out_dtype(layer, x)
    return b.op("ROIAlignRotated", [x[0], b.cast(x[1], dt), x[2]], attrs, dtype=dt,
                domain=DOMAIN)

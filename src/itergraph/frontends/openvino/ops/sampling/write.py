"""ONNX sampling ops -> OpenVINO layers: ``GridSample`` is ``GridSample-9``, ``Col2Im``
``Col2Im-15``, and ``Resize`` (opsets 11 and later) ``Interpolate-11``: the sizes input when
given (``shape_calculation_mode="sizes"``), else the scales; Resize's ``axes`` (all axes
without it); ``linear`` is ``linear_onnx``, or ``linear`` with ``antialias``; ``cubic`` with
``cube_coeff``; ``coordinate_transformation_mode`` and ``nearest_mode`` by name.
``tf_crop_and_resize`` (the ``roi`` input), ``exclude_outside`` and
``keep_aspect_ratio_policy`` other than ``stretch`` are refused."""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.graph import Node
from ...export_table import exporter
from ...net_writer import NetWriter


def _s(v, default: str) -> str:
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


@exporter("Resize", since=11)
def _resize(w: NetWriter, node: Node, ins):
    a = node.attrs
    ctm = _s(a.get("coordinate_transformation_mode"), "half_pixel")
    if ctm == "tf_crop_and_resize" or a.get("exclude_outside", 0) or \
            _s(a.get("keep_aspect_ratio_policy"), "stretch") != "stretch":
        raise UnsupportedError(f"{where(node)}: Resize with {ctm}, exclude_outside or a kept "
                               "aspect ratio has no OpenVINO counterpart")
    mode = _s(a.get("mode"), "nearest")
    antialias = bool(a.get("antialias", 0))
    ov_mode = {"nearest": "nearest", "linear": "linear" if antialias else "linear_onnx",
               "cubic": "cubic"}[mode]
    x = ins[0]
    sizes = ins[3] if len(ins) > 3 else None
    scales = ins[2] if len(ins) > 2 else None
    if sizes is None and scales is None:
        raise UnsupportedError(f"{where(node)}: Resize without scales or sizes")
    rank = None if x.shape is None else len(x.shape)
    axes = a.get("axes")
    if axes is None:
        if rank is None:
            raise UnsupportedError(f"{where(node)}: the OpenVINO writer needs the input rank")
        axes = list(range(rank))
    axes = [int(v) + rank if int(v) < 0 and rank is not None else int(v) for v in axes]
    data = {"mode": ov_mode, "shape_calculation_mode": "sizes" if sizes is not None else
            "scales", "coordinate_transformation_mode": ctm,
            "nearest_mode": _s(a.get("nearest_mode"), "round_prefer_floor"),
            "antialias": antialias, "cube_coeff": float(a.get("cubic_coeff_a", -0.75)),
            "pads_begin": [0] * (rank or 0), "pads_end": [0] * (rank or 0)}
    target = sizes if sizes is not None else scales
    return w.one("Interpolate", "opset11", [x, target, w.const(np.array(axes, np.int64))],
                 data, dtype=x.dtype)


@exporter("GridSample", since=16)
def _grid_sample(w: NetWriter, node: Node, ins):
    mode = _s(node.attrs.get("mode"), "bilinear" if node.version and node.version < 20
              else "linear")
    ov_mode = {"linear": "bilinear", "bilinear": "bilinear", "cubic": "bicubic",
               "bicubic": "bicubic", "nearest": "nearest"}[mode]
    data = {"align_corners": bool(node.attrs.get("align_corners", 0)), "mode": ov_mode,
            "padding_mode": _s(node.attrs.get("padding_mode"), "zeros")}
    return w.one("GridSample", "opset9", ins[:2], data, dtype=ins[0].dtype)


@exporter("Col2Im", since=18)
def _col2im(w: NetWriter, node: Node, ins):
    n = 2
    pads = list(node.attrs.get("pads") or [0] * (2 * n))
    data = {"strides": list(node.attrs.get("strides") or [1] * n),
            "dilations": list(node.attrs.get("dilations") or [1] * n),
            "pads_begin": pads[:n], "pads_end": pads[n:]}
    return w.one("Col2Im", "opset15", ins[:3], data, dtype=ins[0].dtype)

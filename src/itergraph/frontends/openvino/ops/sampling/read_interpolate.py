"""Translators of OpenVINO's ``Interpolate-1/4/11`` as ONNX ``Resize-19`` (checked against
OpenVINO in tests/openvino/opset).

- ``Interpolate-4`` takes the output sizes and the scales as two inputs and
  ``shape_calculation_mode`` says which one counts; ``Interpolate-11`` takes the one that counts
  as its only input (integer: sizes, floating: scales); both take optional ``axes`` (all axes
  by default), which become Resize's ``axes``;
- ``pads_begin``/``pads_end`` pad the data with zeros first (sizes and scales then refer to
  the padded data);
- ``mode``: ``nearest``, ``linear_onnx`` and ``linear`` (ONNX ``linear``), ``cubic``
  (``cube_coeff`` is ONNX ``cubic_coeff_a``); ``coordinate_transformation_mode`` and
  ``nearest_mode`` have ONNX's names. Refused: ``antialias`` (OpenVINO's filter differs from
  ONNX's), the ``*_pillow`` modes, ``tf_half_pixel_for_nn`` (not in ONNX Resize-19) and
  ``nearest_mode="simple"``;
- ``Interpolate-1`` resizes ``axes`` to ``target_spatial_shape`` with ``align_corners`` or
  ``asymmetric`` coordinates (``nearest`` rounds down); ``area`` is refused.
"""

from __future__ import annotations

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import Builder, dtype_of, require_rank
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64, F32 = DataType.INT64, DataType.FLOAT32
_MODES = {"nearest": "nearest", "linear_onnx": "linear", "linear": "linear", "cubic": "cubic"}
_CTM = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")
_NEAREST = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def _pad(b: Builder, layer: Layer, data, rank: int, dt):
    begin = layer.ints_attr("pads_begin", [0] * rank)
    end = layer.ints_attr("pads_end", [0] * rank)
    begin, end = begin + [0] * (rank - len(begin)), end + [0] * (rank - len(end))
    if not any(begin) and not any(end):
        return data
    return b.op("Pad", [data, b.i64(begin + end)], {"mode": "constant"}, dtype=dt)


def _axes(b: Builder, layer: Layer, v, rank: int) -> list[int]:
    if v is None:
        return list(range(rank))
    axes = [int(a) for a in b.need_const(v, layer, "the axes input").reshape(-1)]
    return [a + rank if a < 0 else a for a in axes]


def _attrs(layer: Layer, axes: list[int]) -> dict:
    mode = (layer.attr("mode", required=True) or "").strip().lower()
    if mode not in _MODES:
        raise UnsupportedError(f"{layer.where()}: Interpolate mode '{mode}' has no ONNX "
                               "counterpart")
    if layer.bool_attr("antialias", False) and mode != "nearest":
        raise UnsupportedError(f"{layer.where()}: OpenVINO's antialiased '{mode}' differs from "
                               "ONNX Resize's")
    ctm = (layer.attr("coordinate_transformation_mode", "half_pixel") or "").strip().lower()
    if ctm not in _CTM:
        raise UnsupportedError(f"{layer.where()}: coordinate_transformation_mode '{ctm}' has "
                               "no ONNX Resize-19 counterpart")
    nearest = (layer.attr("nearest_mode", "round_prefer_floor") or "").strip().lower()
    if nearest not in _NEAREST:
        raise UnsupportedError(f"{layer.where()}: nearest_mode '{nearest}' has no ONNX "
                               "counterpart")
    coeff = layer.float_attr("cube_coeff", -0.75)
    return {"mode": _MODES[mode], "axes": axes,
            "coordinate_transformation_mode": ctm, "nearest_mode": nearest,
            "cubic_coeff_a": coeff}


def _resize(b: Builder, layer: Layer, x, target, by_sizes: bool, axes_v):
    r = require_rank(layer, x[0], 0)
    dt = out_dtype(layer, x)
    axes = _axes(b, layer, axes_v, r)
    attrs = _attrs(layer, axes)
    data = _pad(b, layer, x[0], r, dt)
    if by_sizes:
        return b.op("Resize", [data, None, None, b.i64_vector(target)], attrs, dtype=dt)
    return b.op("Resize", [data, None, b.cast(target, F32)], attrs, dtype=dt)


def _calc_mode(layer: Layer) -> bool:
    m = (layer.attr("shape_calculation_mode", required=True) or "").strip().lower()
    if m not in ("sizes", "scales"):
        raise ModelError(f"{layer.where()}: shape_calculation_mode '{m}'")
    return m == "sizes"


@importer("Interpolate", since=4)
def _interpolate4(b: Builder, layer: Layer, x):
    sizes = _calc_mode(layer)
    return _resize(b, layer, x, x[1] if sizes else x[2], sizes, x[3] if len(x) > 3 else None)


@importer("Interpolate", since=11)
def _interpolate11(b: Builder, layer: Layer, x):
    sizes = _calc_mode(layer)
    dt = dtype_of(x[1])
    if dt is not None and dt.is_integer != sizes:
        raise ModelError(f"{layer.where()}: shape_calculation_mode and the type of input 1 "
                         "disagree")
    return _resize(b, layer, x, x[1], sizes, x[2] if len(x) > 2 else None)


@importer("Interpolate", since=1)
def _interpolate1(b: Builder, layer: Layer, x):
    mode = (layer.attr("mode", required=True) or "").strip().lower()
    if mode not in ("nearest", "linear", "cubic"):
        raise UnsupportedError(f"{layer.where()}: Interpolate-1 mode '{mode}' has no ONNX "
                               "counterpart")
    r = require_rank(layer, x[0], 0)
    dt = out_dtype(layer, x)
    axes = [a + r if a < 0 else a for a in layer.ints_attr("axes")]
    if not axes:
        raise ModelError(f"{layer.where()}: missing attribute 'axes'")
    align = layer.bool_attr("align_corners", False)
    if layer.bool_attr("antialias", False):
        raise UnsupportedError(f"{layer.where()}: OpenVINO's antialiased Interpolate differs "
                               "from ONNX Resize's")
    attrs = {"mode": mode, "axes": axes,
             "coordinate_transformation_mode": "align_corners" if align else "asymmetric",
             "nearest_mode": "floor", "cubic_coeff_a": -0.75}
    data = _pad(b, layer, x[0], r, dt)
    return b.op("Resize", [data, None, None, b.i64_vector(x[1])], attrs, dtype=dt)



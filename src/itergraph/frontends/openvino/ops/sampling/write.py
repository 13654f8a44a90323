"""ONNX sampling ops -> OpenVINO layers: ``GridSample`` is ``GridSample-9``, ``Col2Im``
``Col2Im-15``, and ``Resize`` (opsets 11 and later) ``Interpolate-11``: the sizes input when
given (``shape_calculation_mode="sizes"``), else the scales; Resize's ``axes`` (all axes
without it); ``linear`` is ``linear_onnx``, or ``linear`` with ``antialias``; ``cubic`` with
``cube_coeff``; ``coordinate_transformation_mode`` and ``nearest_mode`` by name.
``tf_crop_and_resize`` (the ``roi`` input), ``exclude_outside`` and
``keep_aspect_ratio_policy`` other than ``stretch`` are refused. By scales, the output is then
cut (``Slice``) to ONNX Runtime's sizes, the ``f32`` product ``dim * scale`` truncated, where
OpenVINO makes one element more (a product a hair under an integer); its coordinates follow
the scale alone, so the elements kept are the same. (``Upsample`` is read as such a
``Resize``: `ir.legacy_forms`.)"""

from __future__ import annotations

import numpy as np

from .....errors import UnsupportedError, where
from .....ir.attributes import attr_or_default
from .....ir.graph import Node
from .....ir.types import DataType
from ...export_table import exporter
from ...net_writer import NetWriter, Out
from ..basic.write import V1, V3, V8, const_value

I64, F32 = DataType.INT64, DataType.FLOAT32


def _s(v, default: str) -> str:
    v = default if v is None else v
    return v.decode() if isinstance(v, bytes) else str(v)


@exporter("Resize", since=11)
def _resize(w: NetWriter, node: Node, ins):
    a = node.attrs
    ctm = _s(a.get("coordinate_transformation_mode"), "half_pixel")
    if ctm == "half_pixel_symmetric":
        raise UnsupportedError(f"{where(node)}: Resize coordinate_transformation_mode "
                               "half_pixel_symmetric (OpenVINO's Interpolate has no such mode)")
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
    _formulas_agree(node, x, axes, ctm, antialias and mode != "nearest")
    target = sizes if sizes is not None else scales
    y = w.one("Interpolate", "opset11", [x, target, w.const(np.array(axes, np.int64))],
              data, dtype=x.dtype)
    return y if sizes is not None else _cut_to_onnx_sizes(w, node, x, y, scales, axes)


def _formulas_agree(node: Node, x: Out, axes: list[int], ctm: str, antialias: bool) -> None:
    """Refuse what OpenVINO's Interpolate computes otherwise than ONNX: an antialiased
    downscale (other taps and weights), and ``align_corners`` by a scale that makes no whole
    length (ONNX divides by the unrounded ``length * scale - 1``, OpenVINO by the output
    length less one). Checked where the scales or sizes are constants; an antialiased
    Resize whose scale is not known when writing is refused too."""
    scales, sizes = const_value(node, 2), const_value(node, 3)
    dims = None if x.shape is None else [x.shape[i] for i in axes]
    factors = None
    if scales is not None and np.size(scales):
        factors = [float(v) for v in np.asarray(scales).reshape(-1)]
        factors = [factors[i] for i in axes] if len(factors) > len(axes) else factors
    elif sizes is not None and dims is not None and all(isinstance(d, int) for d in dims):
        out = [int(v) for v in np.asarray(sizes).reshape(-1)]
        out = [out[i] for i in axes] if len(out) > len(axes) else out
        factors = [o / d if d else 1.0 for o, d in zip(out, dims)]
    if antialias and (factors is None or any(f < 1 for f in factors)):
        raise UnsupportedError(f"{where(node)}: an antialiased Resize that downscales (or by a "
                               "scale known only at run time): OpenVINO's antialiased "
                               "Interpolate weighs other taps than ONNX's")
    if ctm == "align_corners" and scales is not None and np.size(scales) and \
            dims is not None and all(isinstance(d, int) for d in dims):
        if any(abs(d * f - round(d * f)) > 1e-6 for d, f in zip(dims, factors)):
            raise UnsupportedError(f"{where(node)}: Resize align_corners by scales {factors} "
                                   f"of lengths {dims}: ONNX aligns to the unrounded length "
                                   "dim * scale, OpenVINO to the output length")


def _cut_to_onnx_sizes(w: NetWriter, node: Node, x: Out, y: Out, scales: Out,
                       axes: list[int]) -> Out:
    """`y` sliced along `axes` to ``floor(f32(dim) * scale)`` (see the module docstring)."""
    n, c = len(axes), const_value(node, 2)
    if c is not None and x.shape is not None and all(isinstance(x.shape[a], int) for a in axes):
        f32 = np.asarray(c, np.float32).reshape(-1)
        sizes = w.i64([int(np.float32(x.shape[a]) * f) for a, f in zip(axes, f32)])
    else:
        shape = w.one("ShapeOf", V3, [x], {"output_type": "i64"}, dtype=I64)
        dims = w.one("Gather", V8, [shape, w.i64(axes), w.i64(0)], {"batch_dims": 0},
                     dtype=I64, shape=(n,))
        f = w.one("Convert", V1, [dims], {"destination_type": "f32"}, dtype=F32, shape=(n,))
        if scales.dtype != F32:
            scales = w.one("Convert", V1, [scales], {"destination_type": "f32"}, dtype=F32,
                           shape=(n,))
        prod = w.one("Multiply", V1, [f, scales], {"auto_broadcast": "numpy"}, dtype=F32,
                     shape=(n,))
        floor = w.one("Floor", V1, [prod], dtype=F32, shape=(n,))
        sizes = w.one("Convert", V1, [floor], {"destination_type": "i64"}, dtype=I64,
                      shape=(n,))
    return w.one("Slice", V8, [y, w.i64([0] * n), sizes, w.i64([1] * n), w.i64(axes)],
                 dtype=x.dtype)


@exporter("GridSample", since=16)
def _grid_sample(w: NetWriter, node: Node, ins):
    mode = _s(node.attrs.get("mode"), "bilinear" if node.version and node.version < 20
              else "linear")
    ov_mode = {"linear": "bilinear", "bilinear": "bilinear", "cubic": "bicubic",
               "bicubic": "bicubic", "nearest": "nearest"}[mode]
    if ins[0].shape is not None and len(ins[0].shape) != 4:
        raise UnsupportedError(f"{where(node)}: GridSample over {len(ins[0].shape) - 2} "
                               "spatial axes (OpenVINO's GridSample takes 4-D input only)")
    data = {"align_corners": bool(attr_or_default(node, "align_corners")), "mode": ov_mode,
            "padding_mode": _s(node.attrs.get("padding_mode"), "zeros")}
    return w.one("GridSample", "opset9", ins[:2], data, dtype=ins[0].dtype)


@exporter("Col2Im", since=18)
def _col2im(w: NetWriter, node: Node, ins):
    n = 2
    sizes = ins[1].shape if len(ins) > 1 and ins[1] is not None else None
    if sizes is not None and len(sizes) == 1 and isinstance(sizes[0], int) and sizes[0] != n:
        raise UnsupportedError(f"{where(node)}: Col2Im over {sizes[0]} spatial axes "
                               "(OpenVINO's Col2Im folds 2-D images only)")
    pads = list(node.attrs.get("pads") or [0] * (2 * n))
    data = {"strides": list(node.attrs.get("strides") or [1] * n),
            "dilations": list(node.attrs.get("dilations") or [1] * n),
            "pads_begin": pads[:n], "pads_end": pads[n:]}
    return w.one("Col2Im", "opset15", ins[:3], data, dtype=ins[0].dtype)

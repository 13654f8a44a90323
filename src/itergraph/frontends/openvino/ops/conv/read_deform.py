"""Translators of OpenVINO's ``DeformableConvolution-1`` and ``-8`` (2D only).

- ``bilinear_interpolation_pad=true`` (opset 8): the input is surrounded by zeros for the
  bilinear sampling, ONNX ``DeformConv`` (opset 19) exactly: inputs ``X, W, offset, , mask``,
  ``offset_group`` = ``deformable_group``;
- ``false`` (opset 8's default, and opset 1, which has no such attribute): a sample outside the
  input is 0 and one inside clamps its upper neighbours to the last row/column, which ONNX has
  no op for: ``DeformableConv2D`` of the ``org.openvinotoolkit`` domain, the op OpenVINO's own
  ONNX frontend reads as ``DeformableConvolution-8`` with that default (inputs ``X, offsets,
  W[, mask]``, attributes ``strides``, ``dilations``, ``pads``, ``group``,
  ``deformable_groups``).

Both lay offsets out as ``(dy, dx)`` pairs per deformable group and kernel tap (semantics in
`backends.common.deform_conv`). ``auto_pad`` is resolved where the spatial input shape is known;
with unknown spatial dims ``same_upper``/``same_lower`` stay as ``auto_pad`` of
``DeformableConv2D`` and are refused for ``DeformConv``, which has no such attribute.
"""

from __future__ import annotations

from .....errors import ModelError, UnsupportedError
from .....ir.traits import OPENVINO_DOMAIN as DOMAIN
from ...builder import Builder, shape_of
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype
from .read import Geometry


def _positive(layer: Layer, key: str) -> int:
    v = layer.int_attr(key, 1)
    if v <= 0:
        raise ModelError(f"{layer.where()}: {key}={v} is not positive")
    return v


def _deformable(b: Builder, layer: Layer, x, with_mask: bool):
    counts = (3, 4) if with_mask else (3,)
    if len(x) not in counts:
        raise ModelError(f"{layer.where()}: DeformableConvolution takes "
                         f"{' or '.join(map(str, counts))} inputs, got {len(x)}")
    ws = shape_of(x[2]) or (layer.inputs[2].shape if len(layer.inputs) > 2 else None)
    if ws is None or len(ws) != 4 or any(not isinstance(d, int) for d in ws[2:]):
        raise UnsupportedError(f"{layer.where()}: DeformableConvolution needs 4D filters with "
                               "a static window")
    xs = shape_of(x[0])
    if xs is not None and len(xs) != 4:
        raise UnsupportedError(f"{layer.where()}: only 2D deformable convolutions are "
                               f"supported, the data has rank {len(xs)}")
    g = Geometry(layer, list(ws[2:]), x[0])
    group, dgroup = _positive(layer, "group"), _positive(layer, "deformable_group")
    pad = with_mask and layer.bool_attr("bilinear_interpolation_pad")
    dt = out_dtype(layer, x)
    ins = [x[0], b.cast(x[1], dt), b.cast(x[2], dt)] + [b.cast(v, dt) for v in x[3:]]
    attrs = {"strides": list(g.strides), "dilations": list(g.dilations)}
    if g.mode == "NOTSET":
        attrs["pads"] = list(g.begin) + list(g.end)
    if pad:
        if g.mode != "NOTSET":
            raise UnsupportedError(f"{layer.where()}: auto_pad with an unknown spatial input "
                                   "shape (ONNX DeformConv needs explicit pads)")
        attrs.update(kernel_shape=list(ws[2:]), group=group, offset_group=dgroup)
        onnx_ins = [ins[0], ins[2], ins[1]]
        if len(ins) == 4:
            onnx_ins += [None, ins[3]]
        return b.op("DeformConv", onnx_ins, attrs, dtype=dt)
    if g.mode != "NOTSET":
        attrs["auto_pad"] = g.mode
    attrs.update(group=group, deformable_groups=dgroup)
    return b.op("DeformableConv2D", ins, attrs, dtype=dt, domain=DOMAIN)


@importer("DeformableConvolution", since=1)
def _deformable_v1(b: Builder, layer: Layer, x):
    return _deformable(b, layer, x, with_mask=False)


@importer("DeformableConvolution", since=8)
def _deformable_v8(b: Builder, layer: Layer, x):
    return _deformable(b, layer, x, with_mask=True)

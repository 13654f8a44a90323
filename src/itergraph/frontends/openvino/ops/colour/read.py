"""Translators of OpenVINO's YUV colour conversions ``NV12toRGB-8``, ``NV12toBGR-8``,
``I420toRGB-8`` and ``I420toBGR-8`` into ONNX arithmetic.

Images are NHWC with one channel per plane. NV12 is a luma plane ``Y [N, H, W, 1]`` and an
interleaved chroma plane ``UV [N, H/2, W/2, 2]``; I420 has separate ``U`` and ``V`` planes
``[N, H/2, W/2, 1]``. The single-input forms stack the planes in one tensor
``[N, 3H/2, W, 1]``: the luma's ``H*W`` values, then the chroma's (``UV`` interleaved for NV12,
all of ``U`` then all of ``V`` for I420). Each 2x2 block of luma shares one chroma sample.

Per pixel (BT.601, video range), with ``c = Y - 16``, ``d = U - 128``, ``e = V - 128``:
``R = 1.164c + 1.596e``, ``G = 1.164c - 0.391d - 0.813e``, ``B = 1.164c + 2.018d``, each
clipped to [0, 255]; integer outputs round half away from zero. The output is
``[N, H, W, 3]`` (RGB, or BGR reversed) of the input's element type.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError
from .....ir.types import DataType
from ...builder import Builder, dtype_of
from ...import_table import importer
from ...netparse import Layer

I64, F32 = DataType.INT64, DataType.FLOAT32


def _dim(b: Builder, shape, i: int):
    return b.op("Slice", [shape, b.i64([i]), b.i64([i + 1])], dtype=I64)


def _reshape(b: Builder, v, parts):
    return b.op("Reshape", [v, b.op("Concat", parts, {"axis": 0}, dtype=I64)], dtype=dtype_of(v))


def _upsample(b: Builder, c, k: int, width):
    """Chroma ``[N, h, w, k]`` -> ``[N, 2h, 2w, k]``, each sample repeated over a 2x2 block;
    `width` is ``2w`` as a 1-element int64 tensor."""
    dt = dtype_of(c)
    c = b.op("Unsqueeze", [c, b.i64([2, 4])], dtype=dt)  # [N, h, 1, w, 1, k]
    c = b.op("Concat", [c, c], {"axis": 4}, dtype=dt)
    c = b.op("Concat", [c, c], {"axis": 2}, dtype=dt)
    return _reshape(b, c, [b.i64([0, -1]), width, b.i64([k])])


def _planes(b: Builder, layer: Layer, x, i420: bool):
    """(Y, [chroma planes], width) of either input form; chroma planes at half resolution."""
    want = (1, 3) if i420 else (1, 2)
    if len(x) not in want:
        raise ModelError(f"{layer.where()}: {layer.type} takes {' or '.join(map(str, want))} "
                         f"inputs, got {len(x)}")
    shape = b.op("Shape", [x[0]], dtype=I64)
    width = _dim(b, shape, 2)
    if len(x) > 1:
        return x[0], list(x[1:]), width
    # one plane [N, 3H/2, W, 1]: H*W luma values, then the chroma
    dt = dtype_of(x[0])
    height = b.op("Div", [b.op("Mul", [_dim(b, shape, 1), b.i64([2])], dtype=I64), b.i64([3])],
                  dtype=I64)
    luma = b.op("Mul", [height, width], dtype=I64)
    flat = b.op("Reshape", [x[0], b.i64([0, -1])], dtype=dt)
    y = b.op("Slice", [flat, b.i64([0]), luma, b.i64([1])], dtype=dt)
    y = _reshape(b, y, [b.i64([0]), height, width, b.i64([1])])
    half_w = b.op("Div", [width, b.i64([2])], dtype=I64)
    if not i420:
        uv = b.op("Slice", [flat, luma, b.i64([np.iinfo(np.int64).max]), b.i64([1])], dtype=dt)
        return y, [_reshape(b, uv, [b.i64([0, -1]), half_w, b.i64([2])])], width
    quarter = b.op("Div", [luma, b.i64([4])], dtype=I64)
    u_end = b.op("Add", [luma, quarter], dtype=I64)
    v_end = b.op("Add", [u_end, quarter], dtype=I64)
    planes = []
    for start, end in ((luma, u_end), (u_end, v_end)):
        p = b.op("Slice", [flat, start, end, b.i64([1])], dtype=dt)
        planes.append(_reshape(b, p, [b.i64([0, -1]), half_w, b.i64([1])]))
    return y, planes, width


def _convert(b: Builder, layer: Layer, x, i420: bool, bgr: bool):
    y, chroma, width = _planes(b, layer, x, i420)
    dt = dtype_of(x[0])
    if dt is None:
        raise ModelError(f"{layer.where()}: the element type of input 0 is unknown")
    k = 2 if len(chroma) == 1 else 1
    ups = [_upsample(b, b.cast(c, F32), k, width) for c in chroma]
    if k == 2:
        ups = [b.op("Slice", [ups[0], b.i64([i]), b.i64([i + 1]), b.i64([3])], dtype=F32)
               for i in (0, 1)]

    def term(v, coef):
        return b.op("Mul", [v, b.const(np.float32(coef))], dtype=F32)

    def add(p, q, op="Add"):
        return b.op(op, [p, q], dtype=F32)

    c, d, e = (b.op("Sub", [v, b.const(np.float32(o))], dtype=F32)
               for v, o in ((b.cast(y, F32), 16), (ups[0], 128), (ups[1], 128)))
    # the spec's order of float32 operations, so that rounding ties fall the same way
    luma = term(c, 1.164)
    red = add(luma, term(e, 1.596))
    green = add(add(luma, term(d, 0.391), "Sub"), term(e, 0.813), "Sub")
    blue = add(luma, term(d, 2.018))
    chans = [blue, green, red] if bgr else [red, green, blue]
    rgb = b.op("Concat", chans, {"axis": 3}, dtype=F32)
    rgb = b.op("Clip", [rgb, b.const(np.float32(0)), b.const(np.float32(255))], dtype=F32)
    if dt.is_integer:
        rgb = b.op("Floor", [b.op("Add", [rgb, b.const(np.float32(0.5))], dtype=F32)],
                   dtype=F32)
    return b.cast(rgb, dt)


def _register(name: str, i420: bool, bgr: bool):
    @importer(name, since=8)
    def tr(b: Builder, layer: Layer, x):
        return _convert(b, layer, x, i420, bgr)
    tr.__name__ = f"_{name.lower()}"
    return tr


for _name, _i420, _bgr in (("NV12toRGB", False, False), ("NV12toBGR", False, True),
                           ("I420toRGB", True, False), ("I420toBGR", True, True)):
    _register(_name, _i420, _bgr)

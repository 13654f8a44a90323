"""Translators of OpenVINO sampling and search ops into ONNX ops (checked against OpenVINO in
tests/openvino/opset):

- ``GridSample-9``: ONNX ``GridSample-20``; ``bilinear``/``bicubic``/``nearest`` are ONNX's
  ``linear``/``cubic``/``nearest``; ``align_corners`` and ``padding_mode`` by name (bicubic
  with border padding, where the CPU plugin computes otherwise, is refused);
- ``Col2Im-15``: ONNX ``Col2Im`` (``pads_begin`` + ``pads_end`` are its ``pads``); an unbatched
  ``[C * prod(kernel), L]`` input gets a batch axis of 1 and loses it again;
- ``SearchSorted-15``: for each value, the number of sorted entries below it (``right_mode``:
  not above it), counted by ``Less``/``LessOrEqual`` against every entry and ``ReduceSum``;
- ``AdaptiveAvgPool-8``/``AdaptiveMaxPool-8``: output bin ``i`` of ``O`` along an axis of size
  ``I`` covers ``[floor(i * I / O), ceil((i + 1) * I / O))``; each bin is a ``Slice`` reduced by
  ``ReduceMean``/``ReduceMax``; the max's indices are flat within each channel's spatial plane
  (``ArgMax`` of the flattened bin, moved to plane coordinates); static spatial shapes and
  output sizes only.
"""

from __future__ import annotations

import itertools
import math

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import Builder, require_rank, shape_of
from ...elements import element_type_name, from_element_type
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64, BOOL = DataType.INT64, DataType.BOOL


@importer("GridSample", since=9)
def _grid_sample(b: Builder, layer: Layer, x):
    mode = (layer.attr("mode", "bilinear") or "bilinear").strip().lower()
    onnx_mode = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}.get(mode)
    pad = (layer.attr("padding_mode", "zeros") or "zeros").strip().lower()
    if onnx_mode is None or pad not in ("zeros", "border", "reflection"):
        raise ModelError(f"{layer.where()}: mode '{mode}' / padding_mode '{pad}'")
    if (mode, pad) == ("bicubic", "border"):
        raise UnsupportedError(f"{layer.where()}: the CPU plugin's bicubic border padding "
                               "differs from ONNX GridSample's")
    attrs = {"mode": onnx_mode, "padding_mode": pad,
             "align_corners": int(layer.bool_attr("align_corners", False))}
    dt = out_dtype(layer, x)
    return b.op("GridSample", [x[0], b.cast(x[1], dt)], attrs, dtype=dt)


@importer("Col2Im", since=15)
def _col2im(b: Builder, layer: Layer, x):
    r = require_rank(layer, x[0], 0)
    dt = out_dtype(layer, x)
    data = b.unsqueeze(x[0], [0]) if r == 2 else x[0]
    attrs = {"strides": layer.ints_attr("strides", [1, 1]),
             "dilations": layer.ints_attr("dilations", [1, 1]),
             "pads": layer.ints_attr("pads_begin", [0, 0]) + layer.ints_attr("pads_end", [0, 0])}
    y = b.op("Col2Im", [data, b.i64_vector(x[1]), b.i64_vector(x[2])], attrs, dtype=dt)
    return b.squeeze(y, [0]) if r == 2 else y


@importer("SearchSorted", since=15)
def _search_sorted(b: Builder, layer: Layer, x):
    seq, values = x[0], x[1]
    cmp = "LessOrEqual" if layer.bool_attr("right_mode", False) else "Less"
    below = b.op(cmp, [b.unsqueeze(seq, [-2]), b.unsqueeze(values, [-1])], dtype=BOOL)
    count = b.op("ReduceSum", [b.op("Cast", [below], {"to": I64.onnx}, dtype=I64),
                               b.i64([-1])], {"keepdims": 0}, dtype=I64)
    return b.cast(count, out_dtype(layer, x) or I64)


def _bins(size: int, out: int) -> list[tuple[int, int]]:
    return [(math.floor(i * size / out), math.ceil((i + 1) * size / out)) for i in range(out)]


def _adaptive(b: Builder, layer: Layer, x, reduce: str):
    shape = shape_of(x[0]) or (layer.inputs[0].shape if layer.inputs else None)
    outs = [int(v) for v in b.need_const(x[1], layer, "the output shape").reshape(-1)]
    if shape is None or len(shape) != len(outs) + 2 or \
            any(not isinstance(d, int) for d in shape[2:]):
        raise UnsupportedError(f"{layer.where()}: adaptive pooling needs static spatial dims")
    sizes = list(shape[2:])
    n = len(sizes)
    dt = out_dtype(layer, x)
    axes = list(range(2, n + 2))
    cells, index_cells = [], []
    for bins in itertools.product(*(_bins(s, o) for s, o in zip(sizes, outs))):
        part = b.op("Slice", [x[0], b.i64([lo for lo, _ in bins]), b.i64([hi for _, hi in bins]),
                              b.i64(axes)], dtype=dt)
        cells.append(b.op(reduce, [part, b.i64(axes)], {"keepdims": 1}, dtype=dt))
        if reduce == "ReduceMax":
            index_cells.append(_bin_argmax(b, part, bins, sizes, dt))
    values = _assemble(b, cells, outs, dt)
    if reduce != "ReduceMax":
        return values
    idx = _assemble(b, index_cells, outs, I64)
    it = (layer.attr("index_element_type", "i64") or "i64").strip()
    return [values, b.cast(idx, from_element_type(element_type_name(it), layer.where()))]


def _bin_argmax(b: Builder, part, bins, sizes, dt):
    """The flat plane index of the maximum of `part`, the bin `bins` of a plane of `sizes`."""
    widths = [hi - lo for lo, hi in bins]
    flat = b.op("Reshape", [part, b.i64([0, 0, -1])], dtype=dt)
    k = b.op("ArgMax", [flat], {"axis": 2, "keepdims": 1, "select_last_index": 0}, dtype=I64)
    k = b.unsqueeze(k, list(range(3, len(sizes) + 2))) if len(sizes) > 1 else k
    index = None
    rest = k
    for d in range(len(sizes)):
        inner = math.prod(widths[d + 1:])
        coord = b.op("Div", [rest, b.i64(inner)], dtype=I64) if inner > 1 else rest
        rest = b.op("Mod", [rest, b.i64(inner)], dtype=I64) if inner > 1 else rest
        coord = b.op("Add", [coord, b.i64(bins[d][0])], dtype=I64)
        term = b.op("Mul", [coord, b.i64(math.prod(sizes[d + 1:]))], dtype=I64)
        index = term if index is None else b.op("Add", [index, term], dtype=I64)
    return index


def _assemble(b: Builder, cells, outs: list[int], dt):
    """Cells in row-major bin order, each ``[N, C, 1, ...]``, as ``[N, C, *outs]``."""
    def build(cells, axis):
        if axis == len(outs) + 2:
            return cells[0]
        step = len(cells) // outs[axis - 2]
        parts = [build(cells[i * step:(i + 1) * step], axis + 1)
                 for i in range(outs[axis - 2])]
        return parts[0] if len(parts) == 1 else b.op("Concat", parts, {"axis": axis}, dtype=dt)

    return build(cells, 2)


@importer("AdaptiveAvgPool", since=8)
def _adaptive_avg(b: Builder, layer: Layer, x):
    return _adaptive(b, layer, x, "ReduceMean")


@importer("AdaptiveMaxPool", since=8)
def _adaptive_max(b: Builder, layer: Layer, x):
    return _adaptive(b, layer, x, "ReduceMax")

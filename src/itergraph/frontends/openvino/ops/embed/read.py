"""Translators of OpenVINO's embedding bags into ONNX ops (checked against OpenVINO in
tests/openvino/opset): ``EmbeddingBagPackedSum-3``, ``EmbeddingBagOffsetsSum-3``,
``EmbeddingSegmentsSum-3`` and the ``EmbeddingBagPacked-15``/``EmbeddingBagOffsets-15`` with a
``reduction`` (``sum``, ``mean``).

- packed: ``indices [B, L]`` (and ``per_sample_weights [B, L]``) make ``B`` bags of ``L`` rows:
  ``Gather`` of the table, weighted, summed (or averaged) over axis 1;
- segments: row ``k`` of ``indices`` goes to bag ``segment_ids[k]`` of ``num_segments``; the
  weighted rows are added into their bags (``ScatterND`` with ``reduction="add"``);
- offsets: bag ``b`` holds ``indices[offsets[b]:offsets[b + 1]]`` (the last to the end): the
  bag of row ``k`` is the number of offsets not above ``k``, less one; then as segments;
- an empty bag is the table row ``default_index`` when given, else zeros; ``mean`` divides
  each bag by its row count.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError
from .....ir.types import DataType
from ...builder import INT64_MAX, Builder, require_rank
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64, BOOL = DataType.INT64, DataType.BOOL


def _reduction(layer: Layer, weights) -> str:
    r = (layer.attr("reduction", "sum") or "sum").strip().lower()
    if r not in ("sum", "mean"):
        raise ModelError(f"{layer.where()}: reduction '{r}' is not sum or mean")
    if r == "mean" and weights is not None:
        raise ModelError(f"{layer.where()}: per_sample_weights with reduction 'mean'")
    return r


def _weighted(b: Builder, rows, weights, lead: int, rank: int, dt):
    """`rows` (``lead`` leading axes, then the table's ``rank - 1``) times `weights`."""
    if weights is None:
        return rows
    w = b.unsqueeze(b.cast(weights, dt), list(range(lead, lead + rank - 1)))
    return b.op("Mul", [rows, w], dtype=dt)


def _packed(b: Builder, layer: Layer, x, reduction: str):
    dt = out_dtype(layer, x)
    rank = require_rank(layer, x[0], 0)
    weights = x[2] if len(x) > 2 else None
    rows = b.op("Gather", [x[0], b.to_i64(x[1])], {"axis": 0}, dtype=dt)
    rows = _weighted(b, rows, weights, 2, rank, dt)
    op = "ReduceMean" if reduction == "mean" else "ReduceSum"
    return b.op(op, [rows, b.i64([1])], {"keepdims": 0}, dtype=dt)


@importer("EmbeddingBagPackedSum", since=3)
def _packed_sum(b: Builder, layer: Layer, x):
    return _packed(b, layer, x, "sum")


@importer("EmbeddingBagPacked", since=15)
def _packed15(b: Builder, layer: Layer, x):
    return _packed(b, layer, x, _reduction(layer, x[2] if len(x) > 2 else None))


def _segments(b: Builder, layer: Layer, table, indices, segments, count, default, weights,
              reduction: str):
    """Bags of rows by segment id; `count` is the number of bags as a 1-element int64."""
    dt = out_dtype(layer, [table])
    rank = require_rank(layer, table, 0)
    rows = b.op("Gather", [table, b.to_i64(indices)], {"axis": 0}, dtype=dt)
    rows = _weighted(b, rows, weights, 1, rank, dt)
    tail = b.op("Slice", [b.op("Shape", [table], dtype=I64), b.i64([1]), b.i64([INT64_MAX])],
                dtype=I64)
    shape = b.op("Concat", [count, tail], {"axis": 0}, dtype=I64)
    zero = np.zeros((1,), to_numpy(dt))
    canvas = b.op("ConstantOfShape", [shape], {"value": zero}, dtype=dt)
    where = b.unsqueeze(b.to_i64(segments), [1])
    sums = b.op("ScatterND", [canvas, where, rows], {"reduction": "add"}, dtype=dt)
    if default is None and reduction == "sum":
        return sums
    ones = b.op("Cast", [b.op("Greater", [b.op("Add", [b.to_i64(indices), b.i64(1)], dtype=I64),
                                          b.i64(0)], dtype=BOOL)], {"to": dt.onnx}, dtype=dt)
    counts = b.op("ScatterND", [b.op("ConstantOfShape", [count], {"value": zero}, dtype=dt),
                                where, ones], {"reduction": "add"}, dtype=dt)
    counts = b.unsqueeze(counts, list(range(1, rank)))
    if reduction == "mean":
        sums = b.op("Div", [sums, b.op("Max", [counts, b.const(np.ones((), to_numpy(dt)))],
                                       dtype=dt)], dtype=dt)
    if default is None:
        return sums
    row = b.op("Gather", [table, b.op("Reshape", [b.to_i64(default), b.i64([])], dtype=I64)],
               {"axis": 0}, dtype=dt)
    empty = b.op("Equal", [counts, b.const(np.zeros((), to_numpy(dt)))], dtype=BOOL)
    return b.op("Where", [empty, row, sums], dtype=dt)


def _arg(x, i):
    return x[i] if len(x) > i else None


@importer("EmbeddingSegmentsSum", since=3)
def _segments_sum(b: Builder, layer: Layer, x):
    count = b.op("Reshape", [b.to_i64(x[3]), b.i64([1])], dtype=I64)
    return _segments(b, layer, x[0], x[1], x[2], count, _arg(x, 4), _arg(x, 5), "sum")


def _offsets(b: Builder, layer: Layer, x, reduction: str):
    k = b.op("Range", [b.i64(0), b.op("Reshape", [b.op("Shape", [x[1]], dtype=I64), b.i64([])],
                                      dtype=I64), b.i64(1)], dtype=I64)
    starts = b.unsqueeze(b.to_i64(x[2]), [0])  # [1, B]
    began = b.op("LessOrEqual", [starts, b.unsqueeze(k, [1])], dtype=BOOL)  # [K, B]
    seg = b.op("ReduceSum", [b.op("Cast", [began], {"to": I64.onnx}, dtype=I64), b.i64([1])],
               {"keepdims": 0}, dtype=I64)
    seg = b.op("Sub", [seg, b.i64(1)], dtype=I64)
    count = b.op("Shape", [x[2]], dtype=I64)
    return _segments(b, layer, x[0], x[1], seg, count, _arg(x, 3), _arg(x, 4), reduction)


@importer("EmbeddingBagOffsetsSum", since=3)
def _offsets_sum(b: Builder, layer: Layer, x):
    return _offsets(b, layer, x, "sum")


@importer("EmbeddingBagOffsets", since=15)
def _offsets15(b: Builder, layer: Layer, x):
    return _offsets(b, layer, x, _reduction(layer, _arg(x, 4)))


@importer("SegmentMax", since=16)
def _segment_max(b: Builder, layer: Layer, x):
    """Rows of `data` by sorted ``segment_ids`` into ``num_segments`` bags (the largest id + 1
    when absent), each the element-wise maximum of its rows (``ScatterND`` with
    ``reduction="max"`` on a canvas of the type's lowest value); an empty bag is 0
    (``fill_mode="ZERO"``) or the lowest value (``"LOWEST"``)."""
    fill = (layer.attr("fill_mode", required=True) or "").strip().upper()
    if fill not in ("ZERO", "LOWEST"):
        raise ModelError(f"{layer.where()}: fill_mode '{fill}' is not ZERO or LOWEST")
    dt = out_dtype(layer, x)
    npdt = np.dtype(to_numpy(dt))
    lowest = np.finfo(npdt).min if npdt.kind == "f" else np.iinfo(npdt).min
    ids = b.to_i64(x[1])
    if len(x) > 2 and x[2] is not None:
        count = b.op("Reshape", [b.to_i64(x[2]), b.i64([1])], dtype=I64)
    else:
        top = b.op("ReduceMax", [ids, b.i64([0])], {"keepdims": 1}, dtype=I64)
        count = b.op("Add", [top, b.i64([1])], dtype=I64)
    tail = b.op("Slice", [b.op("Shape", [x[0]], dtype=I64), b.i64([1]), b.i64([INT64_MAX])],
                dtype=I64)
    shape = b.op("Concat", [count, tail], {"axis": 0}, dtype=I64)
    canvas = b.op("ConstantOfShape", [shape], {"value": np.array([lowest], npdt)}, dtype=dt)
    out = b.op("ScatterND", [canvas, b.unsqueeze(ids, [1]), x[0]], {"reduction": "max"},
               dtype=dt)
    if fill == "LOWEST":
        return out
    hits = b.op("ScatterND", [b.op("ConstantOfShape", [count], {"value": np.zeros(1, np.int64)},
                                   dtype=I64), b.unsqueeze(ids, [1]),
                              b.op("Add", [b.op("Mul", [ids, b.i64(0)], dtype=I64), b.i64(1)],
                                   dtype=I64)], {"reduction": "add"}, dtype=I64)
    rank = require_rank(layer, x[0], 0)
    empty = b.unsqueeze(b.op("Equal", [hits, b.i64(0)], dtype=BOOL), list(range(1, rank)))
    return b.op("Where", [empty, b.const(np.zeros((), npdt)), out], dtype=dt)

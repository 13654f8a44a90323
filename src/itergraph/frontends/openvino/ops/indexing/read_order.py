"""Translators of OpenVINO ops that select, reorder or scatter elements: TopK, ReverseSequence,
NonZero, ScatterNDUpdate.

OpenVINO semantics kept (checked against OpenVINO itself in tests/openvino):
- ``TopK`` ``sort="value"`` is ONNX ``TopK`` (``sorted=1``); ``sort="index"`` reorders the
  selected elements by ascending index (a second ``TopK`` on the indices, then
  ``GatherElements``); ``sort="none"`` leaves the order unspecified, and OpenVINO's CPU plugin
  returns it sorted by value, so it is written as ``"value"``; ties go to the lower index (ONNX
  ``TopK``'s rule, and OpenVINO's with ``stable=true``); ``index_element_type`` (``i32`` by
  default) is a ``Cast`` of the int64 indices; ``k`` may be any integer type or rank 0/1;
- ``ReverseSequence`` takes any ``batch_axis``/``seq_axis`` (negative counts from the end) and
  lengths of any integer or floating type; ONNX allows the axes 0 and 1 only, so other axes
  are transposed there and back;
- ``ScatterNDUpdate-15`` reductions ``sum``/``prod``/``min``/``max`` are ONNX ``ScatterND``'s
  ``add``/``mul``/``min``/``max``; ``sub`` adds the negated updates.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.graph import Value
from .....ir.types import DataType, TensorType
from ...builder import Builder, dtype_of, require_rank
from ...elements import element_type_name, from_element_type
from ...import_table import importer
from ...netparse import Layer


def _topk(b: Builder, layer: Layer, x, stable_attr: bool):
    mode = (layer.attr("mode", required=True) or "").lower()
    if mode not in ("max", "min"):
        raise ModelError(f"{layer.where()}: TopK mode '{mode}' is not 'max' or 'min'")
    sort = (layer.attr("sort", "none") or "none").lower()
    if sort not in ("value", "index", "none"):
        raise ModelError(f"{layer.where()}: TopK sort '{sort}' is not 'value', 'index' or 'none'")
    axis = layer.int_attr("axis", required=True)
    name = layer.attr("index_element_type", "i32")
    idx_dt = from_element_type(element_type_name(name), layer.where())
    if idx_dt not in (DataType.INT32, DataType.INT64):
        raise UnsupportedError(f"{layer.where()}: index_element_type '{name}' is not i32 or i64")
    if stable_attr and sort == "none" and layer.bool_attr("stable", False):
        raise ModelError(f"{layer.where()}: stable=true needs sort 'value' or 'index'")
    dt = layer.outputs[0].dtype if layer.outputs and layer.outputs[0].dtype else dtype_of(x[0])
    kc = b.value_of(x[1])
    k = b.const(np.asarray(kc, np.int64).reshape(1)) if kc is not None else \
        b.op("Reshape", [b.to_i64(x[1]), b.i64([1])], dtype=DataType.INT64)
    largest = 1 if mode == "max" else 0
    vals, idx = b.op("TopK", [x[0], k], {"axis": axis, "largest": largest, "sorted": 1},
                     outputs=2)
    _set(vals, dt)
    _set(idx, DataType.INT64)
    if sort == "index":
        idx, order = b.op("TopK", [idx, k], {"axis": axis, "largest": 0, "sorted": 1},
                          outputs=2)
        _set(idx, DataType.INT64)
        _set(order, DataType.INT64)
        vals = b.op("GatherElements", [vals, order], {"axis": axis}, dtype=dt)
    return [vals, b.cast(idx, idx_dt)]


def _set(v: Value, dt: DataType | None) -> None:
    if dt is not None:
        v.type = TensorType(dt, None)


@importer("TopK", since=1)
def _topk1(b: Builder, layer: Layer, x):
    return _topk(b, layer, x, stable_attr=False)


@importer("TopK", since=11)
def _topk11(b: Builder, layer: Layer, x):
    return _topk(b, layer, x, stable_attr=True)


@importer("Reverse", since=1)
def _reverse(b: Builder, layer: Layer, x):
    """``Reverse-1``: the data reversed along the axes given as indices (``mode="index"``) or
    as a boolean mask over the axes (``mode="mask"``); a ``Slice`` with step -1 on each."""
    mode = layer.attr("mode", required=True)
    if mode not in ("index", "mask"):
        raise ModelError(f"{layer.where()}: mode must be 'index' or 'mask', got '{mode}'")
    axes = b.value_of(x[1])
    if axes is None:
        raise UnsupportedError(f"{layer.where()}: the axes must be constant")
    axes = np.asarray(axes).reshape(-1)
    if mode == "mask":
        axes = np.flatnonzero(axes.astype(bool))
    else:
        r = require_rank(layer, x[0], 0) if (axes < 0).any() else None
        axes = np.array([int(a) + r if a < 0 else int(a) for a in axes], np.int64)
    if len(set(axes.tolist())) != len(axes):
        raise ModelError(f"{layer.where()}: an axis appears twice in {axes.tolist()}")
    if not len(axes):
        return b.op("Identity", [x[0]], dtype=dtype_of(x[0]))
    n = len(axes)
    big = np.iinfo(np.int64)
    return b.op("Slice", [x[0], b.i64([-1] * n), b.i64([big.min] * n), b.i64(axes),
                          b.i64([-1] * n)], dtype=dtype_of(x[0]))


@importer("ReverseSequence", since=1)
def _reverse_sequence(b: Builder, layer: Layer, x):
    batch = layer.int_attr("batch_axis", 0)
    seq = layer.int_attr("seq_axis", 1)
    if {batch, seq} == {0, 1}:  # ONNX's own axes: no rank needed (it may be unknown)
        return b.op("ReverseSequence", [x[0], b.to_i64(x[1])],
                    {"batch_axis": batch, "time_axis": seq}, dtype=dtype_of(x[0]))
    r = require_rank(layer, x[0], 0)
    batch, seq = (batch + r if batch < 0 else batch), (seq + r if seq < 0 else seq)
    if not (0 <= batch < r and 0 <= seq < r) or batch == seq:
        raise ModelError(f"{layer.where()}: batch_axis {batch} and seq_axis {seq} must be "
                         f"different axes of a rank-{r} input")
    dt = dtype_of(x[0])
    lens = b.to_i64(x[1])
    if {batch, seq} == {0, 1}:
        return b.op("ReverseSequence", [x[0], lens], {"batch_axis": batch, "time_axis": seq},
                    dtype=dt)
    perm = [seq, batch] + [a for a in range(r) if a not in (batch, seq)]
    inv = [perm.index(a) for a in range(r)]
    y = b.op("ReverseSequence", [b.transpose(x[0], perm), lens],
             {"batch_axis": 1, "time_axis": 0}, dtype=dt)
    return b.transpose(y, inv)



@importer("NonZero", since=3)
def _non_zero(b: Builder, layer: Layer, x):
    name = layer.attr("output_type", "i64")
    dt = from_element_type(element_type_name(name), layer.where())
    return b.cast(b.op("NonZero", x[:1], dtype=DataType.INT64), dt)


# OpenVINO ScatterNDUpdate-15 reduction -> ONNX ScatterND's ("sub" adds the negated updates)
_SCATTER_REDUCTION = {"none": "none", "sum": "add", "sub": "add", "prod": "mul", "min": "min",
                      "max": "max"}


@importer("ScatterNDUpdate", since=4)
def _scatter_nd_update(b: Builder, layer: Layer, x):
    dt = dtype_of(x[0])
    reduction = (layer.attr("reduction", "none") or "none").lower() if layer.opset and \
        layer.opset >= 15 else "none"
    if reduction not in _SCATTER_REDUCTION:
        raise UnsupportedError(f"{layer.where()}: ScatterNDUpdate reduction '{reduction}' is "
                               "not supported")
    updates = x[2]
    if reduction == "sub":
        updates = b.op("Neg", [updates], dtype=dtype_of(updates))
    attrs = {} if reduction == "none" else {"reduction": _SCATTER_REDUCTION[reduction]}
    if dt == DataType.BOOL and reduction != "none":
        raise UnsupportedError(f"{layer.where()}: ScatterNDUpdate reduction on booleans is "
                               "not supported")
    return b.op("ScatterND", [x[0], b.to_i64(x[1]), updates], attrs, dtype=dt)

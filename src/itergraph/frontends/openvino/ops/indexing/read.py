"""Translators of OpenVINO ops that index into tensors: GatherND, GatherElements,
ScatterElementsUpdate, OneHot, Roll, Bucketize, Eye, Unique.

OpenVINO semantics kept (checked against OpenVINO itself in tests/openvino):
- ``GatherND-8`` is ONNX ``GatherND``; ``GatherND-5`` flattens the ``batch_dims`` leading
  axes of its output into one;
- ``ScatterElementsUpdate-12`` reductions ``sum``/``prod``/``min``/``max`` are ONNX
  ``ScatterElements``' ``add``/``mul``/``min``/``max``; ``use_init_val=false`` first overwrites
  the targeted elements (with the reduction's identity, or with one of the updates for
  ``min``/``max``); ``mean`` divides the sum by the number of contributions (floating types);
- ``OneHot`` treats a negative index as out of range (a row of ``off_value``), where ONNX would
  count it from the end;
- ``Roll`` shifts (scalar or per axis, of any sign, taken modulo the axis length, repeated
  axes adding up) become ``Slice`` + ``Concat`` along each axis;
- ``Bucketize`` counts the boundaries below each value (``with_right_bound``: strictly below);
- ``Eye`` compares row and column ranges shifted by ``diagonal_index``, then broadcasts to
  ``batch_shape``;
- ``Unique`` is ONNX ``Unique`` (same outputs, same order), its index outputs cast to
  ``index_element_type``/``count_element_type``; ``sorted=false`` (order of first
  occurrence) reorders the sorted result.
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType, TensorType
from ...builder import INT64_MAX, Builder, dtype_of, onnx_type, require_rank
from ...elements import element_type_name, from_element_type, to_numpy
from ...import_table import importer
from ...netparse import Layer
from ..basic.read import out_dtype

I64, BOOL = DataType.INT64, DataType.BOOL


def _gather_nd(b: Builder, layer: Layer, x, flatten: bool):
    bd = layer.int_attr("batch_dims", 0)
    dt = out_dtype(layer, x)
    y = b.op("GatherND", [x[0], b.to_i64(x[1])], {"batch_dims": bd}, dtype=dt)
    if not flatten or bd <= 1:
        return y
    # GatherND-5: the batch axes of the output are one axis, their product
    batch = b.op("ReduceProd", [b.op("Shape", [y], {"end": bd}, dtype=I64), b.i64([0])],
                 {"keepdims": 1}, dtype=I64)
    rest = b.op("Shape", [y], {"start": bd}, dtype=I64)
    new = b.op("Concat", [batch, rest], {"axis": 0}, dtype=I64)
    return b.op("Reshape", [y, new], dtype=dt)


@importer("GatherND", since=5)
def _gather_nd5(b: Builder, layer: Layer, x):
    return _gather_nd(b, layer, x, flatten=True)


@importer("GatherND", since=8)
def _gather_nd8(b: Builder, layer: Layer, x):
    return _gather_nd(b, layer, x, flatten=False)


@importer("GatherElements", since=6)
def _gather_elements(b: Builder, layer: Layer, x):
    return b.op("GatherElements", [x[0], b.to_i64(x[1])], {"axis": layer.int_attr("axis", 0)},
                dtype=out_dtype(layer, x))


def _axis_input(b: Builder, layer: Layer, v) -> int:
    a = b.need_const(v, layer, "the axis input")
    if a.size != 1:
        raise ModelError(f"{layer.where()}: the axis input must hold one value")
    return int(a.reshape(-1)[0])


_REDUCTIONS = {"none": "none", "sum": "add", "prod": "mul", "min": "min", "max": "max",
               "mean": "add"}


@importer("ScatterElementsUpdate", since=3)
def _scatter_elements3(b: Builder, layer: Layer, x):
    axis = _axis_input(b, layer, x[3])
    return b.op("ScatterElements", [x[0], b.to_i64(x[1]), x[2]], {"axis": axis},
                dtype=out_dtype(layer, x))


@importer("ScatterElementsUpdate", since=12)
def _scatter_elements12(b: Builder, layer: Layer, x):
    axis = _axis_input(b, layer, x[3])
    red = (layer.attr("reduction", "none") or "none").lower()
    if red not in _REDUCTIONS:
        raise ModelError(f"{layer.where()}: ScatterElementsUpdate reduction '{red}' is unknown")
    init = layer.bool_attr("use_init_val", True)
    dt = out_dtype(layer, x)
    data, idx, upd = x[0], b.to_i64(x[1]), x[2]
    if red == "none":
        return b.op("ScatterElements", [data, idx, upd], {"axis": axis}, dtype=dt)
    if dt == BOOL:
        raise UnsupportedError(f"{layer.where()}: ScatterElementsUpdate reduction '{red}' on "
                               "booleans is not supported")
    if red == "mean" and not dt.is_floating:
        raise UnsupportedError(f"{layer.where()}: ScatterElementsUpdate reduction 'mean' on "
                               f"{dt.name.lower()} is not supported")
    npdt = to_numpy(dt)

    def fill(value):
        like = b.op("Mul", [upd, b.const(np.array(0, npdt))], dtype=dt)
        if value:
            like = b.op("Add", [like, b.const(np.array(value, npdt))], dtype=dt)
        return like

    if not init:
        seed = upd if red in ("min", "max") else fill(1 if red == "prod" else 0)
        data = b.op("ScatterElements", [data, idx, seed], {"axis": axis}, dtype=dt)
    attrs = {"axis": axis, "reduction": _REDUCTIONS[red]}
    y = b.op("ScatterElements", [data, idx, upd], attrs, dtype=dt)
    if red != "mean":
        return y
    base = b.op("Mul", [x[0], b.const(np.array(0, npdt))], dtype=dt)
    if init:
        base = b.op("Add", [base, b.const(np.array(1, npdt))], dtype=dt)
    count = b.op("ScatterElements", [base, idx, fill(1)], attrs, dtype=dt)
    # elements nobody targets keep their value: count 1 there (0 only without init)
    one = b.const(np.array(1, npdt))
    count = b.op("Max", [count, one], dtype=dt)
    return b.op("Div", [y, count], dtype=dt)


@importer("OneHot", since=1)
def _one_hot(b: Builder, layer: Layer, x):
    axis = layer.int_attr("axis", -1)
    dt = out_dtype(layer, x[2:]) or dtype_of(x[2])
    idx = b.to_i64(x[0])
    depth = b.op("Reshape", [b.to_i64(x[1]), b.i64([1])], dtype=I64)
    neg = b.op("Less", [idx, b.i64(0)], dtype=BOOL)
    idx = b.op("Where", [neg, depth, idx], dtype=I64)  # out of range: all off
    values = b.op("Concat", [b.op("Reshape", [x[3], b.i64([1])], dtype=dt),
                             b.op("Reshape", [x[2], b.i64([1])], dtype=dt)], {"axis": 0},
                  dtype=dt)
    return b.op("OneHot", [idx, depth, values], {"axis": axis}, dtype=dt)


@importer("Roll", since=7)
def _roll(b: Builder, layer: Layer, x):
    r = require_rank(layer, x[0], 0)
    dt = out_dtype(layer, x)
    axes = [int(a) for a in b.need_const(x[2], layer, "the axes input").reshape(-1)]
    axes = [a + r if a < 0 else a for a in axes]
    if any(not 0 <= a < r for a in axes):
        raise ModelError(f"{layer.where()}: Roll axes {axes} out of range for rank {r}")
    # a single shift serves every axis
    shifts = b.op("Expand", [b.op("Reshape", [b.to_i64(x[1]), b.i64([-1])], dtype=I64),
                             b.i64([len(axes)])], dtype=I64)
    y = x[0]
    for k, a in enumerate(axes):
        s = b.op("Slice", [shifts, b.i64([k]), b.i64([k + 1])], dtype=I64)
        dim = b.op("Shape", [y], {"start": a, "end": a + 1}, dtype=I64)
        # an empty axis rolls by nothing (a modulo by its length 0 would be an error)
        length = b.op("Max", [dim, b.i64([1])], dtype=I64)
        cut = b.op("Sub", [dim, b.op("Mod", [s, length], {"fmod": 0}, dtype=I64)], dtype=I64)
        ax = b.i64([a])
        tail = b.op("Slice", [y, cut, b.i64([INT64_MAX]), ax], dtype=dt)
        head = b.op("Slice", [y, b.i64([0]), cut, ax], dtype=dt)
        y = b.op("Concat", [tail, head], {"axis": a}, dtype=dt)
    return y


@importer("Bucketize", since=3)
def _bucketize(b: Builder, layer: Layer, x):
    name = layer.attr("output_type", "i64")
    odt = from_element_type(element_type_name(name), layer.where())
    right = layer.bool_attr("with_right_bound", True)
    v = b.op("Unsqueeze", [x[0], b.i64([-1])], dtype=dtype_of(x[0]))
    bounds = x[1]
    if dtype_of(bounds) != dtype_of(x[0]):
        common = DataType.DOUBLE
        v, bounds = b.cast(v, common), b.cast(bounds, common)
    below = b.op("Less" if right else "LessOrEqual", [bounds, v], dtype=BOOL)
    n = b.op("ReduceSum", [b.cast(below, I64), b.i64([-1])], {"keepdims": 0}, dtype=I64)
    return b.cast(n, odt)


@importer("Eye", since=9)
def _eye(b: Builder, layer: Layer, x):
    name = layer.attr("output_type", required=True)
    odt = from_element_type(element_type_name(name), layer.where())

    def scalar(v):
        return b.op("Reshape", [b.to_i64(v), b.i64([])], dtype=I64)

    rows, cols, diag = scalar(x[0]), scalar(x[1]), scalar(x[2])
    one = b.i64(1)
    r = b.op("Range", [b.i64(0), rows, one], dtype=I64)
    c = b.op("Range", [b.i64(0), cols, one], dtype=I64)
    shifted = b.op("Add", [b.op("Unsqueeze", [r, b.i64([1])], dtype=I64), diag], dtype=I64)
    eye = b.op("Equal", [shifted, c], dtype=BOOL)
    y = b.op("Cast", [eye], {"to": onnx_type(odt)}, dtype=odt)
    if len(x) > 3:
        size = b.op("Shape", [y], dtype=I64)
        target = b.op("Concat", [b.to_i64(x[3]), size], {"axis": 0}, dtype=I64)
        y = b.op("Expand", [y, target], dtype=odt)
    return y


@importer("Unique", since=10)
def _unique(b: Builder, layer: Layer, x):
    attrs = {"sorted": 1}
    axis = _axis_input(b, layer, x[1]) if len(x) > 1 else None
    if axis is not None:
        attrs["axis"] = axis
    y, idx, inv, counts = b.op("Unique", x[:1], attrs, outputs=4, dtype=I64)
    y.type = TensorType(out_dtype(layer, x), None)
    if not layer.bool_attr("sorted", True):
        y, idx, inv, counts = _first_occurrence_order(b, y, idx, inv, counts, axis or 0)
    outs = [y]
    for v, key in ((idx, "index_element_type"), (inv, "index_element_type"),
                   (counts, "count_element_type")):
        dt = from_element_type(element_type_name(layer.attr(key, "i64")), layer.where())
        outs.append(b.cast(v, dt))
    return outs


def _first_occurrence_order(b: Builder, y, idx, inv, counts, axis: int):
    """Sorted ``Unique`` outputs reordered by first occurrence (``sorted=false``)."""
    k = b.op("Shape", [idx], dtype=I64)
    first, order = b.op("TopK", [idx, k], {"largest": 0, "sorted": 1}, outputs=2)
    first.type = TensorType(I64, None)
    order.type = TensorType(I64, None)
    y = b.op("Gather", [y, order], {"axis": axis}, dtype=y.type.dtype)
    counts = b.op("Gather", [counts, order], {"axis": 0}, dtype=I64)
    # rank[order[j]] = j: where each sorted entry went
    n = b.op("Reshape", [k, b.i64([])], dtype=I64)
    positions = b.op("Range", [b.i64(0), n, b.i64(1)], dtype=I64)
    rank = b.op("ScatterElements", [positions, order, positions], {"axis": 0}, dtype=I64)
    inv = b.op("Gather", [rank, inv], {"axis": 0}, dtype=I64)
    return y, first, inv, counts

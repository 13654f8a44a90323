"""ONNX indexing operators into network layers: gathers, scatters, one-hot, non-zero, top-k,
arg-max/min, cumulative sums, reverse-sequence, einsum (importers as in :mod:`.ops`)."""

from __future__ import annotations

import numpy as np

from ..enums import (
    ActivationType,
    CumulativeOperation,
    DataType,
    ElementWiseOperation,
    GatherMode,
    ScatterMode,
    TopKOperation,
    UnaryOperation,
)
from .errors import ErrorCode, fail
from .helpers import (
    bcast,
    cast,
    dim,
    ew,
    ints,
    norm_axis,
    scalar,
    scalar_like,
    shape_of,
)
from .registry import importer

E = ElementWiseOperation
U = UnaryOperation
A = ActivationType
_INTS = (DataType.INT32, DataType.INT64)


# -- indexing ---------------------------------------------------------------------------------

def _wrap_indices(ctx, idx, data, axis: int):
    """ONNX allows negative indices (from the back); TensorRT's gather does not."""
    c = ctx.const(idx)
    n = shape_of(data)[axis]
    if c is not None and n >= 0:
        return ctx.tensor(np.where(np.asarray(c) < 0, np.asarray(c) + n, c).astype(c.dtype))
    idx = ctx.tensor(idx)
    length = cast(ctx, scalar(ctx, dim(ctx, data, axis)), idx.compute_dtype)
    neg = ew(ctx, E.LESS, idx, scalar_like(ctx, 0, idx))
    return ctx.name(ctx.network.add_select(*bcast(ctx, neg, ew(ctx, E.SUM, idx, length), idx))) \
        .get_output(0)


@importer("Gather")
def _gather(ctx, node, ins, attrs):
    data = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs["axis"], len(data.shape))
    idx = _wrap_indices(ctx, ins[1], data, axis)
    return [ctx.name(ctx.network.add_gather(data, idx, axis)).get_output(0)]


@importer("GatherElements")
def _gather_elements(ctx, node, ins, attrs):
    data = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs["axis"], len(data.shape))
    layer = ctx.network.add_gather_v2(data, _wrap_indices(ctx, ins[1], data, axis),
                                      GatherMode.ELEMENT)
    layer.axis = axis
    return [ctx.name(layer).get_output(0)]


@importer("GatherND")
def _gather_nd(ctx, node, ins, attrs):
    layer = ctx.network.add_gather_v2(ctx.tensor(ins[0]), ctx.tensor(ins[1]), GatherMode.ND)
    layer.num_elementwise_dims = attrs["batch_dims"]
    return [ctx.name(layer).get_output(0)]


@importer("ScatterElements", "Scatter")
def _scatter_elements(ctx, node, ins, attrs):
    if attrs.get("reduction", "none") != "none":
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "reduction is not supported")
    data = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs["axis"], len(data.shape))
    layer = ctx.network.add_scatter(data, _wrap_indices(ctx, ins[1], data, axis),
                                    ctx.tensor(ins[2]), ScatterMode.ELEMENT)
    layer.axis = axis
    return [ctx.name(layer).get_output(0)]


@importer("ScatterND")
def _scatter_nd(ctx, node, ins, attrs):
    if attrs["reduction"] != "none":
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "`reduction` is not supported")
    layer = ctx.network.add_scatter(*(ctx.tensor(v) for v in ins), ScatterMode.ND)
    return [ctx.name(layer).get_output(0)]


@importer("OneHot")
def _one_hot(ctx, node, ins, attrs):
    idx, depth, values = ins
    depth = scalar(ctx, cast(ctx, depth, DataType.INT64))
    layer = ctx.network.add_one_hot(cast(ctx, idx, DataType.INT64), ctx.tensor(values), depth,
                                    attrs["axis"])
    return [ctx.name(layer).get_output(0)]


@importer("NonZero")
def _non_zero(ctx, node, ins, attrs):
    return [ctx.name(ctx.network.add_non_zero(ctx.tensor(ins[0]), DataType.INT64)).get_output(0)]


@importer("TopK")
def _topk(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs["axis"], len(x.shape))
    op = TopKOperation.MAX if attrs["largest"] else TopKOperation.MIN
    if ctx.opset < 10:
        layer = ctx.network.add_topk(x, op, attrs["k"], 1 << axis, DataType.INT64)
    else:
        kc = ctx.const(ins[1])
        layer = ctx.network.add_topk(x, op, int(np.asarray(kc).reshape(-1)[0]) if kc is not None
                                     else 1, 1 << axis, DataType.INT64)
        if kc is None:
            layer.set_input(1, scalar(ctx, ins[1]))
    ctx.name(layer)
    return [layer.get_output(0), layer.get_output(1)]


@importer("ArgMax", "ArgMin")
def _argmax(ctx, node, ins, attrs):
    if attrs["select_last_index"]:
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "select_last_index is not supported")
    x = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs["axis"], len(x.shape))
    op = TopKOperation.MAX if node.op_type == "ArgMax" else TopKOperation.MIN
    idx = ctx.name(ctx.network.add_topk(x, op, 1, 1 << axis, DataType.INT64)).get_output(1)
    if not attrs["keepdims"]:
        idx = ctx.name(ctx.network.add_squeeze(idx, ints(ctx, [axis]))).get_output(0)
    return [idx]


@importer("CumSum")
def _cumsum(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    axis = scalar(ctx, ins[1])
    layer = ctx.network.add_cumulative(x, axis, CumulativeOperation.SUM,
                                       bool(attrs["exclusive"]),
                                       bool(attrs["reverse"]))
    return [ctx.name(layer).get_output(0)]


@importer("ReverseSequence")
def _reverse_sequence(ctx, node, ins, attrs):
    layer = ctx.network.add_reverse_sequence(ctx.tensor(ins[0]), ctx.tensor(ins[1]))
    layer.batch_axis = attrs["batch_axis"]
    layer.sequence_axis = attrs["time_axis"]
    return [ctx.name(layer).get_output(0)]


@importer("Einsum")
def _einsum(ctx, node, ins, attrs):
    layer = ctx.network.add_einsum([ctx.tensor(v) for v in ins], attrs["equation"])
    return [ctx.name(layer).get_output(0)]

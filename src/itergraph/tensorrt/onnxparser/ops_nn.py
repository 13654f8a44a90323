"""ONNX reductions, matrix products, normalizations, convolution, pooling, padding and resize
into network layers (importers as in :mod:`.ops`)."""

from __future__ import annotations

import numpy as np

from ..enums import (
    ActivationType,
    DataType,
    ElementWiseOperation,
    InterpolationMode,
    MatrixOperation,
    PaddingMode,
    PoolingType,
    ReduceOperation,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
    SampleMode,
    UnaryOperation,
)
from .errors import ErrorCode, fail
from .helpers import (
    axes_operand,
    bcast,
    cast,
    const_ints,
    ew,
    ints,
    norm_axis,
    reshape,
    scalar,
    scalar_like,
    shape_of,
    shape_tensor,
    to_rank,
    un,
)
from .registry import importer

E = ElementWiseOperation
U = UnaryOperation
A = ActivationType
_INTS = (DataType.INT32, DataType.INT64)


# -- reductions, matrix products, normalization ----------------------------------------------

_REDUCE = {"ReduceSum": ReduceOperation.SUM, "ReduceMean": ReduceOperation.AVG,
           "ReduceMax": ReduceOperation.MAX, "ReduceMin": ReduceOperation.MIN,
           "ReduceProd": ReduceOperation.PROD}


def _reduce_mask(ctx, node, ins, attrs, rank: int):
    axes = axes_operand(ctx, node, ins, attrs)
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return 0
        axes = list(range(rank))
    mask = 0
    for a in axes:
        mask |= 1 << norm_axis(ctx, a, rank)
    return mask


def reduce(ctx, x, op, mask: int, keep: bool):
    x = ctx.tensor(x)
    if not mask:
        return ctx.name(ctx.network.add_identity(x)).get_output(0)
    return ctx.name(ctx.network.add_reduce(x, op, mask, keep)).get_output(0)


@importer(*_REDUCE, "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum",
          "ReduceLogSumExp")
def _reduce(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    mask = _reduce_mask(ctx, node, ins, attrs, len(x.shape))
    keep = bool(attrs["keepdims"])
    op = node.op_type
    if op in _REDUCE:
        return [reduce(ctx, x, _REDUCE[op], mask, keep)]
    if op == "ReduceL1":
        return [reduce(ctx, un(ctx, U.ABS, x), ReduceOperation.SUM, mask, keep)]
    if op in ("ReduceL2", "ReduceSumSquare"):
        s = reduce(ctx, ew(ctx, E.PROD, x, x), ReduceOperation.SUM, mask, keep)
        return [un(ctx, U.SQRT, s) if op == "ReduceL2" else s]
    if op == "ReduceLogSum":
        return [un(ctx, U.LOG, reduce(ctx, x, ReduceOperation.SUM, mask, keep))]
    m = reduce(ctx, x, ReduceOperation.MAX, mask, True)
    s = reduce(ctx, un(ctx, U.EXP, ew(ctx, E.SUB, x, m)), ReduceOperation.SUM, mask, keep)
    if not keep:
        m = reduce(ctx, x, ReduceOperation.MAX, mask, False)
    return [ew(ctx, E.SUM, un(ctx, U.LOG, s), m)]


@importer("MatMul")
def _matmul(ctx, node, ins, attrs):
    a, b = (ctx.tensor(v) for v in ins)
    ops = [MatrixOperation.VECTOR if len(t.shape) == 1 else MatrixOperation.NONE for t in (a, b)]
    if len(a.shape) > 1 and len(b.shape) > 1:
        a, b = bcast(ctx, a, b)
    elif len(a.shape) > 2 or len(b.shape) > 2:  # a vector against a batch of matrices
        if ops[0] is MatrixOperation.VECTOR:
            a = to_rank(ctx, a, len(b.shape) - 1)
        else:
            b = to_rank(ctx, b, len(a.shape) - 1)
    layer = ctx.network.add_matrix_multiply(a, ops[0], b, ops[1])
    return [ctx.name(layer).get_output(0)]


@importer("Gemm")
def _gemm(ctx, node, ins, attrs):
    a, b = (ctx.tensor(v) for v in ins[:2])
    ta, tb = attrs["transA"], attrs["transB"]
    T, N = MatrixOperation.TRANSPOSE, MatrixOperation.NONE
    y = ctx.name(ctx.network.add_matrix_multiply(a, T if ta else N, b, T if tb else N)) \
        .get_output(0)
    alpha, beta = attrs["alpha"], attrs["beta"]
    if alpha != 1.0:
        y = ew(ctx, E.PROD, y, scalar_like(ctx, alpha, y))
    if len(ins) > 2 and ins[2] is not None:
        c = ins[2]
        if beta != 1.0:
            c = ew(ctx, E.PROD, c, scalar_like(ctx, beta, y))
        y = ew(ctx, E.SUM, y, c)
    return [y]


def _softmax_axis(ctx, node, attrs, rank: int) -> int:
    default = -1 if ctx.opset >= 13 else 1
    axis = norm_axis(ctx, attrs.get("axis", default), rank)
    if ctx.opset < 13 and axis != rank - 1:
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "Softmax before opset 13 (flattening at the axis) "
             "is supported for the last axis only")
    return axis


@importer("Softmax", "LogSoftmax")
def _softmax(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    layer = ctx.name(ctx.network.add_softmax(x))
    layer.axes = 1 << _softmax_axis(ctx, node, attrs, len(x.shape))
    out = layer.get_output(0)
    return [un(ctx, U.LOG, out) if node.op_type == "LogSoftmax" else out]


@importer("BatchNormalization")
def _batch_norm(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    scale, bias, mean, var = (ctx.const(v) for v in ins[1:5])
    eps = attrs["epsilon"]
    rank = len(x.shape)
    shape = (1, -1) + (1,) * (rank - 2)
    if all(v is not None for v in (scale, bias, mean, var)):
        k = (np.asarray(scale) / np.sqrt(np.asarray(var) + eps)).astype(np.float32)
        b = (np.asarray(bias) - np.asarray(mean) * k).astype(np.float32)
        return [ew(ctx, E.SUM, ew(ctx, E.PROD, x, cast(ctx, k.reshape(shape), x.compute_dtype)),
                   cast(ctx, b.reshape(shape), x.compute_dtype))]
    s, bi, m, v = (reshape(ctx, ctx.tensor(t), shape) for t in ins[1:5])
    d = un(ctx, U.SQRT, ew(ctx, E.SUM, v, scalar_like(ctx, eps, x)))
    return [ew(ctx, E.SUM, ew(ctx, E.PROD, ew(ctx, E.DIV, ew(ctx, E.SUB, x, m), d), s), bi)]


@importer("InstanceNormalization")
def _instance_norm(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    shape = (1, -1) + (1,) * (rank - 2)
    s, b = (reshape(ctx, ctx.tensor(v), shape) for v in ins[1:3])
    mask = sum(1 << a for a in range(2, rank))
    layer = ctx.network.add_normalization(x, s, b, mask)
    layer.epsilon = attrs["epsilon"]
    return [ctx.name(layer).get_output(0)]


@importer("LayerNormalization")
def _layer_norm(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    axis = norm_axis(ctx, attrs["axis"], rank)
    s = to_rank(ctx, ins[1], rank)
    b = to_rank(ctx, ins[2] if len(ins) > 2 and ins[2] is not None
                else np.zeros(shape_of(ins[1]), np.float32), rank)
    b = cast(ctx, b, x.compute_dtype)
    layer = ctx.network.add_normalization(x, s, b, sum(1 << a for a in range(axis, rank)))
    layer.epsilon = attrs["epsilon"]
    return [ctx.name(layer).get_output(0)]


@importer("LRN")
def _lrn(ctx, node, ins, attrs):
    layer = ctx.network.add_lrn(ctx.tensor(ins[0]), attrs["size"], attrs["alpha"],
                                attrs["beta"], attrs["bias"])
    return [ctx.name(layer).get_output(0)]


@importer("PRelu")
def _prelu(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    return [ctx.name(ctx.network.add_parametric_relu(x, to_rank(ctx, ins[1], len(x.shape))))
            .get_output(0)]


# -- convolution, pooling, padding, resize --------------------------------------------------

def _spatial(layer, attrs, k: int) -> None:
    if "strides" in attrs:
        layer.stride_nd = attrs["strides"]
    pads = attrs.get("pads", [0] * 2 * k)
    layer.pre_padding, layer.post_padding = pads[:k], pads[k:]
    auto = attrs.get("auto_pad", "NOTSET")
    if auto == "SAME_UPPER":
        layer.padding_mode = PaddingMode.SAME_UPPER
    elif auto == "SAME_LOWER":
        layer.padding_mode = PaddingMode.SAME_LOWER
    elif auto == "VALID":
        layer.pre_padding = layer.post_padding = [0] * k


@importer("Conv", "ConvTranspose")
def _conv(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    w = ctx.const(ins[1])
    wt = None if w is not None else ctx.tensor(ins[1])
    wshape = shape_of(ins[1])
    k = len(wshape) - 2
    groups = attrs["group"]
    maps = wshape[0] if node.op_type == "Conv" else wshape[1] * groups
    bias = ctx.const(ins[2]) if len(ins) > 2 and ins[2] is not None else None
    if node.op_type == "ConvTranspose" and (attrs.get("output_padding") or
                                            attrs.get("output_shape")):
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "output_padding / output_shape are not supported")
    add = (ctx.network.add_convolution_nd if node.op_type == "Conv"
           else ctx.network.add_deconvolution_nd)
    layer = add(x, maps, wshape[2:], np.asarray(w, np.float32) if w is not None else
                np.zeros(0, np.float32), None if bias is None else np.asarray(bias, np.float32))
    layer.num_groups = groups
    layer.dilation_nd = attrs.get("dilations", [1] * k)
    _spatial(layer, attrs, k)
    if wt is not None:
        layer.set_input(1, wt)
    if bias is None and len(ins) > 2 and ins[2] is not None:
        layer.set_input(2, ctx.tensor(ins[2]))
    return [ctx.name(layer).get_output(0)]


@importer("MaxPool", "AveragePool")
def _pool(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    window = attrs["kernel_shape"]
    if any(d != 1 for d in attrs.get("dilations", [1] * len(window))):
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "dilations must be empty or all ones")
    if node.op_type == "MaxPool" and len(node.output) > 1 and node.output[1]:
        fail(ErrorCode.UNSUPPORTED_NODE, "MaxPool's indices output is not supported")
    kind = PoolingType.MAX if node.op_type == "MaxPool" else PoolingType.AVERAGE
    layer = ctx.network.add_pooling_nd(x, kind, window)
    _spatial(layer, attrs, len(window))
    if attrs["ceil_mode"]:
        layer.padding_mode = PaddingMode.EXPLICIT_ROUND_UP
    layer.average_count_excludes_padding = not attrs.get("count_include_pad", 0)
    return [ctx.name(layer).get_output(0)]


@importer("GlobalAveragePool", "GlobalMaxPool")
def _global_pool(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    mask = sum(1 << a for a in range(2, len(x.shape)))
    op = ReduceOperation.AVG if node.op_type == "GlobalAveragePool" else ReduceOperation.MAX
    return [reduce(ctx, x, op, mask, True)]


@importer("Pad")
def _pad(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    mode = attrs["mode"]
    pads = list(attrs["pads"]) if ctx.opset < 11 else const_ints(ctx, ins[1], "Pad pads")
    value = attrs.get("value", 0.0) if ctx.opset < 11 else (
        ins[2] if len(ins) > 2 and ins[2] is not None else None)
    axes = (const_ints(ctx, ins[3], "Pad axes") if len(ins) > 3 and ins[3] is not None
            else list(range(rank)))
    k = len(axes)
    pre, post = [0] * rank, [0] * rank
    for j, a in enumerate(axes):
        a = norm_axis(ctx, a, rank)
        pre[a], post[a] = pads[j], pads[j + k]
    sm = {"constant": SampleMode.FILL, "reflect": SampleMode.REFLECT,
          "edge": SampleMode.CLAMP, "wrap": SampleMode.WRAP}.get(mode)
    if sm is None:
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, f"Pad mode '{mode}' is not supported")
    starts = [-p for p in pre]
    if -1 in x.shape:
        sizes = ew(ctx, E.SUM, shape_tensor(ctx, x), ints(ctx, [a + b for a, b in zip(pre, post)]))
        layer = ctx.network.add_slice(x, starts, [1] * rank, [1] * rank)
        layer.set_input(2, sizes)
    else:
        layer = ctx.network.add_slice(x, starts, [d + a + b for d, a, b in zip(x.shape, pre, post)],
                                      [1] * rank)
    layer.mode = sm
    if sm is SampleMode.FILL and value is not None:
        layer.set_input(4, scalar(ctx, cast(ctx, value, x.compute_dtype)))
    return [ctx.name(layer).get_output(0)]


@importer("Resize", "Upsample")
def _resize(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    layer = ctx.network.add_resize(x)
    mode = attrs["mode"]
    layer.resize_mode = {"nearest": InterpolationMode.NEAREST, "linear": InterpolationMode.LINEAR,
                         "cubic": InterpolationMode.CUBIC}[mode]
    ct = attrs.get("coordinate_transformation_mode", "half_pixel" if node.op_type == "Resize"
                   and ctx.opset >= 11 else "asymmetric")
    T = ResizeCoordinateTransformation
    table = {"align_corners": (T.ALIGN_CORNERS, ResizeSelector.FORMULA),
             "asymmetric": (T.ASYMMETRIC, ResizeSelector.FORMULA),
             "half_pixel": (T.HALF_PIXEL, ResizeSelector.FORMULA),
             "pytorch_half_pixel": (T.HALF_PIXEL, ResizeSelector.UPPER),
             "tf_half_pixel_for_nn": (T.HALF_PIXEL, ResizeSelector.FORMULA)}
    if ct not in table:
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, f"coordinate_transformation_mode '{ct}' is not "
             "supported")
    layer.coordinate_transformation, layer.selector_for_single_pixel = table[ct]
    R = ResizeRoundMode
    layer.nearest_rounding = {"floor": R.FLOOR, "ceil": R.CEIL, "round_prefer_floor": R.HALF_DOWN,
                              "round_prefer_ceil": R.HALF_UP}[
        attrs.get("nearest_mode", "round_prefer_floor")]
    for key in ("antialias", "axes"):
        if attrs.get(key):
            fail(ErrorCode.UNSUPPORTED_NODE_ATTR, f"Resize's {key} is not supported")
    if node.op_type == "Upsample":
        layer.nearest_rounding = R.FLOOR
    layer.cubic_coeff = attrs.get("cubic_coeff_a", -0.75)
    layer.exclude_outside = bool(attrs.get("exclude_outside", 0))
    if node.op_type == "Upsample":
        scales = ins[1] if len(ins) > 1 else np.asarray(attrs["scales"], np.float32)
        sizes = None
    else:
        scales = ins[2] if len(ins) > 2 and ins[2] is not None and np.prod(
            shape_of(ins[2])) > 0 else None
        sizes = ins[3] if len(ins) > 3 and ins[3] is not None else None
    if sizes is not None:
        c = ctx.const(sizes)
        if c is not None:
            layer.shape = [int(v) for v in c]
        else:
            layer.set_input(1, ctx.tensor(sizes))
    else:
        c = ctx.const(scales)
        if c is not None:
            layer.scales = [float(v) for v in c]
        else:
            layer.set_input(1, ctx.tensor(scales))
    return [ctx.name(layer).get_output(0)]

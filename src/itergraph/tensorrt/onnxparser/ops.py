"""ONNX operators into network layers: element-wise ops, activations, casts, constants and
shape manipulation (the importers of :mod:`.parser`, registered in :mod:`.registry`).

Each importer ``fn(ctx, node, inputs, attrs) -> [outputs]`` takes the node's input values
(tensors, NumPy weights, or None for an omitted optional input) and its attributes, adds
layers, and returns its output values. ONNX broadcasting (ranks may differ) becomes
TensorRT's (equal ranks) by prepending unit axes (:mod:`.helpers`). Operators with no
importer, and attribute values TensorRT's parser refuses, are errors naming the node.
"""

from __future__ import annotations

import numpy as np

from ..core import FLOATS, Tensor
from ..enums import (
    ActivationType,
    DataType,
    ElementWiseOperation,
    FillOperation,
    ReduceOperation,
    UnaryOperation,
)
from ..same_ops import by_onnx, onnx_ops
from .errors import ErrorCode, fail, onnx_dtype
from .helpers import (
    act,
    axes_operand,
    bcast,
    cast,
    concat,
    const_ints,
    dtype_of,
    ew,
    full,
    ints,
    norm_axis,
    reshape,
    scalar,
    scalar_like,
    shape_of,
    shape_tensor,
    to_rank,
    un,
    unsqueeze,
)
from .registry import importer

E = ElementWiseOperation
U = UnaryOperation
A = ActivationType
_INTS = (DataType.INT32, DataType.INT64)


# -- elementwise --------------------------------------------------------------------------

# The rows of `same_ops`; the importers below (Pow, Max, Min) replace these where both exist.
@importer(*onnx_ops(E))
def _binary(ctx, node, ins, attrs):
    a, b = ins
    if node.op_type in ("Equal", "Greater", "Less") and dtype_of(a) == DataType.BOOL:
        a, b = cast(ctx, a, DataType.INT32), cast(ctx, b, DataType.INT32)
    return [ew(ctx, by_onnx(node.op_type).trt, a, b)]


@importer("GreaterOrEqual", "LessOrEqual")
def _cmp_eq(ctx, node, ins, attrs):
    op = E.LESS if node.op_type == "GreaterOrEqual" else E.GREATER
    return [un(ctx, U.NOT, ew(ctx, op, *ins))]


@importer("Pow")
def _pow(ctx, node, ins, attrs):
    a, b = ins
    return [ew(ctx, E.POW, a, cast(ctx, b, dtype_of(a)))]


@importer("Max", "Min", "Sum", "Mean")
def _variadic(ctx, node, ins, attrs):
    op = {"Max": E.MAX, "Min": E.MIN, "Sum": E.SUM, "Mean": E.SUM}[node.op_type]
    out = ins[0]
    for x in ins[1:]:
        out = ew(ctx, op, out, x)
    out = ctx.tensor(out)
    if node.op_type == "Mean":
        out = ew(ctx, E.DIV, out, scalar_like(ctx, len(ins), out))
    return [out if len(ins) > 1 else ctx.name(ctx.network.add_identity(out)).get_output(0)]


@importer("Mod")
def _mod(ctx, node, ins, attrs):
    a, b = ins
    if attrs["fmod"]:  # the sign of the dividend: a - trunc(a / b) * b
        q = ew(ctx, E.DIV, a, b)
        if dtype_of(a) not in _INTS:
            q = cast(ctx, cast(ctx, q, DataType.INT64), dtype_of(a))
    else:
        if dtype_of(a) not in _INTS:
            fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "Mod of floats needs fmod = 1")
        q = ew(ctx, E.FLOOR_DIV, a, b)
    return [ew(ctx, E.SUB, a, ew(ctx, E.PROD, q, b))]


@importer("Where")
def _where(ctx, node, ins, attrs):
    c, a, b = bcast(ctx, *ins)
    return [ctx.name(ctx.network.add_select(c, a, b)).get_output(0)]


@importer(*onnx_ops(U))
def _unary(ctx, node, ins, attrs):
    return [un(ctx, by_onnx(node.op_type).trt, ins[0])]


@importer("IsInf")
def _isinf(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    out = un(ctx, U.ISINF, x)
    pos, neg = attrs["detect_positive"], attrs["detect_negative"]
    if pos and neg:
        return [out]
    sign = ew(ctx, E.GREATER if pos else E.LESS, x, scalar_like(ctx, 0, x))
    return [ew(ctx, E.AND, out, sign)]


@importer(*onnx_ops(A))
def _activation(ctx, node, ins, attrs):
    row = by_onnx(node.op_type)
    fields = {"alpha": 0.0, "beta": 0.0}
    for name, field, default in row.attrs:
        fields[field] = attrs.get(name, default)
    return [act(ctx, row.trt, ins[0], fields["alpha"], fields["beta"])]


@importer("Softplus")
def _softplus(ctx, node, ins, attrs):  # TensorRT's SOFTPLUS is alpha * log(exp(beta * x) + 1)
    return [act(ctx, A.SOFTPLUS, ins[0], 1.0, 1.0)]


@importer("ScaledTanh")
def _scaled_tanh(ctx, node, ins, attrs):  # alpha * tanh(beta * x)
    return [act(ctx, A.SCALED_TANH, ins[0], attrs.get("alpha", 1.0), attrs.get("beta", 1.0))]


@importer("Gelu")
def _gelu(ctx, node, ins, attrs):
    kind = A.GELU_TANH if attrs["approximate"] == "tanh" else A.GELU_ERF
    return [act(ctx, kind, ins[0])]


@importer("HardSwish")
def _hardswish(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    return [ew(ctx, E.PROD, x, act(ctx, A.HARD_SIGMOID, x, 1 / 6, 0.5))]


@importer("Mish")
def _mish(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    return [ew(ctx, E.PROD, x, act(ctx, A.TANH, act(ctx, A.SOFTPLUS, x, 1.0, 1.0)))]


@importer("Clip")
def _clip(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    lo = attrs.get("min") if len(ins) < 2 or ins[1] is None else ins[1]
    hi = attrs.get("max") if len(ins) < 3 or ins[2] is None else ins[2]
    if x.compute_dtype not in FLOATS or any(v is not None and ctx.const(v) is None
                                            for v in (lo, hi)):
        out = x
        if lo is not None:
            out = ew(ctx, E.MAX, out, scalar(ctx, cast(ctx, lo, x.compute_dtype)))
        if hi is not None:
            out = ew(ctx, E.MIN, out, scalar(ctx, cast(ctx, hi, x.compute_dtype)))
        return [out if out is not x else ctx.name(ctx.network.add_identity(x)).get_output(0)]
    lo_v = -np.inf if lo is None else float(np.asarray(ctx.const(lo)).reshape(()))
    hi_v = np.inf if hi is None else float(np.asarray(ctx.const(hi)).reshape(()))
    return [act(ctx, A.CLIP, x, max(lo_v, -3.4e38), min(hi_v, 3.4e38))]


@importer("Identity", "Dropout")
def _identity(ctx, node, ins, attrs):
    if node.op_type == "Dropout" and len(ins) > 2 and ins[2] is not None:
        tm = ctx.const(ins[2])
        if tm is None or bool(np.asarray(tm).reshape(-1)[0]):
            fail(ErrorCode.UNSUPPORTED_NODE_INPUT, "Dropout in training mode is not supported")
    out = ctx.name(ctx.network.add_identity(ctx.tensor(ins[0]))).get_output(0)
    if node.op_type == "Dropout" and len(node.output) > 1:
        mask = full(ctx, shape_tensor(ctx, out), 1, DataType.INT32)
        return [out, cast(ctx, mask, DataType.BOOL)]
    return [out]


@importer("Cast")
def _cast(ctx, node, ins, attrs):
    return [cast(ctx, ins[0], onnx_dtype(attrs["to"], "Cast 'to'"))]


@importer("CastLike")
def _castlike(ctx, node, ins, attrs):
    return [cast(ctx, ins[0], dtype_of(ins[1]))]


# -- constants and shapes ---------------------------------------------------------------------

@importer("Constant")
def _constant(ctx, node, ins, attrs):
    for key, conv in (("value", None), ("value_float", np.float32), ("value_int", np.int64),
                      ("value_floats", np.float32), ("value_ints", np.int64)):
        if key in attrs:
            v = attrs[key]
            return [np.asarray(v if conv is None else np.asarray(v, conv))]
    fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "Constant: only value, value_float(s) and "
         "value_int(s) are supported")


@importer("ConstantOfShape")
def _constant_of_shape(ctx, node, ins, attrs):
    value = attrs.get("value", np.zeros(1, np.float32))
    value = np.asarray(value).reshape(-1)
    c = ctx.const(ins[0])
    if c is not None:
        return [np.full(tuple(int(d) for d in c), value[0], value.dtype)]
    return [full(ctx, cast(ctx, ins[0], DataType.INT64), value[0], dtype_of(value))]


@importer("Shape")
def _shape(ctx, node, ins, attrs):
    s = shape_tensor(ctx, ins[0])
    rank = len(shape_of(ins[0]))
    start, end = attrs["start"], attrs.get("end", rank)
    start, end = (max(0, min(rank, v + rank if v < 0 else v)) for v in (start, end))
    if (start, end) == (0, rank):
        return [s]
    return [ctx.name(ctx.network.add_slice(s, (start,), (max(end - start, 0),), (1,)))
            .get_output(0)]


@importer("Size")
def _size(ctx, node, ins, attrs):
    s = shape_tensor(ctx, ins[0])
    if not shape_of(ins[0]):
        return [np.asarray(1, np.int64)]
    return [ctx.name(ctx.network.add_reduce(s, ReduceOperation.PROD, 1, False)).get_output(0)]


@importer("Reshape")
def _reshape(ctx, node, ins, attrs):
    allowzero = bool(attrs["allowzero"])
    c = ctx.const(ins[1])
    if c is not None:
        return [reshape(ctx, ins[0], [int(d) for d in c], not allowzero)]
    return [reshape(ctx, ins[0], cast(ctx, ins[1], DataType.INT64), not allowzero)]


@importer("Flatten")
def _flatten(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    axis = attrs["axis"]
    axis = axis + rank if axis < 0 else axis
    if axis == 0:
        return [reshape(ctx, x, (1, -1))]
    if -1 not in x.shape[:axis]:
        return [reshape(ctx, x, (int(np.prod(x.shape[:axis])), -1))]
    lead = ctx.network.add_slice(shape_tensor(ctx, x), (0,), (axis,), (1,)).get_output(0)
    prod = ctx.network.add_reduce(lead, ReduceOperation.PROD, 1, True).get_output(0)
    return [reshape(ctx, x, concat(ctx, [prod, ints(ctx, [-1])]))]


@importer("Transpose")
def _transpose(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    perm = attrs.get("perm", list(reversed(range(len(x.shape)))))
    layer = ctx.name(ctx.network.add_shuffle(x))
    layer.first_transpose = perm
    return [layer.get_output(0)]


@importer("Squeeze")
def _squeeze(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    axes = axes_operand(ctx, node, ins, attrs)
    if axes is None:
        if -1 in x.shape:
            fail(ErrorCode.UNSUPPORTED_NODE_DYNAMIC, "Squeeze without axes needs a static shape")
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    if not axes:
        return [ctx.name(ctx.network.add_identity(x)).get_output(0)]
    return [ctx.name(ctx.network.add_squeeze(x, ints(ctx, axes))).get_output(0)]


@importer("Unsqueeze")
def _unsqueeze(ctx, node, ins, attrs):
    axes = axes_operand(ctx, node, ins, attrs)
    x = ins[0]
    if not isinstance(x, Tensor):
        out = np.asarray(x)
        r = out.ndim + len(axes)
        for a in sorted(a + r if a < 0 else a for a in axes):
            out = np.expand_dims(out, a)
        return [out]
    return [unsqueeze(ctx, x, axes)]


@importer("Concat")
def _concat(ctx, node, ins, attrs):
    parts = [p for p in ins if p is not None]
    rank = len(shape_of(parts[0]))
    return [concat(ctx, parts, norm_axis(ctx, attrs["axis"], rank))]


@importer("Split")
def _split(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    axis = norm_axis(ctx, attrs.get("axis", 0), rank)
    n_out = len(node.output)
    if "split" in attrs:
        sizes = list(attrs["split"])
    elif len(ins) > 1 and ins[1] is not None:
        sizes = const_ints(ctx, ins[1], "Split sizes")
    else:
        if x.shape[axis] < 0:
            fail(ErrorCode.UNSUPPORTED_NODE_DYNAMIC, "Split of a dynamic axis needs its sizes")
        n = x.shape[axis]
        k = -(-n // n_out)
        sizes = [min(k, n - i * k) for i in range(n_out)]
    outs, start = [], 0
    for size in sizes:
        st = [0] * rank
        st[axis] = start
        sh = list(x.shape)
        sh[axis] = size
        layer = ctx.name(ctx.network.add_slice(x, st, [max(d, 0) for d in sh], [1] * rank))
        if -1 in x.shape:
            full_shape = shape_tensor(ctx, x)
            mask = np.ones(rank, np.int64)
            mask[axis] = 0
            size_t = ew(ctx, E.SUM, ew(ctx, E.PROD, full_shape, ints(ctx, mask)),
                        ints(ctx, np.where(mask == 0, size, 0)))
            layer.set_input(2, size_t)
        outs.append(layer.get_output(0))
        start += size
    return outs


def _per_axis(ctx, v, n: int, what: str):
    """Slice parameter `v` as n entries: ints when constant, else 1-entry INT64 tensors."""
    c = ctx.const(v)
    if c is not None:
        return [int(x) for x in np.asarray(c).reshape(-1)]
    t = cast(ctx, v, DataType.INT64)
    return [ctx.name(ctx.network.add_slice(t, (k,), (1,), (1,))).get_output(0)
            for k in range(n)]


@importer("Slice")
def _slice(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    if ctx.opset < 10:
        starts, ends = list(attrs["starts"]), list(attrs["ends"])
        axes = list(attrs.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        k = shape_of(ins[1])[0]
        starts = _per_axis(ctx, ins[1], k, "starts")
        ends = _per_axis(ctx, ins[2], k, "ends")
        axes = (const_ints(ctx, ins[3], "Slice axes") if len(ins) > 3 and ins[3] is not None
                else list(range(k)))
        steps = (const_ints(ctx, ins[4], "Slice steps") if len(ins) > 4 and ins[4] is not None
                 else [1] * k)
    st, sz, sd = [0] * rank, list(x.shape), [1] * rank
    dynamic = False
    for s, e, a, k in zip(starts, ends, axes, steps):
        a = norm_axis(ctx, a, rank)
        n = x.shape[a]
        sd[a] = k
        if n < 0 or isinstance(s, Tensor) or isinstance(e, Tensor):
            dynamic = True
            st[a] = (s, e)
            continue
        lo, hi, step = slice(s, e, k).indices(n)
        st[a] = lo
        sz[a] = len(range(lo, hi, step))
    if not dynamic:
        return [ctx.name(ctx.network.add_slice(x, st, sz, sd)).get_output(0)]
    # run-time bounds: clamp start/end into the axis as ONNX does; size = ceil(span / step)
    shape = shape_tensor(ctx, x)
    start_v, size_v = [], []
    for a in range(rank):
        n = ctx.network.add_gather(shape, ints(ctx, [a]), 0).get_output(0)
        if not isinstance(st[a], tuple):
            start_v.append(ints(ctx, [st[a]]))
            size_v.append(ints(ctx, [sz[a]]) if sz[a] >= 0 else n)
            continue
        s, e = st[a]
        k = sd[a]
        lo_b, hi_b = (0, 0) if k > 0 else (-1, -1)

        def clamp(v, n=n, lo_b=lo_b, hi_b=hi_b):
            v = v if isinstance(v, Tensor) else ints(ctx, [max(min(v, 2**62), -2**62)])
            wrapped = ew(ctx, E.SUM, v, n)
            v = ctx.network.add_select(ew(ctx, E.LESS, v, ints(ctx, [0])), wrapped,
                                       v).get_output(0)
            v = ew(ctx, E.MAX, v, ints(ctx, [lo_b]))
            return ew(ctx, E.MIN, v, ew(ctx, E.SUM, n, ints(ctx, [hi_b])))

        s_t, e_t = clamp(s), clamp(e)
        span = ew(ctx, E.SUM, ew(ctx, E.SUB, e_t, s_t), ints(ctx, [k - (1 if k > 0 else -1)]))
        size = ew(ctx, E.FLOOR_DIV, span, ints(ctx, [k]))
        start_v.append(s_t)
        size_v.append(ew(ctx, E.MAX, size, ints(ctx, [0])))
    layer = ctx.name(ctx.network.add_slice(x, [0] * rank, [1] * rank, sd))
    layer.set_input(1, concat(ctx, start_v))
    layer.set_input(2, concat(ctx, size_v))
    return [layer.get_output(0)]


@importer("Expand")
def _expand(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    shape = cast(ctx, ins[1], DataType.INT64)
    n = shape_of(shape)[0]
    x = to_rank(ctx, x, n)
    # ONNX Expand broadcasts both ways: max(target, input) per axis, via a broadcast add
    dt = x.compute_dtype
    zeros = full(ctx, shape, 0, dt if dt != DataType.BOOL else DataType.INT32)
    if x.compute_dtype == DataType.BOOL:
        return [cast(ctx, ew(ctx, E.SUM, cast(ctx, x, DataType.INT32), zeros), DataType.BOOL)]
    return [ew(ctx, E.SUM, x, zeros)]


@importer("Tile")
def _tile(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    reps = const_ints(ctx, ins[1], "Tile repeats")
    for a, r in enumerate(reps):
        if r != 1:
            x = concat(ctx, [x] * r, a)
    return [x if x is not ins[0] else ctx.name(ctx.network.add_identity(x)).get_output(0)]


@importer("Range")
def _range(ctx, node, ins, attrs):
    cs = [ctx.const(v) for v in ins]
    if all(c is not None for c in cs):
        s, e, d = (np.asarray(c).reshape(()) for c in cs)
        return [np.arange(s, e, d).astype(np.asarray(cs[0]).dtype)]
    dt = dtype_of(ins[0])
    start, limit, delta = (scalar(ctx, cast(ctx, v, dt)) for v in ins)
    n = ew(ctx, E.DIV, ew(ctx, E.SUB, limit, start), delta)
    if dt not in _INTS:
        n = un(ctx, U.CEIL, n)
    else:  # ceil for integers: -floor((start - limit) / delta)
        n = un(ctx, U.NEG, ew(ctx, E.FLOOR_DIV, ew(ctx, E.SUB, start, limit), delta))
    n = ew(ctx, E.MAX, cast(ctx, n, DataType.INT64), np.asarray(0, np.int64))
    fill_dt = dt if dt in (DataType.FLOAT, DataType.INT32, DataType.INT64) else DataType.FLOAT
    layer = ctx.name(ctx.network.add_fill((1,), FillOperation.LINSPACE, fill_dt))
    layer.set_input(0, reshape(ctx, n, (1,)))
    layer.set_input(1, cast(ctx, start, fill_dt))
    layer.set_input(2, reshape(ctx, cast(ctx, delta, fill_dt), (1,)))
    return [cast(ctx, layer.get_output(0), dt)]

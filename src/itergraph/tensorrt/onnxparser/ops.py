"""ONNX operators into network layers (the importers of :mod:`.parser`, registered in
:mod:`.registry`), and the helpers the other importers share.

Each importer ``fn(ctx, node, inputs, attrs) -> [outputs]`` takes the node's input values
(tensors, NumPy weights, or None for an omitted optional input) and its attributes, adds
layers, and returns its output values. ONNX broadcasting (ranks may differ) becomes
TensorRT's (equal ranks) by prepending unit axes. Operators with no importer, and attribute
values TensorRT's parser refuses, are errors naming the node.
"""

from __future__ import annotations

import numpy as np

from ..core import FLOATS, Tensor
from ..enums import (
    ActivationType,
    CumulativeOperation,
    DataType,
    ElementWiseOperation,
    FillOperation,
    GatherMode,
    InterpolationMode,
    MatrixOperation,
    PaddingMode,
    PoolingType,
    ReduceOperation,
    ResizeCoordinateTransformation,
    ResizeRoundMode,
    ResizeSelector,
    SampleMode,
    ScatterMode,
    TopKOperation,
    UnaryOperation,
    as_dtype,
    to_numpy,
)
from ..same_ops import by_onnx, onnx_ops
from .errors import ErrorCode, fail, onnx_dtype
from .registry import importer

E = ElementWiseOperation
U = UnaryOperation
A = ActivationType
_INTS = (DataType.INT32, DataType.INT64)


# -- helpers ----------------------------------------------------------------------------------

def shape_of(v) -> tuple[int, ...]:
    return tuple(v.shape) if isinstance(v, Tensor) else np.shape(v)


def dtype_of(v) -> DataType:
    if isinstance(v, Tensor):
        return v.compute_dtype
    a = np.asarray(v)
    return DataType.FLOAT if a.dtype == np.float64 else as_dtype(a.dtype)


def ints(ctx, values, dt=np.int64) -> Tensor:
    return ctx.tensor(np.asarray(values, dt))


def unsqueeze(ctx, t: Tensor, axes) -> Tensor:
    return ctx.name(ctx.network.add_unsqueeze(t, ints(ctx, list(axes)))).get_output(0)


def to_rank(ctx, v, r: int) -> Tensor:
    """`v` with unit axes prepended up to rank `r` (ONNX broadcasting into TensorRT's)."""
    if not isinstance(v, Tensor):
        a = np.asarray(v)
        return ctx.tensor(a.reshape((1,) * (r - a.ndim) + a.shape)) if a.ndim < r else ctx.tensor(v)
    k = r - len(v.shape)
    return unsqueeze(ctx, v, range(k)) if k > 0 else v


def bcast(ctx, *vs) -> list[Tensor]:
    r = max(len(shape_of(v)) for v in vs)
    return [to_rank(ctx, v, r) for v in vs]


def ew(ctx, op, a, b) -> Tensor:
    a, b = bcast(ctx, a, b)
    return ctx.name(ctx.network.add_elementwise(a, b, op)).get_output(0)


def un(ctx, op, x) -> Tensor:
    return ctx.name(ctx.network.add_unary(ctx.tensor(x), op)).get_output(0)


def act(ctx, kind, x, alpha=0.0, beta=0.0) -> Tensor:
    layer = ctx.name(ctx.network.add_activation(ctx.tensor(x), kind))
    layer.alpha, layer.beta = float(alpha), float(beta)
    return layer.get_output(0)


def cast(ctx, x, dt: DataType) -> Tensor:
    x = ctx.tensor(x)
    if x.compute_dtype == dt:
        return x
    return ctx.name(ctx.network.add_cast(x, dt)).get_output(0)


def scalar_like(ctx, value, like) -> Tensor:
    dt = dtype_of(like)
    return ctx.tensor(np.asarray(value, to_numpy(dt)))


def shape_tensor(ctx, x) -> Tensor:
    return ctx.name(ctx.network.add_shape(ctx.tensor(x))).get_output(0)


def dim(ctx, x, axis: int) -> Tensor:
    """Length of `axis` of `x` as a 1-D INT64 tensor of one entry."""
    s = shape_of(x)
    if s[axis] >= 0:
        return ints(ctx, [s[axis]])
    g = ctx.network.add_gather(shape_tensor(ctx, x), ints(ctx, [axis]), 0)
    return ctx.name(g).get_output(0)


def reshape(ctx, x, dims, zero_is_placeholder=True) -> Tensor:
    layer = ctx.name(ctx.network.add_shuffle(ctx.tensor(x)))
    layer.zero_is_placeholder = zero_is_placeholder
    if isinstance(dims, Tensor):
        layer.set_input(1, dims)
    else:
        layer.reshape_dims = tuple(int(d) for d in dims)
    return layer.get_output(0)


def scalar(ctx, x) -> Tensor:
    """A one-element tensor as 0-D."""
    x = ctx.tensor(x)
    return x if tuple(x.shape) == () else reshape(ctx, x, ())


def concat(ctx, parts, axis: int = 0) -> Tensor:
    layer = ctx.name(ctx.network.add_concatenation([ctx.tensor(p) for p in parts]))
    layer.axis = axis
    return layer.get_output(0)


def norm_axis(ctx, axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        fail(ErrorCode.INVALID_NODE, f"axis {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def const_ints(ctx, v, what: str) -> list[int]:
    c = ctx.const(v)
    if c is None:
        fail(ErrorCode.UNSUPPORTED_NODE_DYNAMIC, f"{what} must be a build-time constant")
    return [int(x) for x in np.asarray(c).reshape(-1)]


def full(ctx, shape_t: Tensor, value, dt: DataType) -> Tensor:
    """A tensor of shape `shape_t` (1-D INT64) filled with `value`, of type `dt`."""
    rank = shape_of(shape_t)[0]
    fill_dt = dt if dt in (DataType.FLOAT, DataType.INT32, DataType.INT64) else DataType.FLOAT
    layer = ctx.name(ctx.network.add_fill((1,) * rank, FillOperation.LINSPACE, fill_dt))
    layer.set_input(0, shape_t)
    layer.set_input(1, ctx.tensor(np.asarray(value, to_numpy(fill_dt))))
    layer.set_input(2, ctx.tensor(np.zeros(max(rank, 1), to_numpy(fill_dt))))
    return cast(ctx, layer.get_output(0), dt)


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
    if attrs.get("fmod", 0):  # the sign of the dividend: a - trunc(a / b) * b
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
    pos, neg = attrs.get("detect_positive", 1), attrs.get("detect_negative", 1)
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
    kind = A.GELU_TANH if attrs.get("approximate", "none") == "tanh" else A.GELU_ERF
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
    start, end = attrs.get("start", 0), attrs.get("end", rank)
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
    allowzero = bool(attrs.get("allowzero", 0))
    c = ctx.const(ins[1])
    if c is not None:
        return [reshape(ctx, ins[0], [int(d) for d in c], not allowzero)]
    return [reshape(ctx, ins[0], cast(ctx, ins[1], DataType.INT64), not allowzero)]


@importer("Flatten")
def _flatten(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    axis = attrs.get("axis", 1)
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


def _axes(ctx, node, ins, attrs, index: int = 1):
    if "axes" in attrs:
        return list(attrs["axes"])
    if len(ins) > index and ins[index] is not None:
        return const_ints(ctx, ins[index], f"{node.op_type} axes")
    return None


@importer("Squeeze")
def _squeeze(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    axes = _axes(ctx, node, ins, attrs)
    if axes is None:
        if -1 in x.shape:
            fail(ErrorCode.UNSUPPORTED_NODE_DYNAMIC, "Squeeze without axes needs a static shape")
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    if not axes:
        return [ctx.name(ctx.network.add_identity(x)).get_output(0)]
    return [ctx.name(ctx.network.add_squeeze(x, ints(ctx, axes))).get_output(0)]


@importer("Unsqueeze")
def _unsqueeze(ctx, node, ins, attrs):
    axes = _axes(ctx, node, ins, attrs)
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
    axis = norm_axis(ctx, attrs.get("axis", 0), len(data.shape))
    idx = _wrap_indices(ctx, ins[1], data, axis)
    return [ctx.name(ctx.network.add_gather(data, idx, axis)).get_output(0)]


@importer("GatherElements")
def _gather_elements(ctx, node, ins, attrs):
    data = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs.get("axis", 0), len(data.shape))
    layer = ctx.network.add_gather_v2(data, _wrap_indices(ctx, ins[1], data, axis),
                                      GatherMode.ELEMENT)
    layer.axis = axis
    return [ctx.name(layer).get_output(0)]


@importer("GatherND")
def _gather_nd(ctx, node, ins, attrs):
    layer = ctx.network.add_gather_v2(ctx.tensor(ins[0]), ctx.tensor(ins[1]), GatherMode.ND)
    layer.num_elementwise_dims = attrs.get("batch_dims", 0)
    return [ctx.name(layer).get_output(0)]


@importer("ScatterElements", "Scatter")
def _scatter_elements(ctx, node, ins, attrs):
    if attrs.get("reduction", "none") != "none":
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "reduction is not supported")
    data = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs.get("axis", 0), len(data.shape))
    layer = ctx.network.add_scatter(data, _wrap_indices(ctx, ins[1], data, axis),
                                    ctx.tensor(ins[2]), ScatterMode.ELEMENT)
    layer.axis = axis
    return [ctx.name(layer).get_output(0)]


@importer("ScatterND")
def _scatter_nd(ctx, node, ins, attrs):
    if attrs.get("reduction", "none") != "none":
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "`reduction` is not supported")
    layer = ctx.network.add_scatter(*(ctx.tensor(v) for v in ins), ScatterMode.ND)
    return [ctx.name(layer).get_output(0)]


@importer("OneHot")
def _one_hot(ctx, node, ins, attrs):
    idx, depth, values = ins
    depth = scalar(ctx, cast(ctx, depth, DataType.INT64))
    layer = ctx.network.add_one_hot(cast(ctx, idx, DataType.INT64), ctx.tensor(values), depth,
                                    attrs.get("axis", -1))
    return [ctx.name(layer).get_output(0)]


@importer("NonZero")
def _non_zero(ctx, node, ins, attrs):
    return [ctx.name(ctx.network.add_non_zero(ctx.tensor(ins[0]), DataType.INT64)).get_output(0)]


@importer("TopK")
def _topk(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs.get("axis", -1), len(x.shape))
    op = TopKOperation.MAX if attrs.get("largest", 1) else TopKOperation.MIN
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
    if attrs.get("select_last_index", 0):
        fail(ErrorCode.UNSUPPORTED_NODE_ATTR, "select_last_index is not supported")
    x = ctx.tensor(ins[0])
    axis = norm_axis(ctx, attrs.get("axis", 0), len(x.shape))
    op = TopKOperation.MAX if node.op_type == "ArgMax" else TopKOperation.MIN
    idx = ctx.name(ctx.network.add_topk(x, op, 1, 1 << axis, DataType.INT64)).get_output(1)
    if not attrs.get("keepdims", 1):
        idx = ctx.name(ctx.network.add_squeeze(idx, ints(ctx, [axis]))).get_output(0)
    return [idx]


@importer("CumSum")
def _cumsum(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    axis = scalar(ctx, ins[1])
    layer = ctx.network.add_cumulative(x, axis, CumulativeOperation.SUM,
                                       bool(attrs.get("exclusive", 0)),
                                       bool(attrs.get("reverse", 0)))
    return [ctx.name(layer).get_output(0)]


@importer("ReverseSequence")
def _reverse_sequence(ctx, node, ins, attrs):
    layer = ctx.network.add_reverse_sequence(ctx.tensor(ins[0]), ctx.tensor(ins[1]))
    layer.batch_axis = attrs.get("batch_axis", 1)
    layer.sequence_axis = attrs.get("time_axis", 0)
    return [ctx.name(layer).get_output(0)]


@importer("Einsum")
def _einsum(ctx, node, ins, attrs):
    layer = ctx.network.add_einsum([ctx.tensor(v) for v in ins], attrs["equation"])
    return [ctx.name(layer).get_output(0)]


# -- reductions, matrix products, normalization ----------------------------------------------

_REDUCE = {"ReduceSum": ReduceOperation.SUM, "ReduceMean": ReduceOperation.AVG,
           "ReduceMax": ReduceOperation.MAX, "ReduceMin": ReduceOperation.MIN,
           "ReduceProd": ReduceOperation.PROD}


def _reduce_mask(ctx, node, ins, attrs, rank: int):
    axes = _axes(ctx, node, ins, attrs)
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
    keep = bool(attrs.get("keepdims", 1))
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
    ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
    T, N = MatrixOperation.TRANSPOSE, MatrixOperation.NONE
    y = ctx.name(ctx.network.add_matrix_multiply(a, T if ta else N, b, T if tb else N)) \
        .get_output(0)
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
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
    eps = attrs.get("epsilon", 1e-5)
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
    layer.epsilon = attrs.get("epsilon", 1e-5)
    return [ctx.name(layer).get_output(0)]


@importer("LayerNormalization")
def _layer_norm(ctx, node, ins, attrs):
    x = ctx.tensor(ins[0])
    rank = len(x.shape)
    axis = norm_axis(ctx, attrs.get("axis", -1), rank)
    s = to_rank(ctx, ins[1], rank)
    b = to_rank(ctx, ins[2] if len(ins) > 2 and ins[2] is not None
                else np.zeros(shape_of(ins[1]), np.float32), rank)
    b = cast(ctx, b, x.compute_dtype)
    layer = ctx.network.add_normalization(x, s, b, sum(1 << a for a in range(axis, rank)))
    layer.epsilon = attrs.get("epsilon", 1e-5)
    return [ctx.name(layer).get_output(0)]


@importer("LRN")
def _lrn(ctx, node, ins, attrs):
    layer = ctx.network.add_lrn(ctx.tensor(ins[0]), attrs["size"], attrs.get("alpha", 1e-4),
                                attrs.get("beta", 0.75), attrs.get("bias", 1.0))
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
    groups = attrs.get("group", 1)
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
    if attrs.get("ceil_mode", 0):
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
    mode = attrs.get("mode", "constant")
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
    mode = attrs.get("mode", "nearest")
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


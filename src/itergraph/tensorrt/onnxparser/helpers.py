"""The helpers the ONNX importers share: ONNX broadcasting into TensorRT's (unit axes
prepended), small layer builders (element-wise, cast, reshape, concat ...), constant reads."""

from __future__ import annotations

import numpy as np

from ..core import Tensor
from ..enums import (
    ActivationType,
    DataType,
    ElementWiseOperation,
    FillOperation,
    UnaryOperation,
    as_dtype,
    to_numpy,
)
from .errors import ErrorCode, fail

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


def axes_operand(ctx, node, ins, attrs, index: int = 1) -> list[int] | None:
    """The constant axes of a node: its ``axes`` attribute (older opsets) or its input
    `index` (newer ones); None when neither is given."""
    if "axes" in attrs:
        return list(attrs["axes"])
    if len(ins) > index and ins[index] is not None:
        return const_ints(ctx, ins[index], f"{node.op_type} axes")
    return None

"""The ordinary layers (everything but loop and conditional boundaries), with TensorRT semantics.

Each class holds the layer's attributes under TensorRT's Python names and infers its output
dtype and shape (`_infer`). Where every input is known before run time the value is folded
too, so that shape arithmetic (``add_shape`` -> ``add_gather`` -> loop-output length, shuffle
shape tensors) gives static shapes. Lowering to IR nodes lives in :mod:`.lower`.
"""

from __future__ import annotations

import numpy as np

from ...errors import ModelError
from .core import Layer, Shape, Tensor, _dims
from .enums import (
    ActivationType,
    DataType,
    ElementWiseOperation,
    LayerType,
    MatrixOperation,
    ReduceOperation,
    UnaryOperation,
    as_dtype,
    to_numpy,
)
from .shapes import broadcast, norm_axis, volume

_INTS = (DataType.INT32, DataType.INT64, DataType.INT8, DataType.UINT8, DataType.INT4)
_FLOATS = (DataType.FLOAT, DataType.HALF, DataType.BF16, DataType.DOUBLE, DataType.FP8)


def _fold(dtype: DataType, value) -> np.ndarray:
    return np.asarray(value).astype(to_numpy(dtype))


class ConstantLayer(Layer):
    """`weights` reshaped to `shape` (TensorRT IConstantLayer)."""

    _type = LayerType.CONSTANT

    def __init__(self, network, shape, weights):
        super().__init__(network, [])
        arr = weights.numpy() if hasattr(weights, "numpy") else np.asarray(weights)
        self.shape = _dims(shape, self._what())
        self.weights = arr

    def _infer(self):
        shape = self.shape
        arr = np.asarray(self.weights)
        if -1 in shape:
            raise ModelError(f"{self._what()}: a constant's shape must be fully known, got {shape}")
        if arr.size != volume(shape):
            raise ModelError(
                f"{self._what()}: {arr.size} weights do not fill shape {shape} "
                f"({volume(shape)} elements)"
            )
        try:
            dt = as_dtype(arr.dtype)
        except ModelError as e:
            raise ModelError(f"{self._what()}: weights of {e}") from None
        return [(dt, shape, arr.reshape(shape).astype(to_numpy(dt)))]


_COMPARE = {ElementWiseOperation.LESS, ElementWiseOperation.GREATER, ElementWiseOperation.EQUAL}
_LOGICAL = {ElementWiseOperation.AND, ElementWiseOperation.OR, ElementWiseOperation.XOR}


def _elementwise_np(op: ElementWiseOperation, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    E = ElementWiseOperation
    if op is E.DIV and a.dtype.kind in "iu":
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) ^ (b < 0), -q, q).astype(a.dtype)
    fn = {
        E.SUM: np.add, E.PROD: np.multiply, E.MAX: np.maximum, E.MIN: np.minimum,
        E.SUB: np.subtract, E.DIV: np.divide, E.POW: np.power, E.FLOOR_DIV: np.floor_divide,
        E.AND: np.logical_and, E.OR: np.logical_or, E.XOR: np.logical_xor,
        E.EQUAL: np.equal, E.GREATER: np.greater, E.LESS: np.less,
    }[op]
    return np.asarray(fn(a, b))


class ElementWiseLayer(Layer):
    """Binary elementwise `op` with TensorRT broadcasting (equal ranks, size-1 axes stretch)."""

    _type = LayerType.ELEMENTWISE

    def __init__(self, network, a, b, op):
        super().__init__(network, [a, b])
        self.op = ElementWiseOperation(op)

    def _infer(self):
        a, b = self._input(0), self._input(1)
        if a.dtype != b.dtype:
            raise ModelError(
                f"{self._what()}: inputs have different types ({a.dtype.name} and {b.dtype.name})"
            )
        shape = broadcast([a.shape, b.shape], self._what())
        dt = a.dtype
        if self.op in _LOGICAL and dt != DataType.BOOL:
            raise ModelError(f"{self._what()}: {self.op.name} needs BOOL inputs, got {dt.name}")
        if self.op in _COMPARE:
            dt = DataType.BOOL
        ca, cb = a.const_value(), b.const_value()
        const = None
        if ca is not None and cb is not None:
            with np.errstate(all="ignore"):
                const = _fold(dt, _elementwise_np(self.op, ca, cb))
        return [(dt, shape, const)]


class ActivationLayer(Layer):
    """Activation `type` with parameters `alpha` and `beta` (TensorRT's formulas)."""

    _type = LayerType.ACTIVATION

    def __init__(self, network, x, kind):
        super().__init__(network, [x])
        self._act = ActivationType(kind)
        self.alpha = 0.0
        self.beta = 0.0

    @property
    def type(self) -> ActivationType:  # TensorRT's IActivationLayer.type is the activation
        return self._act

    @type.setter
    def type(self, kind) -> None:
        self._act = ActivationType(kind)

    def _infer(self):
        x = self._input(0)
        if x.dtype not in _FLOATS:
            raise ModelError(f"{self._what()}: needs a floating-point input, got {x.dtype.name}")
        return [(x.dtype, x.shape, None)]


class UnaryLayer(Layer):
    _type = LayerType.UNARY

    def __init__(self, network, x, op):
        super().__init__(network, [x])
        self.op = UnaryOperation(op)

    def _infer(self):
        x = self._input(0)
        U = UnaryOperation
        if self.op is U.NOT and x.dtype != DataType.BOOL:
            raise ModelError(f"{self._what()}: NOT needs a BOOL input, got {x.dtype.name}")
        if self.op not in (U.NOT, U.ABS, U.NEG, U.SIGN) and x.dtype not in _FLOATS:
            raise ModelError(
                f"{self._what()}: {self.op.name} needs a floating-point input, got {x.dtype.name}"
            )
        dt = DataType.BOOL if self.op in (U.ISINF, U.ISNAN) else x.dtype
        return [(dt, x.shape, None)]


class MatrixMultiplyLayer(Layer):
    """Matrix product of `input0` read per `op0` and `input1` read per `op1`.

    NONE reads ``[..., M, K]``, TRANSPOSE swaps the last two axes, VECTOR reads ``[..., K]`` (a
    vector; the result loses that axis). The leading (batch) axes broadcast as elementwise.
    """

    _type = LayerType.MATRIX_MULTIPLY

    def __init__(self, network, a, op0, b, op1):
        super().__init__(network, [a, b])
        self.op0 = MatrixOperation(op0)
        self.op1 = MatrixOperation(op1)

    def _operand(self, t: Tensor, op: MatrixOperation, i: int):
        need = 1 if op is MatrixOperation.VECTOR else 2
        if len(t.shape) < need:
            raise ModelError(
                f"{self._what()}: input {i} has rank {len(t.shape)}, {op.name} needs >= {need}"
            )
        if op is MatrixOperation.VECTOR:
            return t.shape[:-1], None, t.shape[-1]
        rows, cols = t.shape[-2], t.shape[-1]
        if op is MatrixOperation.TRANSPOSE:
            rows, cols = cols, rows
        return t.shape[:-2], rows, cols

    def _infer(self):
        a, b = self._input(0), self._input(1)
        if a.dtype != b.dtype:
            raise ModelError(
                f"{self._what()}: inputs have different types ({a.dtype.name} and {b.dtype.name})"
            )
        batch_a, m, ka = self._operand(a, self.op0, 0)
        batch_b, kb_rows, kb_cols = self._operand(b, self.op1, 1)
        if self.op1 is MatrixOperation.VECTOR:
            kb, n = kb_cols, None
        else:
            kb, n = kb_rows, kb_cols
        if -1 not in (ka, kb) and ka != kb:
            raise ModelError(
                f"{self._what()}: inner dimensions differ ({ka} vs {kb}) for shapes "
                f"{a.shape} ({self.op0.name}) and {b.shape} ({self.op1.name})"
            )
        batch = broadcast([batch_a, batch_b], self._what() + " batch axes")
        shape = batch + tuple(d for d in (m, n) if d is not None)
        return [(a.dtype, shape, None)]


class ReduceLayer(Layer):
    """Reduce `op` over the axes whose bits are set in `axes`; `keep_dims` keeps them as 1."""

    _type = LayerType.REDUCE
    _check_at_creation = False

    def __init__(self, network, x, op, axes, keep_dims):
        super().__init__(network, [x])
        self.op = ReduceOperation(op)
        self.axes = int(axes)
        self.keep_dims = bool(keep_dims)

    def axis_list(self) -> list[int]:
        rank = len(self._input(0).shape)
        if self.axes < 0 or self.axes >> rank:
            raise ModelError(
                f"{self._what()}: axes bitmask {self.axes:#b} names axes beyond rank {rank}"
            )
        return [i for i in range(rank) if self.axes >> i & 1]

    def _infer(self):
        x = self._input(0)
        axes = self.axis_list()
        if self.keep_dims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        const = None
        cx = x.const_value()
        if cx is not None and axes:
            fn = {ReduceOperation.SUM: np.sum, ReduceOperation.PROD: np.prod,
                  ReduceOperation.MAX: np.max, ReduceOperation.MIN: np.min,
                  ReduceOperation.AVG: np.mean}[self.op]
            const = _fold(x.dtype, fn(cx, axis=tuple(axes), keepdims=self.keep_dims))
        elif cx is not None:
            const = cx
        return [(x.dtype, shape, const)]


def _perm(p, rank: int, what: str) -> tuple[int, ...]:
    p = tuple(range(rank)) if p is None else tuple(int(i) for i in p)
    if len(p) < rank or sorted(p[:rank]) != list(range(rank)):
        raise ModelError(f"{what}: {p} is not a permutation of {rank} axes")
    return p[:rank]


class ShuffleLayer(Layer):
    """Transpose (`first_transpose`), reshape (`reshape_dims` or the shape tensor set as input
    1; 0 copies the input dimension when `zero_is_placeholder`, -1 is inferred), transpose
    again (`second_transpose`)."""

    _type = LayerType.SHUFFLE
    _check_at_creation = False

    def __init__(self, network, x):
        super().__init__(network, [x])
        self.first_transpose = None
        self.reshape_dims = None
        self.second_transpose = None
        self.zero_is_placeholder = True

    def _max_inputs(self) -> int:
        return 2

    def shape_input(self) -> Tensor | None:
        return self._inputs[1] if len(self._inputs) > 1 else None

    def target_dims(self) -> tuple[int, ...] | None:
        """The requested reshape (as given, with 0 / -1 placeholders), None if no reshape,
        or a tuple of -2 (unknown entries) of the shape tensor's length if it is dynamic."""
        st = self.shape_input()
        if st is not None:
            if st.dtype not in (DataType.INT32, DataType.INT64) or len(st.shape) != 1:
                raise ModelError(
                    f"{self._what()}: the shape input must be a 1-D INT32/INT64 tensor, "
                    f"got {st.dtype.name} {st.shape}"
                )
            c = st.const_value()
            if c is not None:
                return tuple(int(v) for v in c)
            if st.shape[0] < 0:
                raise ModelError(f"{self._what()}: the shape input must have a known length")
            return (-2,) * st.shape[0]
        if self.reshape_dims is None:
            return None
        return tuple(int(d) for d in self.reshape_dims)

    def _infer(self):
        x = self._input(0)
        first = _perm(self.first_transpose, len(x.shape), f"{self._what()} first_transpose")
        shape = tuple(x.shape[i] for i in first)
        target = self.target_dims()
        if target is not None:
            shape = self._reshape(shape, target)
        second = _perm(self.second_transpose, len(shape), f"{self._what()} second_transpose")
        shape = tuple(shape[i] for i in second)
        const = None
        cx = x.const_value()
        if cx is not None and -1 not in shape:
            const = np.transpose(cx, first)
            if target is not None:
                const = const.reshape(tuple(shape[i] for i in np.argsort(second)))
            const = np.transpose(const, second)
        return [(x.dtype, shape, const)]

    def _reshape(self, shape: Shape, target: tuple[int, ...]) -> Shape:
        out = []
        for i, d in enumerate(target):
            if d == -2:
                out.append(-1)
            elif d == 0 and self.zero_is_placeholder:
                if i >= len(shape):
                    raise ModelError(f"{self._what()}: placeholder 0 at axis {i} has no input axis")
                out.append(shape[i])
            elif d < -1:
                raise ModelError(f"{self._what()}: bad reshape dimension {d}")
            else:
                out.append(d)
        if out.count(-1) > 1 and -2 not in target:
            raise ModelError(f"{self._what()}: at most one reshape dimension may be -1: {target}")
        if out.count(-1) == 1 and -2 not in target and -1 not in shape:
            rest = volume([d for d in out if d != -1])
            total = volume(shape)
            if rest == 0 or total % rest:
                raise ModelError(f"{self._what()}: cannot reshape {shape} into {target}")
            out[out.index(-1)] = total // rest
        if -1 not in out and -1 not in shape and volume(out) != volume(shape):
            raise ModelError(f"{self._what()}: cannot reshape {shape} into {tuple(out)}")
        return tuple(out)


class ConcatenationLayer(Layer):
    """Join inputs along `axis` (default: rank - 3, or 0 below rank 3, as in TensorRT)."""

    _type = LayerType.CONCATENATION
    _check_at_creation = False

    def __init__(self, network, inputs):
        super().__init__(network, list(inputs))
        if not inputs:
            raise ModelError(f"{self._what()}: needs at least one input")
        self.axis = max(len(inputs[0].shape) - 3, 0)

    def _infer(self):
        ts = [self._input(i) for i in range(len(self._inputs))]
        rank = len(ts[0].shape)
        axis = norm_axis(self.axis, rank, self._what())
        for t in ts:
            if t.dtype != ts[0].dtype or len(t.shape) != rank:
                raise ModelError(
                    f"{self._what()}: inputs differ in type or rank: "
                    + ", ".join(f"{t.dtype.name}{t.shape}" for t in ts)
                )
        shape = []
        for i in range(rank):
            dims = [t.shape[i] for t in ts]
            if i == axis:
                shape.append(-1 if -1 in dims else sum(dims))
            else:
                known = {d for d in dims if d != -1}
                if len(known) > 1:
                    raise ModelError(
                        f"{self._what()}: inputs differ on axis {i}, which is not the "
                        f"concatenation axis {axis}: " + ", ".join(str(t.shape) for t in ts)
                    )
                shape.append(known.pop() if known else -1)
        consts = [t.const_value() for t in ts]
        const = None if any(c is None for c in consts) else np.concatenate(consts, axis=axis)
        return [(ts[0].dtype, tuple(shape), const)]


class SliceLayer(Layer):
    """``out[i] = x[start + i * stride]`` per axis for ``i < shape`` (strict bounds).

    `start`, `shape`, `stride` may instead come from 1-D tensors set as inputs 1, 2, 3.
    """

    _type = LayerType.SLICE
    _check_at_creation = False

    def __init__(self, network, x, start, shape, stride):
        super().__init__(network, [x])
        self.start = _dims_signed(start)
        self.shape = _dims(shape, self._what() + " shape")
        self.stride = _dims_signed(stride)

    def _max_inputs(self) -> int:
        return 4

    def param(self, i: int) -> tuple[int, ...] | Tensor:
        """Input `i` (1 start, 2 shape, 3 stride): a tuple when known at build time."""
        t = self._inputs[i] if i < len(self._inputs) else None
        if t is None:
            return (self.start, self.shape, self.stride)[i - 1]
        if t.dtype not in (DataType.INT32, DataType.INT64) or len(t.shape) != 1:
            raise ModelError(
                f"{self._what()}: input {i} must be a 1-D INT32/INT64 tensor, got "
                f"{t.dtype.name} {t.shape}"
            )
        c = t.const_value()
        return t if c is None else tuple(int(v) for v in c)

    def _infer(self):
        x = self._input(0)
        rank = len(x.shape)
        params = [self.param(i) for i in (1, 2, 3)]
        for name, p in zip(("start", "shape", "stride"), params):
            n = p.shape[0] if isinstance(p, Tensor) else len(p)
            if n != rank:
                raise ModelError(f"{self._what()}: {name} has {n} entries, input rank is {rank}")
        start, shape, stride = params
        out_shape = (-1,) * rank if isinstance(shape, Tensor) else tuple(shape)
        static = not any(isinstance(p, Tensor) for p in params)
        if static and -1 not in x.shape:
            for axis in range(rank):
                if shape[axis] == 0:
                    continue
                first, last = start[axis], start[axis] + (shape[axis] - 1) * stride[axis]
                if not (0 <= first < x.shape[axis] and 0 <= last < x.shape[axis]):
                    raise ModelError(
                        f"{self._what()}: axis {axis} reads indices {first}..{last} outside "
                        f"[0, {x.shape[axis]})"
                    )
        const = None
        cx = x.const_value()
        if cx is not None and static:
            idx = tuple(
                np.arange(shape[a]) * stride[a] + start[a] for a in range(rank)
            )
            const = cx[np.ix_(*idx)] if rank else cx
        return [(x.dtype, out_shape, const)]


def _dims_signed(dims) -> tuple[int, ...]:
    return tuple(int(d) for d in dims)


class GatherLayer(Layer):
    """``out = take(data, indices, axis)`` (TensorRT's default gather mode)."""

    _type = LayerType.GATHER
    _check_at_creation = False

    def __init__(self, network, data, indices, axis):
        super().__init__(network, [data, indices])
        self.axis = int(axis)
        self.num_elementwise_dims = 0

    def _infer(self):
        data, idx = self._input(0), self._input(1)
        if idx.dtype not in (DataType.INT32, DataType.INT64):
            raise ModelError(f"{self._what()}: indices must be INT32/INT64, got {idx.dtype.name}")
        if self.num_elementwise_dims:
            raise ModelError(f"{self._what()}: only num_elementwise_dims=0 is supported")
        axis = norm_axis(self.axis, len(data.shape), self._what())
        shape = data.shape[:axis] + idx.shape + data.shape[axis + 1 :]
        cd, ci = data.const_value(), idx.const_value()
        const = None
        if cd is not None and ci is not None:
            n = cd.shape[axis]
            if np.any((ci < -n) | (ci >= n)):
                raise ModelError(f"{self._what()}: index out of range for axis size {n}")
            const = np.take(cd, ci, axis=axis)
        return [(data.dtype, shape, const)]


class IdentityLayer(Layer):
    _type = LayerType.IDENTITY

    def __init__(self, network, x):
        super().__init__(network, [x])

    def _infer(self):
        x = self._input(0)
        return [(x.dtype, x.shape, x.const_value())]


class CastLayer(Layer):
    _type = LayerType.CAST

    def __init__(self, network, x, to_type):
        super().__init__(network, [x])
        self.to_type = as_dtype(to_type)

    def _infer(self):
        x = self._input(0)
        c = x.const_value()
        return [(self.to_type, x.shape, None if c is None else _fold(self.to_type, c))]


class SelectLayer(Layer):
    """``where(condition, then_input, else_input)`` with TensorRT broadcasting."""

    _type = LayerType.SELECT

    def __init__(self, network, cond, a, b):
        super().__init__(network, [cond, a, b])

    def _infer(self):
        c, a, b = (self._input(i) for i in range(3))
        if c.dtype != DataType.BOOL:
            raise ModelError(f"{self._what()}: the condition must be BOOL, got {c.dtype.name}")
        if a.dtype != b.dtype:
            raise ModelError(
                f"{self._what()}: branches have different types ({a.dtype.name}, {b.dtype.name})"
            )
        return [(a.dtype, broadcast([c.shape, a.shape, b.shape], self._what()), None)]


class ShapeLayer(Layer):
    """The shape of its input as a 1-D INT64 tensor (TensorRT 10)."""

    _type = LayerType.SHAPE

    def __init__(self, network, x):
        super().__init__(network, [x])

    def _infer(self):
        x = self._input(0)
        const = None if -1 in x.shape else np.array(x.shape, dtype=np.int64)
        return [(DataType.INT64, (len(x.shape),), const)]


class SoftMaxLayer(Layer):
    """Softmax over the single axis whose bit is set in `axes` (default: rank - 3, or 0)."""

    _type = LayerType.SOFTMAX
    _check_at_creation = False

    def __init__(self, network, x):
        super().__init__(network, [x])
        rank = len(x.shape)
        self.axes = 1 << max(rank - 3, 0) if rank else 0

    def axis(self) -> int:
        rank = len(self._input(0).shape)
        bits = [i for i in range(rank) if self.axes >> i & 1]
        if len(bits) != 1 or self.axes >> rank:
            raise ModelError(f"{self._what()}: axes must name exactly one axis, got {self.axes:#b}")
        return bits[0]

    def _infer(self):
        x = self._input(0)
        self.axis()
        return [(x.dtype, x.shape, None)]



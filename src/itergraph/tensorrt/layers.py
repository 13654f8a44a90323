"""The ordinary layers (everything but loop and conditional boundaries), with TensorRT semantics.

Each class holds the layer's attributes under TensorRT's Python names and infers its output
dtype and shape (`infer`). Where every input is known before run time the value is folded
too, so that shape arithmetic (``add_shape`` -> ``add_gather`` -> loop-output length, shuffle
shape tensors) gives static shapes. Each class also lowers itself to ONNX-standard IR nodes
(`lower`, through the `lower.Emitter`); ops that are one ONNX op under another name come from
`same_ops`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError
from .core import FLOATS as _FLOATS
from .core import Layer, Shape, Tensor, _dims, int_tuple
from .dims import Dims, Permutation
from .enums import (
    ONNX_TYPE,
    ActivationType,
    DataType,
    ElementWiseOperation,
    GatherMode,
    LayerType,
    MatrixOperation,
    ReduceOperation,
    SampleMode,
    UnaryOperation,
    as_dtype,
    check_enum,
    to_numpy,
)
from .same_ops import by_trt
from .shapes import broadcast, norm_axis, volume

_INTS = (DataType.INT32, DataType.INT64, DataType.INT8, DataType.UINT8, DataType.INT4)
_INDEX = (DataType.INT32, DataType.INT64)


def _fold(dtype: DataType, value) -> np.ndarray:
    return np.asarray(value).astype(to_numpy(dtype))


INT64_MIN = np.iinfo(np.int64).min


# -- helpers of the lowerings -------------------------------------------------------------


def _swap_last(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


_REDUCE = {
    ReduceOperation.SUM: "ReduceSum", ReduceOperation.PROD: "ReduceProd",
    ReduceOperation.MAX: "ReduceMax", ReduceOperation.MIN: "ReduceMin",
    ReduceOperation.AVG: "ReduceMean",
}


def _entry(em, p, j: int):
    """Entry j of a slice parameter (a tuple or an integer tensor) as an INT64 scalar."""
    if isinstance(p, tuple):
        return em.scalar(p[j], DataType.INT64)
    return em.node("Gather", [em.as_int64(p), em.scalar(j, DataType.INT64)], {"axis": 0})


def _slice_sampled(layer, em, x, axes, params):
    """WRAP / CLAMP / FILL / REFLECT slices: one Gather per sliced axis at indices mapped
    back into the axis (FILL: out-of-range positions replaced by the fill value)."""
    mode = layer.mode
    rank = len(layer.inputs[0].shape)
    I64 = DataType.INT64
    zero, one = em.scalar(0, I64), em.scalar(1, I64)
    shape = em.node("Shape", [x])
    fill = None
    if mode is SampleMode.FILL:
        f = layer.get_input(4)
        dt = to_numpy(layer.inputs[0].compute_dtype)
        fill = (em.const(np.zeros((), dt)) if f is None
                else em.node("Cast", [em.value(f)],
                             {"to": ONNX_TYPE[layer.inputs[0].compute_dtype]}))
    start, size, stride = params
    for j, a in enumerate(axes):
        n = em.node("Gather", [shape, em.scalar(a, I64)], {"axis": 0})
        steps = em.node("Range", [zero, _entry(em, size, j), one])
        idx = em.node("Add", [_entry(em, start, j), em.node("Mul", [steps, _entry(em, stride, j)])])
        last = em.node("Sub", [n, one])
        clamped = em.node("Max", [em.node("Min", [idx, last]), zero])
        if mode is SampleMode.WRAP:
            use = em.node("Mod", [idx, n])
        elif mode is SampleMode.REFLECT:
            period = em.node("Max", [em.node("Mul", [last, em.scalar(2, I64)]), one])
            m = em.node("Mod", [idx, period])
            use = em.node("Where", [em.node("Less", [m, n]), m, em.node("Sub", [period, m])])
        else:
            use = clamped
        x = em.node("Gather", [x, use], {"axis": a})
        if fill is not None:
            inside = em.node("And", [em.node("GreaterOrEqual", [idx, zero]),
                                     em.node("Less", [idx, n])])
            others = [i for i in range(rank) if i != a]
            if others:
                inside = em.node("Unsqueeze", [inside, em.ints(others)])
            x = em.node("Where", [inside, x, fill])
    return x


class ConstantLayer(Layer):
    """`weights` reshaped to `shape` (TensorRT IConstantLayer)."""

    _type = LayerType.CONSTANT

    polymorphic = True

    def __init__(self, network, shape, weights):
        super().__init__(network, [])
        self.shape = shape
        self.weights = weights

    @property
    def shape(self) -> Dims:
        return Dims(self._shape)

    @shape.setter
    def shape(self, dims) -> None:
        self._shape = _dims(dims, self.what())
        self._network.touch()

    @property
    def weights(self) -> np.ndarray:
        return self._weights

    @weights.setter
    def weights(self, w) -> None:
        self._weights = w.numpy() if hasattr(w, "numpy") else np.asarray(w)
        self._network.touch()

    def infer(self):
        shape = self._shape
        arr = np.asarray(self._weights)
        if -1 in shape:
            raise ModelError(f"{self.what()}: a constant's shape must be fully known, got {shape}")
        if arr.size != volume(shape):
            raise ModelError(
                f"{self.what()}: {arr.size} weights do not fill shape {shape} "
                f"({volume(shape)} elements)"
            )
        try:
            dt = as_dtype(arr.dtype)
        except ModelError as e:
            raise ModelError(f"{self.what()}: weights of {e}") from None
        return [(dt, shape, arr.reshape(shape).astype(to_numpy(dt)))]

    def lower(self, em):
        out = self.outputs[0]
        v = em.const(out.const_value(), out.name)
        em.names.discard(v.name)
        return v


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
    polymorphic = True

    def __init__(self, network, a, b, op):
        super().__init__(network, [a, b])
        self.op = check_enum(ElementWiseOperation, op, self.what())

    def infer(self):
        a, b = self.required_input(0), self.required_input(1)
        if a.compute_dtype != b.compute_dtype:
            raise ModelError(
                f"{self.what()}: inputs have different types ({a.compute_dtype.name} and "
                f"{b.compute_dtype.name})"
            )
        shape = broadcast([a.shape, b.shape], self.what())
        dt = a.compute_dtype
        if self.op in _LOGICAL and dt != DataType.BOOL:
            raise ModelError(f"{self.what()}: {self.op.name} needs BOOL inputs, got {dt.name}")
        if self.op in _COMPARE:
            dt = DataType.BOOL
        ca, cb = a.const_value(), b.const_value()
        const = None
        if ca is not None and cb is not None:
            with np.errstate(all="ignore"):
                const = _fold(dt, _elementwise_np(self.op, ca, cb))
        return [(dt, shape, const)]

    def lower(self, em):
        a, b = em.value(self.inputs[0]), em.value(self.inputs[1])
        if self.op is ElementWiseOperation.FLOOR_DIV:
            if self.inputs[0].dtype in (DataType.INT32, DataType.INT64, DataType.INT8,
                                          DataType.UINT8):
                # exact for integers: (a - mod(a, b)) / b, with mod taking the divisor's sign
                return em.node("Div", [em.node("Sub", [a, em.node("Mod", [a, b])]), b])
            return em.node("Floor", [em.node("Div", [a, b])])
        return em.node(by_trt(self.op).onnx, [a, b])


class ActivationLayer(Layer):
    """Activation `type` with parameters `alpha` and `beta` (TensorRT's formulas)."""

    _type = LayerType.ACTIVATION

    def __init__(self, network, x, kind):
        super().__init__(network, [x])
        self._act = check_enum(ActivationType, kind, self.what())
        self.alpha = 0.0
        self.beta = 0.0

    @property
    def type(self) -> ActivationType:
        """The activation: TensorRT's ``IActivationLayer.type`` (seen through ``network[i]``,
        the ``ILayer`` interface, ``type`` is ``LayerType.ACTIVATION``)."""
        return self._act

    @type.setter
    def type(self, kind) -> None:
        self._act = check_enum(ActivationType, kind, self.what())
        self._network.touch()

    def infer(self):
        x = self.required_input(0)
        if x.compute_dtype not in _FLOATS + (DataType.INT8,):
            raise ModelError(f"{self.what()}: needs a floating-point input, got "
                             f"{x.compute_dtype.name}")
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        x = em.value(self.inputs[0])
        dt = self.inputs[0].dtype
        alpha, beta = float(self.alpha), float(self.beta)
        A = ActivationType
        kind = self.type

        def k(c):
            return em.scalar(c, dt)

        row = by_trt(kind)
        if row is not None:
            fields = {"alpha": alpha, "beta": beta}
            return em.node(row.onnx, [x], {name: fields[f] for name, f, _ in row.attrs})
        if kind is A.CLIP:
            return em.node("Clip", [x, k(alpha), k(beta)])
        if kind is A.SOFTPLUS:  # alpha * log(exp(beta * x) + 1)
            return em.node("Mul", [em.node("Softplus", [em.node("Mul", [x, k(beta)])]), k(alpha)])
        if kind is A.SCALED_TANH:  # alpha * tanh(beta * x)
            return em.node("Mul", [em.node("Tanh", [em.node("Mul", [x, k(beta)])]), k(alpha)])
        if kind is A.GELU_ERF:  # 0.5 x (1 + erf(x / sqrt 2))
            e = em.node("Erf", [em.node("Mul", [x, k(1 / math.sqrt(2))])])
            return em.node("Mul", [em.node("Mul", [x, k(0.5)]), em.node("Add", [e, k(1.0)])])
        if kind is A.GELU_TANH:  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
            cube = em.node("Mul", [em.node("Mul", [em.node("Mul", [x, x]), x]), k(0.044715)])
            inner = em.node("Mul", [em.node("Add", [x, cube]), k(math.sqrt(2 / math.pi))])
            t = em.node("Add", [em.node("Tanh", [inner]), k(1.0)])
            return em.node("Mul", [em.node("Mul", [x, k(0.5)]), t])
        raise AssertionError(kind)


class UnaryLayer(Layer):
    _type = LayerType.UNARY
    polymorphic = True

    def __init__(self, network, x, op):
        super().__init__(network, [x])
        self.op = check_enum(UnaryOperation, op, self.what())

    def infer(self):
        x = self.required_input(0)
        U = UnaryOperation
        if self.op is U.NOT and x.compute_dtype != DataType.BOOL:
            raise ModelError(f"{self.what()}: NOT needs a BOOL input, got {x.compute_dtype.name}")
        if self.op not in (U.NOT, U.ABS, U.NEG, U.SIGN) and x.compute_dtype not in _FLOATS:
            raise ModelError(
                f"{self.what()}: {self.op.name} needs a floating-point input, got "
                f"{x.compute_dtype.name}"
            )
        dt = DataType.BOOL if self.op in (U.ISINF, U.ISNAN) else x.compute_dtype
        const = None
        c = x.const_value()
        if c is not None and self.op in (U.NOT, U.ABS, U.NEG, U.SIGN):
            fn = {U.NOT: np.logical_not, U.ABS: np.abs, U.NEG: np.negative, U.SIGN: np.sign}
            const = _fold(dt, fn[self.op](c))
        return [(dt, x.shape, const)]

    def lower(self, em):
        if self.op is UnaryOperation.ISINF:
            return em.node("IsInf", [em.value(self.inputs[0])])
        return em.node(by_trt(self.op).onnx, [em.value(self.inputs[0])])


class MatrixMultiplyLayer(Layer):
    """Matrix product of `input0` read per `op0` and `input1` read per `op1`.

    NONE reads ``[..., M, K]``, TRANSPOSE swaps the last two axes, VECTOR reads ``[..., K]`` (a
    vector; the result loses that axis). The leading (batch) axes broadcast as elementwise.
    """

    _type = LayerType.MATRIX_MULTIPLY

    def __init__(self, network, a, op0, b, op1):
        super().__init__(network, [a, b])
        self.op0 = check_enum(MatrixOperation, op0, self.what())
        self.op1 = check_enum(MatrixOperation, op1, self.what())

    def _operand(self, t: Tensor, op: MatrixOperation, i: int):
        need = 1 if op is MatrixOperation.VECTOR else 2
        if len(t.shape) < need:
            raise ModelError(
                f"{self.what()}: input {i} has rank {len(t.shape)}, {op.name} needs >= {need}"
            )
        if op is MatrixOperation.VECTOR:
            return t.shape[:-1], None, t.shape[-1]
        rows, cols = t.shape[-2], t.shape[-1]
        if op is MatrixOperation.TRANSPOSE:
            rows, cols = cols, rows
        return t.shape[:-2], rows, cols

    def infer(self):
        a, b = self.required_input(0), self.required_input(1)
        if a.compute_dtype != b.compute_dtype:
            raise ModelError(
                f"{self.what()}: inputs have different types ({a.compute_dtype.name} and "
                f"{b.compute_dtype.name})"
            )
        batch_a, m, ka = self._operand(a, self.op0, 0)
        batch_b, kb_rows, kb_cols = self._operand(b, self.op1, 1)
        if self.op1 is MatrixOperation.VECTOR:
            kb, n = kb_cols, None
        else:
            kb, n = kb_rows, kb_cols
        if -1 not in (ka, kb) and ka != kb:
            raise ModelError(
                f"{self.what()}: inner dimensions differ ({ka} vs {kb}) for shapes "
                f"{a.shape} ({self.op0.name}) and {b.shape} ({self.op1.name})"
            )
        batch = broadcast([batch_a, batch_b], self.what() + " batch axes")
        shape = batch + tuple(d for d in (m, n) if d is not None)
        return [(a.compute_dtype, shape, None)]

    def lower(self, em):
        a_t, b_t = self.inputs
        a, b = em.value(a_t), em.value(b_t)
        M = MatrixOperation
        if self.op0 is M.TRANSPOSE:
            a = em.node("Transpose", [a], {"perm": _swap_last(len(a_t.shape))})
        elif self.op0 is M.VECTOR:
            a = em.node("Unsqueeze", [a, em.ints([-2])])
        if self.op1 is M.TRANSPOSE:
            b = em.node("Transpose", [b], {"perm": _swap_last(len(b_t.shape))})
        elif self.op1 is M.VECTOR:
            b = em.node("Unsqueeze", [b, em.ints([-1])])
        y = em.node("MatMul", [a, b])
        squeeze = [-2] * (self.op0 is M.VECTOR) + [-1] * (self.op1 is M.VECTOR)
        return em.node("Squeeze", [y, em.ints(squeeze)]) if squeeze else y


class ReduceLayer(Layer):
    """Reduce `op` over the axes whose bits are set in `axes`; `keep_dims` keeps them as 1."""

    _type = LayerType.REDUCE
    check_at_creation = False
    polymorphic = True

    def __init__(self, network, x, op, axes, keep_dims):
        super().__init__(network, [x])
        self.op = check_enum(ReduceOperation, op, self.what())
        self.axes = int(axes)
        self.keep_dims = bool(keep_dims)

    def axis_list(self) -> list[int]:
        rank = len(self.required_input(0).shape)
        if self.axes < 0 or self.axes >> rank:
            raise ModelError(
                f"{self.what()}: axes bitmask {self.axes:#b} names axes beyond rank {rank}"
            )
        return [i for i in range(rank) if self.axes >> i & 1]

    def infer(self):
        x = self.required_input(0)
        if self.op is ReduceOperation.NONE:
            raise ModelError(f"{self.what()}: ReduceOperation.NONE is no reduction")
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
            const = _fold(x.compute_dtype, fn(cx, axis=tuple(axes), keepdims=self.keep_dims))
        elif cx is not None:
            const = cx
        return [(x.compute_dtype, shape, const)]

    def lower(self, em):
        x = em.value(self.inputs[0])
        axes = self.axis_list()
        if not axes:
            return em.node("Identity", [x])
        return em.node(_REDUCE[self.op], [x, em.ints(axes)], {"keepdims": int(self.keep_dims)})


def _perm(p, rank: int, what: str) -> tuple[int, ...]:
    """The first `rank` entries of permutation `p` (TensorRT's Permutation has 8 entries)."""
    p = tuple(range(rank)) if p is None else tuple(int(i) for i in p)
    if len(p) < rank or sorted(p[:rank]) != list(range(rank)):
        raise ModelError(f"{what}: {p} is not a permutation of {rank} axes")
    return p[:rank]


class ShuffleLayer(Layer):
    """Transpose (`first_transpose`), reshape (`reshape_dims` or the shape tensor set as input
    1; 0 copies the input dimension when `zero_is_placeholder`, -1 is inferred), transpose
    again (`second_transpose`)."""

    _type = LayerType.SHUFFLE
    check_at_creation = False
    shape_inputs = (1,)
    polymorphic = True

    def __init__(self, network, x):
        super().__init__(network, [x])
        self._first = None
        self._reshape_dims = None
        self._second = None
        self.zero_is_placeholder = True

    def max_inputs(self) -> int:
        return 2

    @property
    def first_transpose(self) -> Permutation:
        return Permutation(range(8) if self._first is None else self._first)

    @first_transpose.setter
    def first_transpose(self, p) -> None:
        self._first = None if p is None else int_tuple(self, p, "first_transpose")
        self._network.touch()

    @property
    def second_transpose(self) -> Permutation:
        return Permutation(range(8) if self._second is None else self._second)

    @second_transpose.setter
    def second_transpose(self, p) -> None:
        self._second = None if p is None else int_tuple(self, p, "second_transpose")
        self._network.touch()

    @property
    def reshape_dims(self) -> Dims | None:
        return None if self._reshape_dims is None else Dims(self._reshape_dims)

    @reshape_dims.setter
    def reshape_dims(self, dims) -> None:
        """Setting the dimensions drops a shape tensor set as input 1 (TensorRT)."""
        self._reshape_dims = None if dims is None else int_tuple(self, dims, "reshape_dims")
        if dims is not None and len(self.inputs) > 1:
            del self.inputs[1:]
        self._network.touch()

    def shape_input(self) -> Tensor | None:
        return self.inputs[1] if len(self.inputs) > 1 else None

    def target_dims(self) -> tuple[int, ...] | None:
        """The requested reshape (as given, with 0 / -1 placeholders), None if no reshape,
        or a tuple of -2 (unknown entries) of the shape tensor's length if it is dynamic."""
        st = self.shape_input()
        if st is not None:
            if st.compute_dtype not in _INDEX or len(st.shape) != 1:
                raise ModelError(
                    f"{self.what()}: the shape input must be a 1-D INT32/INT64 tensor, "
                    f"got {st.compute_dtype.name} {tuple(st.shape)}"
                )
            c = st.const_value()
            if c is not None:
                return tuple(int(v) for v in c)
            if st.shape[0] < 0:
                raise ModelError(f"{self.what()}: the shape input must have a known length")
            return (-2,) * st.shape[0]
        return self._reshape_dims

    def infer(self):
        x = self.required_input(0)
        first = _perm(self._first, len(x.shape), f"{self.what()} first_transpose")
        shape = tuple(x.shape[i] for i in first)
        target = self.target_dims()
        if target is not None:
            shape = self._reshape(shape, target)
        second = _perm(self._second, len(shape), f"{self.what()} second_transpose")
        shape = tuple(shape[i] for i in second)
        const = None
        cx = x.const_value()
        if cx is not None and -1 not in shape:
            const = np.transpose(cx, first)
            if target is not None:
                const = const.reshape(tuple(shape[i] for i in np.argsort(second)))
            const = np.transpose(const, second)
        return [(x.compute_dtype, shape, const)]

    def _reshape(self, shape: Shape, target: tuple[int, ...]) -> Shape:
        out = []
        for i, d in enumerate(target):
            if d == -2:
                out.append(-1)
            elif d == 0 and self.zero_is_placeholder:
                if i >= len(shape):
                    raise ModelError(f"{self.what()}: placeholder 0 at axis {i} has no input axis")
                out.append(shape[i])
            elif d < -1:
                raise ModelError(f"{self.what()}: bad reshape dimension {d}")
            else:
                out.append(d)
        if out.count(-1) > 1 and -2 not in target:
            raise ModelError(f"{self.what()}: at most one reshape dimension may be -1: {target}")
        if out.count(-1) == 1 and -2 not in target and -1 not in shape:
            rest = volume([d for d in out if d != -1])
            total = volume(shape)
            if rest == 0 or total % rest:
                raise ModelError(f"{self.what()}: cannot reshape {shape} into {target}")
            out[out.index(-1)] = total // rest
        if -1 not in out and -1 not in shape and volume(out) != volume(shape):
            raise ModelError(f"{self.what()}: cannot reshape {shape} into {tuple(out)}")
        return tuple(out)

    def lower(self, em):
        x_t = self.inputs[0]
        x = em.value(x_t)
        rank = len(x_t.shape)
        first = _perm(self._first, rank, self.what())
        if list(first) != list(range(rank)):
            x = em.node("Transpose", [x], {"perm": list(first)})
        target = self.target_dims()
        if target is not None:
            if -2 in target:
                shape = em.as_int64(self.shape_input())
            else:
                shape = em.ints(target)
            x = em.node("Reshape", [x, shape], {"allowzero": 0 if self.zero_is_placeholder else 1})
        out_rank = len(self.outputs[0].shape)
        second = _perm(self._second, out_rank, self.what())
        if list(second) != list(range(out_rank)):
            x = em.node("Transpose", [x], {"perm": list(second)})
        if x is em.value(x_t):
            x = em.node("Identity", [x])
        return x


class ConcatenationLayer(Layer):
    """Join inputs along `axis` (default: rank - 3, or 0 below rank 3, as in TensorRT)."""

    _type = LayerType.CONCATENATION
    check_at_creation = False
    polymorphic = True

    def __init__(self, network, inputs):
        super().__init__(network, list(inputs))
        if not inputs:
            raise ModelError(f"{self.what()}: needs at least one input")
        self.axis = max(len(inputs[0].shape) - 3, 0)

    def infer(self):
        ts = [self.required_input(i) for i in range(len(self.inputs))]
        rank = len(ts[0].shape)
        axis = norm_axis(self.axis, rank, self.what())
        for t in ts:
            if t.compute_dtype != ts[0].compute_dtype or len(t.shape) != rank:
                raise ModelError(
                    f"{self.what()}: inputs differ in type or rank: "
                    + ", ".join(f"{t.compute_dtype.name}{tuple(t.shape)}" for t in ts)
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
                        f"{self.what()}: inputs differ on axis {i}, which is not the "
                        f"concatenation axis {axis}: " + ", ".join(str(t.shape) for t in ts)
                    )
                shape.append(known.pop() if known else -1)
        consts = [t.const_value() for t in ts]
        const = None if any(c is None for c in consts) else np.concatenate(consts, axis=axis)
        return [(ts[0].compute_dtype, tuple(shape), const)]

    def lower(self, em):
        axis = norm_axis(self.axis, len(self.inputs[0].shape), self.what())
        return em.node("Concat", [em.value(t) for t in self.inputs], {"axis": axis})


class SliceLayer(Layer):
    """``out[i] = x[start + i * stride]`` per sliced axis for ``i < shape``.

    `start`, `shape`, `stride` (Python sequences or ``Dims``) may instead come from 1-D tensors
    set as inputs 1, 2, 3; `axes` (or input 5) restricts them to those axes, the others being
    taken whole. `mode` says what an index outside the axis reads: STRICT_BOUNDS (an error),
    WRAP (modulo the length), CLAMP (the nearest end), FILL (input 4, default 0), REFLECT
    (mirrored about the end elements). Setting a Python value drops the matching input.
    """

    _type = LayerType.SLICE
    check_at_creation = False
    shape_inputs = (1, 2, 3, 5)
    polymorphic = True

    def __init__(self, network, x, start, shape, stride):
        super().__init__(network, [x])
        self._params = {1: None, 2: None, 3: None, 5: None}
        self.start, self.shape, self.stride = start, shape, stride
        self._mode = SampleMode.STRICT_BOUNDS

    def max_inputs(self) -> int:
        return 6

    def _set(self, i: int, dims) -> None:
        attr = {1: "start", 2: "shape", 3: "stride", 5: "axes"}[i]
        self._params[i] = None if dims is None else int_tuple(self, dims, attr)
        if len(self.inputs) > i:
            self.inputs[i] = None
        self._network.touch()

    def _get(self, i: int) -> Dims | None:
        if self.get_input(i) is not None:
            return None  # TensorRT: an invalid Dims when the input is set
        p = self._params[i]
        return None if p is None else Dims(p)

    start = property(lambda self: self._get(1), lambda self, v: self._set(1, v))
    shape = property(lambda self: self._get(2), lambda self, v: self._set(2, v))
    stride = property(lambda self: self._get(3), lambda self, v: self._set(3, v))
    axes = property(lambda self: self._get(5), lambda self, v: self._set(5, v))

    @property
    def mode(self) -> SampleMode:
        return self._mode

    @mode.setter
    def mode(self, m) -> None:
        self._mode = check_enum(SampleMode, m, self.what())
        self._network.touch()

    def param(self, i: int) -> tuple[int, ...] | Tensor | None:
        """Input `i` (1 start, 2 shape, 3 stride, 5 axes): a tuple when known at build time."""
        t = self.get_input(i)
        if t is None:
            return self._params[i]
        if t.compute_dtype not in _INDEX or len(t.shape) != 1:
            raise ModelError(
                f"{self.what()}: input {i} must be a 1-D INT32/INT64 tensor, got "
                f"{t.compute_dtype.name} {tuple(t.shape)}"
            )
        c = t.const_value()
        return t if c is None else tuple(int(v) for v in c)

    def resolved(self):
        """(axes, start, shape, stride): the sliced axes (a tuple, every axis when `axes` is
        unset) and per-axis parameters (tuples, or tensors known only at run time)."""
        x = self.required_input(0)
        rank = len(x.shape)
        axes = self.param(5)
        if isinstance(axes, Tensor):
            raise ModelError(f"{self.what()}: the axes input must be a build-time constant")
        axes = tuple(range(rank)) if axes is None else tuple(
            norm_axis(a, rank, f"{self.what()} axes") for a in axes)
        if len(set(axes)) != len(axes):
            raise ModelError(f"{self.what()}: axes {axes} repeat an axis")
        params = []
        for i, name in ((1, "start"), (2, "shape"), (3, "stride")):
            p = self.param(i)
            if p is None:
                raise ModelError(f"{self.what()}: its {name} is not set")
            n = p.shape[0] if isinstance(p, Tensor) else len(p)
            if n != len(axes):
                raise ModelError(f"{self.what()}: {name} has {n} entries for "
                                 f"{len(axes)} sliced axes (input rank {rank})")
            params.append(p)
        return (axes, *params)

    def infer(self):
        x = self.required_input(0)
        rank = len(x.shape)
        axes, start, shape, stride = self.resolved()
        fill = self.get_input(4)
        if fill is not None and self._mode is not SampleMode.FILL:
            raise ModelError(f"{self.what()}: input 4 (the fill value) is only for "
                             "SampleMode.FILL")
        out_shape = list(x.shape)
        for j, a in enumerate(axes):
            out_shape[a] = -1 if isinstance(shape, Tensor) else shape[j]
        static = not any(isinstance(p, Tensor) for p in (start, shape, stride))
        strict = self._mode is SampleMode.STRICT_BOUNDS
        if static and strict:
            for j, a in enumerate(axes):
                n = x.shape[a]
                if shape[j] == 0 or n < 0:
                    continue
                first, last = start[j], start[j] + (shape[j] - 1) * stride[j]
                if not (0 <= first < n and 0 <= last < n):
                    raise ModelError(
                        f"{self.what()}: axis {a} reads indices {first}..{last} outside "
                        f"[0, {n})"
                    )
        const = None
        cx = x.const_value()
        if cx is not None and static and strict:
            idx = [np.arange(d) for d in cx.shape]
            for j, a in enumerate(axes):
                idx[a] = np.arange(shape[j]) * stride[j] + start[j]
            const = cx[np.ix_(*idx)] if rank else cx
        return [(x.compute_dtype, tuple(out_shape), const)]

    def lower(self, em):
        x_t = self.inputs[0]
        x = em.value(x_t)
        if not x_t.shape:
            return em.node("Identity", [x])
        axes, *params = self.resolved()
        if self.mode is not SampleMode.STRICT_BOUNDS:
            return _slice_sampled(self, em, x, axes, params)
        if all(isinstance(p, tuple) for p in params):
            start, shape, stride = params
            ends = []
            for s, n, d in zip(start, shape, stride):
                e = s + n * d
                ends.append(INT64_MIN if e < 0 else e)  # negative step down to index 0
            return em.node("Slice", [x, em.ints(start), em.ints(ends), em.ints(axes),
                                     em.ints(stride)])
        start, shape, stride = (
            em.ints(p) if isinstance(p, tuple) else em.as_int64(p) for p in params
        )
        raw = em.node("Add", [start, em.node("Mul", [shape, stride])])
        neg = em.node("Less", [raw, em.scalar(0, DataType.INT64)])
        ends = em.node("Where", [neg, em.scalar(INT64_MIN, DataType.INT64), raw])
        return em.node("Slice", [x, start, ends, em.ints(axes), stride])


class GatherLayer(Layer):
    """Gather by `mode` (TensorRT's IGatherLayer): DEFAULT ``take(data, indices, axis)``
    (ONNX Gather; with ``num_elementwise_dims = 1`` the leading axis of data and indices is
    a batch axis), ELEMENT (ONNX GatherElements on `axis`), ND (ONNX GatherND with
    ``num_elementwise_dims`` batch axes). A negative index counts from the back of an axis of
    build-time length (as TensorRT does); on an axis known only at run time (TensorRT:
    undefined) it is refused: at build time when the indices are constant, else by an
    out-of-range read at run time."""

    _type = LayerType.GATHER
    check_at_creation = False
    polymorphic = True

    def __init__(self, network, data, indices, axis, mode=GatherMode.DEFAULT):
        super().__init__(network, [data, indices])
        self.axis = int(axis)
        self.num_elementwise_dims = 0
        self._mode = check_enum(GatherMode, mode, self.what())

    @property
    def mode(self) -> GatherMode:
        return self._mode

    @mode.setter
    def mode(self, m) -> None:
        self._mode = check_enum(GatherMode, m, self.what())
        self._network.touch()

    def infer(self):
        data, idx = self.required_input(0), self.required_input(1)
        if idx.compute_dtype not in _INDEX:
            raise ModelError(f"{self.what()}: indices must be INT32/INT64, got "
                             f"{idx.compute_dtype.name}")
        ci = idx.const_value()
        nb = int(self.num_elementwise_dims)
        rank = len(data.shape)
        if ci is not None and np.any(ci < 0) and self._mode is GatherMode.DEFAULT:
            n = data.shape[norm_axis(self.axis, rank, self.what())]
            if n < 0:
                raise ModelError(f"{self.what()}: negative index {ci.min()} on an axis whose "
                                 "length is known only at run time (TensorRT: undefined)")
        if self._mode is GatherMode.ELEMENT:
            if nb or len(idx.shape) != rank:
                raise ModelError(f"{self.what()}: ELEMENT mode needs indices of the data's "
                                 f"rank {rank} and num_elementwise_dims 0")
            norm_axis(self.axis, rank, self.what())
            return [(data.compute_dtype, idx.shape, None)]
        if self._mode is GatherMode.ND:
            q = len(idx.shape)
            if q < 1 or idx.shape[-1] < 0:
                raise ModelError(f"{self.what()}: ND mode needs indices whose last "
                                 "dimension is known at build time")
            k = idx.shape[-1]
            if not 0 <= nb < rank or k > rank - nb:
                raise ModelError(f"{self.what()}: ND indices of depth {k} do not fit data "
                                 f"of rank {rank} with {nb} elementwise dims")
            return [(data.compute_dtype, idx.shape[:-1] + data.shape[nb + k:], None)]
        if nb not in (0, 1):
            raise ModelError(f"{self.what()}: num_elementwise_dims must be 0 or 1 in DEFAULT "
                             f"mode, got {nb}")
        axis = norm_axis(self.axis, rank, self.what())
        if nb:
            if axis == 0 or not idx.shape:
                raise ModelError(f"{self.what()}: with an elementwise dim the axis must be "
                                 "> 0 and the indices must have rank >= 1")
            lead = broadcast([data.shape[:1], idx.shape[:1]], self.what())
            shape = lead + data.shape[1:axis] + idx.shape[1:] + data.shape[axis + 1:]
            return [(data.compute_dtype, shape, None)]
        shape = data.shape[:axis] + idx.shape + data.shape[axis + 1 :]
        cd = data.const_value()
        const = None
        if cd is not None and ci is not None:
            n = cd.shape[axis]
            if np.any((ci >= n) | (ci < -n)):
                raise ModelError(f"{self.what()}: index out of range for axis size {n}")
            const = np.take(cd, ci, axis=axis)
        return [(data.compute_dtype, shape, const)]

    def lower(self, em):
        data_t, idx_t = self.inputs[0], self.inputs[1]
        data, idx = em.value(data_t), em.value(idx_t)
        dynamic_axis = self.mode is GatherMode.DEFAULT and data_t.shape[
            norm_axis(self.axis, len(data_t.shape), self.what())] < 0
        if idx_t.const_value() is None and dynamic_axis:
            # a negative index reads past the end (an error) instead of counting from the back
            neg = em.node("Less", [idx, em.scalar(0, idx_t.compute_dtype)])
            big = em.node("Cast", [em.node("Size", [data])], {"to": ONNX_TYPE[idx_t.compute_dtype]})
            idx = em.node("Where", [neg, big, idx])
        nb = int(self.num_elementwise_dims)
        rank = len(data_t.shape)
        if self.mode is GatherMode.ELEMENT:
            axis = norm_axis(self.axis, rank, self.what())
            return em.node("GatherElements", [data, idx], {"axis": axis})
        if self.mode is GatherMode.ND:
            if idx_t.compute_dtype != DataType.INT64:
                idx = em.node("Cast", [idx], {"to": 7})
            return em.node("GatherND", [data, idx], {"batch_dims": nb})
        axis = norm_axis(self.axis, rank, self.what())
        if not nb:
            return em.node("Gather", [data, idx], {"axis": axis})
        # one elementwise (batch) axis: gather row by row, as GatherND with a batch dim
        if idx_t.compute_dtype != DataType.INT64:
            idx = em.node("Cast", [idx], {"to": 7})
        perm = [0, axis, *[i for i in range(1, rank) if i != axis]]
        moved = em.node("Transpose", [data], {"perm": perm}) if axis != 1 else data
        out = em.node("GatherND", [moved, em.node("Unsqueeze", [idx, em.ints([-1])])],
                      {"batch_dims": 1})
        q = len(idx_t.shape)
        rest = rank - 2  # data axes other than the batch and the gathered one
        back = [0]
        # GatherND gives [batch, index axes (q - 1), data axes of perm[2:]]; TensorRT puts the
        # index axes where `axis` was
        before = [q + k for k in range(axis - 1)]
        after = [q + k for k in range(axis - 1, rest)]
        back += before + list(range(1, q)) + after
        if back != list(range(len(back))):
            out = em.node("Transpose", [out], {"perm": back})
        return out


class IdentityLayer(Layer):
    _type = LayerType.IDENTITY
    polymorphic = True

    def __init__(self, network, x):
        super().__init__(network, [x])

    def infer(self):
        x = self.required_input(0)
        return [(x.compute_dtype, x.shape, x.const_value())]

    def lower(self, em):
        return em.node("Identity", [em.value(self.inputs[0])])


class CastLayer(Layer):
    _type = LayerType.CAST
    polymorphic = True

    def __init__(self, network, x, to_type):
        super().__init__(network, [x])
        self.to_type = as_dtype(to_type)

    def infer(self):
        x = self.required_input(0)
        to = as_dtype(self.to_type)
        c = x.const_value()
        return [(to, x.shape, None if c is None else _fold(to, c))]

    def lower(self, em):
        """Floats to INT8 saturate; to UINT8 as TensorRT's cast does (see below)."""
        x = em.value(self.inputs[0])
        to = self.to_type
        dt = self.inputs[0].compute_dtype
        if dt in _FLOATS and to is DataType.INT8:
            x = em.node("Clip", [x, em.scalar(-128, dt), em.scalar(127, dt)])
        elif dt in _FLOATS and to is DataType.UINT8:
            # TensorRT: negatives become 0, larger values keep their low 8 bits (its logged
            # cast of 260.0 is 4)
            x = em.node("Cast", [em.node("Relu", [x])], {"to": ONNX_TYPE[DataType.INT64]})
            x = em.node("Mod", [x, em.scalar(256, DataType.INT64)])
        return em.node("Cast", [x], {"to": ONNX_TYPE[to]})


class SelectLayer(Layer):
    """``where(condition, then_input, else_input)`` with TensorRT broadcasting."""

    _type = LayerType.SELECT
    polymorphic = True

    def __init__(self, network, cond, a, b):
        super().__init__(network, [cond, a, b])

    def infer(self):
        c, a, b = (self.required_input(i) for i in range(3))
        if c.compute_dtype != DataType.BOOL:
            raise ModelError(f"{self.what()}: the condition must be BOOL, "
                             f"got {c.compute_dtype.name}")
        if a.compute_dtype != b.compute_dtype:
            raise ModelError(
                f"{self.what()}: branches have different types ({a.compute_dtype.name}, "
                f"{b.compute_dtype.name})"
            )
        shape = broadcast([c.shape, a.shape, b.shape], self.what())
        cc, ca, cb = c.const_value(), a.const_value(), b.const_value()
        const = None
        if cc is not None and ca is not None and cb is not None:
            const = np.where(cc, ca, cb).astype(to_numpy(a.compute_dtype))
        return [(a.compute_dtype, shape, const)]

    def lower(self, em):
        return em.node("Where", [em.value(t) for t in self.inputs])


class ShapeLayer(Layer):
    """The shape of its input as a 1-D INT64 tensor (TensorRT 10)."""

    _type = LayerType.SHAPE

    def __init__(self, network, x):
        super().__init__(network, [x])

    def infer(self):
        x = self.required_input(0)
        const = None if -1 in x.shape else np.array(x.shape, dtype=np.int64)
        return [(DataType.INT64, (len(x.shape),), const)]

    def lower(self, em):
        return em.node("Shape", [em.value(self.inputs[0])])


class SoftMaxLayer(Layer):
    """Softmax over the single axis whose bit is set in `axes` (default: rank - 3, or 0)."""

    _type = LayerType.SOFTMAX
    check_at_creation = False

    def __init__(self, network, x):
        super().__init__(network, [x])
        rank = len(x.shape)
        self.axes = 1 << max(rank - 3, 0) if rank else 0

    def axis(self) -> int:
        rank = len(self.required_input(0).shape)
        bits = [i for i in range(rank) if self.axes >> i & 1]
        if len(bits) != 1 or self.axes >> rank:
            raise ModelError(f"{self.what()}: axes must name exactly one axis, got {self.axes:#b}")
        return bits[0]

    def infer(self):
        x = self.required_input(0)
        self.axis()
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        return em.node("Softmax", [em.value(self.inputs[0])], {"axis": self.axis()})

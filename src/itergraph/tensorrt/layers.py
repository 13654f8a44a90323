"""Computing layers: constant, element-wise, activation, unary, matrix multiply, reduce,
identity, cast, select, shape and softmax, with TensorRT semantics.

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
from .core import Layer, Tensor, checked_dims
from .dims import Dims
from .enums import (
    ONNX_TYPE,
    ActivationType,
    DataType,
    ElementWiseOperation,
    LayerType,
    MatrixOperation,
    ReduceOperation,
    UnaryOperation,
    as_dtype,
    check_enum,
    to_numpy,
)
from .same_ops import by_trt
from .shapes import broadcast, volume

_INTS = (DataType.INT32, DataType.INT64, DataType.INT8, DataType.UINT8, DataType.INT4)


def _fold(dtype: DataType, value) -> np.ndarray:
    return np.asarray(value).astype(to_numpy(dtype))




# -- helpers of the lowerings -------------------------------------------------------------


def _swap_last(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


_REDUCE = {
    ReduceOperation.SUM: "ReduceSum", ReduceOperation.PROD: "ReduceProd",
    ReduceOperation.MAX: "ReduceMax", ReduceOperation.MIN: "ReduceMin",
    ReduceOperation.AVG: "ReduceMean",
}


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
        self._shape = checked_dims(dims, self.what())
        self.network.touch()

    @property
    def weights(self) -> np.ndarray:
        return self._weights

    @weights.setter
    def weights(self, w) -> None:
        self._weights = w.numpy() if hasattr(w, "numpy") else np.asarray(w)
        self.network.touch()

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
        self.network.touch()

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


class IdentityLayer(Layer):
    _type = LayerType.IDENTITY
    polymorphic = True

    def __init__(self, network, x):
        super().__init__(network, [x])

    def infer(self):
        x = self.required_input(0)
        to = self.output_types.get(0)
        if to is not None and not identity_converts(x.compute_dtype, to):
            raise ModelError(
                f"{self.what()}: an identity layer does not convert {x.compute_dtype.name} to "
                f"{to.name} (set_output_type); TensorRT's identity converts between FLOAT, "
                "HALF, INT32 and BOOL, and from FLOAT or HALF to UINT8 and back; use a cast "
                "layer")
        const = x.const_value() if to is None or to in _FLOATS else None
        return [(x.compute_dtype, x.shape, const)]

    def lower(self, em):
        """An output type set to an integer or BOOL converts to it (floats to UINT8 as a cast
        layer does), and back to the tensor's type; a floating one is `lower_layer`'s."""
        x = em.value(self.inputs[0])
        to, dt = self.output_types.get(0), self.inputs[0].compute_dtype
        if to is None or to in _FLOATS or to == dt:
            return em.node("Identity", [x])
        return em.node("Cast", [convert(em, x, dt, to)], {"to": ONNX_TYPE[dt]})


#: the types TensorRT's cast layer converts between (its operator reference's T1 and T2)
CAST_TYPES = (DataType.BOOL, DataType.UINT8, DataType.INT8, DataType.INT32, DataType.INT64,
              DataType.HALF, DataType.BF16, DataType.FLOAT)
_IDENTITY_GROUP = (DataType.FLOAT, DataType.HALF, DataType.INT32, DataType.BOOL)


def identity_converts(a: DataType, b: DataType) -> bool:
    """The conversions TensorRT's identity layer makes (IIdentityLayer: between FLOAT, HALF,
    INT32 and BOOL; FLOAT or HALF to UINT8 and back)."""
    halfs = (DataType.FLOAT, DataType.HALF)
    return a == b or (a in _IDENTITY_GROUP and b in _IDENTITY_GROUP) or (
        a in halfs and b is DataType.UINT8) or (a is DataType.UINT8 and b in halfs)


def convert(em, x, dt: DataType, to: DataType):
    """The IR value `x` of type `dt` converted to `to` as TensorRT converts: floats to INT8
    saturate; floats to UINT8 make negatives 0 and keep the low 8 bits of larger values (its
    logged cast of 260.0 is 4); the rest as ONNX's Cast."""
    if dt in _FLOATS and to is DataType.INT8:
        x = em.node("Clip", [x, em.scalar(-128, dt), em.scalar(127, dt)])
    elif dt in _FLOATS and to is DataType.UINT8:
        x = em.node("Cast", [em.node("Relu", [x])], {"to": ONNX_TYPE[DataType.INT64]})
        x = em.node("Mod", [x, em.scalar(256, DataType.INT64)])
    return em.node("Cast", [x], {"to": ONNX_TYPE[to]})


class CastLayer(Layer):
    _type = LayerType.CAST
    polymorphic = True

    def __init__(self, network, x, to_type):
        super().__init__(network, [x])
        self.to_type = as_dtype(to_type)

    def infer(self):
        """Types outside `CAST_TYPES` (INT4, FP8, FP4, E8M0) are refused, as TensorRT's cast
        layer has none of them; a constant is folded unless it is a float made INT8 or UINT8
        (`convert` gives those at run time)."""
        x = self.required_input(0)
        to = as_dtype(self.to_type)
        for dt, role in ((x.compute_dtype, "from"), (to, "to")):
            if dt not in CAST_TYPES:
                raise ModelError(
                    f"{self.what()}: a cast layer does not convert {role} {dt.name}; it "
                    "converts between " + ", ".join(t.name for t in CAST_TYPES))
        c = x.const_value()
        if x.compute_dtype in _FLOATS and to in (DataType.INT8, DataType.UINT8):
            c = None
        return [(to, x.shape, None if c is None else _fold(to, c))]

    def lower(self, em):
        return convert(em, em.value(self.inputs[0]), self.inputs[0].compute_dtype,
                       as_dtype(self.to_type))


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

"""Lowering of ordinary layers to ONNX-standard IR nodes (opset `OPSET`), TensorRT semantics.

`Emitter` holds the IR being built (current graph, tensor -> IR value map, unique names);
``LOWER[layer class](layer, em)`` emits the nodes of one layer and returns the IR value of its
output. TensorRT broadcasting (equal ranks) is a special case of ONNX broadcasting, so
elementwise layers map one to one; MatrixOperation.VECTOR becomes Unsqueeze/MatMul/Squeeze,
reduce bitmasks become axes lists, activations without an ONNX twin are composed.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError
from ..ir import DataType as IRDataType
from ..ir import Graph, Node, Value, tensor
from . import layers as L
from .core import FLOATS
from .enums import (
    ActivationType,
    DataType,
    ElementWiseOperation,
    GatherMode,
    MatrixOperation,
    ReduceOperation,
    SampleMode,
    UnaryOperation,
    to_ir,
    to_numpy,
)
from .same_ops import by_trt
from .shapes import ir_shape, norm_axis

OPSET = 18
INT64_MIN = np.iinfo(np.int64).min

# ONNX TensorProto element-type codes (Cast's `to`), from the IR's element types.
ONNX_TYPE = {dt: to_ir(dt).onnx for dt in DataType}


class Emitter:
    """Builds IR graphs: names values uniquely and maps network tensors to IR values."""

    def __init__(self, top: Graph, reserved: dict[int, str]):
        self.top = top
        self.graph = top
        self.values: dict[int, Value] = {}
        self._reserved = reserved  # id(tensor) -> exact name (network inputs/outputs)
        self._names: set[str] = set(reserved.values())
        self._node_names: set[str] = set()
        self._scalars: dict[tuple, Value] = {}
        self.prefix = ""
        self.checks: list[Value] = []  # INT64 zeros that fail when a run-time check fails

    # -- names ----------------------------------------------------------------------------
    def fresh(self, base: str, taken: set[str] | None = None) -> str:
        taken = self._names if taken is None else taken
        name, k = base, 1
        while name in taken:
            name, k = f"{base}_{k}", k + 1
        taken.add(name)
        return name

    # -- values ---------------------------------------------------------------------------
    def value(self, t) -> Value:
        return self.values[id(t)]

    def bind(self, t, v: Value) -> Value:
        """Make `v` the IR value of network tensor `t` (named and typed after it)."""
        v.name = self._reserved.get(id(t)) or self.fresh(t.name)
        v.type = tensor(to_ir(t.dtype), ir_shape(t.shape))
        self.values[id(t)] = v
        return v

    def alias(self, t, v: Value) -> None:
        """Let tensor `t` stand for the existing value `v` (no new value)."""
        self.values[id(t)] = v

    def new_value(self, t) -> Value:
        """A fresh value (e.g. a body parameter) for tensor `t`."""
        return self.bind(t, Value())

    def node(self, op: str, inputs, attrs=None, n_out: int = 1):
        """Append an ONNX-standard node to the current graph; return its output value(s)."""
        outs = [Value(self.fresh(f"{self.prefix}/{op}_out")) for _ in range(n_out)]
        name = self.fresh(self.prefix if self.prefix not in self._node_names else
                          f"{self.prefix}/{op}", self._node_names)
        self.graph.add(Node(op, list(inputs), outs, attrs or {}, version=OPSET, name=name))
        return outs[0] if n_out == 1 else outs

    def const(self, array, base: str | None = None) -> Value:
        """A constant, stored as an initializer of the top graph (usable from any body)."""
        arr = np.asarray(array)
        v = Value(self.fresh(base or f"{self.prefix}/const"), None, arr)

        v.type = tensor(IRDataType.from_numpy(arr.dtype), arr.shape)
        self.top.initializers.append(v)
        return v

    def scalar(self, x, dtype: DataType) -> Value:
        key = (float(x), dtype)
        if key not in self._scalars:
            self._scalars[key] = self.const(np.array(x, dtype=to_numpy(dtype)), f"scalar_{x}")
        return self._scalars[key]

    def ints(self, xs) -> Value:
        return self.const(np.array(list(xs), dtype=np.int64), f"{self.prefix}/ints")

    def as_int64(self, t) -> Value:
        """The IR value of integer tensor `t` as INT64 (folded when `t` is a constant)."""
        c = t.const_value()
        if c is not None:
            return self.const(c.astype(np.int64), f"{self.prefix}/i64")
        v = self.value(t)
        return v if t.dtype == DataType.INT64 else self.node("Cast", [v], {"to": 7})


# -- per-layer lowering -----------------------------------------------------------------

def _constant(layer: L.ConstantLayer, em: Emitter) -> Value:
    out = layer._outputs[0]
    v = em.const(out.const_value(), out.name)
    em._names.discard(v.name)
    return v


def _elementwise(layer: L.ElementWiseLayer, em: Emitter) -> Value:
    a, b = em.value(layer._inputs[0]), em.value(layer._inputs[1])
    if layer.op is ElementWiseOperation.FLOOR_DIV:
        if layer._inputs[0].dtype in (DataType.INT32, DataType.INT64, DataType.INT8,
                                      DataType.UINT8):
            # exact for integers: (a - mod(a, b)) / b, with mod taking the divisor's sign
            return em.node("Div", [em.node("Sub", [a, em.node("Mod", [a, b])]), b])
        return em.node("Floor", [em.node("Div", [a, b])])
    return em.node(by_trt(layer.op).onnx, [a, b])


def _activation(layer: L.ActivationLayer, em: Emitter) -> Value:
    x = em.value(layer._inputs[0])
    dt = layer._inputs[0].dtype
    alpha, beta = float(layer.alpha), float(layer.beta)
    A = ActivationType
    kind = layer.type

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


def _unary(layer: L.UnaryLayer, em: Emitter) -> Value:
    if layer.op is UnaryOperation.ISINF:
        return em.node("IsInf", [em.value(layer._inputs[0])])
    return em.node(by_trt(layer.op).onnx, [em.value(layer._inputs[0])])


def _swap_last(rank: int) -> list[int]:
    return [*range(rank - 2), rank - 1, rank - 2]


def _matmul(layer: L.MatrixMultiplyLayer, em: Emitter) -> Value:
    a_t, b_t = layer._inputs
    a, b = em.value(a_t), em.value(b_t)
    M = MatrixOperation
    if layer.op0 is M.TRANSPOSE:
        a = em.node("Transpose", [a], {"perm": _swap_last(len(a_t.shape))})
    elif layer.op0 is M.VECTOR:
        a = em.node("Unsqueeze", [a, em.ints([-2])])
    if layer.op1 is M.TRANSPOSE:
        b = em.node("Transpose", [b], {"perm": _swap_last(len(b_t.shape))})
    elif layer.op1 is M.VECTOR:
        b = em.node("Unsqueeze", [b, em.ints([-1])])
    y = em.node("MatMul", [a, b])
    squeeze = [-2] * (layer.op0 is M.VECTOR) + [-1] * (layer.op1 is M.VECTOR)
    return em.node("Squeeze", [y, em.ints(squeeze)]) if squeeze else y


_REDUCE = {
    ReduceOperation.SUM: "ReduceSum", ReduceOperation.PROD: "ReduceProd",
    ReduceOperation.MAX: "ReduceMax", ReduceOperation.MIN: "ReduceMin",
    ReduceOperation.AVG: "ReduceMean",
}


def _reduce(layer: L.ReduceLayer, em: Emitter) -> Value:
    x = em.value(layer._inputs[0])
    axes = layer.axis_list()
    if not axes:
        return em.node("Identity", [x])
    return em.node(_REDUCE[layer.op], [x, em.ints(axes)], {"keepdims": int(layer.keep_dims)})


def _shuffle(layer: L.ShuffleLayer, em: Emitter) -> Value:
    x_t = layer._inputs[0]
    x = em.value(x_t)
    rank = len(x_t.shape)
    first = L._perm(layer._first, rank, layer._what())
    if list(first) != list(range(rank)):
        x = em.node("Transpose", [x], {"perm": list(first)})
    target = layer.target_dims()
    if target is not None:
        if -2 in target:
            shape = em.as_int64(layer.shape_input())
        else:
            shape = em.ints(target)
        x = em.node("Reshape", [x, shape], {"allowzero": 0 if layer.zero_is_placeholder else 1})
    out_rank = len(layer._outputs[0].shape)
    second = L._perm(layer._second, out_rank, layer._what())
    if list(second) != list(range(out_rank)):
        x = em.node("Transpose", [x], {"perm": list(second)})
    if x is em.value(x_t):
        x = em.node("Identity", [x])
    return x


def _concat(layer: L.ConcatenationLayer, em: Emitter) -> Value:
    axis = norm_axis(layer.axis, len(layer._inputs[0].shape), layer._what())
    return em.node("Concat", [em.value(t) for t in layer._inputs], {"axis": axis})


def _slice(layer: L.SliceLayer, em: Emitter) -> Value:
    x_t = layer._inputs[0]
    x = em.value(x_t)
    if not x_t.shape:
        return em.node("Identity", [x])
    axes, *params = layer.resolved()
    if layer.mode is not SampleMode.STRICT_BOUNDS:
        return _slice_sampled(layer, em, x, axes, params)
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


def _entry(em: Emitter, p, j: int) -> Value:
    """Entry j of a slice parameter (a tuple or an integer tensor) as an INT64 scalar."""
    if isinstance(p, tuple):
        return em.scalar(p[j], DataType.INT64)
    return em.node("Gather", [em.as_int64(p), em.scalar(j, DataType.INT64)], {"axis": 0})


def _slice_sampled(layer, em: Emitter, x: Value, axes, params) -> Value:
    """WRAP / CLAMP / FILL / REFLECT slices: one Gather per sliced axis at indices mapped
    back into the axis (FILL: out-of-range positions replaced by the fill value)."""
    mode = layer.mode
    rank = len(layer._inputs[0].shape)
    I64 = DataType.INT64
    zero, one = em.scalar(0, I64), em.scalar(1, I64)
    shape = em.node("Shape", [x])
    fill = None
    if mode is SampleMode.FILL:
        f = layer.get_input(4)
        dt = to_numpy(layer._inputs[0]._dtype)
        fill = (em.const(np.zeros((), dt)) if f is None
                else em.node("Cast", [em.value(f)], {"to": ONNX_TYPE[layer._inputs[0]._dtype]}))
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


def _gather(layer: L.GatherLayer, em: Emitter) -> Value:
    data_t, idx_t = layer._inputs[0], layer._inputs[1]
    data, idx = em.value(data_t), em.value(idx_t)
    dynamic_axis = layer.mode is GatherMode.DEFAULT and data_t.shape[
        norm_axis(layer.axis, len(data_t.shape), layer._what())] < 0
    if idx_t.const_value() is None and dynamic_axis:
        # a negative index reads past the end (an error) instead of counting from the back
        neg = em.node("Less", [idx, em.scalar(0, idx_t._dtype)])
        big = em.node("Cast", [em.node("Size", [data])], {"to": ONNX_TYPE[idx_t._dtype]})
        idx = em.node("Where", [neg, big, idx])
    nb = int(layer.num_elementwise_dims)
    rank = len(data_t.shape)
    if layer.mode is GatherMode.ELEMENT:
        axis = norm_axis(layer.axis, rank, layer._what())
        return em.node("GatherElements", [data, idx], {"axis": axis})
    if layer.mode is GatherMode.ND:
        if idx_t._dtype != DataType.INT64:
            idx = em.node("Cast", [idx], {"to": 7})
        return em.node("GatherND", [data, idx], {"batch_dims": nb})
    axis = norm_axis(layer.axis, rank, layer._what())
    if not nb:
        return em.node("Gather", [data, idx], {"axis": axis})
    # one elementwise (batch) axis: gather row by row, as GatherND with a batch dim
    if idx_t._dtype != DataType.INT64:
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


def _identity(layer, em: Emitter) -> Value:
    return em.node("Identity", [em.value(layer._inputs[0])])


def _cast(layer: L.CastLayer, em: Emitter) -> Value:
    """Floats to INT8 saturate; to UINT8 as TensorRT's cast does (see below)."""
    x = em.value(layer._inputs[0])
    to = layer.to_type
    dt = layer._inputs[0]._dtype
    if dt in FLOATS and to is DataType.INT8:
        x = em.node("Clip", [x, em.scalar(-128, dt), em.scalar(127, dt)])
    elif dt in FLOATS and to is DataType.UINT8:
        # TensorRT: negatives become 0, larger values keep their low 8 bits (its logged
        # cast of 260.0 is 4)
        x = em.node("Cast", [em.node("Relu", [x])], {"to": ONNX_TYPE[DataType.INT64]})
        x = em.node("Mod", [x, em.scalar(256, DataType.INT64)])
    return em.node("Cast", [x], {"to": ONNX_TYPE[to]})


def _select(layer: L.SelectLayer, em: Emitter) -> Value:
    return em.node("Where", [em.value(t) for t in layer._inputs])


def _shape(layer: L.ShapeLayer, em: Emitter) -> Value:
    return em.node("Shape", [em.value(layer._inputs[0])])


def _softmax(layer: L.SoftMaxLayer, em: Emitter) -> Value:
    return em.node("Softmax", [em.value(layer._inputs[0])], {"axis": layer.axis()})


LOWER = {
    L.ConstantLayer: _constant, L.ElementWiseLayer: _elementwise,
    L.ActivationLayer: _activation, L.UnaryLayer: _unary, L.MatrixMultiplyLayer: _matmul,
    L.ReduceLayer: _reduce, L.ShuffleLayer: _shuffle, L.ConcatenationLayer: _concat,
    L.SliceLayer: _slice, L.GatherLayer: _gather, L.IdentityLayer: _identity,
    L.CastLayer: _cast, L.SelectLayer: _select, L.ShapeLayer: _shape, L.SoftMaxLayer: _softmax,
}


def lower_layer(layer, em: Emitter) -> None:
    """Emit `layer` into the current graph and bind its output tensors.

    The layer's `precision` (a floating type) converts its floating inputs before the
    operation, and ``set_output_type(i, t)`` computes output i in type t; each output is then
    converted back to its tensor's type (TensorRT inserts those reformats). A layer without
    outputs (an assertion) leaves a check token in ``em.checks``.
    """
    em.prefix = layer.name
    fn = LOWER.get(type(layer)) or type(layer)._lower
    saved = {}
    p = layer._precision
    if p is not None and p in FLOATS:
        for t in layer._inputs:
            if t is not None and t._dtype in FLOATS and t._dtype != p and id(t) not in saved:
                saved[id(t)] = em.values[id(t)]
                em.values[id(t)] = em.node("Cast", [saved[id(t)]], {"to": ONNX_TYPE[p]})
    try:
        out = fn(layer, em)
    except (ValueError, TypeError, OverflowError) as e:  # an attribute set to a bad value
        raise ModelError(f"{layer._what()}: {type(e).__name__}: {e}") from None
    finally:
        em.values.update(saved)
    if not layer._outputs:
        em.checks.append(out)
        return
    outs = out if isinstance(out, list) else [out]
    for i, (t, v) in enumerate(zip(layer._outputs, outs)):
        want = t._dtype
        if want in FLOATS:
            ot = layer._output_types.get(i)
            if ot is not None and ot in FLOATS and ot != (p or want):
                v = em.node("Cast", [v], {"to": ONNX_TYPE[ot]})
            if (ot is not None and ot in FLOATS and ot != want) or (
                    p is not None and p in FLOATS and p != want and saved):
                v = em.node("Cast", [v], {"to": ONNX_TYPE[want]})
        em.bind(t, v)

"""Indexing and rearranging layers: scatter, one-hot, top-k, non-zero, reverse-sequence,
cumulative, squeeze and unsqueeze (TensorRT's semantics; each lowers to its ONNX twin).

Each class infers its outputs (`infer`) and emits its IR nodes (`lower`, returning the value
of each output).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from .core import FLOATS, Layer, Tensor
from .enums import (
    ONNX_TYPE,
    CumulativeOperation,
    DataType,
    LayerType,
    ScatterMode,
    TopKOperation,
    as_dtype,
    check_enum,
)
from .shapes import norm_axis

_INDEX = (DataType.INT32, DataType.INT64)
I64 = 7  # ONNX TensorProto INT64


def _i64(em, t: Tensor):
    return em.as_int64(t)


def _axes_input(layer, t: Tensor) -> tuple[int, ...]:
    c = t.const_value()
    if c is None:
        raise ModelError(f"{layer.what()}: the axes input must be a build-time constant "
                         "(a constant shape tensor)")
    return tuple(int(a) for a in np.asarray(c).reshape(-1))


class ScatterLayer(Layer):
    """ELEMENT: ONNX ScatterElements on `axis`; ND: ONNX ScatterND. The output is `data`
    with `updates` written at `indices`."""

    _type = LayerType.SCATTER

    def __init__(self, network, data, indices, updates, mode):
        super().__init__(network, [data, indices, updates])
        self.mode = check_enum(ScatterMode, mode, self.what())
        self.axis = 0

    def infer(self):
        data, idx, upd = (self.required_input(i) for i in range(3))
        if idx.compute_dtype not in _INDEX:
            raise ModelError(f"{self.what()}: indices must be INT32/INT64")
        if upd.compute_dtype != data.compute_dtype:
            raise ModelError(f"{self.what()}: updates must have the data's type")
        if check_enum(ScatterMode, self.mode, self.what()) is ScatterMode.ELEMENT:
            norm_axis(self.axis, len(data.shape), self.what())
        return [(data.compute_dtype, data.shape, None)]

    def lower(self, em):
        data, idx, upd = (em.value(t) for t in self.inputs)
        if self.mode is ScatterMode.ELEMENT:
            axis = norm_axis(self.axis, len(self.inputs[0].shape), self.what())
            return em.node("ScatterElements", [data, idx, upd], {"axis": axis})
        return em.node("ScatterND", [data, _i64(em, self.inputs[1]), upd])


class OneHotLayer(Layer):
    """``output[..., indices[...], ...] = on`` (the one-hot axis at `axis`), else ``off``;
    `values` is ``[off, on]``, `depth` a 0-D build-time integer."""

    _type = LayerType.ONE_HOT
    check_at_creation = False
    shape_inputs = (2,)

    def __init__(self, network, indices, values, depth, axis):
        super().__init__(network, [indices, values, depth])
        self.axis = int(axis)

    def infer(self):
        idx, values, depth = (self.required_input(i) for i in range(3))
        if (idx.compute_dtype not in _INDEX or depth.compute_dtype not in _INDEX
                or depth.shape != ()):
            raise ModelError(f"{self.what()}: indices must be INT32/INT64 and depth a 0-D "
                             "INT32/INT64 tensor")
        if tuple(values.shape) != (2,):
            raise ModelError(f"{self.what()}: values must be [off_value, on_value], got shape "
                             f"{tuple(values.shape)}")
        rank = len(idx.shape)
        axis = norm_axis(self.axis, rank + 1, self.what())
        c = depth.const_value()
        n = -1 if c is None else int(c)
        return [(values.compute_dtype, idx.shape[:axis] + (n,) + idx.shape[axis:], None)]

    def lower(self, em):
        idx, values, depth = self.inputs
        axis = norm_axis(self.axis, len(idx.shape) + 1, self.what())
        return em.node("OneHot", [_i64(em, idx), _i64(em, depth), em.value(values)],
                       {"axis": axis})


class TopKLayer(Layer):
    """The `k` largest (MAX) or smallest (MIN) entries along the one axis whose bit is set in
    `axes`, sorted; outputs the values and their indices (`indices_type`, INT32 default).
    A tensor set as input 1 overrides `k`."""

    _type = LayerType.TOPK
    _n_outputs = 2
    check_at_creation = False

    def __init__(self, network, x, op, k, axes, indices_type=DataType.INT32):
        super().__init__(network, [x])
        self.op = check_enum(TopKOperation, op, self.what())
        self.k = int(k)
        self.axes = int(axes)
        self.indices_type = as_dtype(indices_type)

    def max_inputs(self) -> int:
        return 2

    def axis(self) -> int:
        rank = len(self.required_input(0).shape)
        bits = [i for i in range(rank) if self.axes >> i & 1]
        if len(bits) != 1 or self.axes >> rank:
            raise ModelError(f"{self.what()}: axes must name exactly one axis, got "
                             f"{self.axes:#b}")
        return bits[0]

    def infer(self):
        x = self.required_input(0)
        axis = self.axis()
        kt = self.get_input(1)
        k = self.k
        if kt is not None:
            c = kt.const_value()
            k = -1 if c is None else int(np.asarray(c).reshape(()))
        if as_dtype(self.indices_type) not in _INDEX:
            raise ModelError(f"{self.what()}: indices_type must be INT32 or INT64")
        shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
        return [(x.compute_dtype, shape, None), (as_dtype(self.indices_type), shape, None)]

    def lower(self, em):
        x = em.value(self.inputs[0])
        kt = self.get_input(1)
        k = em.ints([self.k]) if kt is None else em.node(
            "Reshape", [_i64(em, kt), em.ints([1])])
        vals, idx = em.node("TopK", [x, k], {"axis": self.axis(), "sorted": 1,
                                             "largest": int(self.op is TopKOperation.MAX)},
                            n_out=2)
        to = as_dtype(self.indices_type)
        if to != DataType.INT64:
            idx = em.node("Cast", [idx], {"to": ONNX_TYPE[to]})
        return [vals, idx]


class NonZeroLayer(Layer):
    """The coordinates of the non-zero entries: ``[rank, count]`` (ONNX NonZero)."""

    _type = LayerType.NON_ZERO

    def __init__(self, network, x, indices_type=DataType.INT32):
        super().__init__(network, [x])
        self.indices_type = as_dtype(indices_type)

    def infer(self):
        x = self.required_input(0)
        to = as_dtype(self.indices_type)
        if to not in _INDEX:
            raise ModelError(f"{self.what()}: indices_type must be INT32 or INT64")
        return [(to, (len(x.shape), -1), None)]

    def lower(self, em):
        out = em.node("NonZero", [em.value(self.inputs[0])])
        to = as_dtype(self.indices_type)
        return out if to == DataType.INT64 else em.node("Cast", [out], {"to": ONNX_TYPE[to]})


class ReverseSequenceLayer(Layer):
    """Reverses the first ``sequence_lens[b]`` entries along `sequence_axis` of each batch
    entry b (`batch_axis`); defaults 1 and 0."""

    _type = LayerType.REVERSE_SEQUENCE

    def __init__(self, network, x, lens):
        super().__init__(network, [x, lens])
        self.batch_axis = 1
        self.sequence_axis = 0

    def infer(self):
        x, lens = self.required_input(0), self.required_input(1)
        rank = len(x.shape)
        b = norm_axis(self.batch_axis, rank, self.what())
        s = norm_axis(self.sequence_axis, rank, self.what())
        if rank < 2 or b == s or lens.compute_dtype not in _INDEX or len(lens.shape) != 1:
            raise ModelError(f"{self.what()}: needs an input of rank >= 2, distinct batch "
                             "and sequence axes and 1-D integer sequence_lens")
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        x, lens = self.inputs
        return em.node("ReverseSequence", [em.value(x), _i64(em, lens)],
                       {"batch_axis": self.batch_axis, "time_axis": self.sequence_axis})


class CumulativeLayer(Layer):
    """Prefix sums along `axis` (input 1, a 0-D build-time integer): forward or `reverse`,
    inclusive or `exclusive` (ONNX CumSum)."""

    _type = LayerType.CUMULATIVE
    shape_inputs = (1,)

    def __init__(self, network, x, axis, op, exclusive, reverse):
        super().__init__(network, [x, axis])
        self.op = check_enum(CumulativeOperation, op, self.what())
        self.exclusive = bool(exclusive)
        self.reverse = bool(reverse)

    def infer(self):
        x, axis = self.required_input(0), self.required_input(1)
        if axis.compute_dtype not in _INDEX or axis.shape != ():
            raise ModelError(f"{self.what()}: the axis must be a 0-D INT32/INT64 tensor")
        if x.compute_dtype not in FLOATS + _INDEX:
            raise ModelError(f"{self.what()}: needs a float or integer input")
        return [(x.compute_dtype, x.shape, None)]

    def lower(self, em):
        x, axis = self.inputs
        return em.node("CumSum", [em.value(x), _i64(em, axis)],
                       {"exclusive": int(self.exclusive), "reverse": int(self.reverse)})


class SqueezeLayer(Layer):
    """Removes the unit axes listed by input 1 (a build-time constant)."""

    _type = LayerType.SQUEEZE
    shape_inputs = (1,)
    polymorphic = True

    def __init__(self, network, x, axes):
        super().__init__(network, [x, axes])

    def _axes(self) -> list[int]:
        x = self.required_input(0)
        return sorted({norm_axis(a, len(x.shape), self.what())
                       for a in _axes_input(self, self.required_input(1))})

    def infer(self):
        x = self.required_input(0)
        axes = self._axes()
        for a in axes:
            if x.shape[a] not in (1, -1):
                raise ModelError(f"{self.what()}: axis {a} has length {x.shape[a]}, not 1")
        c = x.const_value()
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return [(x.compute_dtype, shape, None if c is None else c.reshape(shape))]

    def lower(self, em):
        return em.node("Squeeze", [em.value(self.inputs[0]), em.ints(self._axes())])


class UnsqueezeLayer(Layer):
    """Inserts unit axes at the positions listed by input 1 (of the output)."""

    _type = LayerType.UNSQUEEZE
    shape_inputs = (1,)
    polymorphic = True

    def __init__(self, network, x, axes):
        super().__init__(network, [x, axes])

    def _axes(self) -> list[int]:
        x = self.required_input(0)
        out_rank = len(x.shape) + len(_axes_input(self, self.required_input(1)))
        return sorted({norm_axis(a, out_rank, self.what())
                       for a in _axes_input(self, self.required_input(1))})

    def infer(self):
        x = self.required_input(0)
        axes = self._axes()
        shape = list(x.shape)
        for a in axes:
            shape.insert(a, 1)
        c = x.const_value()
        return [(x.compute_dtype, tuple(shape), None if c is None else c.reshape(shape))]

    def lower(self, em):
        return em.node("Unsqueeze", [em.value(self.inputs[0]), em.ints(self._axes())])


__all__ = ["CumulativeLayer", "NonZeroLayer", "OneHotLayer", "ReverseSequenceLayer",
           "ScatterLayer", "SqueezeLayer", "TopKLayer", "UnsqueezeLayer"]

"""Translators of OpenVINO element-wise, reduction, activation and matrix ops into ONNX ops.

OpenVINO semantics kept (checked against OpenVINO itself in tests/openvino):
- binary ops broadcast NumPy-style (``auto_broadcast="numpy"`` or ``"none"``); ``"pdpd"`` is
  refused;
- integer ``Divide`` with ``m_pythondiv`` (the default) floors, as Python's ``//``; ONNX
  ``Div`` truncates, so the floor is rebuilt from ``Mod``;
- ``FloorMod`` is Python's ``%``, ``Mod`` keeps the dividend's sign (C ``fmod``);
- reductions with an empty axes list reduce nothing (``noop_with_empty_axes=1``);
- ``Clamp`` on integers clamps to ``ceil(min)``/``floor(max)``;
- ``MatMul`` ``transpose_a/b`` swap the last two axes of inputs of rank >= 2;
- ``Floor``/``Ceiling`` of integers are the integers themselves (ONNX's take floats only).
"""

from __future__ import annotations

import math

import numpy as np

from .....errors import ModelError, UnsupportedError
from .....ir.types import DataType
from ...builder import Builder, dtype_of, onnx_type, rank_of, shape_of
from ...elements import element_type_name, from_element_type, to_numpy
from ...import_table import importer
from ...netparse import Layer
from ...same_ops import SAME_OPS


def out_dtype(layer: Layer, inputs, i: int = 0) -> DataType | None:
    """Element type of output `i`: its port precision, else that of input 0."""
    if i < len(layer.outputs) and layer.outputs[i].dtype is not None:
        return layer.outputs[i].dtype
    return dtype_of(inputs[0]) if inputs else None


def _check_broadcast(layer: Layer) -> None:
    mode = (layer.attr("auto_broadcast", "numpy") or "numpy").lower()
    if mode not in ("numpy", "none"):
        raise UnsupportedError(f"{layer.where()}: auto_broadcast='{mode}' is not supported")


def _binary(onnx_op: str):
    def tr(b: Builder, layer: Layer, x):
        _check_broadcast(layer)
        return b.op(onnx_op, x[:2], dtype=out_dtype(layer, x))

    return tr


def _unary(onnx_op: str, **attrs):
    def tr(b: Builder, layer: Layer, x):
        return b.op(onnx_op, x[:1], dict(attrs), dtype=out_dtype(layer, x))

    return tr


def _rounding(onnx_op: str):
    """``Floor``/``Ceiling`` of an integer tensor (OpenVINO's PyTorch frontend writes
    ``floor_divide`` so) is the tensor itself; ONNX's ops take floats only."""
    def tr(b: Builder, layer: Layer, x):
        dt = out_dtype(layer, x)
        if dt is not None and not dt.is_floating:
            return b.op("Identity", x[:1], dtype=dt)
        return b.op(onnx_op, x[:1], dtype=dt)

    return tr


for _row in SAME_OPS:
    importer(_row.openvino, since=1)(
        _rounding(_row.onnx) if _row.onnx in ("Floor", "Ceil") else
        (_unary if _row.arity == 1 else _binary)(_row.onnx))
importer("ReLU", since=1)(_unary("Relu"))  # the specification's spellings
importer("Ceil", since=1)(_rounding("Ceil"))


@importer("NotEqual", since=1)
def _not_equal(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    return b.op("Not", [b.op("Equal", x[:2], dtype=DataType.BOOL)], dtype=DataType.BOOL)


@importer("Divide", since=1)
def _divide(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    dt = out_dtype(layer, x)
    if dt is not None and dt.is_integer and layer.bool_attr("m_pythondiv", True):
        # floor(a / b) = (a - a mod b) / b, where mod has the divisor's sign (Python's %)
        mod = b.op("Mod", x[:2], {"fmod": 0}, dtype=dt)
        return b.op("Div", [b.op("Sub", [x[0], mod], dtype=dt), x[1]], dtype=dt)
    return b.op("Div", x[:2], dtype=dt)


@importer("SquaredDifference", since=1)
def _squared_difference(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    dt = out_dtype(layer, x)
    d = b.op("Sub", x[:2], dtype=dt)
    return b.op("Mul", [d, d], dtype=dt)


@importer("Mod", since=1)
def _mod(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    return b.op("Mod", x[:2], {"fmod": 1}, dtype=out_dtype(layer, x))


@importer("FloorMod", since=1)
def _floor_mod(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    dt = out_dtype(layer, x)
    if dt is not None and dt.is_integer:
        return b.op("Mod", x[:2], {"fmod": 0}, dtype=dt)
    q = b.op("Floor", [b.op("Div", x[:2], dtype=dt)], dtype=dt)
    return b.op("Sub", [x[0], b.op("Mul", [q, x[1]], dtype=dt)], dtype=dt)


importer("HSigmoid", since=5)(_unary("HardSigmoid", alpha=1.0 / 6.0, beta=0.5))


@importer("Elu", since=1)
def _elu(b: Builder, layer: Layer, x):
    return b.op("Elu", x[:1], {"alpha": layer.float_attr("alpha", 1.0)}, dtype=out_dtype(layer, x))


@importer("Gelu", since=2)
def _gelu(b: Builder, layer: Layer, x):
    mode = (layer.attr("approximation_mode", "erf") or "erf").lower()
    if mode not in ("erf", "tanh"):
        raise UnsupportedError(f"{layer.where()}: approximation_mode='{mode}' is not supported")
    return b.op("Gelu", x[:1], {"approximate": "none" if mode == "erf" else "tanh"},
                dtype=out_dtype(layer, x))


@importer("Swish", since=4)
def _swish(b: Builder, layer: Layer, x):
    dt = out_dtype(layer, x)
    z = x[0] if len(x) < 2 else b.op("Mul", [x[0], x[1]], dtype=dt)
    return b.op("Mul", [x[0], b.op("Sigmoid", [z], dtype=dt)], dtype=dt)


@importer("Clamp", since=1)
def _clamp(b: Builder, layer: Layer, x):
    dt = out_dtype(layer, x)
    lo = layer.float_attr("min")
    hi = layer.float_attr("max")
    if lo is None or hi is None:
        raise ModelError(f"{layer.where()}: Clamp needs 'min' and 'max'")
    if dt is None:
        raise ModelError(f"{layer.where()}: the element type of the input is unknown")
    if dt.is_integer:
        info = np.iinfo(to_numpy(dt))
        lo_v = min(max(math.ceil(lo), info.min), info.max)
        hi_v = min(max(math.floor(hi), info.min), info.max)
    else:
        lo_v, hi_v = lo, hi
    npdt = to_numpy(dt)
    return b.op("Clip", [x[0], b.const(np.array(lo_v, npdt)), b.const(np.array(hi_v, npdt))],
                dtype=dt)


@importer("Convert", since=1)
def _convert(b: Builder, layer: Layer, x):
    name = layer.attr("destination_type", required=True)
    dt = from_element_type(element_type_name(name), layer.where())
    return b.op("Cast", [x[0]], {"to": onnx_type(dt)}, dtype=dt)


@importer("ConvertLike", since=1)
def _convert_like(b: Builder, layer: Layer, x):
    dt = dtype_of(x[1]) or layer.outputs[0].dtype
    if dt is None:
        raise ModelError(f"{layer.where()}: the element type of input 1 is unknown")
    return b.op("Cast", [x[0]], {"to": onnx_type(dt)}, dtype=dt)


@importer("ConvertPromoteTypes", since=14)
def _convert_promote_types(b: Builder, layer: Layer, x):
    """Both inputs converted to the common type OpenVINO derived and wrote as the precision of
    the output ports (its promotion rules are not repeated here)."""
    outs = []
    for i in range(2):
        dt = layer.outputs[i].dtype if i < len(layer.outputs) else None
        if dt is None:
            raise ModelError(f"{layer.where()}: the precision of output {i} is unknown")
        outs.append(b.cast(x[i], dt) if dtype_of(x[i]) == dt else
                    b.op("Cast", [x[i]], {"to": onnx_type(dt)}, dtype=dt))
    return outs


@importer("Select", since=1)
def _select(b: Builder, layer: Layer, x):
    _check_broadcast(layer)
    return b.op("Where", x[:3], dtype=out_dtype(layer, x[1:]))


def _reduce(onnx_op: str, bool_via: str | None = None):
    def tr(b: Builder, layer: Layer, x):
        keep = 1 if layer.bool_attr("keep_dims", False) else 0
        axes = b.i64_vector(x[1])
        attrs = {"keepdims": keep, "noop_with_empty_axes": 1}
        dt = out_dtype(layer, x)
        if bool_via is not None:  # logical reductions through integers
            as_int = b.op("Cast", [x[0]], {"to": onnx_type(DataType.INT32)}, dtype=DataType.INT32)
            r = b.op(bool_via, [as_int, axes], attrs, dtype=DataType.INT32)
            return b.op("Cast", [r], {"to": onnx_type(DataType.BOOL)}, dtype=DataType.BOOL)
        return b.op(onnx_op, [x[0], axes], attrs, dtype=dt)

    return tr


for _ov, _onnx in {"ReduceSum": "ReduceSum", "ReduceMean": "ReduceMean", "ReduceMax": "ReduceMax",
                   "ReduceMin": "ReduceMin", "ReduceProd": "ReduceProd"}.items():
    importer(_ov, since=1)(_reduce(_onnx))
importer("ReduceL1", since=4)(_reduce("ReduceL1"))
importer("ReduceL2", since=4)(_reduce("ReduceL2"))
importer("ReduceLogicalAnd", since=1)(_reduce("", bool_via="ReduceMin"))
importer("ReduceLogicalOr", since=1)(_reduce("", bool_via="ReduceMax"))


@importer(["Softmax", "SoftMax"], since=1)
def _softmax1(b: Builder, layer: Layer, x):
    return b.op("Softmax", x[:1], {"axis": layer.int_attr("axis", 1)}, dtype=out_dtype(layer, x))


@importer(["Softmax", "SoftMax"], since=8)
def _softmax8(b: Builder, layer: Layer, x):
    return b.op("Softmax", x[:1], {"axis": layer.int_attr("axis", 1)}, dtype=out_dtype(layer, x))


@importer("LogSoftmax", since=5)
def _log_softmax(b: Builder, layer: Layer, x):
    return b.op("LogSoftmax", x[:1], {"axis": layer.int_attr("axis", 1)},
                dtype=out_dtype(layer, x))


@importer("MatMul", since=1)
def _matmul(b: Builder, layer: Layer, x):
    dt = out_dtype(layer, x)
    ins = []
    for i, flag in enumerate(("transpose_a", "transpose_b")):
        v = x[i]
        if layer.bool_attr(flag, False):
            r = rank_of(v)
            if r is None:
                v = b.op("Einsum", [v], {"equation": "...ij->...ji"}, dtype=dtype_of(v))
            elif r >= 2:
                c = b.value_of(v)
                if c is not None:
                    v = b.const(np.swapaxes(c, -1, -2))
                else:
                    perm = list(range(r))
                    perm[-1], perm[-2] = perm[-2], perm[-1]
                    v = b.transpose(v, perm)
        ins.append(v)
    return b.op("MatMul", ins, dtype=dt)


@importer("ShapeOf", since=1)
def _shape_of(b: Builder, layer: Layer, x):
    s = b.op("Shape", x[:1], dtype=DataType.INT64)
    name = layer.attr("output_type", "i64")
    if layer.opset and layer.opset >= 3 and element_type_name(name) == "i32":
        return b.cast(s, DataType.INT32)
    return s


@importer("Range", since=1)
def _range1(b: Builder, layer: Layer, x):
    dt = out_dtype(layer, x)
    ins = [b.cast(v, dt) if dt is not None else v for v in x[:3]]
    return b.op("Range", ins, dtype=dt)


@importer("Range", since=4)
def _range4(b: Builder, layer: Layer, x):
    name = layer.attr("output_type", required=True)
    dt = from_element_type(element_type_name(name), layer.where())
    return b.op("Range", [b.cast(v, dt) for v in x[:3]], dtype=dt)


@importer(["PRelu", "PReLU"], since=1)
def _prelu(b: Builder, layer: Layer, x):
    dt = out_dtype(layer, x)
    slope = x[1]
    r, rs = rank_of(x[0]), rank_of(slope)
    shape, s_shape = shape_of(x[0]), shape_of(slope)
    channel = True
    if shape is not None and len(shape) >= 2 and s_shape is not None and len(s_shape) == 1 \
            and isinstance(s_shape[0], int) and isinstance(shape[1], int) \
            and s_shape[0] != shape[1]:
        channel = False  # not the channel count: NumPy broadcasting
    if channel and rs == 1 and r is not None and r >= 3:  # a per-channel slope: axis 1
        slope = b.unsqueeze(slope, list(range(1, r - 1)))
    return b.op("PRelu", [x[0], slope], dtype=dt)


@importer("Identity", since=16)
def _identity(b: Builder, layer: Layer, x):
    return b.op("Identity", x[:1], dtype=out_dtype(layer, x))

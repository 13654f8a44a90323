"""Translators of OpenVINO element-wise math ops that need more than a rename: Round, HardSigmoid,
Selu, IsInf, IsFinite, the Bitwise family, CumSum, Einsum.

OpenVINO semantics kept (checked against OpenVINO itself in tests/openvino):
- ``Round-5`` ``half_to_even`` is ONNX ``Round``; ``half_away_from_zero`` is
  ``sign(x) * floor(|x| + 0.5)``; integers are left as they are;
- ``HardSigmoid`` and ``Selu`` take alpha/beta/lambda as inputs, constants (ONNX
  attributes);
- ``IsFinite`` is ``not (isnan or isinf)``;
- ``BitwiseAnd/Or/Xor/Not`` on booleans are the logical ops (ONNX's bitwise ops take integers
  only); ``BitwiseLeftShift``/``BitwiseRightShift`` are ONNX ``BitShift``, which takes unsigned
  integers: signed ones are shifted as their unsigned bits, and a right shift of a signed
  integer is arithmetic, as in OpenVINO (``(x ^ m) >> k ^ m``, m = -1 where x < 0);
- ``CumSum``'s axis input is optional (axis 0).
"""

from __future__ import annotations

import numpy as np

from .....errors import ModelError
from .....ir.types import DataType
from ...builder import Builder, dtype_of
from ...elements import to_numpy
from ...import_table import importer
from ...netparse import Layer
from .read import out_dtype


@importer("Round", since=5)
def _round(b: Builder, layer: Layer, x):
    mode = (layer.attr("mode", "half_to_even") or "half_to_even").lower()
    if mode not in ("half_to_even", "half_away_from_zero"):
        raise ModelError(f"{layer.where()}: Round mode '{mode}' is not 'half_to_even' or "
                         "'half_away_from_zero'")
    dt = out_dtype(layer, x)
    if dt is not None and not dt.is_floating:
        return b.op("Identity", x[:1], dtype=dt)
    if mode == "half_to_even":
        return b.op("Round", x[:1], dtype=dt)
    half = b.const(np.array(0.5, to_numpy(dt)))
    mag = b.op("Floor", [b.op("Add", [b.op("Abs", x[:1], dtype=dt), half], dtype=dt)], dtype=dt)
    return b.op("Mul", [b.op("Sign", x[:1], dtype=dt), mag], dtype=dt)


def _const_scalars(b: Builder, layer: Layer, x, names: list[str]) -> list[float]:
    """Inputs 1.. as Python floats; OpenVINO's CPU plugin, too, wants them constant."""
    out = []
    for i, name in enumerate(names, 1):
        c = b.need_const(x[i], layer, f"{name} (input {i})")
        if c.size != 1:
            raise ModelError(f"{layer.where()}: {name} (input {i}) must hold one value")
        out.append(float(c.reshape(-1)[0]))
    return out


@importer("HardSigmoid", since=1)
def _hard_sigmoid(b: Builder, layer: Layer, x):
    alpha, beta = _const_scalars(b, layer, x, ["alpha", "beta"])
    return b.op("HardSigmoid", x[:1], {"alpha": alpha, "beta": beta}, dtype=out_dtype(layer, x))


@importer("Selu", since=1)
def _selu(b: Builder, layer: Layer, x):
    alpha, lam = _const_scalars(b, layer, x, ["alpha", "lambda"])
    return b.op("Selu", x[:1], {"alpha": alpha, "gamma": lam}, dtype=out_dtype(layer, x))


def _is_inf(b: Builder, layer: Layer, x):
    return b.op("IsInf", x[:1], {"detect_negative": int(layer.bool_attr("detect_negative", True)),
                                 "detect_positive": int(layer.bool_attr("detect_positive", True))},
                dtype=DataType.BOOL)


importer("IsInf", since=10)(_is_inf)


@importer("IsFinite", since=10)
def _is_finite(b: Builder, layer: Layer, x):
    nan = b.op("IsNaN", x[:1], dtype=DataType.BOOL)
    inf = b.op("IsInf", x[:1], dtype=DataType.BOOL)
    return b.op("Not", [b.op("Or", [nan, inf], dtype=DataType.BOOL)], dtype=DataType.BOOL)


def _bitwise(onnx_op: str, logical_op: str):
    def tr(b: Builder, layer: Layer, x):
        arity = 1 if onnx_op == "BitwiseNot" else 2
        dt = out_dtype(layer, x)
        op = logical_op if dt == DataType.BOOL else onnx_op
        return b.op(op, x[:arity], dtype=dt)

    return tr


for _ov, (_onnx, _logical) in {"BitwiseAnd": ("BitwiseAnd", "And"),
                                "BitwiseOr": ("BitwiseOr", "Or"),
                                "BitwiseXor": ("BitwiseXor", "Xor"),
                                "BitwiseNot": ("BitwiseNot", "Not")}.items():
    importer(_ov, since=13)(_bitwise(_onnx, _logical))


_UNSIGNED = {DataType.INT8: DataType.UINT8, DataType.INT16: DataType.UINT16,
             DataType.INT32: DataType.UINT32, DataType.INT64: DataType.UINT64}


def _shift(direction: str):
    def tr(b: Builder, layer: Layer, x):
        dt = out_dtype(layer, x)
        udt = _UNSIGNED.get(dt)
        if udt is None:
            return b.op("BitShift", [x[0], b.cast(x[1], dt)], {"direction": direction},
                        dtype=dt)
        # ONNX's BitShift takes unsigned integers: shift the bits as unsigned; a right shift
        # of a signed value is arithmetic: (x ^ m) >> k ^ m, m = -1 where x < 0, else 0
        value, m = x[0], None
        if direction == "RIGHT":
            neg = b.op("Less", [value, b.const(np.zeros((), to_numpy(dt)))], dtype=DataType.BOOL)
            m = b.op("Neg", [b.cast(neg, dt)], dtype=dt)
            value = b.op("BitwiseXor", [value, m], dtype=dt)
        shifted = b.op("BitShift", [b.cast(value, udt), b.cast(x[1], udt)],
                       {"direction": direction}, dtype=udt)
        out = b.cast(shifted, dt)
        return out if m is None else b.op("BitwiseXor", [out, m], dtype=dt)

    return tr


importer("BitwiseLeftShift", since=15)(_shift("LEFT"))
importer("BitwiseRightShift", since=15)(_shift("RIGHT"))


@importer("CumSum", since=3)
def _cumsum(b: Builder, layer: Layer, x):
    axis = b.to_i64(x[1]) if len(x) > 1 else b.i64(0)
    attrs = {"exclusive": int(layer.bool_attr("exclusive", False)),
             "reverse": int(layer.bool_attr("reverse", False))}
    return b.op("CumSum", [x[0], axis], attrs, dtype=out_dtype(layer, x))


@importer("Einsum", since=7)
def _einsum(b: Builder, layer: Layer, x):
    eq = (layer.attr("equation", required=True) or "").replace(" ", "")
    return b.op("Einsum", list(x), {"equation": eq}, dtype=out_dtype(layer, x) or dtype_of(x[0]))

"""Element-wise kernels: arithmetic, math functions, comparisons, logic, bitwise, Where.

All binary ops broadcast NumPy-style (opset >= 7). Before opset 7 the arithmetic ops took a
``broadcast``/``axis`` attribute pair: B is aligned with A starting at ``axis``. Results keep
the input element type, as ONNX requires (integer Div truncates toward zero, Pow keeps the
base's type).
"""

from __future__ import annotations

import math
from functools import reduce

import numpy as np
from numpy import asarray, ndarray

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr_or_default, attr_str
from . import kernel

# ----------------------------------------------------------------------------- helpers


def _unary(ufunc):
    def factory(node, ctx):
        def fn(x):
            r = ufunc(x)
            return r if r.__class__ is ndarray else asarray(r)

        return fn

    return factory


def _binary(ufunc):
    def factory(node, ctx):
        def fn(a, b):
            r = ufunc(a, b)
            return r if r.__class__ is ndarray else asarray(r)

        return fn

    return factory


def _register_unary(table: dict[str, object], since: int = 1) -> None:
    for op, uf in table.items():
        kernel(op, since=since)(_unary(uf))


# ----------------------------------------------------------------------------- arithmetic

for _op, _uf in {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}.items():
    kernel(_op, since=1)(_binary(_uf))


def _int_div(a, b):
    """Integer division truncating toward zero (C semantics), as ONNX Runtime does."""
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        r = np.remainder(a, b)
        adjust = (r != 0) & ((a < 0) ^ (b < 0))
        q = q + adjust.astype(q.dtype)
    return q


def zero_divisor_error(node, what: str) -> ExecutionError:
    """An integer division or modulo by zero: ONNX Runtime refuses it at run time (NumPy
    gives 0 with a warning, XLA -1 or the dividend), so both backends refuse it."""
    return ExecutionError(f"{where(node)}: integer {what} by zero (input 1 holds a 0)")


def _divides(a, b) -> bool:
    """Whether `a` op `b` computes any element (an empty result divides nothing)."""
    return math.prod(np.broadcast_shapes(a.shape, b.shape)) > 0


@kernel("Div", since=1)
def _div(node, ctx):
    divide = np.divide

    def fn(a, b):
        if a.dtype.kind in "iu":
            if not b.all() and _divides(a, b):
                raise zero_divisor_error(node, "division")
            return asarray(_int_div(a, b))
        r = divide(a, b)
        return r if r.__class__ is ndarray else asarray(r)

    return fn


@kernel("Pow", since=1)
def _pow(node, ctx):
    """Pow: the result has the base's element type (exponent may be of another type)."""
    power = np.power

    def fn(a, b):
        if a.dtype.kind in "iu" and b.dtype.kind in "iu":
            if (b < 0).any():  # NumPy refuses; ONNX Runtime computes in floating point
                r = power(a.astype(np.float64), b).astype(a.dtype)
            else:
                r = power(a, b.astype(a.dtype, copy=False))
        else:
            r = power(a, b)
        if r.__class__ is not ndarray:
            r = asarray(r)
        return r if r.dtype == a.dtype else r.astype(a.dtype)

    return fn


@kernel("Mod", since=10)
def _mod(node, ctx):
    """Mod: ``fmod=0`` takes the divisor's sign (np.mod), ``fmod=1`` the dividend's (np.fmod)."""
    uf = np.fmod if attr_or_default(node, "fmod") else np.mod

    def fn(a, b):
        if a.dtype.kind in "iu" and not b.all() and _divides(a, b):
            raise zero_divisor_error(node, "modulo")
        r = uf(a, b)
        return r if r.__class__ is ndarray else asarray(r)

    return fn


@kernel("BitShift", since=11)
def _bitshift(node, ctx):
    """BitShift: LEFT or RIGHT; shifts by >= the bit width give 0 (or -1 for negative >>)."""
    direction = (attr_str(node, "direction", "") or "").upper()
    if direction not in ("LEFT", "RIGHT"):
        raise ModelError(f"{where(node)}: direction must be LEFT or RIGHT, got {direction!r}")
    uf = np.left_shift if direction == "LEFT" else np.right_shift

    def fn(x, y):
        return asarray(uf(x, y.astype(x.dtype, copy=False)))

    return fn


for _op, _uf in {
    "BitwiseAnd": np.bitwise_and, "BitwiseOr": np.bitwise_or, "BitwiseXor": np.bitwise_xor,
}.items():
    kernel(_op, since=18)(_binary(_uf))
kernel("BitwiseNot", since=18)(_unary(np.invert))


def _variadic(ufunc):
    def factory(node, ctx):
        def fn(*xs):
            if len(xs) == 1:
                return xs[0]
            return asarray(reduce(ufunc, xs))

        return fn

    return factory


kernel("Max", since=1)(_variadic(np.maximum))
kernel("Min", since=1)(_variadic(np.minimum))
kernel("Sum", since=1)(_variadic(np.add))


@kernel("Mean", since=1)
def _mean(node, ctx):
    def fn(*xs):
        s = reduce(np.add, xs) if len(xs) > 1 else xs[0]
        r = asarray(s / len(xs))
        return r if r.dtype == xs[0].dtype else r.astype(xs[0].dtype)

    return fn


def clip(x, lo, hi, out=None):
    """Clip's value (a bound may be None): with both bounds one ``np.clip`` (a single SIMD
    pass, twice as fast as ``maximum`` then ``minimum``; as ``onnx.reference`` computes it:
    an input of -0.0 within the bounds stays -0.0, and ``min > max`` gives ``max``);
    with one bound ``maximum`` or ``minimum``. Into `out` when given."""
    if lo is not None and hi is not None:
        if x.__class__ is np.ndarray:  # the method np.clip calls, without its wrappers
            return x.clip(lo, hi, out=out)
        return np.clip(x, lo, hi, out=out)
    if lo is not None:
        return np.maximum(x, lo, out=out)
    if hi is not None:
        return np.minimum(x, hi, out=out)
    return x if out is None else np.copyto(out, x) or out


@kernel("Clip", since=11)
def _clip(node, ctx):
    """Clip from opset 11: optional `min` and `max` inputs; min > max gives max everywhere."""

    def fn(x, lo=None, hi=None):
        r = clip(x, lo, hi)
        return r if r.__class__ is ndarray else asarray(r)

    return fn


# ----------------------------------------------------------------------------- unary math

_register_unary({
    "Neg": np.negative, "Abs": np.abs, "Sqrt": np.sqrt, "Exp": np.exp, "Log": np.log,
    "Floor": np.floor, "Ceil": np.ceil, "Tanh": np.tanh,
})
_register_unary({"Round": np.rint}, since=11)
_register_unary({"Sign": np.sign, "Sinh": np.sinh, "Cosh": np.cosh, "Asinh": np.arcsinh,
                 "Acosh": np.arccosh, "Atanh": np.arctanh}, since=9)
_register_unary({"Sin": np.sin, "Cos": np.cos, "Tan": np.tan, "Asin": np.arcsin,
                 "Acos": np.arccos, "Atan": np.arctan}, since=7)


_register_unary({"Reciprocal": np.reciprocal})


def _erf_impl():
    try:
        from scipy.special import erf  # exact and vectorized where available

        return erf
    except ImportError:  # pragma: no cover - scipy comes with jax, but is not required
        vec = np.vectorize(math.erf, otypes=[np.float64])
        return lambda x: vec(x)


erf = _erf_impl()


@kernel("Erf", since=9)
def _erf(node, ctx):
    def fn(x):
        r = asarray(erf(x))
        return r if r.dtype == x.dtype else r.astype(x.dtype)

    return fn


_register_unary({"IsNaN": np.isnan}, since=9)


@kernel("IsInf", since=10)
def _isinf(node, ctx):
    neg = bool(attr_or_default(node, "detect_negative"))
    pos = bool(attr_or_default(node, "detect_positive"))

    def fn(x):
        if neg and pos:
            return asarray(np.isinf(x))
        if pos:
            return asarray(np.isposinf(x))
        if neg:
            return asarray(np.isneginf(x))
        return np.zeros(x.shape, dtype=bool)

    return fn


# ----------------------------------------------------------------------------- comparisons, logic

for _op, _uf in {
    "Equal": np.equal, "Less": np.less, "LessOrEqual": np.less_equal, "Greater": np.greater,
    "GreaterOrEqual": np.greater_equal, "And": np.logical_and, "Or": np.logical_or,
    "Xor": np.logical_xor,
}.items():
    kernel(_op, since=1)(_binary(_uf))
_register_unary({"Not": np.logical_not})


@kernel("Where", since=9)
def _where(node, ctx):
    npwhere = np.where

    def fn(c, x, y):
        r = npwhere(c, x, y)
        return r if r.__class__ is ndarray else asarray(r)

    return fn


@kernel("Shrink", since=9)
def _shrink(node, ctx):
    """``x + bias`` where ``x < -lambd``, ``x - bias`` where ``x > lambd``, else 0."""
    lambd = float(attr_or_default(node, "lambd"))
    bias = float(attr_or_default(node, "bias"))

    def fn(x):
        y = np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0))
        return asarray(y.astype(x.dtype, copy=False))

    return fn

"""Element-wise rules: arithmetic, math functions, comparisons, logic, bitwise, Where, Clip.

Same semantics as the NumPy kernels: NumPy-style broadcasting (the opset < 7
``broadcast``/``axis`` form included), results keep the input's element type, integer Div
truncates toward zero, Pow keeps the base's type, Mod follows ``fmod``.
"""

from __future__ import annotations

from functools import reduce

import numpy as np

from ..table import lowering
from ._util import astype, attr_or_default, attr_str


def _binary(name: str):
    def rule(cx, a, b):
        return getattr(cx.xp, name)(a, b)

    return rule


def _unary(name: str):
    def rule(cx, x):
        return getattr(cx.xp, name)(x)

    return rule


for _op, _fn in {"Add": "add", "Sub": "subtract", "Mul": "multiply"}.items():
    lowering(_op, since=1, fold=True)(_binary(_fn))

for _op, _fn in {
    "Equal": "equal", "Less": "less", "LessOrEqual": "less_equal", "Greater": "greater",
    "GreaterOrEqual": "greater_equal", "And": "logical_and", "Or": "logical_or",
    "Xor": "logical_xor",
}.items():
    lowering(_op, since=1, fold=True)(_binary(_fn))

for _op, _fn in {"BitwiseAnd": "bitwise_and", "BitwiseOr": "bitwise_or",
                 "BitwiseXor": "bitwise_xor"}.items():
    lowering(_op, since=18, fold=True)(_binary(_fn))
lowering("BitwiseNot", since=18, fold=True)(_unary("invert"))
lowering("Not", since=1, fold=True)(_unary("logical_not"))

for _op, _fn in {"Neg": "negative", "Abs": "abs", "Sqrt": "sqrt", "Exp": "exp", "Log": "log",
                 "Floor": "floor", "Ceil": "ceil", "Tanh": "tanh",
                 "Reciprocal": "reciprocal"}.items():
    lowering(_op, since=1, fold=True)(_unary(_fn))
lowering("Round", since=11, fold=True)(_unary("rint"))
for _op, _fn in {"Sign": "sign", "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh",
                 "Acosh": "arccosh", "Atanh": "arctanh", "IsNaN": "isnan"}.items():
    lowering(_op, since=9, fold=True)(_unary(_fn))
for _op, _fn in {"Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos",
                 "Atan": "arctan"}.items():
    lowering(_op, since=7, fold=True)(_unary(_fn))


@lowering("Div", since=1, fold=True)
def _div(cx, a, b):
    xp = cx.xp
    if a.dtype.kind in "iu":
        _no_zero_divisor(cx, a, b, "division")
        if cx.folding:
            q = np.floor_divide(a, b)
            if a.dtype.kind == "i":
                r = np.remainder(a, b)
                q = q + ((r != 0) & ((a < 0) ^ (b < 0))).astype(q.dtype)
            return q
        from jax import lax

        a, b = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
        return lax.div(a, b)  # C semantics: truncates toward zero
    if not cx.folding:
        a, b = _exact_operands(xp, a, b)
    return xp.divide(a, b)


def _exact_operands(xp, a, b):
    """`a`, `b` such that XLA divides them: it turns a division by a constant or a broadcast
    divisor into a product by the reciprocal, which is an ulp off for about a third of float32
    quotients (ONNX Runtime and NumPy round the true quotient). Such a divisor is broadcast to
    the result's shape behind an optimization barrier, which XLA does not look through."""
    from jax import lax

    shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    if isinstance(b, np.ndarray) or np.shape(b) != shape:
        b = lax.optimization_barrier(xp.broadcast_to(xp.asarray(b), shape))
    if np.shape(a) != shape:
        a = xp.broadcast_to(a, shape)
    return a, b


@lowering("Pow", since=1, fold=True)
def _pow(cx, a, b):
    xp = cx.xp
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        if cx.folding and not (b < 0).any():
            return np.power(a, b.astype(a.dtype))
        neg = xp.power(astype(cx, a, np.float64), b)
        if cx.folding:
            return neg.astype(a.dtype)
        pos = xp.power(a, xp.maximum(astype(cx, b, a.dtype), 0))
        return xp.where(b < 0, astype(cx, neg, a.dtype), pos)
    return astype(cx, xp.power(a, b), a.dtype)


@lowering("Mod", since=10, fold=True)
def _mod(cx, a, b):
    if a.dtype.kind in "iu":
        _no_zero_divisor(cx, a, b, "modulo")
    return (cx.xp.fmod if attr_or_default(cx.node, "fmod") else cx.xp.mod)(a, b)


def _no_zero_divisor(cx, a, b, what: str) -> None:
    """An integer division or modulo by zero is an error, as in ONNX Runtime and the NumPy
    kernels (XLA would give -1 or the dividend); an empty result divides nothing."""
    if 0 in np.broadcast_shapes(np.shape(a), np.shape(b)):
        return
    cx.check(cx.xp.any(b == 0), f"integer {what} by zero (input 1 holds a 0)")


@lowering("BitShift", since=11, fold=True)
def _bitshift(cx, x, y):
    direction = (attr_str(cx.node, "direction", "") or "").upper()
    if direction not in ("LEFT", "RIGHT"):
        cx.fail(f"direction must be LEFT or RIGHT, got {direction!r}")
    fn = cx.xp.left_shift if direction == "LEFT" else cx.xp.right_shift
    return fn(x, astype(cx, y, x.dtype))


def _variadic(name: str):
    def rule(cx, *xs):
        if len(xs) == 1:
            return xs[0]
        return reduce(getattr(cx.xp, name), xs)

    return rule


lowering("Max", since=1, fold=True)(_variadic("maximum"))
lowering("Min", since=1, fold=True)(_variadic("minimum"))
lowering("Sum", since=1, fold=True)(_variadic("add"))


@lowering("Mean", since=1, fold=True)
def _mean(cx, *xs):
    s = reduce(cx.xp.add, xs) if len(xs) > 1 else xs[0]
    return astype(cx, s / len(xs), xs[0].dtype)


@lowering("Clip", since=11, fold=True)
def _clip(cx, x, lo=None, hi=None):
    xp = cx.xp
    if lo is not None:
        x = xp.maximum(x, lo)
    if hi is not None:
        x = xp.minimum(x, hi)
    return x


@lowering("Erf", since=9)
def _erf(cx, x):
    from jax import lax

    return lax.erf(x) if x.dtype.kind == "f" else astype(cx, lax.erf(x.astype(np.float64)),
                                                         x.dtype)


@lowering("IsInf", since=10, fold=True)
def _isinf(cx, x):
    neg = bool(attr_or_default(cx.node, "detect_negative"))
    pos = bool(attr_or_default(cx.node, "detect_positive"))
    xp = cx.xp
    if neg and pos:
        return xp.isinf(x)
    if pos:
        return xp.isposinf(x)
    if neg:
        return xp.isneginf(x)
    return xp.zeros(x.shape, dtype=bool)


@lowering("Where", since=9, fold=True)
def _where(cx, c, x, y):
    return cx.xp.where(c, x, y)

"""Rules that make tensors: Constant, ConstantOfShape, Range, Cast, CastLike.

Constants are static. ConstantOfShape and Range need their shape/bounds at trace time.
Casts between the ordinary types are ``astype``, except bool to float (`_bool_to_float`) and
float to integer, which follows the NumPy backend's rule (`backends.common.cast.float_to_int`;
XLA alone would saturate); casts
involving strings or the float8 / float4 / int4 families run on the host
(`backends.common.cast`, folded) when their input is static, and are not lowered otherwise.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import constant_value, fill_value
from ...common.cast import cast, cast_options, float_to_int, is_float_to_int
from ..table import lowering
from ._util import attr, np_dtype


@lowering("Constant", since=1, fold=True)
def _constant(cx):
    return np.asarray(constant_value(cx.node))


@lowering("ConstantOfShape", since=9, fold=True)
def _constant_of_shape(cx, shape):
    fill = fill_value(cx.node)
    dims = tuple(cx.ints(shape, "the shape (input 0)"))
    if any(d < 0 for d in dims):
        raise ExecutionError(f"{where(cx.node)}: negative dimension in shape {list(dims)}")
    if fill.dtype.kind == "O":
        return np.full(dims, fill, dtype=fill.dtype)
    return cx.xp.full(dims, fill, dtype=fill.dtype)


@lowering("Range", since=11, fold=True)
def _range(cx, start, limit, delta):
    start = cx.const(start, "start (input 0)").reshape(-1)[:1].reshape(())
    limit = cx.const(limit, "limit (input 1)").reshape(-1)[:1].reshape(())
    delta = cx.const(delta, "delta (input 2)").reshape(-1)[:1].reshape(())
    dtype = start.dtype
    if delta == 0:
        raise ExecutionError(f"{where(cx.node)}: delta must not be 0")
    if dtype.kind in "iu":
        s, lim, d = int(start), int(limit), int(delta)
        n = max(-((s - lim) // d), 0)
        return cx.xp.asarray((s + np.arange(n, dtype=np.int64) * d).astype(dtype))
    compute = np.dtype(np.float64)
    stash = attr(cx.node, "stash_type")
    if stash is not None and dtype.itemsize == 2:
        compute = np_dtype(int(stash), cx.node)
    r = np.arange(start.astype(compute).item(), float(limit), float(delta), dtype=compute)
    return r.astype(dtype)


_PLAIN = frozenset("biuf")


def _plain(dt: np.dtype) -> bool:
    return (dt.kind in _PLAIN and dt.type.__module__ == "numpy") or dt.name == "bfloat16"


def _cast(cx, x, to: np.dtype):
    if x.dtype == to:
        return x
    if is_float_to_int(np.dtype(x.dtype), to):
        return float_to_int(cx.xp.asarray(x), to, cx.xp)
    if _plain(x.dtype) and _plain(to):
        if cx.folding:
            return x.astype(to)
        if x.dtype == np.bool_ and to.kind not in "biu":
            return _bool_to_float(cx.xp, cx.xp.asarray(x), to)
        return cx.xp.asarray(x).astype(to)
    if cx.folding or isinstance(x, np.ndarray):  # strings, float8, ...: on the host
        return cast(x, to, *cast_options(cx.node))
    cx.fail(f"cast from {x.dtype} to {to} is not lowered (only NumPy implements it)")


def _bool_to_float(xp, x, to: np.dtype):
    """A bool cast to a float type as a select of 1 and 0, not a ``convert``: XLA rewrites
    ``convert(p) * y`` into ``select(p, y, 0)``, which gives 0 where ONNX's ``0 * inf`` and
    ``0 * nan`` are NaN (a masked distance of scikit-learn's k-neighbours models)."""
    return xp.where(x, xp.ones((), to), xp.zeros((), to))


@lowering("Cast", since=1, fold=True)
def _cast_rule(cx, x):
    to = cx.node.attrs.get("to")
    if to is None:
        raise ModelError(f"{where(cx.node)}: Cast needs the 'to' attribute")
    return _cast(cx, x, np_dtype(to, cx.node))


@lowering("CastLike", since=15, fold=True)
def _cast_like(cx, x, like):
    return _cast(cx, x, np.dtype(like.dtype))

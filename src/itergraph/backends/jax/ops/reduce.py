"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax/ArgMin,
CumSum.

Axes come from the optional second input (it must be known at trace time; the ``axes``
attribute of older opsets is made that input when the model is read: `ir.canonical`). No axes
reduces everything unless ``noop_with_empty_axes``. Results keep the input's element type; Max/Min
over an empty set give -inf/+inf (the type's extremes for integers), as in the NumPy kernels.
"""

from __future__ import annotations

import numpy as np

from ....errors import ModelError
from ....ir.canonical import not_canonical
from ...common.nan_arg import nan_arg
from ...common.reduce import extreme_identity, reduction_axes
from ..table import lowering
from ._util import astype, attr, attr_or_default, norm_axis


def _sum(cx, x, ax, kd):
    return cx.xp.sum(x, axis=ax, keepdims=kd, dtype=x.dtype)


def _mean(cx, x, ax, kd):
    # an integer mean accumulates in float64, as NumPy's does (JAX's default float32 rounds
    # a uint32 mean of 1431655765 to 1431655808)
    acc = np.float64 if np.dtype(x.dtype).kind in "iub" else None
    return astype(cx, cx.xp.mean(x, axis=ax, keepdims=kd, dtype=acc), x.dtype)


def _extreme(name: str, low: bool):
    def impl(cx, x, ax, kd):
        fn = getattr(cx.xp, name)
        if x.size:
            return fn(x, axis=ax, keepdims=kd)
        return fn(x, axis=ax, keepdims=kd, initial=extreme_identity(x.dtype, low))

    return impl


def _prod(cx, x, ax, kd):
    return cx.xp.prod(x, axis=ax, keepdims=kd, dtype=x.dtype)


def _l1(cx, x, ax, kd):
    return cx.xp.sum(cx.xp.abs(x), axis=ax, keepdims=kd, dtype=x.dtype)


def _l2(cx, x, ax, kd):
    return cx.xp.sqrt(cx.xp.sum(cx.xp.square(x), axis=ax, keepdims=kd, dtype=x.dtype))


def _log_sum(cx, x, ax, kd):
    return cx.xp.log(cx.xp.sum(x, axis=ax, keepdims=kd, dtype=x.dtype))


def _log_sum_exp(cx, x, ax, kd):
    xp = cx.xp
    if x.size == 0 or x.dtype.kind != "f":
        return xp.log(xp.sum(xp.exp(x), axis=ax, keepdims=kd))
    m = xp.max(x, axis=ax, keepdims=True)
    m = astype(cx, xp.where(xp.isfinite(m), m, 0), x.dtype)
    r = xp.log(xp.sum(xp.exp(x - m), axis=ax, keepdims=True)) + m
    return r if kd else xp.squeeze(r, axis=ax if ax is not None else tuple(range(x.ndim)))


def _sum_square(cx, x, ax, kd):
    return cx.xp.sum(cx.xp.square(x), axis=ax, keepdims=kd, dtype=x.dtype)


_IMPLS = {
    "ReduceSum": _sum,
    "ReduceMean": _mean,
    "ReduceMax": _extreme("max", True),
    "ReduceMin": _extreme("min", False),
    "ReduceProd": _prod,
    "ReduceL1": _l1,
    "ReduceL2": _l2,
    "ReduceLogSum": _log_sum,
    "ReduceLogSumExp": _log_sum_exp,
    "ReduceSumSquare": _sum_square,
}


def _run(cx, impl, x, axes, kd):
    ax = None if axes is None else reduction_axes(cx.node, axes, x.ndim)
    return astype(cx, impl(cx, x, ax, kd), x.dtype)


def _input_form(impl):
    def rule(cx, x, axes=None):
        if "axes" in cx.node.attrs:
            raise ModelError(not_canonical(cx.node, "axes"))
        kd = bool(attr_or_default(cx.node, "keepdims"))
        ax = None if axes is None else cx.ints(axes, "axes (input 1)")
        if not ax:
            if attr_or_default(cx.node, "noop_with_empty_axes"):
                return x
            ax = None
        return _run(cx, impl, x, ax, kd)

    return rule


for _op, _impl in _IMPLS.items():
    lowering(_op, since=1, fold=True)(_input_form(_impl))


def _arg(name: str):
    def rule(cx, x):
        xp = cx.xp
        a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), x.ndim)
        fn = getattr(xp, name)
        last = bool(attr_or_default(cx.node, "select_last_index"))
        if np.issubdtype(np.dtype(x.dtype), np.floating) and x.shape[a]:
            idx = nan_arg(xp, x, a, name == "argmax", last)
        elif last:
            idx = x.shape[a] - 1 - fn(xp.flip(x, a), axis=a)
        else:
            idx = fn(x, axis=a)
        if attr_or_default(cx.node, "keepdims"):
            idx = xp.expand_dims(idx, a)
        return astype(cx, xp.asarray(idx), np.int64)

    return rule


lowering("ArgMax", since=1, fold=True)(_arg("argmax"))
lowering("ArgMin", since=1, fold=True)(_arg("argmin"))


def cumulative(cx, x, axis, name: str, identity):
    """CumSum / CumProd (`name` is the array-module function): ``reverse`` and ``exclusive``
    attributes as ONNX defines them; an exclusive scan starts from `identity`."""
    xp = cx.xp
    a = norm_axis(cx, int(cx.const(axis, "axis (input 1)").reshape(())), x.ndim)
    rev = bool(attr(cx.node, "reverse", 0))
    if rev:
        x = xp.flip(x, a)
    r = getattr(xp, name)(x, axis=a, dtype=x.dtype)
    if attr(cx.node, "exclusive", 0):
        pad = [(0, 0)] * x.ndim
        pad[a] = (1, 0)
        idx = [slice(None)] * x.ndim
        idx[a] = slice(0, x.shape[a])
        r = xp.pad(r, pad, constant_values=identity)[tuple(idx)]
    return xp.flip(r, a) if rev else r


@lowering("CumSum", since=11, fold=True)
def _cumsum(cx, x, axis):
    return cumulative(cx, x, axis, "cumsum", 0)

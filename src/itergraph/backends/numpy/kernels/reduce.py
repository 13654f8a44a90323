"""Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax/ArgMin.

Axes come from the optional second input (the ``axes`` attribute of older opsets is made that
input when the model is read: `ir.canonical`). No axes (absent or empty) reduces everything, unless
``noop_with_empty_axes`` is set, in which case the input passes through. ``keepdims`` defaults
to 1. Results keep the input's element type. Max/Min over an empty set give -inf/+inf (or the
type's extreme value for integers).
"""

from __future__ import annotations

import numpy as np
from numpy import asarray

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr_or_default, const_input
from ....ir.canonical import not_canonical
from ...common.nan_arg import nan_arg
from ...common.reduce import extreme_identity, reduction_axes
from . import kernel

# ----------------------------------------------------------------------------- implementations
# Each takes (x, axes tuple or None, keepdims) and may return a NumPy scalar or another type.


_add_reduce = np.add.reduce  # what np.sum calls, without its Python-level dispatch


def _sum(x, ax, kd):
    return _add_reduce(x, axis=ax, keepdims=kd, dtype=x.dtype)


def _mean(x, ax, kd):
    return np.mean(x, axis=ax, keepdims=kd)


def _extreme(np_fn, low: bool):
    def impl(x, ax, kd):
        if x.size:
            return np_fn(x, axis=ax, keepdims=kd)
        return np_fn(x, axis=ax, keepdims=kd, initial=extreme_identity(x.dtype, low))

    return impl


def _prod(x, ax, kd):
    return np.prod(x, axis=ax, keepdims=kd, dtype=x.dtype)


def _l1(x, ax, kd):
    return np.sum(np.abs(x), axis=ax, keepdims=kd, dtype=x.dtype)


def _l2(x, ax, kd):
    return np.sqrt(np.sum(np.square(x), axis=ax, keepdims=kd, dtype=x.dtype))


def _log_sum(x, ax, kd):
    return np.log(np.sum(x, axis=ax, keepdims=kd, dtype=x.dtype))


def _log_sum_exp(x, ax, kd):
    if x.size == 0 or x.dtype.kind != "f":
        return np.log(np.sum(np.exp(x), axis=ax, keepdims=kd))
    m = np.max(x, axis=ax, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype, copy=False)
    r = np.log(np.sum(np.exp(x - m), axis=ax, keepdims=True)) + m
    return r if kd else np.squeeze(r, axis=ax)


def _sum_square(x, ax, kd):
    return np.sum(np.square(x), axis=ax, keepdims=kd, dtype=x.dtype)


_IMPLS = {
    "ReduceSum": _sum,
    "ReduceMean": _mean,
    "ReduceMax": _extreme(np.max, True),
    "ReduceMin": _extreme(np.min, False),
    "ReduceProd": _prod,
    "ReduceL1": _l1,
    "ReduceL2": _l2,
    "ReduceLogSum": _log_sum,
    "ReduceLogSumExp": _log_sum_exp,
    "ReduceSumSquare": _sum_square,
}

# ----------------------------------------------------------------------------- factories


def _finish(r, dtype):
    r = asarray(r)
    return r if r.dtype == dtype else r.astype(dtype)


def _checked(node, impl):
    def run(x, ax, kd):
        ax = None if ax is None else reduction_axes(node, ax, x.ndim)
        try:
            return _finish(impl(x, ax, kd), x.dtype)
        except (ValueError, np.exceptions.AxisError) as e:
            raise ExecutionError(
                f"{where(node)}: cannot reduce shape {x.shape} over axes {ax}: {e}"
            ) from None

    return run


def _input_form(impl):
    def factory(node, ctx):
        if "axes" in node.attrs:
            raise ModelError(not_canonical(node, "axes"))
        kd = bool(attr_or_default(node, "keepdims"))
        noop = bool(attr_or_default(node, "noop_with_empty_axes"))
        run = _checked(node, impl)
        const = const_input(node, 1)
        if const is not None:
            ax = tuple(dict.fromkeys(const.reshape(-1).tolist())) or None  # each once
            if ax is None and noop:
                return lambda x, axes=None: x
            return lambda x, axes=None: run(x, ax, kd)

        def fn(x, axes=None):
            if axes is None or axes.size == 0:
                if noop:
                    return x
                return run(x, None, kd)
            return run(x, tuple(axes.reshape(-1).tolist()), kd)

        return fn

    return factory


for _op, _impl in _IMPLS.items():
    kernel(_op, since=1)(_input_form(_impl))


# ----------------------------------------------------------------------------- ArgMax / ArgMin


def _arg(np_fn):
    def factory(node, ctx):
        axis = int(attr_or_default(node, "axis"))
        kd = bool(attr_or_default(node, "keepdims"))
        last = bool(attr_or_default(node, "select_last_index"))

        def fn(x):
            a = axis + x.ndim if axis < 0 else axis
            if np.issubdtype(x.dtype, np.floating) and 0 <= a < x.ndim and x.shape[a] and \
                    np.isnan(x).any():
                idx = nan_arg(np, x, a, np_fn is np.argmax, last)
            elif last:
                idx = x.shape[a] - 1 - np_fn(np.flip(x, a), axis=a)
            else:
                idx = np_fn(x, axis=a)
            if kd:
                idx = np.expand_dims(idx, a)
            return asarray(idx).astype(np.int64, copy=False)

        return fn

    return factory


kernel("ArgMax", since=1)(_arg(np.argmax))
kernel("ArgMin", since=1)(_arg(np.argmin))

"""ArgMax / ArgMin over floats holding NaN, as ONNX Runtime computes them.

ONNX leaves NaN unspecified. ONNX Runtime's ArgMax walks the axis keeping the first entry
and replacing it by a later one only when the later one compares greater (``>=`` with
``select_last_index``); no comparison with NaN holds, so: an axis whose first entry is NaN
gives index 0, any other gives the index of the largest entry that is not NaN (NaN entries
never win). ArgMin alike. (NumPy's and XLA's argmax return the first NaN instead.) This
holds for every axis and length ONNX Runtime was checked on (`tests/hostile`,
``onnx/argmax_argmin_with_nan_as_onnx_runtime``), unlike its ReduceMax, MaxPool and Hardmax,
whose NaN results depend on the kernel's vector width and traversal order: those propagate
NaN on both backends (NumPy semantics).
"""

from __future__ import annotations


def nan_arg(xp, x, axis: int, is_max: bool, last: bool):
    """ONNX Runtime's ArgMax (`is_max`) / ArgMin index along `axis` (normalised) of float
    `x` (axis length at least 1), without keepdims."""
    fill = -xp.inf if is_max else xp.inf
    nan = xp.isnan(x)
    clean = xp.where(nan, xp.asarray(fill, x.dtype), x)
    best = (xp.max if is_max else xp.min)(clean, axis=axis, keepdims=True)
    hit = (x == best)
    n = x.shape[axis]
    if last:
        idx = n - 1 - xp.argmax(xp.flip(hit, axis), axis=axis)
    else:
        idx = xp.argmax(hit, axis=axis)
    first_nan = xp.take(nan, 0, axis=axis)
    return xp.where(first_nan, 0, idx)

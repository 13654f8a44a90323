"""ONNX Runtime's ``QLinearSoftmax`` (domain ``com.microsoft``, what ``quantize_static`` in
QOperator format makes of a ``Softmax``), as its CPU kernel computes it on x86 CPUs with
AVX-512 (MLAS's ``MlasQuantizeSoftmax*KernelAvx512``); written once over ``xp``.

Inputs ``(X, X_scale, x_zero_point, y_scale, y_zero_point)``, 8-bit ``X``; attributes
``opset`` (the ``Softmax`` opset it replaced: below 13 the axes from ``axis`` on form one
row, from 13 on only ``axis``) and ``axis`` (default 1 below opset 13, else -1). Per row of
``D`` codes with maximum ``m``:

- ``e(x) = float32(exp((x - m + shift) * X_scale))`` in float64, ``shift = max(0,
  log(float32(FLT_MAX / D)) - 5) / X_scale`` (ORT's lookup table, which keeps the sum finite;
  the zero point cancels);
- ``total``: float32 sums in MLAS's order: the row's first ``32 * (D // 32)`` values into
  16 lanes (two vectors of 16 per block of 32), the lanes summed as a tree
  (``((l0 + l4) + (l8 + l12))`` and so on, then the four pairwise), then the rest one by one;
- ``scale = float32(1 / total) * floor(float32(1 / y_scale))``; the output code
  ``rne(fma(e, scale, y_zero_point))`` saturated to the type (the codes of the last
  ``D % 16`` values are ``rne(e * scale + y_zero_point)``, rounded twice, as MLAS's scalar
  tail).

Where ORT's scalar tail wraps an int8 result of 128 to -128 (a probability of 1 with
``y_zero_point`` -128), itergraph saturates to 127, as ORT's vector path does.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedError, where
from ..ir.attributes import attr
from . import ms_quant as mq

FLT_MAX = float(np.finfo(np.float32).max)


def _log_room(d: int) -> float:
    """``max(0, log(float32(FLT_MAX / D)) - 5)``: ORT's shift times ``X_scale``."""
    return max(0.0, math.log(float(np.float32(FLT_MAX) / np.float32(d))) - 5)


def exp_scaled(xp, offsets, d: int, x_scale):
    """``e = float32(exp((offsets + shift) * X_scale))`` for float64 `offsets` (codes minus
    their row's maximum) in rows of `d` codes: ORT's lookup table."""
    xs = xp.asarray(x_scale).reshape(()).astype(np.float64)
    return xp.exp((offsets + _log_room(d) / xs) * xs).astype(np.float32)


def y_factor(xp, y_scale):
    """``floor(float32(1 / y_scale))``, the factor the probabilities are scaled by."""
    return xp.floor((1.0 / xp.asarray(y_scale).reshape(()).astype(np.float64))
                    .astype(np.float32))


def _total(xp, e):
    """The row sums of float32 `e` (..., D) in MLAS's AVX-512 order."""
    d = e.shape[-1]
    lanes = xp.zeros(e.shape[:-1] + (16,), np.float32)
    for k in range(d // 32):
        lanes = lanes + e[..., 32 * k:32 * k + 16]
        lanes = lanes + e[..., 32 * k + 16:32 * k + 32]
    a = [(lanes[..., j] + lanes[..., 4 + j]) + (lanes[..., 8 + j] + lanes[..., 12 + j])
         for j in range(4)]
    total = (a[0] + a[1]) + (a[2] + a[3])
    for i in range(32 * (d // 32), d):
        total = total + e[..., i]
    return total


def _rows(node, xp, x):
    """`x` as rows (..., D) and the function putting rows back into `x`'s shape."""
    opset = int(attr(node, "opset", 13))
    axis = int(attr(node, "axis", 1 if opset < 13 else -1))
    r = x.ndim
    if not -r <= axis < r:
        raise UnsupportedError(f"{where(node)}: axis {axis} out of range for rank {r}")
    axis %= r
    if opset < 13:
        lead = x.shape[:axis]
        return x.reshape(lead + (-1,)), lambda y: y.reshape(x.shape)
    moved = xp.moveaxis(x, axis, -1)
    return moved, lambda y: xp.moveaxis(y, -1, axis)


def qlinear_softmax(node, xp, x, sx, zx, sy, zy=None):
    dt = np.dtype(x.dtype)
    lo, hi = mq.qrange(dt)
    if x.size == 0:
        return x
    rows, back = _rows(node, xp, x)
    d = rows.shape[-1]
    codes = rows.astype(np.int32)
    i = (codes - xp.max(codes, axis=-1, keepdims=True)).astype(np.float64)
    e = exp_scaled(xp, i, d, sx)
    total = _total(xp, e)
    inv = (1.0 / total.astype(np.float64)).astype(np.float32)
    scale = (inv * y_factor(xp, sy))[..., None]
    z = np.float32(0) if zy is None else xp.asarray(zy).reshape(()).astype(np.float32)
    vec = 16 * (d // 16)
    fused = mq.fma(xp, e[..., :vec], scale, z)
    tail = mq.add(xp, e[..., vec:] * scale, z)
    v = xp.concatenate([fused, tail], axis=-1)
    y = xp.clip(xp.round(v), lo, hi).astype(dt)
    return back(y)

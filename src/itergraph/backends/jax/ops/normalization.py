"""Normalizations and Lp pooling that vision and embedding models end with or hold:
``LpNormalization``, ``GroupNormalization``, ``MeanVarianceNormalization``, ``GlobalLpPool``
and ``LpPool`` (without these a model's program split around a NumPy step).

- ``LpNormalization(axis=-1, p=2)``: ``x / norm`` with ``norm`` the L1 or L2 norm along
  `axis` (no epsilon: a zero norm divides by zero, as ONNX Runtime does).
- ``GroupNormalization(num_groups, epsilon=1e-5)``: the channels in `num_groups` groups,
  ``(x - mean) / sqrt(var + epsilon)`` over each group's channels and spatial positions, then
  ``* scale + bias`` per channel (opset 21) or per group (opset 18: each group's value for
  its channels); computed in float32 (``stash_type`` 1) for narrower inputs.
- ``MeanVarianceNormalization(axes=[0, 2, 3])``: ONNX's function body, ``(x - E[x]) /
  (sqrt(E[x^2] - E[x]^2) + 1e-9)``.
- ``GlobalLpPool(p=2)``, ``LpPool(kernel_shape, p=2, ...)``: ``(sum |x|^p)^(1/p)`` over the
  spatial axes / each window (padding counts as zeros); ``ceil_mode=1`` stays on NumPy, as
  for the other pools.
"""

from __future__ import annotations

import numpy as np

from ..table import lowering
from ._util import astype, attr, attr_ints, attr_or_default, norm_axis
from .conv import lower_pool_sum, pool_refusal


@lowering("LpNormalization", since=1)
def _lp_normalization(cx, x):
    xp = cx.xp
    a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), x.ndim)
    p = int(attr_or_default(cx.node, "p"))
    if p not in (1, 2):
        cx.fail(f"LpNormalization with p={p} (ONNX allows 1 and 2)")
    norm = (xp.sum(xp.abs(x), axis=a, keepdims=True) if p == 1
            else xp.sqrt(xp.sum(x * x, axis=a, keepdims=True)))
    return astype(cx, x / norm, x.dtype)


@lowering("GroupNormalization", since=18)
def _group_normalization(cx, x, scale, bias):
    xp = cx.xp
    groups = int(attr(cx.node, "num_groups", 0))
    c = x.shape[1]
    if groups <= 0 or c % groups:
        cx.fail(f"GroupNormalization: {c} channels in {groups} groups")
    eps = float(attr_or_default(cx.node, "epsilon"))
    wide = np.promote_types(x.dtype, np.float32)
    g = xp.reshape(astype(cx, x, wide), (x.shape[0], groups, -1))
    mean = xp.mean(g, axis=-1, keepdims=True)
    var = xp.mean(xp.square(g - mean), axis=-1, keepdims=True)
    y = xp.reshape((g - mean) / xp.sqrt(var + eps), x.shape)
    per = c // groups if scale.shape[0] == groups and cx.node.version < 21 else 1
    shape = (1, c) + (1,) * (x.ndim - 2)

    def channel(v):
        v = astype(cx, v, wide)
        return xp.reshape(xp.repeat(v, per) if per > 1 else v, shape)

    return astype(cx, y * channel(scale) + channel(bias), x.dtype)


@lowering("MeanVarianceNormalization", since=9)
def _mean_variance_normalization(cx, x):
    xp = cx.xp
    axes = tuple(norm_axis(cx, a, x.ndim) for a in (attr_ints(cx.node, "axes") or [0, 2, 3]))
    mean = xp.mean(x, axis=axes, keepdims=True)
    var = xp.mean(x * x, axis=axes, keepdims=True) - mean * mean
    return astype(cx, (x - mean) / (xp.sqrt(var) + np.asarray(1e-9, x.dtype)), x.dtype)


def _p(cx) -> float:
    return float(attr_or_default(cx.node, "p"))


def _powered(cx, x, p: float):
    xp = cx.xp
    return x * x if p == 2 else xp.abs(x) ** p


def _root(cx, s, p: float, dtype):
    return astype(cx, cx.xp.sqrt(s) if p == 2 else s ** (1.0 / p), dtype)


@lowering("GlobalLpPool", since=2)
def _global_lp_pool(cx, x):
    p = _p(cx)
    s = cx.xp.sum(_powered(cx, x, p), axis=tuple(range(2, x.ndim)), keepdims=True)
    return _root(cx, s, p, x.dtype)


@lowering("LpPool", since=2, refuses=pool_refusal)
def _lp_pool(cx, x):
    p = _p(cx)
    return _root(cx, lower_pool_sum(cx, _powered(cx, x, p)), p, x.dtype)

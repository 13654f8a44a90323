"""Pooling kernels: MaxPool, AveragePool (opset 1-22), GlobalMaxPool and GlobalAveragePool.

The window geometry (``auto_pad``, ``pads``, ``ceil_mode``, output sizes) is
`backends.common.window`'s; no Python loop runs over output positions. Both reduce their
(separable) windows one axis at a time, one strided slice of the padded input per tap
(`_Windows`); MaxPool's indices output reads every window as a strided view instead.

MaxPool: ``onnx.reference``'s MaxPool gives wrong shapes and values when only the end of an
axis is padded (``pads=[0, 0, 1, 1]``, TensorFlow's SAME padding); here the input is padded
with the lowest value explicitly. The indices output is the flat position of the maximum in
the unpadded input (batch and channel included; ``storage_order=1``: the spatial axes counted
column-major), the first one in window order where several are equal.

AveragePool: the sum of a window divided by the number of its taps that fall inside the input
(``count_include_pad=0``, the default) or inside the explicitly padded input
(``count_include_pad=1``: ``pads`` and ``auto_pad`` padding counted, the extra room a
``ceil_mode`` window reaches past the end padding never). Taps are ``dilations`` apart
(opset 19). float16/bfloat16 are summed in float32. A window with no tap to count gives 0.

GlobalMaxPool / GlobalAveragePool: the maximum / mean over all spatial axes (2 and up), kept
as size-1 axes (``[N, C, 1, ..., 1]``).
"""

from __future__ import annotations

import numpy as np

from ....ir.attributes import attr, attr_or_default
from ...common.precision import work_dtype
from ...common.window import placement, window_counts, window_pads
from . import kernel

_MAX_PLANS = 64  # geometries kept per node (shapes rarely vary; a bound all the same)


class _Windows:
    """A pooling node's windows over inputs of one shape, as separable taps: the padded
    buffer (or the input itself, `direct`), where the input goes in it (`dst` <- `src`), and
    per spatial axis the strided slices, one per tap, whose element-wise reduction reduces
    the windows along that axis."""

    __slots__ = ("direct", "buf_shape", "dst", "src", "taps", "outs", "begin", "end")

    def __init__(self, node, shape, kernel_shape, strides, dil, ceil):
        size = shape[2:]
        span = [(k - 1) * d + 1 for k, d in zip(kernel_shape, dil)]
        self.begin, self.end = window_pads(node, size, kernel_shape, strides, dil)
        self.outs = window_counts(node, size, span, strides, self.begin, self.end, ceil)
        need = [(o - 1) * s + w for o, s, w in zip(self.outs, strides, span)]
        dst, src = placement(size, self.begin, need)
        self.direct = list(need) == list(size) and not any(self.begin)
        self.buf_shape = (*shape[:2], *need)
        full = (slice(None), slice(None))
        self.dst, self.src = full + dst, full + src
        self.taps = [[(slice(None),) * (2 + a) + (slice(j * d, j * d + (o - 1) * s + 1, s),)
                      for j in range(k)]
                     for a, (o, k, s, d) in enumerate(zip(self.outs, kernel_shape, strides,
                                                           dil))]

    def reduce(self, x, dtype, fill, combine):
        """The windows of `x` (in `dtype`, padded with `fill`) reduced by the ufunc
        `combine`, one axis at a time."""
        if self.direct:
            y = x.astype(dtype, copy=False)
        else:
            y = np.full(self.buf_shape, fill, dtype)
            y[self.dst] = x[self.src]
        for axis_taps in self.taps:
            acc = y[axis_taps[0]].copy()
            for tap in axis_taps[1:]:
                combine(acc, y[tap], out=acc)
            y = acc
        return y


def _cached(plans: dict, key, make):
    p = plans.get(key)
    if p is None:
        if len(plans) >= _MAX_PLANS:
            plans.clear()
        p = plans[key] = make()
    return p


def _lowest(dtype) -> np.ndarray:
    return (np.array(-np.inf, dtype) if dtype.kind == "f"
            else np.array(np.iinfo(dtype).min, dtype))


@kernel("MaxPool", since=1)
def _max_pool(node, ctx):
    plans: dict[tuple, _Windows] = {}
    if len(node.outputs) < 2:
        kernel_shape = [int(k) for k in attr(node, "kernel_shape")]
        n = len(kernel_shape)
        strides = [int(s) for s in attr(node, "strides", [1] * n)]
        dil = [int(d) for d in attr(node, "dilations", [1] * n)]
        ceil = bool(attr_or_default(node, "ceil_mode"))

        def values(x):
            w = _cached(plans, x.shape,
                        lambda: _Windows(node, x.shape, kernel_shape, strides, dil, ceil))
            return w.reduce(x, x.dtype, _lowest(x.dtype), np.maximum)

        return values

    def fn(x):
        n = x.ndim - 2
        kernel_shape = [int(k) for k in attr(node, "kernel_shape")]
        strides = [int(s) for s in attr(node, "strides", [1] * n)]
        dil = [int(d) for d in attr(node, "dilations", [1] * n)]
        ceil = bool(attr_or_default(node, "ceil_mode"))
        size = x.shape[2:]
        begin, end = window_pads(node, size, kernel_shape, strides, dil)
        span = [(k - 1) * d + 1 for k, d in zip(kernel_shape, dil)]
        outs = window_counts(node, size, span, strides, begin, end, ceil)
        # pad to exactly the extent the windows cover (more at the end under ceil_mode)
        need = [(o - 1) * s + w for o, s, w in zip(outs, strides, span)]
        low = _lowest(x.dtype)
        widths = [(0, 0), (0, 0)] + [(b, max(0, q - i - b)) for b, q, i in zip(begin, need, size)]
        padded = np.pad(x, widths, constant_values=low)
        padded = padded[(slice(None), slice(None)) + tuple(slice(0, q) for q in need)]
        axes = tuple(range(2, 2 + n))
        win = np.lib.stride_tricks.sliding_window_view(padded, span, axis=axes)
        win = win[(slice(None), slice(None))
                  + tuple(slice(0, (o - 1) * s + 1, s) for o, s in zip(outs, strides))
                  + tuple(slice(None, None, d) for d in dil)]
        flat = win.reshape(*win.shape[:2 + n], -1)
        y = flat.max(axis=-1)
        arg = flat.argmax(axis=-1)
        offsets = np.unravel_index(arg, kernel_shape)  # within the window
        pos = [np.arange(o).reshape((-1,) + (1,) * (n - 1 - a)) * s + off * d - b
               for a, (o, s, off, d, b) in enumerate(zip(outs, strides, offsets, dil, begin))]
        if int(attr_or_default(node, "storage_order")):
            spatial = np.zeros_like(arg)
            for a in reversed(range(n)):
                spatial = spatial * size[a] + pos[a]
        else:
            spatial = np.zeros_like(arg)
            for a in range(n):
                spatial = spatial * size[a] + pos[a]
        bc = (np.arange(x.shape[0])[:, None] * x.shape[1] + np.arange(x.shape[1])[None, :])
        idx = bc.reshape(bc.shape + (1,) * n) * int(np.prod(size)) + spatial
        return y, idx.astype(np.int64)

    return fn


def _tap_counts(i, o, k, s, d, b, lo, hi) -> np.ndarray:
    """Per window position along one axis: how many of its taps lie in ``[lo, hi)`` (input
    coordinates)."""
    taps = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - b
    return ((taps >= lo) & (taps < hi)).sum(axis=1)


@kernel("AveragePool", since=1)
def _average_pool(node, ctx):
    kernel_shape = [int(k) for k in attr(node, "kernel_shape")]
    n = len(kernel_shape)
    strides = [int(s) for s in attr(node, "strides", [1] * n)]
    dil = [int(d) for d in attr(node, "dilations", [1] * n)]
    ceil = bool(attr_or_default(node, "ceil_mode"))
    include = bool(attr_or_default(node, "count_include_pad"))
    plans: dict[tuple, tuple] = {}

    def plan(shape):
        w = _Windows(node, shape, kernel_shape, strides, dil, ceil)
        scale = np.ones((), np.float64)
        for a, (i, o, k, s, d, b, e) in enumerate(
                zip(shape[2:], w.outs, kernel_shape, strides, dil, w.begin, w.end)):
            lo, hi = (-b, i + e) if include else (0, i)
            cnt = _tap_counts(i, o, k, s, d, b, lo, hi).astype(np.float64)
            inv = np.divide(1.0, cnt, out=np.zeros_like(cnt), where=cnt > 0)
            scale = scale * inv.reshape((-1,) + (1,) * (n - 1 - a))
        return w, scale

    def fn(x):
        w, scale = _cached(plans, x.shape, lambda: plan(x.shape))
        wd = work_dtype(x.dtype)
        y = w.reduce(x, wd, 0, np.add)
        y *= scale.astype(wd, copy=False)
        return y.astype(x.dtype, copy=False)

    return fn


def _spatial_axes(x) -> tuple[int, ...]:
    return tuple(range(2, x.ndim))


@kernel("GlobalAveragePool", since=1)
def _global_average_pool(node, ctx):
    def fn(x):
        wd = work_dtype(x.dtype)
        return x.mean(axis=_spatial_axes(x), dtype=wd, keepdims=True).astype(x.dtype, copy=False)

    return fn


@kernel("GlobalMaxPool", since=1)
def _global_max_pool(node, ctx):
    def fn(x):
        return x.max(axis=_spatial_axes(x), keepdims=True)

    return fn

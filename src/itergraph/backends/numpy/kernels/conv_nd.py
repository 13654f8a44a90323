"""Conv (opset 1, 11, 22) on NumPy: 1-D, 2-D and 3-D convolution (any number of spatial axes)
as im2col and one matrix product.

ONNX Conv (a cross-correlation, as in every deep-learning framework): for input ``X`` of
shape ``[N, C, *I]``, weight ``W`` of shape ``[M, C / group, *K]`` and optional bias ``B``
``[M]``, output channel ``m`` of group ``g = m // (M / group)`` is::

    Y[n, m, o] = B[m] + sum_{c, k} W[m, c, k] * Xpad[n, g C/group + c, o * strides + k * dilations]

with ``Xpad`` the input zero-padded by ``pads`` / ``auto_pad`` (`backends.common.window`:
``NOTSET`` reads ``pads``, ``VALID`` pads nothing, ``SAME_UPPER``/``SAME_LOWER`` give
``ceil(I / strides)`` outputs) and one output per window position that fits. ``kernel_shape``
is optional (it is ``W``'s spatial shape); ``strides`` and ``dilations`` default to 1,
``group`` to 1 (``group == C``: depthwise).

The input is copied once into a zero buffer only when it is padded; the windows of every
group are a strided view of it (``[N, group, C/group, *K, *O]``, no copy) that one reshape
turns into the im2col matrix ``[N, group, C/group * prod(K), prod(O)]``, and one batched
``matmul`` by ``W`` as ``[group, M/group, C/group * prod(K)]`` gives ``[N, group, M/group,
prod(O)]``, which is already ``Y``'s layout. Everything that depends only on the shapes (pads,
output sizes, strides of the view, the weight matrix when ``W`` is an initializer) is
computed once per input shape and kept. A depthwise convolution (``group == C == M``) is
instead a sum over the kernel's taps of shifted windows of the buffer (`conv_depthwise`;
the buffer is then channels last in two of its three forms).

Channels last: a depthwise result is handed on as a transposed view of a channels-last
array (``[N, *O, C]`` in memory), as ONNX Runtime keeps its blocked layout from one layer to
the next; a Conv of one group reading such an input takes its windows from a channels-last
buffer (``[N, *O, *K, C]``, a row ``prod(K) * C`` long per output position; no copy at all
for a 1x1 kernel of stride 1 without padding) and multiplies them by the weights as
``[prod(K) * C, M]``, so its result ``[N, *O, M]`` is channels last too. A MobileNet-style
block (1x1, depthwise, 1x1, residual Add) then runs without a transposing copy; element-wise
kernels keep the layout (NumPy's order ``K``), and `run_plan` hands outputs out
C-contiguous.

float16 and bfloat16 are computed in float32 and cast back.
"""

from __future__ import annotations

import math

import numpy as np

from ....errors import ExecutionError, where
from ....ir.attributes import attr, attr_or_default, const_input
from ...common.precision import work_dtype
from ...common.window import window_counts, window_pads
from . import kernel
from .conv_depthwise import Depthwise

_MAX_PLANS = 64  # geometries kept per node (shapes rarely vary; a bound all the same)


class _Plan:
    """What one Conv node does for one (input shape, weight shape, element type)."""

    __slots__ = ("work", "cast", "pad", "buf_shape", "dst", "view_shape", "view_strides",
                 "cols_shape", "w_shape", "y_shape", "b_shape", "w_mat", "empty", "dw",
                 "w_dw", "to_last", "to_first", "cl", "cl_direct", "cl_cols", "cl_w", "cl_y")

    def __init__(self, node, group, x_shape, w_shape, dtype, w_const, last=False):
        n = len(x_shape) - 2
        if n < 1 or len(w_shape) != n + 2:
            raise ExecutionError(f"{where(node)}: input of rank {len(x_shape)} and weight of "
                                 f"rank {len(w_shape)} (both must be 2 + the spatial rank)")
        batch, chans, size = x_shape[0], x_shape[1], list(x_shape[2:])
        m, cg, kernel_shape = w_shape[0], w_shape[1], list(w_shape[2:])
        if chans != cg * group or m % group:
            raise ExecutionError(
                f"{where(node)}: {chans} input channels, weight {list(w_shape)} and "
                f"group={group} do not agree (need C = W.shape[1] * group and M % group == 0)")
        strides = [int(s) for s in attr(node, "strides", [1] * n)]
        dil = [int(d) for d in attr(node, "dilations", [1] * n)]
        begin, end = window_pads(node, size, kernel_shape, strides, dil)
        span = [(k - 1) * d + 1 for k, d in zip(kernel_shape, dil)]
        outs = window_counts(node, size, span, strides, begin, end)
        need = [(o - 1) * s + w for o, s, w in zip(outs, strides, span)]
        self.work = work = work_dtype(dtype)
        self.cast = work != dtype
        # the buffer the windows read: the input itself, or a zero buffer holding it at
        # offset `begin` when a window reaches into the padding
        extent = [max(q, b + i) for q, b, i in zip(need, begin, size)]
        self.pad = extent != size
        self.buf_shape = (batch, chans, *extent)
        self.dst = (slice(None), slice(None)) + tuple(slice(b, b + i) for b, i in zip(begin, size))
        # C-contiguous strides (bytes) of the buffer the windows are read from
        item = work.itemsize
        st = [item] * (n + 2)
        for a in range(n + 1, 0, -1):
            st[a - 1] = st[a] * self.buf_shape[a]
        sp = st[2:]
        self.view_shape = (batch, group, cg, *kernel_shape, *outs)
        self.view_strides = (st[0], cg * st[1], st[1], *(d * t for d, t in zip(dil, sp)),
                             *(s * t for s, t in zip(strides, sp)))
        self.cols_shape = (batch, group, cg * math.prod(kernel_shape), math.prod(outs))
        self.w_shape = (group, m // group, cg * math.prod(kernel_shape))
        self.y_shape = (batch, m, *outs)
        self.b_shape = (m,) + (1,) * n
        self.w_mat = None if w_const is None else w_const.reshape(self.w_shape).astype(work)
        self.empty = batch * chans * math.prod(size) == 0 or math.prod(self.y_shape) == 0
        # depthwise (one filter per channel): `conv_depthwise`
        self.dw = self.w_dw = None
        self.to_last = (0, *range(2, n + 2), 1)
        self.to_first = (0, n + 1, *range(1, n + 1))
        # a channels-last input and one group: windows and product channels last (`_cl`)
        self.cl = last and group == 1 and not self.empty and not chans == m == 1
        if self.cl:
            self._cl(n, batch, chans, m, kernel_shape, strides, dil, outs, extent, w_const)
        if group == chans == m and cg == 1 and not self.empty:
            self.dw = Depthwise(batch, chans, kernel_shape, strides, dil, outs, begin, size,
                                extent, item, w_const)
            if self.dw.last:  # channels last, the last axis maybe widened (`Depthwise.extent`)
                self.buf_shape = (batch, *self.dw.extent, chans)
                self.pad = self.pad or list(self.dw.extent) != extent
                self.dst = (slice(None),) + self.dst[2:]
            if w_const is not None:
                self.w_dw = self.dw.weights(w_const, work)

    def _cl(self, n, batch, chans, m, kernel_shape, strides, dil, outs, extent, w_const):
        """The channels-last product: the windows ``[N, *O, *K, C]`` of the buffer ``[N,
        *extent, C]`` as rows ``[N * prod(O), prod(K) * C]`` (no copy for a 1x1 kernel of
        stride 1 without padding), times the weights as ``[prod(K) * C, M]``; the result
        ``[N, *O, M]`` is handed on as a transposed view, still channels last."""
        item = self.work.itemsize
        self.buf_shape = (batch, *extent, chans)
        self.dst = (slice(None),) + self.dst[2:]
        st = [item] * (n + 2)  # C-contiguous strides of [N, *extent, C]
        for a in range(n, -1, -1):
            st[a] = st[a + 1] * self.buf_shape[a + 1]
        sp = st[1:-1]
        self.view_shape = (batch, *outs, *kernel_shape, chans)
        self.view_strides = (st[0], *(s * t for s, t in zip(strides, sp)),
                             *(d * t for d, t in zip(dil, sp)), item)
        self.cl_cols = (batch * math.prod(outs), math.prod(kernel_shape) * chans)
        self.cl_y = (batch, *outs, m)
        self.cl_direct = all(k == 1 for k in kernel_shape) and list(outs) == list(extent)
        self.cl_w = None if w_const is None else _cl_weights(w_const, self.work)


def _cl_weights(w, work):
    """``W [M, C, *K]`` as the channels-last product's ``[prod(K) * C, M]``."""
    t = np.moveaxis(w, 0, -1)  # [C, *K, M]
    t = np.moveaxis(t, 0, -2)  # [*K, C, M]
    return np.ascontiguousarray(t, work).reshape(-1, w.shape[0])


def _channels_last(x) -> bool:
    """Is `x` ``[N, C, *spatial]``, not C-contiguous, laid out channels last?"""
    return x.ndim > 2 and x.transpose(0, *range(2, x.ndim), 1).flags.c_contiguous


def _buffer(p: _Plan, x):
    """The array the windows read: `x`, or `x` placed in a zero buffer for the padding
    (channels last where the plan says so)."""
    if p.dw is not None and p.dw.form == "phased":
        return p.dw.phases_of(x.transpose(p.to_last), p.dst, p.work)
    if p.cl or (p.dw is not None and p.dw.last):
        x = x.transpose(p.to_last)
        if not p.pad:
            return np.ascontiguousarray(x, p.work)
    if p.pad:
        buf = np.zeros(p.buf_shape, p.work)
        buf[p.dst] = x
        return buf
    if p.cast:
        return x.astype(p.work)
    return x if x.flags.c_contiguous else np.ascontiguousarray(x)


@kernel("Conv", since=1)
def _conv(node, ctx):
    return conv_kernel(node, const_input(node, 1))


def conv_kernel(node, w_const):
    """`node`'s Conv as ``fn(x, w, b=None)``; everything that depends on the weights alone is
    prepared once when `w` is `w_const` (the weights known when compiling, or None)."""
    group = int(attr_or_default(node, "group"))
    plans: dict[tuple, _Plan] = {}

    def fn(x, w, b=None):
        last = not x.flags.c_contiguous and _channels_last(x)
        key = (x.shape, w.shape, x.dtype, last)
        p = plans.get(key)
        if p is None:
            if len(plans) >= _MAX_PLANS:
                plans.clear()
            p = plans[key] = _Plan(node, group, x.shape, w.shape, x.dtype,
                                   w_const if w is w_const else None, last)
        work = p.work
        if p.empty:
            y = np.zeros(p.y_shape, work)
        elif p.dw is not None:
            ws = p.w_dw if w is w_const else p.dw.weights(w, work)
            y = p.dw.run(None if ws is None else _buffer(p, x), ws, work)
        elif p.cl:
            buf = _buffer(p, x)
            cols = buf if p.cl_direct else np.ndarray(p.view_shape, work, buf, 0,
                                                      p.view_strides)
            w_cl = p.cl_w if w is w_const else _cl_weights(w, work)
            y = np.matmul(cols.reshape(p.cl_cols), w_cl).reshape(p.cl_y).transpose(p.to_first)
        else:
            buf = _buffer(p, x)
            # the windows: a strided view of the buffer (as_strided without its overhead)
            view = np.ndarray(p.view_shape, work, buf, 0, p.view_strides)
            w_mat = p.w_mat if w is w_const else w.reshape(p.w_shape).astype(work, copy=False)
            y = np.matmul(w_mat, view.reshape(p.cols_shape)).reshape(p.y_shape)
        if b is not None:
            y += b.reshape(p.b_shape)
        return y.astype(x.dtype) if p.cast else y

    return fn

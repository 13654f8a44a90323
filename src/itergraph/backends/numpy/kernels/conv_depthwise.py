"""Depthwise Conv on NumPy (``group == C == M``: one filter per channel), for `conv_nd`.

Output channel ``c`` is ``Y[n, c, o] = sum_k W[c, 0, k] * Xpad[n, c, o * strides + k *
dilations]`` (plus the bias, which `conv_nd` adds): a sum over the kernel's taps of a
shifted window of the padded input times one weight per channel. im2col would copy the input
once per tap for products of one row each; instead, one of three forms:

- ``merged`` (the last spatial axis has stride 1, or one output): the input is copied once,
  channels last (``[N, *spatial, C]``), into the padded buffer; for one tap, the window's
  last spatial axis and the channels are then one contiguous run ``O[-1] * C`` long, the
  same for every tap. That run is cut into blocks of ``T`` output columns (the fewest whose
  ``T * C`` reaches `_RUN` elements, ``T`` dividing ``O[-1]``; else the whole run), and one
  ``einsum`` multiplies a strided view ``[N, *O[:-1], *K, O[-1] / T, T * C]`` of the buffer
  by the weights tiled to one block (``[*K, T * C]``, kept per input shape) and sums over the
  taps: few, long inner loops, and tiled weights small enough to stay in cache (a PP-OCR
  mobile classifier's 5x5 layers of 8-200 channels on a 2-24 x 96 map: 1.5-4x faster than
  a product per tap);
- ``last`` (a strided last axis, more channels than output columns): the same view with the
  channels alone innermost (``[N, *O, *K, C]``) and the weights ``[*K, C]``;
- ``taps`` (a strided last axis and few channels, or at most `_FEW_TAPS` taps: silero VAD's
  5-tap layers over 1-2 columns): over the ``[N, C, *spatial]`` buffer, one multiply-add of
  a window by one weight per channel per tap.

A tap whose windows lie wholly in the padding adds only zeros; when the weights are constant
and finite such taps are left out (the box of the others, per axis, in the einsum forms: a
5x5 kernel over a map 2 rows high reads 3 of its rows). Non-finite weights keep every tap, as
``onnx.reference`` computes them (``inf * 0`` is NaN).
"""

from __future__ import annotations

import itertools
import math
import string

import numpy as np

_RUN = 1024  # elements of the shortest inner run the merged form aims at
_FEW_TAPS = 3  # taps at most: a product per tap costs less than the channels-last copies
_MAX_TILED = 1 << 21  # elements of tiled weights kept per input shape (8 MiB of float32)


class Depthwise:
    """How one depthwise Conv reads its padded buffer, for one input shape.

    `last` says whether the buffer is channels last (``[N, *extent, C]``) or not
    (``[N, C, *extent]``); `weights(w)` prepares a weight ``[C, 1, *K]`` for `run`, which
    returns ``Y`` (bias not added) as ``[N, C, *O]``."""

    __slots__ = ("form", "last", "y_shape", "to_first", "box", "tile", "view_at",
                 "view_shape", "view_strides", "subscripts", "windows", "tap_ids", "tap_shape",
                 "out_last")

    def __init__(self, batch, chans, kernel_shape, strides, dil, outs, begin, size, extent,
                 item, w_const):
        n = len(kernel_shape)
        skip = w_const is not None and bool(np.isfinite(w_const).all())
        useful = [[o for o in range(k) if not skip or _reaches_input(o * d, s, c, b, i)]
                  for k, d, s, c, b, i in zip(kernel_shape, dil, strides, outs, begin, size)]
        self.y_shape = (batch, chans, *outs)
        self.to_first = (0, n + 1, *range(1, n + 1))
        self.out_last = (batch, *outs, chans)
        if not all(useful):
            self.form, self.last = "zero", False
            return
        merged = strides[-1] == 1 or outs[-1] == 1
        # the run is cut into blocks of `tile` output columns, the weights tiled to one block
        self.tile = next((t for t in range(1, outs[-1]) if not outs[-1] % t
                          and t * chans >= _RUN), outs[-1])
        n_taps = math.prod(len(u) for u in useful)
        if n_taps <= _FEW_TAPS:
            self.form = "taps"
        elif merged and n_taps * self.tile * chans <= _MAX_TILED:
            self.form = "merged"
        elif chans * 4 >= 3 * outs[-1]:
            self.form = "last"
        else:
            self.form = "taps"
        self.last = self.form != "taps"
        if self.last:
            self._einsum(batch, chans, strides, dil, outs, extent, item, useful)
        else:
            offs = list(itertools.product(*useful))
            self.tap_ids = [int(np.ravel_multi_index(off, kernel_shape)) for off in offs]
            self.windows = [(slice(None), slice(None)) +
                            tuple(slice(o * d, o * d + (c - 1) * s + 1, s)
                                  for o, d, c, s in zip(off, dil, outs, strides))
                            for off in offs]
            self.tap_shape = (chans,) + (1,) * n

    def _einsum(self, batch, chans, strides, dil, outs, extent, item, useful):
        """The strided view of the channels-last buffer over the box of useful taps."""
        n = len(outs)
        self.box = tuple(slice(u[0], u[-1] + 1) for u in useful)
        box_len = [b.stop - b.start for b in self.box]
        st = [item] * (n + 2)  # C-contiguous strides of [N, *extent, C]
        for a in range(n, -1, -1):
            st[a] = st[a + 1] * ([batch, *extent, chans][a + 1])
        sp = st[1:-1]
        self.view_at = sum(b.start * d * t for b, d, t in zip(self.box, dil, sp))
        free = [x for x in string.ascii_lowercase if x not in "abq"]
        o, k = "".join(free[:n]), "".join(free[n:2 * n])
        if self.form == "merged":  # [N, *O[:-1], *box, O[-1] / tile, tile * C]
            run = self.tile * chans
            self.view_shape = (batch, *outs[:-1], *box_len, outs[-1] // self.tile, run)
            self.view_strides = (st[0], *(s * t for s, t in zip(strides[:-1], sp[:-1])),
                                 *(d * t for d, t in zip(dil, sp)), run * item, item)
            self.subscripts = f"a{o[:-1]}{k}bq,{k}q->a{o[:-1]}bq"
        else:  # [N, *O, *box, C]
            self.view_shape = (batch, *outs, *box_len, chans)
            self.view_strides = (st[0], *(s * t for s, t in zip(strides, sp)),
                                 *(d * t for d, t in zip(dil, sp)), item)
            self.subscripts = f"a{o}{k}q,{k}q->a{o}q"

    def weights(self, w, work):
        """`w` ``[C, 1, *K]`` as `run` reads it: the box ``[*box, C]`` (tiled to ``[*box, T *
        C]`` when merged), or one array ``[C, 1, ...]`` per tap."""
        if self.form == "zero":
            return None
        if not self.last:
            flat = w.reshape(w.shape[0], -1).astype(work)
            return [np.ascontiguousarray(flat[:, j]).reshape(self.tap_shape)
                    for j in range(flat.shape[1])]
        cut = np.moveaxis(w[(slice(None), 0) + self.box], 0, -1)
        if self.form == "merged":
            cut = np.broadcast_to(cut[..., None, :], (*cut.shape[:-1], self.tile, cut.shape[-1]))
            return np.ascontiguousarray(cut, work).reshape(*cut.shape[:-2], -1)
        return np.ascontiguousarray(cut, work)

    def run(self, buf, ws, work) -> np.ndarray:
        """``Y`` without bias, ``[N, C, *O]``, from the buffer and the prepared weights."""
        if self.form == "zero":  # every window lies in the padding
            return np.zeros(self.y_shape, work)
        if self.last:
            view = np.ndarray(self.view_shape, work, buf, self.view_at, self.view_strides)
            y = np.einsum(self.subscripts, view, ws).reshape(self.out_last)
            return np.ascontiguousarray(y.transpose(self.to_first))
        j = self.tap_ids
        y = np.multiply(buf[self.windows[0]], ws[j[0]])
        tmp = np.empty_like(y)
        for sl, k in zip(self.windows[1:], j[1:]):
            y += np.multiply(buf[sl], ws[k], out=tmp)
        return y


def _reaches_input(first: int, stride: int, count: int, begin: int, size: int) -> bool:
    """Does a tap at offset `first` in the padded buffer, read at ``first + t * stride`` for
    ``t < count``, touch one of the input's positions ``[begin, begin + size)``?"""
    lo = max(0, -(-(begin - first) // stride))  # the first t at or past `begin`
    return lo < count and first + lo * stride < begin + size

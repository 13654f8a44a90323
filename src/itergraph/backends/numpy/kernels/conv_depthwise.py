"""Depthwise Conv on NumPy (``group == C == M``: one filter per channel), for `conv_nd`.

Output channel ``c`` is ``Y[n, c, o] = sum_k W[c, 0, k] * Xpad[n, c, o * strides + k *
dilations]`` (plus the bias, which `conv_nd` adds): a sum over the kernel's taps of a
shifted window of the padded input times one weight per channel. im2col would copy the input
once per tap for products of one row each; instead, one of four forms:

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
- ``phased`` (a strided last axis, at least `_PHASED_COLUMNS` output columns, no dilation
  on it): the buffer's columns dealt into one phase per stride step, where every tap's
  window is a contiguous run again: one ``merged`` einsum per phase, summed (MobileNetV3's
  stride-2 3x3 layers over 112 and 56 columns: 1.2-1.3x faster than the other forms);
- ``last`` (a strided last axis, more channels than output columns): the same view with the
  channels alone innermost (``[N, *O, *K, C]``) and the weights ``[*K, C]``;
- ``taps`` (a strided last axis and few channels, or at most `_FEW_TAPS` taps: silero VAD's
  5-tap layers over 1-2 columns): over the ``[N, C, *spatial]`` buffer, one multiply-add of
  a window by one weight per channel per tap.

A tap whose windows lie wholly in the padding adds only zeros; when the weights are constant
and finite such taps are left out (the box of the others, per axis, in the einsum forms: a
5x5 kernel over a map 2 rows high reads 3 of its rows). Where the output rows of the first
spatial axis read different taps and running each run of rows with its own box saves a fifth
of the work or more (a 5x5 kernel over 3 rows: each output row reads 3 kernel rows of the 5
their union spans), the einsum runs once per run of rows (`_row_groups`). Non-finite
weights keep every tap, as ``onnx.reference`` computes them (``inf * 0`` is NaN).
"""

from __future__ import annotations

import itertools
import math
import string

import numpy as np

_RUN = 1024  # elements of the shortest inner run the merged form aims at
_FEW_TAPS = 3  # taps at most: a product per tap costs less than the channels-last copies
_MAX_TILED = 1 << 21  # elements of tiled weights kept per input shape (8 MiB of float32)
_PHASED_COLUMNS = 16  # output columns at least for the phased form (fewer: `last` is as fast)
_MAX_PARTS = 4  # runs of output rows computed apart at most (one einsum each)
_LAST_MIN = 8192  # output elements at least to hand the result on channels last


class Depthwise:
    """How one depthwise Conv reads its padded buffer, for one input shape.

    `last` says whether the buffer is channels last (``[N, *extent, C]``) or not
    (``[N, C, *extent]``); `weights(w)` prepares a weight ``[C, 1, *K]`` for `run`, which
    returns ``Y`` (bias not added) as ``[N, C, *O]``: in the channels-last forms a transposed
    view of a channels-last array (the layout the next layer reads fastest, see
    `conv_nd`), not copied back unless small (`_out`)."""

    __slots__ = ("form", "last", "y_shape", "to_first", "box", "tile", "view_at",
                 "view_shape", "view_strides", "subscripts", "windows", "tap_ids", "tap_shape",
                 "out_last", "parts", "extent", "phases", "step", "phase_shape", "fills")

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
        self.extent, self.parts = tuple(extent), None
        if n_taps <= _FEW_TAPS:
            self.form = "taps"
        elif n_taps * self.tile * chans > _MAX_TILED:
            self.form = "last" if chans * 4 >= 3 * outs[-1] else "taps"
        elif merged:
            self.form = "merged"
        elif dil[-1] == 1 and n > 1 and outs[-1] >= _PHASED_COLUMNS:
            self.form = "phased"
        else:
            self.form = "last" if chans * 4 >= 3 * outs[-1] else "taps"
        self.last = self.form != "taps"
        if self.form == "phased":
            self._phased(batch, chans, strides, dil, outs, extent, item, useful)
            self._phase_fill(begin[-1], size[-1])
        elif self.last:
            self._einsum(batch, chans, strides, dil, outs, extent, item, useful)
            groups = _row_groups(kernel_shape[0], dil[0], strides[0], outs[0], begin[0],
                                 size[0]) if skip and n > 1 else None
            if groups is not None:
                self.parts = [self._part(batch, chans, strides, dil, outs, extent, item,
                                         [taps, *useful[1:]], rows) for rows, taps in groups]
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

    def _phased(self, batch, chans, strides, dil, outs, extent, item, useful):
        """A strided last axis (stride ``s``) as ``s`` merged forms: the buffer's columns
        dealt into ``s`` phases (``[N, s, *extent[:-1], E / s, C]``, column ``w`` in phase
        ``w % s`` at ``w // s``), where tap ``j`` of output column ``o`` reads column ``o + j
        // s`` of phase ``j % s``: a contiguous run again. One einsum per phase."""
        n, s = len(outs), strides[-1]
        self.step = s
        self.extent = (*extent[:-1], -(-extent[-1] // s) * s)
        self.box = tuple(slice(u[0], u[-1] + 1) for u in useful)
        box_len = [b.stop - b.start for b in self.box]
        shape = [batch, s, *self.extent[:-1], self.extent[-1] // s, chans]
        self.phase_shape = tuple(shape)
        st = [item] * len(shape)  # C-contiguous strides of the phase buffer
        for a in range(len(shape) - 2, -1, -1):
            st[a] = st[a + 1] * shape[a + 1]
        sp = st[2:-2]  # the spatial axes but the last
        run = self.tile * chans
        free = [x for x in string.ascii_lowercase if x not in "abq"]
        o, k = "".join(free[:n - 1]), "".join(free[n - 1:2 * n - 1])
        self.subscripts = f"a{o}{k}bq,{k}q->a{o}bq"
        self.phases = []
        last = self.box[-1]
        for ph in range(s):
            taps = [j for j in range(last.start, last.stop) if j % s == ph]
            if not taps:
                continue
            at = ph * st[1] + sum(b.start * d * t for b, d, t in zip(self.box, dil, sp))
            at += (taps[0] // s) * st[-2]
            view_shape = (batch, *outs[:-1], *box_len[:-1], len(taps), outs[-1] // self.tile,
                          run)
            view_strides = (st[0], *(q * t for q, t in zip(strides[:-1], sp)),
                            *(d * t for d, t in zip(dil, sp)), st[-2], run * item, item)
            self.phases.append((slice(taps[0], taps[-1] + 1, s), at, view_shape, view_strides))

    def _phase_fill(self, begin: int, size: int):
        """Where each phase takes its columns of the input: ``(phase, input columns,
        phase columns)``, for `phases_of`. Buffer column ``w`` holds input column ``w -
        begin``; phase ``q`` holds the buffer columns ``w = q + s j``."""
        s = self.step
        self.fills = []
        for q in range(s):
            first = (q - begin) % s  # the first input column that lands in phase q
            if first < size:
                count = len(range(first, size, s))
                at = (first + begin) // s
                self.fills.append((q, slice(first, None, s), slice(at, at + count)))

    def phases_of(self, x_last, dst, work):
        """The phased form's buffer ``[N, s, *extent[:-1], E / s, C]`` (see `_phased`), zero
        but for the input, which `x_last` ``[N, *spatial, C]`` fills in one strided copy
        per phase; `dst` places the input's spatial axes in the padded buffer."""
        ph = np.zeros(self.phase_shape, work)
        rows = dst[1:-1]
        for q, cols, at in self.fills:
            ph[(slice(None), q, *rows, at)] = x_last[(slice(None),) * (x_last.ndim - 2) + (cols,)]
        return ph

    def _part(self, batch, chans, strides, dil, outs, extent, item, useful, rows):
        """``(rows, box, view_at, view_shape, view_strides)`` of the outputs `rows` (a
        slice of the first spatial axis), whose useful taps are `useful`."""
        whole = (self.box, self.view_at, self.view_shape, self.view_strides)
        self._einsum(batch, chans, strides, dil, [rows.stop - rows.start, *outs[1:]], extent,
                     item, useful)
        at = self.view_at + rows.start * self.view_strides[1]  # bytes to its first row
        part = (rows, self.box, at, self.view_shape, self.view_strides)
        self.box, self.view_at, self.view_shape, self.view_strides = whole
        return part

    def _out(self, y):
        """``Y`` ``[N, C, *O]`` from the channels-last result `y`: a transposed view, or,
        below `_LAST_MIN` elements, a copy in the usual order (a small copy costs less than
        the next layers' handling of a transposed view)."""
        y = y.transpose(self.to_first)
        return np.ascontiguousarray(y) if y.size < _LAST_MIN else y

    def weights(self, w, work):
        """`w` ``[C, 1, *K]`` as `run` reads it: the box ``[*box, C]`` (tiled to ``[*box, T *
        C]`` when merged), or one array ``[C, 1, ...]`` per tap."""
        if self.form == "zero":
            return None
        if not self.last:
            flat = w.reshape(w.shape[0], -1).astype(work)
            return [np.ascontiguousarray(flat[:, j]).reshape(self.tap_shape)
                    for j in range(flat.shape[1])]
        if self.parts is not None:
            return [self._cut(w, part[1], work) for part in self.parts]
        if self.form == "phased":
            return [self._cut(w, (*self.box[:-1], taps), work) for taps, *_ in self.phases]
        return self._cut(w, self.box, work)

    def _cut(self, w, box, work):
        cut = np.moveaxis(w[(slice(None), 0) + box], 0, -1)
        if self.form in ("merged", "phased"):
            cut = np.broadcast_to(cut[..., None, :], (*cut.shape[:-1], self.tile, cut.shape[-1]))
            return np.ascontiguousarray(cut, work).reshape(*cut.shape[:-2], -1)
        return np.ascontiguousarray(cut, work)

    def run(self, buf, ws, work) -> np.ndarray:
        """``Y`` without bias, ``[N, C, *O]`` (channels last in memory when `last`), from the
        buffer and the prepared weights."""
        if self.form == "zero":  # every window lies in the padding
            return np.zeros(self.y_shape, work)
        if self.form == "phased":  # `buf` is the phase buffer (`phases_of`)
            ph, y = buf, None
            for (_, at, shape, strides), wp in zip(self.phases, ws):
                r = np.einsum(self.subscripts, np.ndarray(shape, work, ph, at, strides), wp)
                y = r if y is None else np.add(y, r, out=y)
            return self._out(y.reshape(self.out_last))
        if self.parts is not None:
            y = np.empty(self.out_last, work)
            for (rows, _, at, shape, strides), wp in zip(self.parts, ws):
                view = np.ndarray(shape, work, buf, at, strides)
                y[:, rows] = np.einsum(self.subscripts, view, wp).reshape(
                    y.shape[:1] + (rows.stop - rows.start,) + y.shape[2:])
            return self._out(y)
        if self.last:
            view = np.ndarray(self.view_shape, work, buf, self.view_at, self.view_strides)
            y = np.einsum(self.subscripts, view, ws).reshape(self.out_last)
            return self._out(y)
        j = self.tap_ids
        y = np.multiply(buf[self.windows[0]], ws[j[0]])
        tmp = np.empty_like(y)
        for sl, k in zip(self.windows[1:], j[1:]):
            y += np.multiply(buf[sl], ws[k], out=tmp)
        return y


def _row_groups(k, d, s, count, begin, size) -> list | None:
    """The outputs along the first spatial axis in runs that read the same taps, as
    ``(rows, taps)``, where running each run with its own taps saves more than a fifth of
    the work of running all with the taps any of them reads (a 5x5 kernel over a map 2 or 3
    rows high: each output row reads 2-4 of the 5 kernel rows); else None."""
    groups: list = []
    for o in range(count):
        taps = [t for t in range(k) if begin <= o * s + t * d < begin + size]
        if not taps:
            return None
        if groups and groups[-1][1] == taps:
            groups[-1][0] = slice(groups[-1][0].start, o + 1)
        else:
            groups.append([slice(o, o + 1), taps])
    union = max(t[-1] for _, t in groups) - min(t[0] for _, t in groups) + 1
    work = sum((r.stop - r.start) * (t[-1] - t[0] + 1) for r, t in groups)
    if len(groups) < 2 or len(groups) > _MAX_PARTS or work > 0.8 * union * count:
        return None
    return [tuple(g) for g in groups]


def _reaches_input(first: int, stride: int, count: int, begin: int, size: int) -> bool:
    """Does a tap at offset `first` in the padded buffer, read at ``first + t * stride`` for
    ``t < count``, touch one of the input's positions ``[begin, begin + size)``?"""
    lo = max(0, -(-(begin - first) // stride))  # the first t at or past `begin`
    return lo < count and first + lo * stride < begin + size

"""One direction of an LSTM/GRU/RNN over a sequence, on NumPy: the recurrence of both the
``LSTM``/``GRU``/``RNN`` operators and the fused ``itergraph.RecurrentSequence`` node.

`run_direction` projects the inputs of many steps at once (one matrix product per
cache-sized chunk of steps, biases added once), then runs the steps. For the cells exporters
write (LSTM with sigmoid/tanh/tanh and no peepholes or coupled gates, GRU with sigmoid/tanh,
RNN with tanh/relu/sigmoid; clip allowed; float32 or float64) each step is a fixed sequence of
in-place NumPy calls on preallocated buffers (laid out as `_Layout` says): one product of
h and R into the gates, the gate math with ``out=`` arguments, and the new hidden state
written straight into the step's slot of Y, which is the next step's ``h``. A sigmoid is
computed as ``0.5 * tanh(x / 2) + 0.5`` (no overflow, one transcendental), with the ``1/2``
folded into the weights and biases of the sigmoid gates beforehand (a power of two: exact).
An LSTM over a batch of one takes fewer calls per step (`rnn_rows`). Every other cell runs
the shared step function of `backends.common.rnn` (one allocation per operation).

Shapes: x ``[n, Bx, I]`` in step order, w ``[I, G*H]``, r ``[H, G*H]`` (transposed views of
the ONNX layout, as ``x @ w``, ``h @ r`` read them; ONNX gate order), wb and rb ``[G*H]``
(input and recurrent biases), peepholes ``[3H]``, initial states ``[Bh, H]``; the batch is Bx
and Bh broadcast together. Returns ``Y [n, B, H]`` (possibly a transposed view) and the final
states."""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ...common.rnn import RnnAttrs, make_step
from . import rnn_rows
from .nn import sigmoid, softplus

_OVERRIDES = {"sigmoid": sigmoid, "softplus": softplus}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


_NAMES: dict[int, tuple] = {}  # id(activations of a direction) -> (them, their names)
_NAMES_MAX = 256


def _names(at: RnnAttrs, d: int) -> tuple[str, ...]:
    """The activation names of direction `d`, kept per activations tuple (asked on every
    call of a node; the entry holds the tuple, so its id is not reused meanwhile)."""
    acts = at.activations[d]
    hit = _NAMES.get(id(acts))
    if hit is not None and hit[0] is acts:
        return hit[1]
    names = tuple([a.name for a in acts])
    if len(_NAMES) >= _NAMES_MAX:
        _NAMES.pop(next(iter(_NAMES)))
    _NAMES[id(acts)] = (acts, names)
    return names


def fast_path(at: RnnAttrs, d: int, peep, dtype) -> bool:
    """Whether direction `d` runs on the in-place steps (see the module docstring)."""
    if np.dtype(dtype) not in _FLOATS:
        return False
    names = _names(at, d)
    if at.op == "LSTM":
        return names == ("sigmoid", "tanh", "tanh") and peep is None and not at.input_forget
    if at.op == "GRU":
        return names == ("sigmoid", "tanh")
    return names[0] in ("tanh", "relu", "sigmoid")


def batch_of(node, *sizes: int) -> int:
    """The batch size the given leading dimensions broadcast to."""
    if sizes.count(sizes[0]) == len(sizes):
        return int(sizes[0])
    try:
        return int(np.broadcast_shapes(*((s,) for s in sizes))[0])
    except ValueError:
        raise ExecutionError(f"{where(node)}: batch sizes {list(sizes)} of the step input and "
                             "the initial states do not broadcast") from None


def run_direction(node, at: RnnAttrs, d: int, x, w, r, wb, rb, peep, h0, c0, mask=None,
                  o0=None, fill: bool = False):
    """(Y, final h, final c or None) of direction `d` (see the module docstring).

    `mask` (``[n, B]`` boolean, step order; `passes.cells.mask`): at a step whose mask is
    false for an entry, the entry keeps its states. Y is then h after each step, or with
    `o0` (``[B, H]``) the layer's output: `o0` until the entry's first unmasked step, or
    with `fill` `o0` wherever the step's mask is false."""
    H = r.shape[0]
    dt = x.dtype
    bx = x.shape[1]
    B = batch_of(node, bx, h0.shape[0], *([] if c0 is None else [c0.shape[0]]),
                 *([] if mask is None else [mask.shape[1]]))
    h, c = _state(h0, B, H, dt), None if c0 is None else _state(c0, B, H, dt)
    if mask is not None and mask.all():
        mask = None
    if fast_path(at, d, peep, dt):
        Y, hn, cn = _FAST[at.op](at, d, x, w, r, wb, rb, h, c, mask)
    else:
        Y, hn, cn = _generic(at, d, x, w, r, wb, rb, peep, h, c, mask)
    if mask is not None and o0 is not None:
        shown = mask if fill else np.logical_or.accumulate(mask, axis=0)
        Y = np.where(shown[:, :, None], Y, np.asarray(o0, dt)).astype(dt, copy=False)
    return Y, hn, cn


def _state(s, B: int, H: int, dt) -> np.ndarray:
    """A fresh ``[B, H]`` array of `dt` holding the initial state `s` (broadcast)."""
    if s.shape == (B, H):
        return np.array(s, dtype=dt)
    return np.array(np.broadcast_to(s, (B, H)), dtype=dt)


#: the input projection of one chunk of steps: about this size (see `_Layout.chunks`)
CHUNK_BYTES = 512 << 10
#: columns layout: from this input batch on, a chunk's projection is one product per step
#: (``W x_t^T``); below it, one product for the chunk and a transposing copy (measured
#: 1.7-2x faster at batch 2-4, 1.1-1.6x slower from batch 16 on)
PER_STEP_PROJECTION = 8


def _bias(*parts) -> np.ndarray | None:
    got = [p for p in parts if p is not None]
    if not got:
        return None
    out = got[0].copy()
    for p in got[1:]:
        out += p
    return out


def _project(x, w, bias, dt) -> np.ndarray:
    """``x @ w + bias`` for every step: ``[n, Bx, G*H]``, one matrix product."""
    n, bx, i = x.shape
    xw = np.empty((n, bx, w.shape[1]), dt)
    np.matmul(x.reshape(n * bx, i), w, out=xw.reshape(n * bx, -1))
    if bias is not None:
        xw += bias
    return xw


_HALVED: dict[tuple, tuple] = {}  # read-only weights' halved copies, by their memory
_HALVED_MAX = 64


def _halved(m, rows: slice):
    """A C-contiguous copy of `m` (ONNX layout: gates along the first axis) with the rows
    `rows` (the sigmoid gates) multiplied by 1/2. Weights that cannot change (read-only
    arrays: constants the plan folded) are copied once and the copy kept, with `m` itself
    so that its memory is not reused while the entry lives."""
    if m is None:
        return None
    key = None
    if not m.flags.writeable:
        key = (m.__array_interface__["data"][0], m.shape, m.strides, m.dtype.str,
               rows.start, rows.stop)
        hit = _HALVED.get(key)
        if hit is not None:
            return hit[1]
    out = np.array(m, order="C", copy=True)
    out[rows] *= 0.5
    if key is not None:
        if len(_HALVED) >= _HALVED_MAX:
            _HALVED.pop(next(iter(_HALVED)))
        out.flags.writeable = False
        _HALVED[key] = (m, out)
    return out


def _clip(v, t) -> None:
    np.clip(v, -t, t, out=v)


def _sigmoid_halved(v) -> None:
    """Sigmoid of ``2 v`` in place: ``0.5 * tanh(v) + 0.5``."""
    np.tanh(v, out=v)
    half = _HALF[v.dtype]  # fast paths: float32 and float64 only
    np.multiply(v, half, out=v)
    np.add(v, half, out=v)


#: 0.5 as a 0-d array of each float type: a Python float operand costs NumPy a scalar
#: conversion per call, about as much as a step's operation on a small state itself
_HALF = {np.dtype(t): np.array(0.5, t) for t in (np.float32, np.float64)}


class _Layout:
    """Where the steps keep their arrays, chosen by the batch size B.

    Rows (a batch of one): states and gates are vectors (``[H]``, ``[G*H]``); a step's
    product is BLAS's matrix-vector product ``h @ R^T`` (R's transpose is a view: no copy).
    Columns (B from 2 on): states ``[H, B]``, gates ``[G*H, B]``, the product ``R @ h``
    with R as the ONNX operators lay it out; a gate is then a contiguous block of rows,
    so the element-wise calls read whole arrays (on strided column blocks of ``[B, G*H]``
    they measured up to 2.7x slower at batch 16) and the product measured 1.1-1.5x faster
    than ``h @ R^T`` with the OpenBLAS NumPy ships.

    `w` and `r` are the ONNX-layout weights (``[G*H, I]``, ``[G*H, H]``), the sigmoid gates'
    rows already halved."""

    def __init__(self, x, h, c, H: int):
        n, B = x.shape[0], h.shape[0]
        self.cols = B > 1
        self.n, self.B, self.dt = n, B, x.dtype
        if self.cols:
            self.h = np.ascontiguousarray(h.T)
            self.c = None if c is None else np.ascontiguousarray(c.T)
            self.ys = np.empty((n, H, B), self.dt)
        else:  # h and c are the caller's fresh copies: their rows are updated in place
            self.h, self.c = h[0], None if c is None else c[0]
            self.Y = np.empty((n, 1, H), self.dt)
            self.ys = self.Y[:, 0]

    def masks(self, mask):
        """``(kept, keep)`` for a step mask ``[n, B]`` (or None): `kept[k]` whether some
        entry keeps its states at step k, `keep[k]` where (shaped to select from this
        layout's state arrays)."""
        if mask is None:
            return None, None
        keep = ~np.broadcast_to(mask, (mask.shape[0], self.B))
        kept = keep.any(axis=1).tolist()
        return kept, (keep[:, None, :] if self.cols else keep[:, 0])

    def buffer(self, rows: int) -> np.ndarray:
        """A work buffer of `rows` gate rows (``[rows, B]`` or ``[rows]``)."""
        return np.empty((rows, self.B) if self.cols else (rows,), self.dt)

    def column(self, v):
        """A vector ``[rows]`` as it adds to a work buffer of this layout."""
        return v[:, None] if self.cols else v

    def weights(self, m):
        """`m` (rows of R, ONNX layout) as this layout's product reads it."""
        return m if self.cols else m.T

    def product(self):
        """``mm(m, h, out)``: ``out = h @ m^T`` (m: `weights` of a block of R)."""
        if self.cols:
            return lambda m, v, out: np.matmul(m, v, out=out)
        return lambda m, v, out: np.dot(v, m, out=out)

    def chunks(self, x, w, bias):
        """``(first step, input projection of the chunk's steps)`` chunk by chunk: ``W x + b``
        for about `CHUNK_BYTES` of steps at a time, into one buffer reused by every chunk (it
        stays in the caches, and the whole sequence's projection is never held); a step's
        projection is ``[G*H, Bx]`` (columns) or ``[G*H]`` (rows)."""
        n, bx = x.shape[0], x.shape[1]
        gh = w.shape[0]
        dt = self.dt
        k = max(1, min(n, CHUNK_BYTES // max(bx * gh * x.itemsize, 1)))
        if self.cols:
            buf = np.empty((k, gh, bx), dt)
            rows = None if bx >= PER_STEP_PROJECTION else np.empty((k * bx, gh), dt)
            col_bias = None if bias is None else bias[:, None]
            for k0 in range(0, n, k):
                m = min(k, n - k0)
                out = buf[:m]
                if rows is None:
                    np.matmul(w, x[k0:k0 + m].transpose(0, 2, 1), out=out)
                else:  # one product for the chunk, then transposed into place
                    np.matmul(x[k0:k0 + m].reshape(m * bx, -1), w.T, out=rows[:m * bx])
                    np.copyto(out, rows[:m * bx].reshape(m, bx, gh).transpose(0, 2, 1))
                if col_bias is not None:
                    out += col_bias
                yield k0, out
            return
        buf = np.empty((k, gh), dt)
        for k0 in range(0, n, k):
            m = min(k, n - k0)
            out = buf[:m]
            np.matmul(x[k0:k0 + m, 0], w.T, out=out)
            if bias is not None:
                out += bias
            yield k0, out

    def finish(self, h0, c):
        """(Y ``[n, B, H]``, final h ``[B, H]``, final c or None); `h0` and `c` are the
        arrays the caller passed."""
        n = self.n
        if self.cols:
            Y = self.ys.transpose(0, 2, 1)
            hn = Y[n - 1].copy() if n else h0
            return Y, hn, None if c is None else np.ascontiguousarray(self.c.T)
        return self.Y, (self.Y[n - 1].copy() if n else h0), c


def _lstm(at, d, x, w, r, wb, rb, h, c, mask):
    if rnn_rows.applies(x, h, mask):
        return rnn_rows.run(x, rnn_rows.augmented(r, w, wb, rb, x.dtype), h, c, at.clip)
    H = r.shape[0]
    sig = slice(0, 3 * H)
    lay = _Layout(x, h, c, H)
    kept, keep = lay.masks(mask)
    c_old = None if kept is None else np.empty_like(lay.c)
    rs = lay.weights(_halved(r.T, sig))
    g, t1 = lay.buffer(4 * H), lay.buffer(H)
    s, gc = g[:3 * H], g[3 * H:]
    gi, go, gf = g[:H], g[H:2 * H], g[2 * H:3 * H]
    hv, cv, ys = lay.h, lay.c, lay.ys
    clip = at.clip
    mm, add, mul, tanh = lay.product(), np.add, np.multiply, np.tanh
    half = _HALF[lay.dt]
    for k0, xc in lay.chunks(x, _halved(w.T, sig), _halved(_bias(wb, rb), sig)):
        for j in range(xc.shape[0]):
            masked = kept is not None and kept[k0 + j]
            if masked:
                np.copyto(c_old, cv)
            mm(rs, hv, g)
            add(g, xc[j], out=g)
            if clip is not None:
                _clip(s, clip / 2)
                _clip(gc, clip)
            tanh(g, out=g)
            mul(s, half, out=s)
            add(s, half, out=s)
            mul(gf, cv, out=cv)
            mul(gi, gc, out=gc)
            add(cv, gc, out=cv)
            tanh(cv, out=t1)
            hp, hv = hv, ys[k0 + j]
            mul(go, t1, out=hv)
            if masked:
                np.copyto(hv, hp, where=keep[k0 + j])
                np.copyto(cv, c_old, where=keep[k0 + j])
    return lay.finish(h, c)


def _gru(at, d, x, w, r, wb, rb, h, c, mask):
    H = r.shape[0]
    zr = slice(0, 2 * H)
    lbr = at.linear_before_reset
    lay = _Layout(x, h, None, H)
    kept, keep = lay.masks(mask)
    rb_h = None
    if rb is not None and lbr:  # R_bh stays inside r * (...): only z, r join the input bias
        rb_h = lay.column(rb[2 * H:])
        rb = np.concatenate([rb[:2 * H], np.zeros(H, rb.dtype)])
    rs = _halved(r.T, zr)
    if lbr:
        rzr, rh = lay.weights(rs), None
        g, t1 = lay.buffer(3 * H), lay.buffer(H)
        gzr, gn = g[:2 * H], g[2 * H:]
    else:
        rzr, rh = lay.weights(rs[:2 * H]), lay.weights(rs[2 * H:])
        gzr, gn, t1 = lay.buffer(2 * H), lay.buffer(H), lay.buffer(H)
        g = gzr
    z, rg = gzr[:H], gzr[H:]
    hv, ys = lay.h, lay.ys
    clip = at.clip
    mm, add, mul, sub, tanh = lay.product(), np.add, np.multiply, np.subtract, np.tanh
    half = _HALF[lay.dt]
    for k0, xc in lay.chunks(x, _halved(w.T, zr), _halved(_bias(wb, rb), zr)):
        for j in range(xc.shape[0]):
            xk = xc[j]
            mm(rzr, hv, g)
            add(gzr, xk[:2 * H], out=gzr)
            if clip is not None:
                _clip(gzr, clip / 2)
            tanh(gzr, out=gzr)
            mul(gzr, half, out=gzr)
            add(gzr, half, out=gzr)
            if lbr:
                if rb_h is not None:
                    gn += rb_h
                mul(gn, rg, out=gn)
            else:
                mul(rg, hv, out=t1)
                mm(rh, t1, gn)
            add(gn, xk[2 * H:], out=gn)
            if clip is not None:
                _clip(gn, clip)
            tanh(gn, out=gn)
            sub(hv, gn, out=t1)  # h' = n + z * (h - n)
            mul(t1, z, out=t1)
            hp, hv = hv, ys[k0 + j]
            add(gn, t1, out=hv)
            if kept is not None and kept[k0 + j]:
                np.copyto(hv, hp, where=keep[k0 + j])
    return lay.finish(h, None)


def _rnn(at, d, x, w, r, wb, rb, h, c, mask):
    H = r.shape[0]
    name = _names(at, d)[0]
    half = slice(0, H) if name == "sigmoid" else slice(0, 0)
    lay = _Layout(x, h, None, H)
    kept, keep = lay.masks(mask)
    rs = lay.weights(_halved(r.T, half))
    hv, ys = lay.h, lay.ys
    clip = at.clip
    if clip is not None and name == "sigmoid":
        clip = clip / 2
    mm, add = lay.product(), np.add
    act = {"tanh": lambda y: np.tanh(y, out=y), "relu": lambda y: np.maximum(y, 0, out=y),
           "sigmoid": _sigmoid_halved}[name]
    for k0, xc in lay.chunks(x, _halved(w.T, half), _halved(_bias(wb, rb), half)):
        for j in range(xc.shape[0]):
            y = ys[k0 + j]
            mm(rs, hv, y)
            add(y, xc[j], out=y)
            if clip is not None:
                _clip(y, clip)
            act(y)
            if kept is not None and kept[k0 + j]:
                np.copyto(y, hv, where=keep[k0 + j])
            hv = y
    return lay.finish(h, None)


_FAST = {"LSTM": _lstm, "GRU": _gru, "RNN": _rnn}


def _generic(at, d, x, w, r, wb, rb, peep, h, c, mask):
    """Any activations, peepholes, coupled gates: the shared step of `common.rnn`."""
    H = r.shape[0]
    dt = x.dtype
    xw = _project(x, w, wb, dt)
    acts = [a.build(np, _OVERRIDES) for a in at.activations[d]]
    rec = [_block(r[:, lo * H:hi * H]) for lo, hi in at.kind.blocks]
    step = make_step(at, np, acts, rec, rb, peep, H)
    states = [h] if c is None else [h, c]
    n = xw.shape[0]
    Y = np.empty((n, h.shape[0], H), dt)
    for k in range(n):
        new = [np.asarray(s, dtype=dt) for s in step(xw[k], states)]
        if mask is not None:
            new = [np.where(mask[k][:, None], a, b) for a, b in zip(new, states)]
        states = new
        Y[k] = states[0]
    return Y, states[0], (states[1] if c is not None else None)


def _block(m):
    m = np.ascontiguousarray(m)
    return lambda h: h @ m

"""One direction of an LSTM/GRU/RNN over a sequence, on NumPy: the recurrence of both the
``LSTM``/``GRU``/``RNN`` operators and the fused ``itergraph.RecurrentSequence`` node.

`run_direction` projects the inputs of every step at once (one matrix product ``X W`` into a
``[n, B, G*H]`` buffer, biases added once), then runs the steps. For the cells exporters
write (LSTM with sigmoid/tanh/tanh and no peepholes or coupled gates, GRU with sigmoid/tanh,
RNN with tanh/relu/sigmoid; clip allowed; float32 or float64) each step is a fixed sequence of
in-place NumPy calls on preallocated buffers: one ``matmul(h, R, out=gates)``, the gate math
with ``out=`` arguments, and the new hidden state written straight into ``Y[k]``, which is
the next step's ``h``. A sigmoid is computed as ``0.5 * tanh(x / 2) + 0.5`` (no overflow, one
transcendental), with the ``1/2`` folded into the weights and biases of the sigmoid gates
beforehand (a power of two: exact). Every other cell runs the shared step function of
`backends.common.rnn` (one allocation per operation).

Shapes: x ``[n, Bx, I]`` in step order, w ``[I, G*H]``, r ``[H, G*H]`` (both laid out for
``x @ w``, ``h @ r``; ONNX gate order), wb and rb ``[G*H]`` (input and recurrent biases),
peepholes ``[3H]``, initial states ``[Bh, H]``; the batch is Bx and Bh broadcast together.
Returns ``Y [n, B, H]`` and the final states.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ...common.rnn import RnnAttrs, make_step
from .nn import sigmoid, softplus

_OVERRIDES = {"sigmoid": sigmoid, "softplus": softplus}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _names(at: RnnAttrs, d: int) -> tuple[str, ...]:
    return tuple(a.name for a in at.activations[d])


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
    try:
        return int(np.broadcast_shapes(*((s,) for s in sizes))[0])
    except ValueError:
        raise ExecutionError(f"{where(node)}: batch sizes {list(sizes)} of the step input and "
                             "the initial states do not broadcast") from None


def run_direction(node, at: RnnAttrs, d: int, x, w, r, wb, rb, peep, h0, c0):
    """(Y, final h, final c or None) of direction `d` (see the module docstring)."""
    H = r.shape[0]
    dt = x.dtype
    bx = x.shape[1]
    B = batch_of(node, bx, h0.shape[0], *([] if c0 is None else [c0.shape[0]]))
    h = np.array(np.broadcast_to(h0, (B, H)), dtype=dt)
    c = None if c0 is None else np.array(np.broadcast_to(c0, (B, H)), dtype=dt)
    if fast_path(at, d, peep, dt):
        return _FAST[at.op](at, d, x, w, r, wb, rb, h, c)
    return _generic(at, d, x, w, r, wb, rb, peep, h, c)


#: the input projection of one chunk of steps: about this size (see `_chunks`)
CHUNK_BYTES = 2 << 20


def _project(x, w, bias, dt) -> np.ndarray:
    """``x @ w + bias`` for every step: ``[n, Bx, G*H]``, one matrix product."""
    n, bx, i = x.shape
    xw = np.empty((n, bx, w.shape[1]), dt)
    np.matmul(x.reshape(n * bx, i), w, out=xw.reshape(n * bx, -1))
    if bias is not None:
        xw += bias
    return xw


def _chunks(x, w, bias, dt, single: bool):
    """``(first step, projection of the chunk's steps)`` chunk by chunk: ``x @ w + bias``
    for about `CHUNK_BYTES` of steps at a time, into one buffer reused by every chunk (it
    stays in the caches, and the whole sequence's projection is never held). With `single`
    (a batch of one) the chunks are ``[k, G*H]``."""
    n, bx, i = x.shape
    gh = w.shape[1]
    k = max(1, min(n, CHUNK_BYTES // max(bx * gh * x.itemsize, 1)))
    buf = np.empty((k, bx, gh), dt)
    for k0 in range(0, n, k):
        m = min(k, n - k0)
        out = buf[:m]
        np.matmul(x[k0:k0 + m].reshape(m * bx, i), w, out=out.reshape(m * bx, gh))
        if bias is not None:
            out += bias
        yield k0, (out[:, 0] if single else out)


def _bias(*parts) -> np.ndarray | None:
    got = [p for p in parts if p is not None]
    if not got:
        return None
    out = got[0].copy()
    for p in got[1:]:
        out += p
    return out


def _halved(m, cols: slice):
    """A copy of `m` with the columns `cols` (the sigmoid gates) multiplied by 1/2."""
    if m is None:
        return None
    out = np.array(m, copy=True)
    out[..., cols] *= 0.5
    return out


def _clip(v, t) -> None:
    np.clip(v, -t, t, out=v)


def _sigmoid_halved(v) -> None:
    """Sigmoid of ``2 v`` in place: ``0.5 * tanh(v) + 0.5``."""
    np.tanh(v, out=v)
    v *= 0.5
    v += 0.5


def _vectors(h, c, Y, *bufs):
    """With a batch of one, the same buffers as vectors: NumPy multiplies a vector by a
    matrix with BLAS's matrix-vector product, faster than a one-row matrix product."""
    if h.shape[0] != 1:
        return False, h, c, Y, bufs
    return True, h[0], None if c is None else c[0], Y[:, 0], tuple(b[0] for b in bufs)


def _lstm(at, d, x, w, r, wb, rb, h, c):
    H = r.shape[0]
    dt = x.dtype
    sig = slice(0, 3 * H)
    rs = np.ascontiguousarray(_halved(r, sig))
    n, B = x.shape[0], h.shape[0]
    Y = np.empty((n, B, H), dt)
    single, hv, cv, yv, (g, t1) = _vectors(h, c, Y, np.empty((B, 4 * H), dt),
                                           np.empty((B, H), dt))
    single = single and x.shape[1] == 1
    s, gc = g[..., :3 * H], g[..., 3 * H:]
    gi, go, gf = g[..., :H], g[..., H:2 * H], g[..., 2 * H:3 * H]
    clip = at.clip
    mm, add, mul, tanh = np.dot, np.add, np.multiply, np.tanh
    for k0, xc in _chunks(x, _halved(w, sig), _halved(_bias(wb, rb), sig), dt, single):
        for j in range(xc.shape[0]):
            mm(hv, rs, out=g)
            add(g, xc[j], out=g)
            if clip is not None:
                _clip(s, clip / 2)
                _clip(gc, clip)
            tanh(g, out=g)
            s *= 0.5
            s += 0.5
            mul(gf, cv, out=cv)
            mul(gi, gc, out=gc)
            add(cv, gc, out=cv)
            tanh(cv, out=t1)
            hv = yv[k0 + j]
            mul(go, t1, out=hv)
    return Y, (Y[n - 1].copy() if n else h), c


def _gru(at, d, x, w, r, wb, rb, h, c):
    H = r.shape[0]
    dt = x.dtype
    zr = slice(0, 2 * H)
    lbr = at.linear_before_reset
    rb_h = None
    if rb is not None:
        if lbr:  # R_bh stays inside r * (...): only the z, r blocks join the input bias
            rb_h = rb[2 * H:]
            rb = np.concatenate([rb[:2 * H], np.zeros(H, rb.dtype)])
    rs = _halved(r, zr)
    n, B = x.shape[0], h.shape[0]
    Y = np.empty((n, B, H), dt)
    if lbr:
        rzr, rh = np.ascontiguousarray(rs), None
        bufs = (np.empty((B, 3 * H), dt), np.empty((B, H), dt))
    else:
        rzr, rh = np.ascontiguousarray(rs[:, :2 * H]), np.ascontiguousarray(rs[:, 2 * H:])
        bufs = (np.empty((B, 2 * H), dt), np.empty((B, H), dt), np.empty((B, H), dt))
    single, hv, _, yv, bufs = _vectors(h, None, Y, *bufs)
    single = single and x.shape[1] == 1
    if lbr:
        g, t1 = bufs
        gzr, gn = g[..., :2 * H], g[..., 2 * H:]
    else:
        gzr, gn, t1 = bufs
        g = gzr
    z, rg = gzr[..., :H], gzr[..., H:]
    clip = at.clip
    mm, add, mul, sub, tanh = np.dot, np.add, np.multiply, np.subtract, np.tanh
    for k0, xc in _chunks(x, _halved(w, zr), _halved(_bias(wb, rb), zr), dt, single):
        for j in range(xc.shape[0]):
            xk = xc[j]
            mm(hv, rzr, out=g)
            add(gzr, xk[..., :2 * H], out=gzr)
            if clip is not None:
                _clip(gzr, clip / 2)
            tanh(gzr, out=gzr)
            gzr *= 0.5
            gzr += 0.5
            if lbr:
                if rb_h is not None:
                    gn += rb_h
                gn *= rg
            else:
                mul(rg, hv, out=t1)
                mm(t1, rh, out=gn)
            add(gn, xk[..., 2 * H:], out=gn)
            if clip is not None:
                _clip(gn, clip)
            tanh(gn, out=gn)
            sub(hv, gn, out=t1)  # h' = n + z * (h - n)
            t1 *= z
            hv = yv[k0 + j]
            add(gn, t1, out=hv)
    return Y, (Y[n - 1].copy() if n else h), None


def _rnn(at, d, x, w, r, wb, rb, h, c):
    H = r.shape[0]
    dt = x.dtype
    name = _names(at, d)[0]
    half = slice(0, H) if name == "sigmoid" else slice(0, 0)
    rs = np.ascontiguousarray(_halved(r, half))
    n = x.shape[0]
    Y = np.empty((n, h.shape[0], H), dt)
    single, hv, _, yv, _ = _vectors(h, None, Y)
    single = single and x.shape[1] == 1
    clip = at.clip
    if clip is not None and name == "sigmoid":
        clip = clip / 2
    mm, add = np.dot, np.add
    act = {"tanh": lambda y: np.tanh(y, out=y), "relu": lambda y: np.maximum(y, 0, out=y),
           "sigmoid": _sigmoid_halved}[name]
    for k0, xc in _chunks(x, _halved(w, half), _halved(_bias(wb, rb), half), dt, single):
        for j in range(xc.shape[0]):
            y = yv[k0 + j]
            mm(hv, rs, out=y)
            add(y, xc[j], out=y)
            if clip is not None:
                _clip(y, clip)
            act(y)
            hv = y
    return Y, (Y[n - 1].copy() if n else h), None


_FAST = {"LSTM": _lstm, "GRU": _gru, "RNN": _rnn}


def _generic(at, d, x, w, r, wb, rb, peep, h, c):
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
        states = [np.asarray(s, dtype=dt) for s in step(xw[k], states)]
        Y[k] = states[0]
    return Y, states[0], (states[1] if c is not None else None)


def _block(m):
    m = np.ascontiguousarray(m)
    return lambda h: h @ m

"""LSTM steps for a batch of one (`rnn_steps`' in-place cell, fewer calls per step).

A step of a single sequence costs about one microsecond per NumPy call, whatever the sizes
of a small cell; this form takes eight calls where the general one takes ten:

- the input of every step is laid out once as rows ``z_t = [h_{t-1}, x_t, 1]`` of one buffer
  (``h_t`` written by step t straight into row t + 1, which is also Y), so one
  matrix-vector product ``z_t @ M`` with ``M = [R^T; W^T; Wb + Rb]`` gives the gates, bias
  included (used where ``input_size <= hidden_size``: the product then at most doubles);
- the gates' columns are reordered to ``o, i, f, c`` (the sigmoid gates' columns halved:
  ``sigmoid(v) = 0.5 tanh(v / 2) + 0.5``, as `rnn_steps` computes it), and the cell state
  kept right after them, so that ``[i, f] * [g, c]`` is one multiplication and ``c = i g +
  f c`` one addition of its halves.

The sums are rounded in another order than the general form's (``h R + (x W + b)``): results
differ by float32 rounding only.
"""

from __future__ import annotations

import numpy as np

_CACHE: dict[tuple, tuple] = {}  # read-only weights' augmented matrices, by their memory
_CACHE_MAX = 64


#: 0.5 as a 0-d array of each float type (made once: read-only)
_HALF = {np.dtype(t): np.array(0.5, t) for t in (np.float32, np.float64)}
for _a in _HALF.values():
    _a.flags.writeable = False


def applies(x, h, mask) -> bool:
    """Whether `run` fits: a batch of one, no step mask, an input no wider than the state."""
    return mask is None and x.shape[1] == 1 and h.shape[0] == 1 and x.shape[2] <= h.shape[1]


def _key(r, w, wb, rb):
    """Read-only arrays by identity (the cache entry holds them: no id is reused meanwhile;
    `rnn` hands the same views of constant weights to every call)."""
    for a in (r, w, wb, rb):
        if a is not None and a.flags.writeable:
            return None
    return id(r), id(w), id(wb), id(rb)


def augmented(r, w, wb, rb, dt):
    """``[R^T; W^T; Wb + Rb]`` (`r`: ``[H, 4H]``, `w`: ``[I, 4H]``, biases ``[4H]`` or None)
    with the columns of gates ``o, i, f, c``, those of o, i, f halved. Kept for weights that
    cannot change (read-only arrays)."""
    key = _key(r, w, wb, rb)
    hit = None if key is None else _CACHE.get(key)
    if hit is not None:
        return hit[1]
    H = r.shape[0]
    m = np.zeros((H + w.shape[0] + 1, 4 * H), dt)
    m[:H], m[H:-1] = r, w
    for v in (wb, rb):
        if v is not None:
            m[-1] += v
    m = np.concatenate([m[:, H:2 * H], m[:, :H], m[:, 2 * H:]], axis=1)
    m[:, :3 * H] *= 0.5
    if key is not None:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        m.flags.writeable = False
        _CACHE[key] = ((r, w, wb, rb), m)
    return m


def run(x, m, h, c, clip):
    """``(Y [n, 1, H], final h [1, H], final c [1, H])``: `x` ``[n, 1, I]``, `m` from
    `augmented`, `h` and `c` ``[1, H]`` fresh arrays of the caller (`c` updated in place)."""
    n, H = x.shape[0], h.shape[1]
    dt = x.dtype
    z = np.empty((n + 1, m.shape[0]), dt)
    z[0, :H] = h[0]
    z[:n, H:-1] = x[:, 0]
    z[:, -1] = 1
    b = np.empty(8 * H, dt)  # the gates, the cell state, then work space
    b[4 * H:5 * H] = c[0]
    g, s, gc = b[:4 * H], b[:3 * H], b[3 * H:4 * H]
    go, i_f, g_c, cv = b[:H], b[H:3 * H], b[3 * H:5 * H], b[4 * H:5 * H]
    p, t1 = b[5 * H:7 * H], b[7 * H:]
    pi, pf = p[:H], p[H:]
    # a step is about one microsecond of NumPy's call overhead per operation: the row views
    # are cut once, and the constants are arrays (a Python float costs a scalar conversion
    # per call, twice the call itself on these sizes)
    rows, hs = list(z[:n]), list(z[1:, :H])
    half = _HALF[dt]  # `rnn_steps` runs float32 and float64 only
    dot, add, mul, tanh = np.dot, np.add, np.multiply, np.tanh
    for zt, ht in zip(rows, hs):
        dot(zt, m, out=g)
        if clip is not None:
            np.clip(s, -clip / 2, clip / 2, out=s)
            np.clip(gc, -clip, clip, out=gc)
        tanh(g, out=g)
        mul(s, half, out=s)
        add(s, half, out=s)
        mul(i_f, g_c, out=p)
        add(pi, pf, out=cv)
        tanh(cv, out=t1)
        mul(go, t1, out=ht)
    c[0] = cv
    return z[1:, None, :H], (z[n, None, :H].copy() if n else h), c

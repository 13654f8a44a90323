"""The recurrence of ``DynamicQuantizeLSTM`` (`contrib_lstm`) for the cell quantized models
hold (activations sigmoid, tanh, tanh; no peepholes, no coupled gates; clip allowed), as a
fixed sequence of in-place NumPy calls on buffers made once per direction.

Each step computes what `contrib_lstm`'s generic step does, operation for operation (so the
same float32 roundings): the hidden state dynamically quantized (`ms_quant.dynamic_params`,
codes ``clamp(rne(h / scale) + zp, 0, 255)``), kept as the float32 values ``code - zp``;
their product with ``R - R_zero_point`` in float32, exact because ``255 * L1(R) < 2**24``
(`semantics.exact_int`; the caller checks it); ``acc * (scale * R_scale)``, added to the
step's input product, then the bias; the gates clipped, ``1 / (1 + exp(-x))`` on i, o, f,
``tanh`` on c; ``c = f c + i g``, ``h = o tanh(c)`` written straight into Y.
"""

from __future__ import annotations

import numpy as np

from ...common.rnn import RnnAttrs


def standard_cell(at: RnnAttrs, d: int, peep) -> bool:
    """Whether direction `d` runs on `run` (the cell of the module docstring)."""
    names = tuple(a.name for a in at.activations[d])
    return names == ("sigmoid", "tanh", "tanh") and peep is None and not at.input_forget


def run(xw, r_centered, r_scale, bias, h, c, clip):
    """``(Y [D, seq, batch, H], final h [D, batch, H], final c [D, batch, H])`` of `D`
    directions run in lockstep (step t of each at once: one call per operation for all of
    them; each direction's arithmetic is its own, as if run alone), steps in order.

    `xw` ``[D, seq, batch, 4H]``: each direction's scaled input products, in its step
    order; `r_centered` ``[D, H, 4H]``: ``R - R_zero_point`` as float32; `r_scale` a list of
    D ``[]`` or ``[4H]``; `bias` a list of D ``[4H]``, or None; `h`, `c` ``[D, batch, H]``
    float32 arrays of the caller's own (`c` is updated in place)."""
    D, seq, batch, G = xw.shape
    H = G // 4
    y = np.empty((D, seq, batch, H), np.float32)
    q = np.empty((D, batch, H), np.float32)
    g = np.empty((D, batch, G), np.float32)
    t1 = np.empty((D, batch, H), np.float32)
    rs = np.stack([np.broadcast_to(np.asarray(r, np.float32).reshape(-1), (G,))
                   for r in r_scale])[:, None]  # [D, 1, 4H]
    bias = None if bias is None else np.stack(bias).astype(np.float32)[:, None]
    s, gc = g[..., :3 * H], g[..., 3 * H:]
    gi, go, gf = g[..., :H], g[..., H:2 * H], g[..., 2 * H:3 * H]
    one, top = np.float32(1), np.float32(255)
    for t in range(seq):
        sh, z = _dynamic_params(h)
        np.divide(h, sh, out=q)
        np.round(q, out=q)
        q.clip(-z, top - z, out=q)  # clamp(q + z, 0, 255) - z: integers, exact
        np.matmul(q, r_centered, out=g)
        g *= sh * rs
        np.add(xw[:, t], g, out=g)
        if bias is not None:
            g += bias
        if clip is not None:
            np.clip(g, -clip, clip, out=g)
        np.negative(s, out=s)
        np.exp(s, out=s)
        s += one
        np.divide(one, s, out=s)
        np.tanh(gc, out=gc)
        np.multiply(gf, c, out=c)
        np.multiply(gi, gc, out=gc)
        c += gc
        np.tanh(c, out=t1)
        h = y[:, t]
        np.multiply(go, t1, out=h)
    return y, h, c


def _dynamic_params(h):
    """`ms_quant.dynamic_params` of each direction's ``h`` (``[D, batch, H]``): its scale
    and zero point as float32 ``[D, 1, 1]``, by the same float32 operations."""
    zero = np.float32(0)
    lo = np.minimum(h.min(axis=(1, 2)), zero)
    hi = np.maximum(h.max(axis=(1, 2)), zero)
    scale = np.where(hi == lo, np.float32(1), (hi - lo) / np.float32(255))
    zp = np.round(np.minimum(np.maximum(zero - lo / scale, zero), np.float32(255)))
    zp = zp.astype(np.uint8).astype(np.float32)  # as the uint8 zero point holds it
    return scale.reshape(-1, 1, 1), zp.reshape(-1, 1, 1)

"""Recurrent cells as single ops: LSTM, GRU and RNN (all directions, both layouts).

Attributes, activations and the per-step cell math are shared with the JAX backend
(`itergraph.backends.common.rnn`, which also states the shapes and semantics). Here: a Python
loop over time per direction, with the input projection ``X W^T + Wb`` of all steps
computed up front as one matrix product; a reverse direction with `sequence_lens` reads and
writes through a per-entry time index.
"""

from __future__ import annotations

import numpy as np

from ...common.rnn import RnnAttrs, check_lens, make_step, reverse_index
from . import kernel
from .nn import sigmoid, softplus

_OVERRIDES = {"sigmoid": sigmoid, "softplus": softplus}


def _recurrent(node, ctx):
    """The kernel of an LSTM, GRU or RNN node."""
    at = RnnAttrs.from_node(node)
    kind, dirs, layout = at.kind, at.dirs, at.layout
    acts = [[a.build(np, _OVERRIDES) for a in per_dir] for per_dir in at.activations]
    n_out = len(node.outputs)
    G = kind.gates

    def fn(x, w, r, b=None, seq_lens=None, *init):
        if layout:
            x = x.transpose(1, 0, 2)
        seq, batch = x.shape[0], x.shape[1]
        H = at.hidden(r)
        at.check_weights(node, w, r, H)
        dt = x.dtype
        lens = check_lens(node, seq_lens, seq, batch) if seq_lens is not None else None
        states0 = []
        for k in range(kind.states):
            s = init[k] if k < len(init) else None
            if s is None:
                s = np.zeros((dirs, batch, H), dtype=dt)
            elif layout:
                s = s.transpose(1, 0, 2)
            states0.append(s)
        peep = init[kind.states] if len(init) > kind.states else None
        ys, finals = [], []
        rev_idx = reverse_index(np, lens, seq) if lens is not None else None
        bcols = np.arange(batch)
        for d in range(dirs):
            reverse = at.reverse(d)
            xd = x
            if reverse:
                xd = x[::-1] if rev_idx is None else x[rev_idx, bcols[None, :]]
            xw = xd @ w[d].T
            rb = None
            if b is not None:
                xw = xw + b[d, : G * H]
                rb = b[d, G * H:]
            rec = [_rec(r[d][lo * H:hi * H].T) for lo, hi in kind.blocks]
            step = make_step(at, np, acts[d], rec, rb,
                             peep[d] if peep is not None else None, H)
            states = [s[d] for s in states0]
            y = np.zeros((seq, batch, H), dtype=dt)
            for t in range(seq):
                new = step(xw[t], states)
                if lens is not None:
                    m = (t < lens)[:, None]
                    new = [np.where(m, n_, o_) for n_, o_ in zip(new, states)]
                    y[t] = np.where(m, new[0], 0)
                else:
                    y[t] = new[0]
                states = new
            if reverse:
                y = y[::-1] if rev_idx is None else y[rev_idx, bcols[None, :]]
            ys.append(y)
            finals.append(states)
        Y = np.stack(ys, axis=1)  # [seq, dirs, batch, H]
        outs = [Y] + [np.stack([f[k] for f in finals]) for k in range(kind.states)]
        if layout:
            outs = [outs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outs[1:]]
        outs = [np.ascontiguousarray(o, dtype=dt) for o in outs]
        return outs[0] if n_out == 1 else tuple(outs[:n_out])

    return fn


def _rec(rt: np.ndarray):
    """``h @ rt`` (rt: a block of R, transposed once per call of the kernel)."""
    return lambda h: h @ rt


kernel("LSTM", since=1)(_recurrent)
kernel("GRU", since=1)(_recurrent)
kernel("RNN", since=1)(_recurrent)

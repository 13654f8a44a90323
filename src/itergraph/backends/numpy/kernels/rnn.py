"""Recurrent cells as single ops: LSTM, GRU and RNN (all directions, both layouts), and the
fused ``itergraph.RecurrentSequence`` that `passes.fuse_cells` makes of loops.

Attributes, activations and the per-step cell math are shared with the JAX backend
(`itergraph.backends.common.rnn`, which also states the shapes and semantics). Each
direction runs `rnn_steps.run_direction` (input projection of all steps as one product,
in-place steps); with `sequence_lens`, the steps between consecutive distinct lengths run
that way over the entries still going (`_by_length`), and the cells `run_direction` has no
in-place steps for run the masked loop below.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, IterationLimitError, where
from ...common.rnn import (
    RnnAttrs,
    check_lens,
    make_step,
    no_steps,
    reverse_index,
    step_count,
    with_last_y,
)
from . import kernel, rnn_rows
from .nn import sigmoid, softplus
from .rnn_steps import batch_of, fast_path, run_direction

_OVERRIDES = {"sigmoid": sigmoid, "softplus": softplus}


def _recurrent(node, ctx):
    """The kernel of an LSTM, GRU or RNN node."""
    at = RnnAttrs.from_node(node)
    kind, dirs, layout = at.kind, at.dirs, at.layout
    n_out = len(node.outputs)
    G = kind.gates
    views: list = []  # the last read-only weights and their views (see `_views`)
    rows: list = []  # the last read-only weights and their `rnn_rows` matrix (`_one_row`)
    one_row = at.op == "LSTM" and at.direction == "forward" and not layout

    def fn(x, w, r, b=None, seq_lens=None, *init):
        if one_row and seq_lens is None:
            outs = _one_row(node, at, rows, x, w, r, b, init)
            if outs is not None:
                return outs[0] if n_out == 1 else outs[:n_out]
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
        for d, (wt, rt, wb, rb) in enumerate(_views(views, w, r, b, G * H, dirs)):
            pd = peep[d] if peep is not None else None
            if lens is None:
                xd = x[::-1] if at.reverse(d) else x
                y, hn, cn = run_direction(node, at, d, xd, wt, rt, wb, rb, pd,
                                          states0[0][d], states0[1][d] if G == 4 else None)
                ys.append(y[::-1] if at.reverse(d) else y)
                finals.append([hn] if cn is None else [hn, cn])
            elif fast_path(at, d, pd, dt):
                y, st = _by_length(node, at, d, x, w[d], r[d], wb, rb,
                                   [s[d] for s in states0], lens)
                ys.append(y)
                finals.append(st)
            else:
                y, st = _masked(at, d, x, w[d], r[d], wb, rb, pd, [s[d] for s in states0],
                                lens, H)
                ys.append(y)
                finals.append(st)
        if dirs == 1:  # fresh arrays or views of them (made contiguous below)
            outs = [ys[0][:, None]] + [f[None] for f in finals[0]]
        else:
            outs = [np.stack(ys, axis=1)] + [np.stack([f[k] for f in finals])
                                             for k in range(kind.states)]  # Y [n, dirs, B, H]
        if layout:
            outs = [outs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outs[1:]]
        outs = [np.ascontiguousarray(o, dtype=dt) for o in outs]
        return outs[0] if n_out == 1 else tuple(outs[:n_out])

    return fn


def _one_row(node, at: RnnAttrs, memo: list, x, w, r, b, init) -> tuple | None:
    """(Y, Y_h, Y_c) of a forward LSTM over one sequence (batch 1, no lengths, no
    peepholes) with constant weights, straight on `rnn_rows`: the weights' checks and the
    step matrix are done once per weights and kept in `memo`, so that a call of a small
    cell pays for its steps alone; None where this does not apply (the general path)."""
    if x.ndim != 3 or x.shape[1] != 1 or x.shape[0] == 0 or len(init) > 2:
        return None
    hit = memo[0] if memo else None  # one read: another thread may replace it
    if hit is None or hit[0] is not w or hit[1] is not r or hit[2] is not b:
        hit = _row_matrix(node, at, w, r, b, x.dtype)
        if hit is None:
            return None
        memo[:] = [hit]
    m, H = hit[3], hit[4]
    if x.dtype != m.dtype or x.shape[2] != w.shape[2] or x.shape[2] > H:  # `rnn_rows.applies`
        return None
    states = []
    for k in range(2):
        s = init[k] if k < len(init) else None
        if s is None:
            states.append(np.zeros((1, H), m.dtype))
        elif s.shape == (1, 1, H) and s.dtype == m.dtype:
            states.append(s[0].copy())
        else:
            return None
    y, hn, cn = rnn_rows.run(x, m, states[0], states[1], at.clip)
    return np.ascontiguousarray(y[:, None]), hn[None], cn[None]


def _row_matrix(node, at: RnnAttrs, w, r, b, dt) -> tuple | None:
    """``(w, r, b, rnn_rows.augmented matrix, H)`` for read-only weights of one direction
    whose cell has `rnn_steps`' in-place form, else None."""
    if any(a is not None and (a.flags.writeable or a.dtype != dt) for a in (w, r, b)):
        return None
    if not fast_path(at, 0, None, dt) or w.ndim != 3 or r.ndim != 3:
        return None
    H = at.hidden(r)
    at.check_weights(node, w, r, H)
    if b is not None and b.shape != (1, 8 * H):
        return None
    wb, rb = (None, None) if b is None else (b[0, :4 * H], b[0, 4 * H:])
    return w, r, b, rnn_rows.augmented(r[0].T, w[0].T, wb, rb, dt), H


def _views(memo: list, w, r, b, gh: int, dirs: int) -> list[tuple]:
    """Per direction ``(W^T, R^T, Wb, Rb)`` (views; biases None without `b`). For read-only
    weights (constants), the same view objects as on the previous call with the same arrays,
    so that the step caches keyed on them (`rnn_rows`) find them."""
    last = memo[0] if memo else None  # one read: another thread may replace it
    if last is not None and last[0] is w and last[1] is r and last[2] is b:
        return last[3]
    views = [(w[d].T, r[d].T, None if b is None else b[d, :gh], None if b is None else b[d, gh:])
             for d in range(dirs)]
    if not any(a is not None and a.flags.writeable for a in (w, r, b)):
        memo[:] = [(w, r, b, views)]
    return views


def _by_length(node, at: RnnAttrs, d: int, x, w, r, wb, rb, states, lens):
    """One direction with per-entry lengths on the in-place steps (`rnn_steps`): the steps
    between two consecutive distinct lengths run as one sequence over the entries still
    going (as packed sequences run), so no step does masking work. Past its length an entry
    keeps its state and its Y is zero, an entry of length zero ends with zero states (as
    in ONNX Runtime and OpenVINO); a reverse direction reads each entry's valid prefix
    backwards (`reverse_index`)."""
    seq, batch = x.shape[0], x.shape[1]
    H = r.shape[1]
    bcols = np.arange(batch)
    rev_idx = reverse_index(np, lens, seq) if at.reverse(d) else None
    xd = x[rev_idx, bcols[None, :]] if rev_idx is not None else x
    states = [np.array(np.broadcast_to(s, (batch, H)), dtype=x.dtype) for s in states]
    y = np.zeros((seq, batch, H), dtype=x.dtype)
    t0 = 0
    for t1 in np.unique(lens[lens > 0]).tolist():
        live = np.flatnonzero(lens >= t1)
        ys, hn, cn = run_direction(node, at, d, xd[t0:t1][:, live], w.T, r.T, wb, rb, None,
                                   states[0][live], states[1][live] if len(states) > 1
                                   else None)
        y[t0:t1, live] = ys
        states[0][live] = hn
        if cn is not None:
            states[1][live] = cn
        t0 = t1
    for s in states:  # an entry that runs no step ends with zeros (ONNX Runtime, OpenVINO)
        s[lens == 0] = 0
    if rev_idx is not None:
        y = y[rev_idx, bcols[None, :]]
    return y, states


def _masked(at: RnnAttrs, d: int, x, w, r, wb, rb, peep, states, lens, H: int):
    """One direction with per-entry lengths: steps past an entry's length keep its state and
    write zeros; a reverse direction walks each entry's valid prefix backwards."""
    seq, batch = x.shape[0], x.shape[1]
    dt = x.dtype
    bcols = np.arange(batch)
    rev_idx = reverse_index(np, lens, seq) if at.reverse(d) else None
    xd = x[rev_idx, bcols[None, :]] if rev_idx is not None else x
    xw = xd @ w.T
    if wb is not None:
        xw = xw + wb
    acts = [a.build(np, _OVERRIDES) for a in at.activations[d]]
    rec = [_rec(r[lo * H:hi * H].T) for lo, hi in at.kind.blocks]
    step = make_step(at, np, acts, rec, rb, peep, H)
    y = np.zeros((seq, batch, H), dtype=dt)
    for t in range(seq):
        new = step(xw[t], states)
        m = (t < lens)[:, None]
        states = [np.where(m, n_, o_) for n_, o_ in zip(new, states)]
        y[t] = np.where(m, states[0], 0)
    states = [np.where((lens > 0)[:, None], s, 0).astype(dt) for s in states]
    if rev_idx is not None:
        y = y[rev_idx, bcols[None, :]]
    return y, states


def _rec(rt: np.ndarray):
    """``h @ rt`` (rt: a block of R, transposed once per call of the kernel)."""
    return lambda h: h @ rt


kernel("LSTM", since=1)(_recurrent)
kernel("GRU", since=1)(_recurrent)
kernel("RNN", since=1)(_recurrent)


# ----------------------------------------------------------------------------- fused


@kernel("RecurrentSequence", domain="itergraph")
def _sequence(node, ctx):
    """The kernel of the fused ``RecurrentSequence`` node (`passes.fuse_cells`)."""
    at = RnnAttrs.from_node(node)
    reverse = bool(node.attrs.get("reverse", 0))
    strict = bool(node.attrs.get("strict", 0))
    negative = str(node.attrs.get("negative_steps", "zero"))
    fill = str(node.attrs.get("mask_output", "hold")) == "fill"
    limit = ctx.max_iterations

    def fn(x, w, r, b=None, rb=None, h0=None, c0=None, p=None, steps=None, mask=None,
           o0=None):
        n = step_count(node, steps, x.shape[0] if x.ndim else 0, strict, negative)
        if limit is not None and n > limit:  # the loop's driver error
            raise IterationLimitError(f"{node.meta.get('loop_where') or where(node)}: stopped "
                                      f"after max_iterations={limit} iterations")
        if n == 0 and h0 is not None:
            return with_last_y(node, no_steps(node, np, x, h0, c0), o0)
        if x.ndim != 3 or w.ndim != 2 or r.ndim != 2 or h0 is None or h0.ndim != 2:
            raise ExecutionError(f"{where(node)}: unexpected input ranks")
        xs = x[::-1][:n] if reverse else x[:n]
        if x.shape[2] != w.shape[1] or r.shape[0] != w.shape[0] or h0.shape[1] != r.shape[1]:
            raise ExecutionError(f"{where(node)}: input shapes {x.shape}, {w.shape}, "
                                 f"{r.shape}, {h0.shape} do not fit")
        if mask is not None:
            if mask.ndim != 2 or mask.shape[0] != x.shape[0] or mask.dtype != np.bool_:
                raise ExecutionError(f"{where(node)}: mask of shape {list(mask.shape)} and "
                                     f"type {mask.dtype}: expected booleans [{x.shape[0]}, batch]")
            mask = mask[::-1][:n] if reverse else mask[:n]
        batch_of(node, x.shape[1], h0.shape[0], *([] if c0 is None else [c0.shape[0]]),
                 *([] if mask is None else [mask.shape[1]]))
        y, hn, cn = run_direction(node, at, 0, xs, w.T, r.T, b, rb, p, h0, c0, mask, o0, fill)
        return with_last_y(node, (y, hn) if cn is None else (y, hn, cn), o0)

    return fn

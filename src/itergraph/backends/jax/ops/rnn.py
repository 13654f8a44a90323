"""Recurrent cells as single ops: LSTM, GRU, RNN, lowered to one ``lax.scan`` over time.

Attributes, activations and the per-step cell math are shared with the NumPy kernels
(``backends/rnn_common.py``, which also states the shapes and semantics). Here: the input
projection ``X W^T + Wb`` is one matrix product over all steps before the scan; each step
only does ``H R^T`` (an einsum with R as the transposed operand). Both directions of a
bidirectional cell run in the same scan (a leading direction axis on the state).
"""

from __future__ import annotations

import numpy as np

from ....analysis.padding import PADDED_LENGTHS
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
from ..context import LIMIT_MESSAGE
from ..table import lowering
from ._util import precision
from .rnn_scan import scan_direction


def _jnp():
    import jax.numpy as jnp

    return jnp


def _sigmoid(x):
    from jax import lax

    return lax.logistic(x)


_OVERRIDES = {"sigmoid": _sigmoid}


class _Act:
    """Per gate kind: one activation per direction, applied along the leading dir axis."""

    def __init__(self, fns, keys):
        self.fns, self.same = fns, len(set(keys)) == 1

    def __call__(self, v):
        if self.same:
            return self.fns[0](v)
        return _jnp().stack([f(v[d]) for d, f in enumerate(self.fns)])


def _activations(at: RnnAttrs) -> list[_Act]:
    jnp = _jnp()
    per_dir = len(at.kind.defaults)
    return [_Act([a[k].build(jnp, _OVERRIDES) for a in at.activations],
                 [a[k] for a in at.activations]) for k in range(per_dir)]


def _lens(cx, seq_lens, seq: int, batch: int, checked: bool = True):
    """Per-entry lengths (None when every entry has all `seq` steps); `checked`: the run
    flags lengths out of range (a padded run's are in range by construction)."""
    jnp = _jnp()
    if seq_lens is None:
        return None
    if isinstance(seq_lens, np.ndarray):
        return check_lens(cx.node, seq_lens, seq, batch)
    lens = jnp.asarray(seq_lens).astype(np.int64).reshape(-1)
    if lens.shape[0] != batch:
        raise ExecutionError(f"{where(cx.node)}: sequence_lens has {lens.shape[0]} entries for "
                             f"batch {batch}")
    if checked:
        cx.check(jnp.any((lens > seq) | (lens < 0)),
                 f"sequence_lens invalid for {seq} steps and batch {batch}")
    return lens


def _uniform_lengths(node) -> bool:
    """Are the node's ``sequence_lens`` the valid length of a padded run (`analysis.padding`):
    one length for every entry, at most the number of steps?"""
    v = node.inputs[4] if len(node.inputs) > 4 else None
    return v is not None and v.producer is not None and \
        bool(v.producer.meta.get(PADDED_LENGTHS))


def _time_reverse(xp, x, lens, baxis: int = 1):
    """Reverse time (axis 0) per batch entry (axis `baxis`) within its valid length; this is
    its own inverse."""
    if lens is None:
        return x[::-1]
    seq, batch = x.shape[0], x.shape[baxis]
    idx = reverse_index(xp, lens, seq).astype(np.int64)
    shape = [seq] + [1] * (x.ndim - 1)
    shape[baxis] = batch
    return xp.take_along_axis(x, xp.reshape(idx, shape), axis=0)


def _projection(x, w, b, lens, at: RnnAttrs, gh: int):
    """The input projection of every step and direction, ``xw[t, d] = x_d[t] @ W[d]^T +
    Wb[d]`` (x_d: x in that direction's time order), x already in layout 0."""
    jnp = _jnp()
    xs = [_time_reverse(jnp, x, lens) if at.reverse(d) else x for d in range(at.dirs)]
    xd = jnp.stack(xs, axis=1)  # [seq, dirs, batch, input]
    xw = jnp.einsum("tdbi,dgi->tdbg", xd, w, precision=precision())
    if b is not None:
        xw = xw + b[None, :, None, :gh]
    return xw


def cell_input_projection(node, x, w, b):
    """`_projection` for a cell node without sequence_lens, from its raw X, W, B (the loop
    lowering computes it for all iterations of an enclosing scan at once)."""
    at = RnnAttrs.from_node(node)
    if at.layout:
        x = _jnp().swapaxes(x, 0, 1)
    G = at.kind.gates
    gh = G * (at.hidden_size if at.hidden_size is not None else w.shape[1] // G)
    return _projection(x, w, b, None, at, gh)


def _mm(h, r):
    """``h @ r^T`` per direction: h [dirs, batch, H], r [dirs, G*H, H] (a transposed operand
    of a dot costs nothing, a materialized transpose would be redone every step)."""
    return _jnp().einsum("dbh,dgh->dbg", h, r, precision=precision())


def _rec(r):
    return lambda h: _mm(h, r)


def _direction(cx, v, d: int):
    """``v[d]``: for weights passed as arguments (large constants), an argument of its own
    split once on the host (XLA copies a slice of an argument in every call: 16 MB for a
    bidirectional LSTM of 512 units)."""
    split = cx.prepared(v, ("direction", d), lambda a: np.ascontiguousarray(a[d]))
    return v[d] if split is None else split


def _recurrent(cx, x, w, r, b=None, seq_lens=None, *init):
    """The lowering of an LSTM, GRU or RNN node: one `rnn_scan.scan_direction` per
    direction (with `sequence_lens`, masked per entry), or (with an input projection batched
    by an enclosing scan) `_masked`, both directions in one scan."""
    node = cx.node
    at = RnnAttrs.from_node(node)
    if id(node) in cx.tc.cell_inputs:
        return _masked(cx, at, x, w, r, b, seq_lens, *init)
    jnp = _jnp()
    if at.layout:
        x = jnp.swapaxes(x, 0, 1)
    batch = x.shape[1]
    H = at.hidden(r)
    at.check_weights(node, w, r, H)
    uniform = _uniform_lengths(node)
    lens = _lens(cx, seq_lens, x.shape[0], batch, checked=not uniform)
    G, dt = at.kind.gates, x.dtype
    states0 = []
    for k in range(at.kind.states):
        s = init[k] if k < len(init) else None
        if s is None:
            s = jnp.zeros((at.dirs, batch, H), dtype=dt)
        elif at.layout:
            s = jnp.swapaxes(s, 0, 1)
        states0.append(s)
    peep = init[at.kind.states] if len(init) > at.kind.states else None
    ys, finals = [], []
    for d in range(at.dirs):
        xd = _time_reverse(jnp, x, lens) if at.reverse(d) else x
        y, hn, cn = scan_direction(at, d, xd, _direction(cx, w, d), _direction(cx, r, d),
                                   None if b is None else b[d, :G * H],
                                   None if b is None else b[d, G * H:],
                                   None if peep is None else peep[d], states0[0][d],
                                   states0[1][d] if at.kind.states == 2 else None, lens,
                                   uniform=uniform)
        ys.append(_time_reverse(jnp, y, lens) if at.reverse(d) else y)
        finals.append([hn] if cn is None else [hn, cn])
    outs = [jnp.stack(ys, axis=1)] + [jnp.stack([f[k] for f in finals])
                                      for k in range(at.kind.states)]
    if at.layout:
        outs = [jnp.transpose(outs[0], (2, 0, 1, 3))] + [jnp.swapaxes(o, 0, 1)
                                                          for o in outs[1:]]
    outs = [o.astype(dt) for o in outs]
    n_out = len(node.outputs)
    return outs[0] if n_out == 1 else tuple(outs[:n_out])


def _masked(cx, at, x, w, r, b=None, seq_lens=None, *init):
    """Both directions in one scan (a leading direction axis), with per-entry lengths."""
    import jax

    jnp = _jnp()
    node = cx.node
    kind, dirs = at.kind, at.dirs
    acts = _activations(at)
    G = kind.gates
    if at.layout:
        x = jnp.swapaxes(x, 0, 1)
    seq, batch = x.shape[0], x.shape[1]
    H = at.hidden(r)
    at.check_weights(node, w, r, H)
    dt = x.dtype
    lens = _lens(cx, seq_lens, seq, batch)
    states0 = []
    for k in range(kind.states):
        s = init[k] if k < len(init) else None
        if s is None:
            s = jnp.zeros((dirs, batch, H), dtype=dt)
        elif at.layout:
            s = jnp.swapaxes(s, 0, 1)
        states0.append(jnp.asarray(s, dtype=dt))
    peep = init[kind.states] if len(init) > kind.states else None
    xw = cx.tc.cell_inputs.get(id(node))  # computed before the enclosing scan (`loops.batching`)
    if xw is None:
        xw = _projection(x, w, b, lens, at, G * H)
    rb = jnp.asarray(b)[:, None, G * H:] if b is not None else None  # [dirs, 1, G*H]
    r = jnp.asarray(r)  # [dirs, G*H, H], not transposed
    rec = [_rec(r if (lo, hi) == (0, G) else r[:, lo * H:hi * H]) for lo, hi in kind.blocks]
    if peep is not None:
        peep = jnp.asarray(peep)[:, None, :]  # [dirs, 1, 3H]
    step = make_step(at, jnp, acts, rec, rb, peep, H)
    steps = np.arange(seq, dtype=np.int64)

    def body(states, inp):
        xw_t, t = inp
        new = step(xw_t, states)
        if lens is not None:
            m = (t < lens)[None, :, None]
            new = [jnp.where(m, n_, o_) for n_, o_ in zip(new, states)]
            y = jnp.where(m, new[0], jnp.zeros((), dt))
        else:
            y = new[0]
        new = [n_.astype(dt) for n_ in new]
        return new, y.astype(dt)

    if seq == 1:  # e.g. a cell inside a loop body (OpenVINO LSTMCell): no inner loop
        finals, y0 = body(states0, (xw[0], steps[0]))
        y = y0[None]
    else:
        finals, y = jax.lax.scan(body, states0, (xw, steps))  # y: [seq, dirs, batch, H]
    if lens is not None:
        finals = [jnp.where((lens > 0)[None, :, None], f, jnp.zeros((), dt)) for f in finals]
    if at.direction == "reverse":
        y = _time_reverse(jnp, y, lens, baxis=2)
    elif dirs == 2:
        y = jnp.stack([y[:, 0], _time_reverse(jnp, y[:, 1], lens)], axis=1)
    outs = [y] + list(finals)
    if at.layout:
        outs = [jnp.transpose(outs[0], (2, 0, 1, 3))] + [jnp.swapaxes(o, 0, 1)
                                                          for o in outs[1:]]
    n_out = len(node.outputs)
    outs = [o.astype(dt) for o in outs]
    return outs[0] if n_out == 1 else tuple(outs[:n_out])


lowering("LSTM", since=1)(_recurrent)
lowering("GRU", since=1)(_recurrent)
lowering("RNN", since=1)(_recurrent)


@lowering("RecurrentSequence", domain="itergraph")
def _sequence(cx, x, w, r, b=None, rb=None, h0=None, c0=None, p=None, steps=None, mask=None,
              o0=None):
    """The fused ``RecurrentSequence`` (`passes.fuse_cells`): the step count must be known
    while tracing (XLA shapes are static); a traced one cannot be lowered."""
    node = cx.node
    at = RnnAttrs.from_node(node)
    if steps is not None:
        steps = cx.const(steps, "the step count")
    strict = bool(node.attrs.get("strict", 0))
    negative = str(node.attrs.get("negative_steps", "zero"))
    n = step_count(node, steps, x.shape[0], strict, negative)
    if n == 0:
        import jax.numpy as jnp

        return with_last_y(node, no_steps(node, jnp, x, h0, c0), o0)
    if x.ndim != 3 or x.shape[2] != w.shape[1] or r.shape[0] != w.shape[0] or \
            h0.shape[1] != r.shape[1]:
        raise ExecutionError(f"{where(node)}: input shapes do not fit")
    if cx.tc.max_it is not None:
        loop = node.meta.get("loop_where") or where(node)
        cx.tc.check(cx.frame, cx.tc.max_it < n, f"{loop}: {LIMIT_MESSAGE}",
                    IterationLimitError)
    rev = node.attrs.get("reverse", 0)
    xs = x[::-1][:n] if rev else x[:n]
    if mask is not None:
        if mask.ndim != 2 or mask.shape[0] != x.shape[0] or mask.dtype != np.bool_:
            raise ExecutionError(f"{where(node)}: mask of shape {list(mask.shape)} and "
                                 f"type {mask.dtype}: expected booleans [{x.shape[0]}, batch]")
        mask = mask[::-1][:n] if rev else mask[:n]
    cx.tc.note(node, True, f"{node.meta.get('loop_where', 'a loop')} fused as one {at.op} "
                           f"cell: lax.scan over {n} steps, the input projection of all steps "
                           "one matrix product before it")
    y, hn, cn = scan_direction(at, 0, xs, w, r, b, rb, p, h0, c0, mask=mask, o0=o0,
                               fill=str(node.attrs.get("mask_output", "hold")) == "fill")
    return with_last_y(node, (y, hn) if cn is None else (y, hn, cn), o0)

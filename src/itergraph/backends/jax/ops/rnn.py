"""Recurrent cells as single ops: LSTM, GRU, RNN, lowered to one ``lax.scan`` over time.

Semantics are the NumPy kernels' (see ``backends/numpy/kernels/rnn.py``): layouts 0 and 1,
forward/reverse/bidirectional, `sequence_lens` (steps past an entry's length keep its state
and write zeros; a reverse direction walks each entry's valid prefix backwards), `clip`,
activation lists with alpha/beta, LSTM peepholes and ``input_forget``, GRU
``linear_before_reset``.

The input projection ``X W^T + Wb`` is one matrix product over all steps before the scan;
each step only does ``H R^T``. Both directions of a bidirectional cell run in the same scan
(a leading direction axis on the state).
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ..table import lowering
from ._util import attr, attr_floats, attr_str, attr_strs, precision


def _jnp():
    import jax.numpy as jnp

    return jnp


def _sigmoid(x):
    from jax import lax

    return lax.logistic(x)


# name -> (make(alpha, beta), default alpha or None if unused, default beta or None if unused)
_ACTIVATIONS = {
    "relu": (lambda a, b: lambda x: _jnp().maximum(x, 0), None, None),
    "tanh": (lambda a, b: lambda x: _jnp().tanh(x), None, None),
    "sigmoid": (lambda a, b: _sigmoid, None, None),
    "affine": (lambda a, b: lambda x: a * x + b, 1.0, 0.0),
    "leakyrelu": (lambda a, b: lambda x: _jnp().where(x >= 0, x, a * x), 0.01, None),
    "thresholdedrelu": (lambda a, b: lambda x: _jnp().where(x >= a, x, 0), 1.0, None),
    "scaledtanh": (lambda a, b: lambda x: a * _jnp().tanh(b * x), 1.0, 1.0),
    "hardsigmoid": (lambda a, b: lambda x: _jnp().clip(a * x + b, 0, 1), 0.2, 0.5),
    "elu": (lambda a, b: lambda x: _jnp().where(
        x >= 0, x, a * _jnp().expm1(_jnp().minimum(x, 0))), 1.0, None),
    "softsign": (lambda a, b: lambda x: x / (1 + _jnp().abs(x)), None, None),
    "softplus": (lambda a, b: lambda x: _jnp().logaddexp(_jnp().zeros((), x.dtype), x),
                 None, None),
}


class _Act:
    """Per gate kind: one activation per direction, applied along the leading dir axis."""

    def __init__(self, fns, keys):
        self.fns, self.same = fns, len(set(keys)) == 1

    def __call__(self, v):
        if self.same:
            return self.fns[0](v)
        return _jnp().stack([f(v[d]) for d, f in enumerate(self.fns)])


def _activations(node, per_dir: int, dirs: int, defaults: list[str]) -> list[_Act]:
    names = attr_strs(node, "activations")
    if not names:
        names = defaults * dirs
    elif len(names) == per_dir and dirs == 2:
        names = names * 2
    if len(names) != per_dir * dirs:
        raise ModelError(f"{where(node)}: expected {per_dir * dirs} activations, got "
                         f"{len(names)}: {names}")
    alphas = list(attr_floats(node, "activation_alpha") or [])
    betas = list(attr_floats(node, "activation_beta") or [])
    fns, keys = [], []
    for name in names:
        entry = _ACTIVATIONS.get(name.lower())
        if entry is None:
            raise ModelError(f"{where(node)}: unknown activation '{name}'")
        make, da, db = entry
        a = (alphas.pop(0) if alphas else da) if da is not None else None
        b = (betas.pop(0) if betas else db) if db is not None else None
        fns.append(make(a, b))
        keys.append((name.lower(), a, b))
    return [_Act([fns[d * per_dir + k] for d in range(dirs)],
                 [keys[d * per_dir + k] for d in range(dirs)]) for k in range(per_dir)]


class _Spec:
    def __init__(self, gates: int, states: int, defaults: list[str]):
        self.gates, self.states, self.defaults = gates, states, defaults


_LSTM = _Spec(4, 2, ["Sigmoid", "Tanh", "Tanh"])
_GRU = _Spec(3, 1, ["Sigmoid", "Tanh"])
_RNN = _Spec(1, 1, ["Tanh"])


def _lens(cx, seq_lens, seq: int, batch: int):
    """Per-entry lengths (None when every entry has all `seq` steps)."""
    jnp = _jnp()
    if seq_lens is None:
        return None
    if isinstance(seq_lens, np.ndarray):
        lens = seq_lens.astype(np.int64).reshape(-1)
        if lens.shape[0] != batch or (lens > seq).any() or (lens < 0).any():
            raise ExecutionError(f"{where(cx.node)}: sequence_lens {lens.tolist()} invalid for "
                                 f"{seq} steps and batch {batch}")
        return None if (lens == seq).all() else lens
    lens = jnp.asarray(seq_lens).astype(np.int64).reshape(-1)
    if lens.shape[0] != batch:
        raise ExecutionError(f"{where(cx.node)}: sequence_lens has {lens.shape[0]} entries for "
                             f"batch {batch}")
    cx.check(jnp.any((lens > seq) | (lens < 0)),
             f"sequence_lens invalid for {seq} steps and batch {batch}")
    return lens


def _time_reverse(xp, x, lens, baxis: int = 1):
    """Reverse time (axis 0) per batch entry (axis `baxis`) within its valid length; this is
    its own inverse."""
    if lens is None:
        return x[::-1]
    seq, batch = x.shape[0], x.shape[baxis]
    t = np.arange(seq)[:, None]
    idx = xp.where(t < lens[None, :], lens[None, :] - 1 - t, t).astype(np.int64)
    shape = [seq] + [1] * (x.ndim - 1)
    shape[baxis] = batch
    return xp.take_along_axis(x, xp.reshape(idx, shape), axis=0)


def _projection(x, w, b, lens, direction: str, gh: int):
    """The input projection of every step and direction, ``xw[t, d] = x_d[t] @ W[d]^T +
    Wb[d]`` (x_d: x in that direction's time order), x already in layout 0."""
    jnp = _jnp()
    dirs = 2 if direction == "bidirectional" else 1
    xs = []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        xs.append(_time_reverse(jnp, x, lens) if reverse else x)
    xd = jnp.stack(xs, axis=1)  # [seq, dirs, batch, input]
    xw = jnp.einsum("tdbi,dgi->tdbg", xd, w, precision=precision())
    if b is not None:
        xw = xw + b[None, :, None, :gh]
    return xw


CELLS = {"LSTM": 4, "GRU": 3, "RNN": 1}


def cell_input_projection(node, x, w, b):
    """`_projection` for a cell node without sequence_lens, from its raw X, W, B (the loop
    lowering computes it for all iterations of an enclosing scan at once)."""
    jnp = _jnp()
    if int(attr(node, "layout", 0)):
        x = jnp.swapaxes(x, 0, 1)
    direction = attr_str(node, "direction", "forward")
    hidden = attr(node, "hidden_size")
    gh = CELLS[node.op_type] * (int(hidden) if hidden is not None else w.shape[1] //
                                CELLS[node.op_type])
    return _projection(x, w, b, None, direction, gh)


def _recurrent(cx, spec: _Spec, make_step, x, w, r, b, seq_lens, init):
    import jax

    jnp = _jnp()
    node = cx.node
    direction = attr_str(node, "direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ModelError(f"{where(node)}: unknown direction {direction!r}")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(attr(node, "layout", 0))
    acts = _activations(node, len(spec.defaults), dirs, spec.defaults)
    G = spec.gates
    if layout:
        x = jnp.swapaxes(x, 0, 1)
    seq, batch = x.shape[0], x.shape[1]
    hidden = attr(node, "hidden_size")
    H = int(hidden) if hidden is not None else r.shape[-1]
    if w.shape[0] != dirs or w.shape[1] != G * H or r.shape[1] != G * H:
        raise ExecutionError(f"{where(node)}: W {tuple(w.shape)} / R {tuple(r.shape)} do not "
                             f"match {dirs} direction(s), {G} gates of hidden size {H}")
    dt = x.dtype
    lens = _lens(cx, seq_lens, seq, batch)
    states0 = []
    for k in range(spec.states):
        s = init[k] if k < len(init) else None
        if s is None:
            s = jnp.zeros((dirs, batch, H), dtype=dt)
        elif layout:
            s = jnp.swapaxes(s, 0, 1)
        states0.append(jnp.asarray(s, dtype=dt))
    extra = list(init[spec.states:])
    xw = cx.tc.cell_inputs.get(id(node))  # computed before the enclosing scan (`loops`)
    if xw is None:
        xw = _projection(x, w, b, lens, direction, G * H)
    rb = jnp.asarray(b)[:, None, G * H:] if b is not None else None  # [dirs, 1, G*H]
    step = make_step(H, jnp.asarray(r), rb, acts, extra)  # r: [dirs, G*H, H], not transposed
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
    if direction == "reverse":
        y = _time_reverse(jnp, y, lens, baxis=2)
    elif dirs == 2:
        y = jnp.stack([y[:, 0], _time_reverse(jnp, y[:, 1], lens)], axis=1)
    outs = [y] + list(finals)
    if layout:
        outs = [jnp.transpose(outs[0], (2, 0, 1, 3))] + [jnp.swapaxes(o, 0, 1)
                                                          for o in outs[1:]]
    n_out = len(node.outputs)
    outs = [o.astype(dt) for o in outs]
    return outs[0] if n_out == 1 else tuple(outs[:n_out])


def _clipper(node):
    clip = attr(node, "clip")
    if clip is None:
        return None
    c = float(clip)
    return lambda v: _jnp().clip(v, -c, c)


def _mm(h, r):
    """``h @ r^T`` per direction: h [dirs, batch, H], r [dirs, G*H, H] (a transposed operand
    of a dot costs nothing, a materialized transpose would be redone every step)."""
    return _jnp().einsum("dbh,dgh->dbg", h, r, precision=precision())


def _args(x, w, r, b=None, seq_lens=None, *init):
    return x, w, r, b, seq_lens, init


@lowering("LSTM", since=1)
def _lstm(cx, *inputs):
    clip = _clipper(cx.node)
    couple = bool(attr(cx.node, "input_forget", 0))

    def make_step(H, rt, rb, acts, extra):
        f, g, h = acts
        p = extra[0] if extra and extra[0] is not None else None
        pi = po = pf = None
        if p is not None:
            p = _jnp().asarray(p)[:, None, :]  # [dirs, 1, 3H]
            pi, po, pf = p[..., :H], p[..., H:2 * H], p[..., 2 * H:]

        def act(fn_, v):
            return fn_(clip(v) if clip else v)

        def step(xw_t, states):
            hp, cp = states
            gates = xw_t + _mm(hp, rt)
            if rb is not None:
                gates = gates + rb
            gi, go, gf = gates[..., :H], gates[..., H:2 * H], gates[..., 2 * H:3 * H]
            gc = gates[..., 3 * H:]
            if pi is not None:
                gi = gi + pi * cp
                gf = gf + pf * cp
            i = act(f, gi)
            fg = 1 - i if couple else act(f, gf)
            c = fg * cp + i * act(g, gc)
            if po is not None:
                go = go + po * c
            o = act(f, go)
            return [o * h(c), c]

        return step

    return _recurrent(cx, _LSTM, make_step, *_args(*inputs))


@lowering("GRU", since=1)
def _gru(cx, *inputs):
    clip = _clipper(cx.node)
    lbr = bool(attr(cx.node, "linear_before_reset", 0))

    def make_step(H, rt, rb, acts, extra):
        f, g = acts
        r_zr, r_h = rt[:, : 2 * H], rt[:, 2 * H:]
        rb_zr = rb[..., : 2 * H] if rb is not None else None
        rb_h = rb[..., 2 * H:] if rb is not None else None

        def act(fn_, v):
            return fn_(clip(v) if clip else v)

        def step(xw_t, states):
            (hp,) = states
            zr = xw_t[..., : 2 * H] + _mm(hp, r_zr)
            if rb_zr is not None:
                zr = zr + rb_zr
            z = act(f, zr[..., :H])
            rg = act(f, zr[..., H:])
            if lbr:
                lin = _mm(hp, r_h)
                if rb_h is not None:
                    lin = lin + rb_h
                hh = act(g, xw_t[..., 2 * H:] + rg * lin)
            else:
                lin = _mm(rg * hp, r_h)
                if rb_h is not None:
                    lin = lin + rb_h
                hh = act(g, xw_t[..., 2 * H:] + lin)
            return [(1 - z) * hh + z * hp]

        return step

    return _recurrent(cx, _GRU, make_step, *_args(*inputs))


@lowering("RNN", since=1)
def _rnn(cx, *inputs):
    clip = _clipper(cx.node)

    def make_step(H, rt, rb, acts, extra):
        (f,) = acts

        def step(xw_t, states):
            v = xw_t + _mm(states[0], rt)
            if rb is not None:
                v = v + rb
            return [f(clip(v) if clip else v)]

        return step

    return _recurrent(cx, _RNN, make_step, *_args(*inputs))

"""Recurrent cells as single ops: LSTM, GRU and RNN (all directions, both layouts).

Shapes (``layout=0``): X ``[seq, batch, input]``, W ``[dirs, G*H, input]``, R ``[dirs, G*H, H]``,
B ``[dirs, 2*G*H]`` (W biases then R biases), initial states ``[dirs, batch, H]``; outputs Y
``[seq, dirs, batch, H]`` and the final states ``[dirs, batch, H]``. ``layout=1`` swaps the
first two axes of X, Y and the states. Gate order: LSTM i, o, f, c; GRU z, r, h.

`sequence_lens` gives each batch entry its own length: steps past it leave the state
unchanged and write zeros to Y; a reverse direction walks each entry's valid prefix
backwards. `clip` bounds every activation input to ``[-clip, clip]``. Activation lists name
one function per gate-kind per direction (LSTM f, g, h; GRU f, g; RNN f); ``activation_alpha``
and ``activation_beta`` are consumed in that order by the functions that take them.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from . import kernel
from ._common import attr, attr_floats, attr_str, attr_strs
from .nn import sigmoid, softplus

# ----------------------------------------------------------------------------- activations

# name -> (make(alpha, beta), default alpha or None if unused, default beta or None if unused)
_ACTIVATIONS = {
    "relu": (lambda a, b: lambda x: np.maximum(x, 0), None, None),
    "tanh": (lambda a, b: np.tanh, None, None),
    "sigmoid": (lambda a, b: sigmoid, None, None),
    "affine": (lambda a, b: lambda x: a * x + b, 1.0, 0.0),
    "leakyrelu": (lambda a, b: lambda x: np.where(x >= 0, x, a * x), 0.01, None),
    "thresholdedrelu": (lambda a, b: lambda x: np.where(x >= a, x, 0), 1.0, None),
    "scaledtanh": (lambda a, b: lambda x: a * np.tanh(b * x), 1.0, 1.0),
    "hardsigmoid": (lambda a, b: lambda x: np.clip(a * x + b, 0, 1), 0.2, 0.5),
    "elu": (lambda a, b: lambda x: np.where(x >= 0, x, a * np.expm1(np.minimum(x, 0))), 1.0,
            None),
    "softsign": (lambda a, b: lambda x: x / (1 + np.abs(x)), None, None),
    "softplus": (lambda a, b: softplus, None, None),
}


def _activations(node, per_dir: int, dirs: int, defaults: list[str]) -> list[list]:
    """Per direction, the list of `per_dir` activation callables."""
    names = attr_strs(node, "activations")
    if not names:
        names = defaults * dirs
    elif len(names) == per_dir and dirs == 2:
        names = names * 2
    if len(names) != per_dir * dirs:
        raise ModelError(
            f"{where(node)}: expected {per_dir * dirs} activations, got {len(names)}: {names}"
        )
    alphas = list(attr_floats(node, "activation_alpha") or [])
    betas = list(attr_floats(node, "activation_beta") or [])
    fns = []
    for name in names:
        entry = _ACTIVATIONS.get(name.lower())
        if entry is None:
            raise ModelError(f"{where(node)}: unknown activation '{name}'")
        make, da, db = entry
        a = (alphas.pop(0) if alphas else da) if da is not None else None
        b = (betas.pop(0) if betas else db) if db is not None else None
        fns.append(make(a, b))
    return [fns[d * per_dir:(d + 1) * per_dir] for d in range(dirs)]


# ----------------------------------------------------------------------------- common driver


class _Spec:
    """What a cell kind needs: gate count, number of states, default activations."""

    def __init__(self, gates: int, states: int, defaults: list[str]):
        self.gates = gates
        self.states = states
        self.defaults = defaults


_LSTM = _Spec(4, 2, ["Sigmoid", "Tanh", "Tanh"])
_GRU = _Spec(3, 1, ["Sigmoid", "Tanh"])
_RNN = _Spec(1, 1, ["Tanh"])


def _reverse_index(lens: np.ndarray | None, seq: int, batch: int) -> np.ndarray | None:
    """idx[t, b]: the time step a reverse direction reads at its step t (self-inverse)."""
    if lens is None:
        return None
    t = np.arange(seq)[:, None]
    return np.where(t < lens[None, :], lens[None, :] - 1 - t, t)


def _recurrent(node, spec: _Spec, make_step):
    """Build the kernel for one cell kind. `make_step(d, r, rb, acts, extra)` returns
    ``step(xw_t, states) -> states`` where ``states[0]`` is the hidden state."""
    direction = attr_str(node, "direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ModelError(f"{where(node)}: unknown direction {direction!r}")
    dirs = 2 if direction == "bidirectional" else 1
    layout = int(attr(node, "layout", 0))
    hidden_attr = attr(node, "hidden_size")
    acts = _activations(node, len(spec.defaults), dirs, spec.defaults)
    n_out = len(node.outputs)
    G = spec.gates

    def fn(x, w, r, b=None, seq_lens=None, *init):
        if layout:
            x = x.transpose(1, 0, 2)
        seq, batch = x.shape[0], x.shape[1]
        H = int(hidden_attr) if hidden_attr is not None else r.shape[-1]
        if w.shape[0] != dirs or w.shape[1] != G * H or r.shape[1] != G * H:
            raise ExecutionError(
                f"{where(node)}: W {w.shape} / R {r.shape} do not match {dirs} direction(s), "
                f"{G} gates of hidden size {H}"
            )
        dt = x.dtype
        lens = None
        if seq_lens is not None:
            lens = np.asarray(seq_lens).astype(np.int64).reshape(-1)
            if lens.shape[0] != batch or (lens > seq).any() or (lens < 0).any():
                raise ExecutionError(
                    f"{where(node)}: sequence_lens {lens.tolist()} invalid for "
                    f"{seq} steps and batch {batch}"
                )
            if (lens == seq).all():
                lens = None
        states0 = []
        for k in range(spec.states):
            s = init[k] if k < len(init) else None
            if s is None:
                s = np.zeros((dirs, batch, H), dtype=dt)
            elif layout:
                s = s.transpose(1, 0, 2)
            states0.append(s)
        extra = init[spec.states:]
        ys, finals = [], []
        rev_idx = _reverse_index(lens, seq, batch)
        bcols = np.arange(batch)
        for d in range(dirs):
            reverse = direction == "reverse" or d == 1
            xd = x
            if reverse:
                xd = x[::-1] if rev_idx is None else x[rev_idx, bcols[None, :]]
            xw = xd @ w[d].T
            rb = None
            if b is not None:
                xw = xw + b[d, : G * H]
                rb = b[d, G * H:]
            step = make_step(d, r[d], rb, acts[d], extra)
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
        outs = [Y] + [np.stack([f[k] for f in finals]) for k in range(spec.states)]
        if layout:
            outs = [outs[0].transpose(2, 0, 1, 3)] + [o.transpose(1, 0, 2) for o in outs[1:]]
        outs = [np.ascontiguousarray(o, dtype=dt) for o in outs]
        return outs[0] if n_out == 1 else tuple(outs[:n_out])

    return fn


def _clipper(node):
    clip = attr(node, "clip")
    if clip is None:
        return None
    c = float(clip)
    return lambda v: np.clip(v, -c, c)


# ----------------------------------------------------------------------------- cells


@kernel("LSTM", since=1)
def _lstm(node, ctx):
    """LSTM: i, o, f, c gates; optional peepholes P ``[dirs, 3H]`` (i, o, f);
    ``input_forget`` couples the forget gate to ``1 - i``."""
    clip = _clipper(node)
    couple = bool(attr(node, "input_forget", 0))

    def make_step(d, r, rb, acts, extra):
        f, g, h = acts
        rt = r.T
        p = extra[0] if extra and extra[0] is not None else None
        H = r.shape[1]
        pi, po, pf = (p[d, :H], p[d, H:2 * H], p[d, 2 * H:]) if p is not None else (None,) * 3

        def act(fn_, v):
            return fn_(clip(v) if clip else v)

        def step(xw_t, states):
            hp, cp = states
            gates = xw_t + hp @ rt
            if rb is not None:
                gates = gates + rb
            gi, go, gf = gates[:, :H], gates[:, H:2 * H], gates[:, 2 * H:3 * H]
            gc = gates[:, 3 * H:]
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

    return _recurrent(node, _LSTM, make_step)


@kernel("GRU", since=1)
def _gru(node, ctx):
    """GRU: z, r, h gates; ``linear_before_reset`` applies R_h before the reset gate."""
    clip = _clipper(node)
    lbr = bool(attr(node, "linear_before_reset", 0))

    def make_step(d, r, rb, acts, extra):
        f, g = acts
        H = r.shape[1]
        r_zr = r[: 2 * H].T
        r_h = r[2 * H:].T
        rb_zr = rb[: 2 * H] if rb is not None else None
        rb_h = rb[2 * H:] if rb is not None else None

        def act(fn_, v):
            return fn_(clip(v) if clip else v)

        def step(xw_t, states):
            (hp,) = states
            zr = xw_t[:, : 2 * H] + hp @ r_zr
            if rb_zr is not None:
                zr = zr + rb_zr
            z = act(f, zr[:, :H])
            rg = act(f, zr[:, H:])
            if lbr:
                lin = hp @ r_h
                if rb_h is not None:
                    lin = lin + rb_h
                hh = act(g, xw_t[:, 2 * H:] + rg * lin)
            else:
                lin = (rg * hp) @ r_h
                if rb_h is not None:
                    lin = lin + rb_h
                hh = act(g, xw_t[:, 2 * H:] + lin)
            return [(1 - z) * hh + z * hp]

        return step

    return _recurrent(node, _GRU, make_step)


@kernel("RNN", since=1)
def _rnn(node, ctx):
    """RNN: ``H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb)``."""
    clip = _clipper(node)

    def make_step(d, r, rb, acts, extra):
        (f,) = acts
        rt = r.T

        def step(xw_t, states):
            v = xw_t + states[0] @ rt
            if rb is not None:
                v = v + rb
            return [f(clip(v) if clip else v)]

        return step

    return _recurrent(node, _RNN, make_step)

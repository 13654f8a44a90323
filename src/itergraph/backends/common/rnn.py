"""The ONNX recurrent cells (LSTM, GRU, RNN), backend-neutral: attributes and cell math.

Each backend keeps its own loop over time (NumPy: a Python loop per direction; JAX: one
``lax.scan`` with both directions on a leading axis); what they share lives here:

- `RnnAttrs`, the node's attributes parsed and checked once (direction, layout, hidden_size,
  clip, activations with their alpha/beta per direction, input_forget, linear_before_reset);
- the activation functions, written against an array module ``xp`` (numpy or jax.numpy);
- `make_step`, one time step of a cell as ``step(xw_t, states) -> states`` where ``xw_t`` is
  the step's input projection ``x_t W^T + Wb`` and ``states[0]`` is the hidden state. The
  step only slices along the last axis and broadcasts, so any leading axes (batch, or
  direction and batch) pass through.

Shapes (``layout=0``): X ``[seq, batch, input]``, W ``[dirs, G*H, input]``, R ``[dirs, G*H, H]``,
B ``[dirs, 2*G*H]`` (W biases then R biases), initial states ``[dirs, batch, H]``, LSTM
peepholes P ``[dirs, 3H]`` (i, o, f); outputs Y ``[seq, dirs, batch, H]`` and the final states
``[dirs, batch, H]``. ``layout=1`` swaps the first two axes of X, Y and the states. Gate
order: LSTM i, o, f, c; GRU z, r, h.

`sequence_lens` gives each batch entry its own length: steps past it leave the state
unchanged and write zeros to Y; a reverse direction walks each entry's valid prefix
backwards. `clip` bounds every activation input to ``[-clip, clip]`` (`clip_threshold`: as
ONNX Runtime reads it, an RNN's negative clip is no clipping). Activation lists name
one function per gate kind per direction (LSTM f, g, h; GRU f, g; RNN f);
``activation_alpha`` and ``activation_beta`` are consumed in that order by the functions
that take them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...errors import ExecutionError, ModelError, where
from ...ir.attributes import attr, attr_floats, attr_str, attr_strs
from ...semantics.recurrent import DEFAULT_ACTIVATIONS, clip_threshold

# ----------------------------------------------------------------------------- cell kinds


@dataclass(frozen=True)
class CellKind:
    """What a cell kind needs: gate count, number of states, default activations, and the
    row blocks of R (in units of H) whose products with the hidden state a step uses."""

    gates: int
    states: int
    defaults: tuple[str, ...]
    blocks: tuple[tuple[int, int], ...]


KINDS = {
    "LSTM": CellKind(4, 2, DEFAULT_ACTIVATIONS["LSTM"], ((0, 4),)),
    "GRU": CellKind(3, 1, DEFAULT_ACTIVATIONS["GRU"], ((0, 2), (2, 3))),
    "RNN": CellKind(1, 1, DEFAULT_ACTIVATIONS["RNN"], ((0, 1),)),
}

# ----------------------------------------------------------------------------- activations

# name -> (make(xp, alpha, beta), default alpha or None if unused, default beta or None)
_ACTIVATIONS = {
    "relu": (lambda xp, a, b: lambda x: xp.maximum(x, 0), None, None),
    "tanh": (lambda xp, a, b: xp.tanh, None, None),
    "sigmoid": (lambda xp, a, b: lambda x: 1 / (1 + xp.exp(-x)), None, None),
    "affine": (lambda xp, a, b: lambda x: a * x + b, 1.0, 0.0),
    "leakyrelu": (lambda xp, a, b: lambda x: xp.where(x >= 0, x, a * x), 0.01, None),
    "thresholdedrelu": (lambda xp, a, b: lambda x: xp.where(x >= a, x, 0), 1.0, None),
    "scaledtanh": (lambda xp, a, b: lambda x: a * xp.tanh(b * x), 1.0, 1.0),
    "hardsigmoid": (lambda xp, a, b: lambda x: xp.clip(a * x + b, 0, 1), 0.2, 0.5),
    "elu": (lambda xp, a, b: lambda x: xp.where(x >= 0, x, a * xp.expm1(xp.minimum(x, 0))),
            1.0, None),
    "softsign": (lambda xp, a, b: lambda x: x / (1 + xp.abs(x)), None, None),
    "softplus": (lambda xp, a, b: lambda x: xp.logaddexp(xp.zeros((), x.dtype), x),
                 None, None),
}


@dataclass(frozen=True)
class Activation:
    """One activation function with its parameters (None where the function takes none)."""

    name: str  # lower case
    alpha: float | None
    beta: float | None

    def build(self, xp, overrides: dict[str, Callable] | None = None) -> Callable:
        """The function over `xp` arrays; `overrides` maps a name to a backend's own
        implementation of a parameterless function (e.g. a faster sigmoid)."""
        if overrides and self.name in overrides:
            return overrides[self.name]
        return _ACTIVATIONS[self.name][0](xp, self.alpha, self.beta)


def parse_activations(node, kind: CellKind, dirs: int) -> tuple[tuple[Activation, ...], ...]:
    per_dir = len(kind.defaults)
    names = attr_strs(node, "activations")
    if not names:
        names = list(kind.defaults) * dirs
    elif len(names) == per_dir and dirs == 2:
        names = names * 2
    if len(names) != per_dir * dirs:
        raise ModelError(
            f"{where(node)}: expected {per_dir * dirs} activations, got {len(names)}: {names}"
        )
    alphas = list(attr_floats(node, "activation_alpha") or [])
    betas = list(attr_floats(node, "activation_beta") or [])
    acts = []
    for name in names:
        entry = _ACTIVATIONS.get(name.lower())
        if entry is None:
            raise ModelError(f"{where(node)}: unknown activation '{name}'")
        _, da, db = entry
        a = (alphas.pop(0) if alphas else da) if da is not None else None
        b = (betas.pop(0) if betas else db) if db is not None else None
        acts.append(Activation(name.lower(), a, b))
    return tuple(tuple(acts[d * per_dir:(d + 1) * per_dir]) for d in range(dirs))


# ----------------------------------------------------------------------------- attributes


@dataclass(frozen=True)
class RnnAttrs:
    """The attributes of an LSTM/GRU/RNN node, parsed and checked once."""

    op: str
    kind: CellKind
    direction: str  # "forward" | "reverse" | "bidirectional"
    layout: int
    hidden_size: int | None
    clip: float | None
    activations: tuple[tuple[Activation, ...], ...]  # [direction][gate kind]
    input_forget: bool
    linear_before_reset: bool

    @classmethod
    def from_node(cls, node, op: str | None = None) -> RnnAttrs:
        """The attributes of an ``LSTM``/``GRU``/``RNN`` node, or of a fused
        ``itergraph.RecurrentSequence`` node (its ``cell`` attribute names the kind; one
        direction); `op` names the cell of a node that is one by another name (ONNX
        Runtime's ``DynamicQuantizeLSTM`` is an ``LSTM``)."""
        if op is None:
            op = attr_str(node, "cell") if node.domain == "itergraph" else node.op_type
        if op not in KINDS:
            raise ModelError(f"{where(node)}: unknown recurrent cell {op!r}")
        kind = KINDS[op]
        direction = attr_str(node, "direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ModelError(f"{where(node)}: unknown direction {direction!r}")
        dirs = 2 if direction == "bidirectional" else 1
        hidden = attr(node, "hidden_size")
        clip = attr(node, "clip")
        return cls(
            op=op,
            kind=kind,
            direction=direction,
            layout=int(attr(node, "layout", 0)),
            hidden_size=int(hidden) if hidden is not None else None,
            clip=clip_threshold(op, clip),
            activations=parse_activations(node, kind, dirs),
            input_forget=bool(attr(node, "input_forget", 0)),
            linear_before_reset=bool(attr(node, "linear_before_reset", 0)),
        )

    @property
    def dirs(self) -> int:
        return 2 if self.direction == "bidirectional" else 1

    def reverse(self, d: int) -> bool:
        """Whether direction `d` walks time backwards."""
        return self.direction == "reverse" or d == 1

    def hidden(self, r) -> int:
        """The hidden size H: the attribute, else R's last dimension."""
        return self.hidden_size if self.hidden_size is not None else int(r.shape[-1])

    def check_weights(self, node, w, r, H: int) -> None:
        G = self.kind.gates
        if w.shape[0] != self.dirs or w.shape[1] != G * H or r.shape[1] != G * H:
            raise ExecutionError(
                f"{where(node)}: W {tuple(w.shape)} / R {tuple(r.shape)} do not match "
                f"{self.dirs} direction(s), {G} gates of hidden size {H}"
            )


def check_lens(node, seq_lens: np.ndarray, seq: int, batch: int) -> np.ndarray | None:
    """Concrete `sequence_lens` as int64 ``[batch]``, checked; None when every entry has all
    `seq` steps."""
    lens = np.asarray(seq_lens).astype(np.int64).reshape(-1)
    if lens.shape[0] != batch or (lens > seq).any() or (lens < 0).any():
        raise ExecutionError(
            f"{where(node)}: sequence_lens {lens.tolist()} invalid for "
            f"{seq} steps and batch {batch}"
        )
    return None if (lens == seq).all() else lens


def step_count(node, steps, seq: int, strict: bool, negative: str) -> int:
    """The number of steps a fused ``RecurrentSequence`` node runs over a sequence of `seq`
    (see `passes.fuse_cells`), 0 included; more than `seq` when `strict` is the original
    loop's error (`ExecutionError`: it iterates beyond its step input; with no `steps`, a
    strict loop has no trip count and a condition that holds, so it always does)."""
    if steps is None:
        n = seq + 1 if strict else seq  # a strict loop with no trip count runs past X's end
    else:
        n = int(np.asarray(steps).reshape(()))
        if n < 0:
            n = seq + 1 if negative == "unbounded" and strict else (
                seq if negative == "unbounded" else 0)
    if n > seq:
        if strict:
            raise ExecutionError(f"{node.meta.get('loop_where') or where(node)}: the loop "
                                 f"iterates beyond its step input, which has {seq} entries"
                                 + (f" ({n} steps)" if steps is not None else ""))
        n = seq
    return n


def no_steps(node, xp, x, h0, c0):
    """The outputs of a fused ``RecurrentSequence`` that runs zero steps (before
    `with_last_y`), as its loop's after
    zero iterations: an empty ``Y [0, B, H]`` and the initial states as given (no step
    broadcasts them). B and H are the ``empty_dims`` attribute's where it gives them (the loop
    stacks zero iterations in its declared element shape, unknown dimensions as 0), else the
    batch of `x` and the initial states and the hidden size. Nothing else is checked: the
    loop's body never runs."""
    b, h = (int(d) for d in node.attrs.get("empty_dims", (-1, -1)))
    if b < 0:
        b = max(x.shape[1] if x.ndim == 3 else 1, h0.shape[0] if h0.ndim == 2 else 1)
    y = xp.zeros((0, b, h0.shape[-1] if h < 0 else h), h0.dtype)
    return (y, h0) if c0 is None else (y, h0, c0)


def with_last_y(node, outs: tuple, o0) -> tuple:
    """`outs` of a fused ``RecurrentSequence``, with Y's last entry (`o0` after zero steps)
    appended where the node has that output."""
    if len(node.outputs) <= len(outs):
        return outs
    y = outs[0]
    return (*outs, y[-1] if y.shape[0] else o0)


def reverse_index(xp, lens, seq: int):
    """idx[t, b]: the time step a reverse direction reads at its step t (self-inverse):
    each entry's valid prefix backwards, the padding after it in place."""
    t = np.arange(seq)[:, None]
    return xp.where(t < lens[None, :], lens[None, :] - 1 - t, t)


# ----------------------------------------------------------------------------- cell math


def make_step(attrs: RnnAttrs, xp, acts, rec, rb, peep, H: int):
    """One time step ``step(xw_t, states) -> states`` of the cell.

    `acts`: one callable per gate kind (`RnnAttrs.activations` built for the direction(s)
    the step covers); `rec`: one callable per block of `CellKind.blocks`, ``rec[k](h) =
    h @ R[block k]^T``; `rb`: the R bias ``[..., G*H]`` or None; `peep`: LSTM peepholes
    ``[..., 3H]`` or None. `rb` and `peep` must broadcast against the gates."""
    c = attrs.clip
    if c is None:
        def act(fn_, v):
            return fn_(v)
    else:
        def act(fn_, v):
            return fn_(xp.clip(v, -c, c))
    if attrs.op == "LSTM":
        return _lstm_step(attrs, act, acts, rec, rb, peep, H)
    if attrs.op == "GRU":
        return _gru_step(attrs, act, acts, rec, rb, H)
    return _rnn_step(act, acts, rec, rb)


def _lstm_step(attrs, act, acts, rec, rb, peep, H):
    f, g, h = acts
    (rec_all,) = rec
    couple = attrs.input_forget
    pi = po = pf = None
    if peep is not None:
        pi, po, pf = peep[..., :H], peep[..., H:2 * H], peep[..., 2 * H:]

    def step(xw_t, states):
        hp, cp = states
        gates = xw_t + rec_all(hp)
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


def _gru_step(attrs, act, acts, rec, rb, H):
    f, g = acts
    rec_zr, rec_h = rec
    lbr = attrs.linear_before_reset
    rb_zr = rb[..., : 2 * H] if rb is not None else None
    rb_h = rb[..., 2 * H:] if rb is not None else None

    def step(xw_t, states):
        (hp,) = states
        zr = xw_t[..., : 2 * H] + rec_zr(hp)
        if rb_zr is not None:
            zr = zr + rb_zr
        z = act(f, zr[..., :H])
        rg = act(f, zr[..., H:])
        if lbr:
            lin = rec_h(hp)
            if rb_h is not None:
                lin = lin + rb_h
            hh = act(g, xw_t[..., 2 * H:] + rg * lin)
        else:
            lin = rec_h(rg * hp)
            if rb_h is not None:
                lin = lin + rb_h
            hh = act(g, xw_t[..., 2 * H:] + lin)
        return [(1 - z) * hh + z * hp]

    return step


def _rnn_step(act, acts, rec, rb):
    (f,) = acts
    (rec_all,) = rec

    def step(xw_t, states):
        v = xw_t + rec_all(states[0])
        if rb is not None:
            v = v + rb
        return [act(f, v)]

    return step

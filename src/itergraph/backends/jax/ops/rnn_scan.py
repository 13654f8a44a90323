"""One direction of an LSTM/GRU/RNN over a sequence as one ``lax.scan`` (no rules here): the
recurrence of the ``LSTM``/``GRU``/``RNN`` rules and of the fused ``RecurrentSequence``.

Laid out for XLA's CPU code: the input projection ``X W + b`` is one product over many steps
(all of them, or chunks of them that stay in the caches: `chunk_length`) before the scan over
those steps; biases the cell adds next to it are folded into it. LSTM and RNN steps do one
``h @ R`` and activate two column blocks of it (sigmoid gates, tanh gate); GRU steps, whose
gates are used apart, and LSTM with peepholes split the projection and R per gate, so that
their element-wise code reads whole arrays (XLA's CPU loops over many column blocks of one
array are several times slower). Measured on this project's machine against both
alternatives, at batch 1 to 64.

Shapes: x ``[n, Bx, I]`` in step order, w ``[G*H, I]`` and r ``[G*H, H]`` (the ONNX
operators' layout: products contract the weights' last axis, so no transposed copy is made,
and a gate's block is a block of rows), wb/rb ``[G*H]``, peepholes ``[3H]``, initial states
``[Bh, H]``; returns ``Y [n, B, H]`` and the final states.
"""

from __future__ import annotations

import os

import numpy as np

from ...common.rnn import RnnAttrs
from ._util import precision


def _sigmoid(x):
    from jax import lax

    return lax.logistic(x)


_OVERRIDES = {"sigmoid": _sigmoid}


LAYOUT_ENV = "ITERGRAPH_RNN_LAYOUT"  # "row" or "gate": force one layout (for measuring)
TRANSPOSED_R_BATCH = 2  # from this batch on, steps multiply by R transposed once per run
CHUNK_ABOVE = 8 << 20  # a larger input projection is computed chunk by chunk ...
CHUNK_BYTES = 2 << 20  # ... of about this size
CHUNK_MIN, CHUNK_MAX = 8, 32  # steps per chunk


class _Rec:
    """The recurrent weights R (ONNX layout ``[G*H, H]``) as a step multiplies by them:
    ``mm(h, block(lo, hi))`` is ``h @ R[lo:hi]^T``. A batch of one contracts R's last axis as
    it is (a matrix-vector product: no copy, the transposed operand costs nothing); from
    `TRANSPOSED_R_BATCH` on, R is transposed once per run (XLA's CPU matrix products with a
    transposed right operand measured up to 2x slower there)."""

    def __init__(self, r, batch: int):
        self.transposed = batch >= TRANSPOSED_R_BATCH
        self.r = r.T if self.transposed else r

    def block(self, lo: int, hi: int):
        return self.r[:, lo:hi] if self.transposed else self.r[lo:hi]

    def mm(self, h, m):
        import jax.numpy as jnp

        if self.transposed:
            return jnp.matmul(h, m, precision=precision())
        return _mm(h, m)


def _mm(h, m):
    """``h @ m^T`` (m: rows of the ONNX-layout weights) without transposing m."""
    from jax import lax

    return lax.dot_general(h, m, (((h.ndim - 1,), (1,)), ((), ())), precision=precision())


def _row_step(at: RnnAttrs, act, fns, r, rb_h, p, H: int, G: int):
    """A step reading the gates' input projection as one ``[B, G*H]`` row block."""
    mm, full = r.mm, r.block(0, G * H)

    if at.op == "LSTM":
        f, g, hh = act(0), act(1), fns[2]

        def step(carry, xk):
            h, c = carry
            gates = xk + mm(h, full)
            s = f(gates[:, :3 * H])
            c = s[:, 2 * H:] * c + s[:, :H] * g(gates[:, 3 * H:])
            h = s[:, H:2 * H] * hh(c)
            return (h, c), h
    elif at.op == "GRU":
        f, g = act(0), act(1)
        lbr = at.linear_before_reset
        rzr, rh = (full, None) if lbr else (r.block(0, 2 * H), r.block(2 * H, 3 * H))

        def step(carry, xk):
            (h,) = carry
            lin = mm(h, rzr)
            zr = f(xk[:, :2 * H] + lin[:, :2 * H])
            z, rg = zr[:, :H], zr[:, H:]
            if lbr:
                lin = lin[:, 2 * H:] if rb_h is None else lin[:, 2 * H:] + rb_h
                nn = g(xk[:, 2 * H:] + rg * lin)
            else:
                nn = g(xk[:, 2 * H:] + mm(rg * h, rh))
            h = nn + z * (h - nn)
            return (h,), h
    else:
        f = act(0)

        def step(carry, xk):
            h = f(xk + mm(carry[0], full))
            return (h,), h
    return step


def _gate_step(at: RnnAttrs, act, fns, r, rb_h, p, H: int, G: int):
    """A step reading one ``[B, H]`` input projection and multiplying by one block of R
    per gate."""
    mm = r.mm
    rs = tuple(r.block(k * H, (k + 1) * H) for k in range(G))
    if at.op == "LSTM":
        f, g, hh = act(0), act(1), fns[2]

        def step(carry, xk):
            h, c = carry
            gi, go, gf, gc = (xk[k] + mm(h, rs[k]) for k in range(4))
            if p is not None:
                gi, gf = gi + p[0] * c, gf + p[2] * c
            i = f(gi)
            fg = 1 - i if at.input_forget else f(gf)
            c = fg * c + i * g(gc)
            if p is not None:
                go = go + p[1] * c
            h = f(go) * hh(c)
            return (h, c), h
    elif at.op == "GRU":
        f, g = act(0), act(1)
        lbr = at.linear_before_reset

        def step(carry, xk):
            (h,) = carry
            z = f(xk[0] + mm(h, rs[0]))
            rg = f(xk[1] + mm(h, rs[1]))
            if lbr:
                lin = mm(h, rs[2])
                if rb_h is not None:
                    lin = lin + rb_h
                nn = g(xk[2] + rg * lin)
            else:
                nn = g(xk[2] + mm(rg * h, rs[2]))
            h = nn + z * (h - nn)
            return (h,), h
    else:
        f = act(0)

        def step(carry, xk):
            h = f(xk[0] + mm(carry[0], rs[0]))
            return (h,), h
    return step


def chunk_length(n: int, step_bytes: int) -> int | None:
    """Steps per chunk of the input projection (None: project all `n` steps at once).

    Projecting every step up front writes and rereads a ``[n, B, G*H]`` array: once it no
    longer fits the caches, the scan waits on memory (measured up to 2.5x slower at 64 x 512
    floats per step, 256 steps). Above `CHUNK_ABOVE` bytes, a chunk of about `CHUNK_BYTES` is
    projected right before its steps (the nested scan costs some compile time, so smaller
    projections are not chunked); a length dividing `n` is preferred (else the last steps run
    in a scan of their own)."""
    if n * step_bytes <= CHUNK_ABOVE or n < 2 * CHUNK_MIN:
        return None
    k = max(CHUNK_MIN, min(CHUNK_MAX, CHUNK_BYTES // max(step_bytes, 1)))
    for d in range(k, CHUNK_MIN - 1, -1):
        if n % d == 0:
            return d
    return k


def _steps(step, states, xs, project, k: int | None):
    """(final states, Y) of `step` over every step of `xs` (an array or a tuple of arrays
    with the steps along their first axis), projected by `project` all at once or `k` steps
    at a time (an outer scan over chunks, an inner one over their steps)."""
    import jax
    import jax.numpy as jnp

    tree = jax.tree_util.tree_map
    n = jax.tree_util.tree_leaves(xs)[0].shape[0]
    if n == 1:
        finals, y = step(states, tree(lambda a: a[0], project(xs)))
        return finals, y[None]
    if k is None:
        return jax.lax.scan(step, states, project(xs))
    full = n // k * k

    def chunk(carry, xc):
        return jax.lax.scan(step, carry, project(xc))

    finals, ys = jax.lax.scan(chunk, states,
                              tree(lambda a: a[:full].reshape(n // k, k, *a.shape[1:]), xs))
    ys = ys.reshape(full, *ys.shape[2:])
    if full < n:
        finals, tail = jax.lax.scan(step, finals, project(tree(lambda a: a[full:], xs)))
        ys = jnp.concatenate([ys, tail])
    return finals, ys


def _with_mask(step, n_states: int, output: bool):
    """`step` reading ``(projection, mask row [B])``: an entry whose mask is false keeps its
    states; with `output`, the carry ends with the layer's output, which takes the new h
    where the mask holds and is what the step emits (`passes.cells.mask`)."""
    import jax.numpy as jnp

    def masked(carry, inp):
        xk, m = inp
        m = m[:, None]
        states = carry[:n_states]
        new, y = step(states, xk)
        new = tuple(jnp.where(m, a, b) for a, b in zip(new, states))
        if not output:
            return new, new[0]
        out = jnp.where(m, y, carry[n_states])
        return (*new, out), out

    return masked


def _zero_empty(states, lens):
    """`states` ``[B, H]`` with the entries of length zero zeroed (the final states ONNX
    Runtime and OpenVINO give an entry that runs no step)."""
    import jax.numpy as jnp

    keep = (jnp.asarray(lens) > 0)[:, None]
    return tuple(jnp.where(keep, s, jnp.zeros((), s.dtype)) for s in states)


def _with_lengths(step, lens):
    """`step` for entries of lengths `lens` ``[B]``, reading ``(projection, t)``: past its
    length an entry keeps its state and its output is zero."""
    import jax.numpy as jnp

    def masked(carry, inp):
        xk, t = inp
        new, y = step(carry, xk)
        m = (t < lens)[:, None]
        new = tuple(jnp.where(m, a, b) for a, b in zip(new, carry))
        return new, jnp.where(m, y, jnp.zeros((), y.dtype))

    return masked


def _steps_upto(step, states, xs, project, length):
    """(final states, Y) of the first `length` steps (a traced scalar) of `xs`, Y zero past
    them: a while loop that stops at `length`, for lengths that are the same for every entry
    (a padded run, `analysis.padding`), where masking every step would run them all."""
    import jax
    import jax.numpy as jnp

    xw = project(xs)
    n = jax.tree_util.tree_leaves(xs)[0].shape[0]
    ys = jnp.zeros((n, *states[0].shape), states[0].dtype)

    def body(t, carry):
        states, ys = carry
        new, y = step(states, jax.tree_util.tree_map(lambda a: a[t], xw))
        return new, jax.lax.dynamic_update_index_in_dim(ys, y.astype(ys.dtype), t, 0)

    return jax.lax.fori_loop(0, jnp.minimum(length, n), body, (states, ys))


def scan_direction(at: RnnAttrs, d: int, x, w, r, wb, rb, peep, h0, c0, lens=None,
                   mask=None, o0=None, fill: bool = False, uniform: bool = False):
    """(Y, final h, final c or None) of direction `d` (see the module docstring); with
    `lens` (``[B]``, the entries' lengths), steps past an entry's length keep its state and
    write zeros, and an entry of length zero ends with zero states (`x` in the order the
    steps read it); with `mask` (``[n, B]`` boolean, step order) an entry keeps its states
    at a step whose mask is false, and with `o0` Y is the layer's output (`o0` until the
    entry's first unmasked step, or with `fill` wherever the mask is false;
    `passes.cells.mask`). `uniform`: every entry of `lens` is the same (`_steps_upto`)."""
    import jax.numpy as jnp

    H = r.shape[1]
    G = at.kind.gates
    dt = x.dtype
    n, bx = x.shape[0], x.shape[1]
    B = int(np.broadcast_shapes((bx,), (h0.shape[0],),
                                *(() if c0 is None else ((c0.shape[0],),)),
                                *(() if mask is None else ((mask.shape[1],),)))[0])
    clip = at.clip
    fns = [a.build(jnp, _OVERRIDES) for a in at.activations[d]]

    def act(k):
        f = fns[k]
        return f if clip is None else (lambda v: f(jnp.clip(v, -clip, clip)))

    lbr = at.op == "GRU" and at.linear_before_reset
    bias = None
    for part, keep in ((wb, None), (rb, 2 * H if lbr else None)):
        if part is None:
            continue
        part = jnp.asarray(part)
        if keep is not None:  # GRU linear_before_reset: R_bh stays inside r * (...)
            part = jnp.concatenate([part[:keep], jnp.zeros((G * H - keep,), part.dtype)])
        bias = part if bias is None else bias + part
    rb_h = jnp.asarray(rb)[2 * H:] if lbr and rb is not None else None
    r = jnp.asarray(r)
    p = None if peep is None else tuple(jnp.asarray(peep)[k * H:(k + 1) * H] for k in range(3))
    whole = p is None and not (at.op == "LSTM" and at.input_forget)
    forced = os.environ.get(LAYOUT_ENV)
    whole = whole and (forced == "row" if forced else at.op != "GRU")
    step = (_row_step if whole else _gate_step)(at, act, fns, _Rec(r, B), rb_h, p, H, G)

    def project(xc):
        """The input projection of the steps `xc` ``[k, bx, I]``: one row block or one
        array per gate."""
        k = xc.shape[0]
        xw = _mm(xc.reshape(k * bx, -1), w).reshape(k, bx, G * H)
        if bias is not None:
            xw = xw + bias
        return xw if whole else tuple(xw[..., g * H:(g + 1) * H] for g in range(G))

    states = [jnp.broadcast_to(jnp.asarray(h0, dt), (B, H))]
    if c0 is not None:
        states.append(jnp.broadcast_to(jnp.asarray(c0, dt), (B, H)))
    k = chunk_length(n, bx * G * H * 4)
    if mask is not None:
        ns, output = len(states), o0 is not None and not fill
        if output:
            states.append(jnp.broadcast_to(jnp.asarray(o0, dt), (B, H)))
        finals, ys = _steps(_with_mask(step, ns, output), tuple(states), (x, mask),
                            lambda xm: (project(xm[0]), xm[1]), k)
        finals = finals[:ns]
        if fill and o0 is not None:
            ys = jnp.where(mask[:, :, None], ys, jnp.asarray(o0, dt))
    elif lens is None:
        finals, ys = _steps(step, tuple(states), x, project, k)
    elif uniform:
        finals, ys = _steps_upto(step, tuple(states), x, project, jnp.asarray(lens)[0])
        finals = _zero_empty(finals, lens)
    else:
        finals, ys = _steps(_with_lengths(step, lens), tuple(states),
                            (x, jnp.arange(n, dtype=jnp.asarray(lens).dtype)),
                            lambda xt: (project(xt[0]), xt[1]), k)
        finals = _zero_empty(finals, lens)
    return ys.astype(dt), finals[0].astype(dt), (finals[1].astype(dt) if c0 is not None
                                                   else None)

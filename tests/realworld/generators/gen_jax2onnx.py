"""Real-world corpus source ``jax2onnx``: small JAX programs with loops, converted to ONNX by
jax2onnx (``jax2onnx.to_onnx``), a converter this repository was not tuned on.

The forms: ``lax.scan`` (carry and stacked outputs, reverse, length 0, no scanned input,
pytrees, unrolled), ``lax.fori_loop`` with static bounds and counted while loops with
run-time bounds, ``lax.while_loop``
with data-dependent trip counts (Newton, Collatz, gcd, bisection, a sliding window read by
``lax.dynamic_slice`` at a run-time start), ``lax.cond`` / ``lax.switch`` alone and inside
loops, ``jax.vmap`` around a scan and a while loop, nested scans and loops, flax ``nnx``
recurrent cells (LSTM, GRU, simple, optimized LSTM) stepped by ``lax.scan``, cumulative
ops, and small decoders whose caches and token buffers are updated by
``lax.dynamic_update_slice``. Each entry stores its feeds and JAX's own outputs
(``jax.jit`` of the program; ``oracle="framework"``), and ``peer`` records how ONNX Runtime
and OpenVINO's ONNX frontend fared on the file (each in a child process, so a crash is a
result). Programs run in float32 / int32 (JAX's defaults); a few inputs have symbolic
dimensions (``jax.export.symbolic_shape``), so the file keeps them dynamic.

What jax2onnx 0.17.1 does not convert is written around, and said where: flax's
``nnx.RNN`` wrapper (its ``nnx.scan`` refuses tracing by jax2onnx's ``make_jaxpr``: "Cannot
mutate RngCount from a different trace level"), so the cells are stepped by ``lax.scan``;
``lax.scan(..., reverse=True)`` ("Reverse scan is not supported"), so backward scans run
over the flipped input; ``fori_loop`` with a run-time bound or a body that closes over a
traced value (a TracerArrayConversionError), so counted loops with run-time bounds are the
while loop JAX makes of them (`repeat`); ``lax.switch`` with more than two branches; and
``jnp.cumprod`` (written as ``CumProd``, not an ONNX op, so ONNX Runtime refuses the file).

Where ONNX Runtime computes something else than JAX on the file, the entry's outputs are
ONNX Runtime's (``oracle="onnxruntime"``, said in its description): a scan over a symbolic
axis fed with length 0 gives its stacked output the shape the loop body declares, unknown
dimensions 0, in ONNX Runtime and OpenVINO alike, where JAX knows the batch size.

Run by hand from the repository root (see README.md here for the environment)::

    OMP_NUM_THREADS=1 python tests/realworld/generators/gen_jax2onnx.py [name ...]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

# --------------------------------------------------------------------------------------------
# the generator proper (imports JAX)
# --------------------------------------------------------------------------------------------
import contextlib  # noqa: E402
import io  # noqa: E402
import warnings  # noqa: E402

import flax  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax2onnx  # noqa: E402
import jaxlib  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime  # noqa: E402
import openvino as ov  # noqa: E402
from flax import nnx  # noqa: E402
from jax import export, lax  # noqa: E402
from jax2onnx import to_onnx  # noqa: E402
from peer_record import run_peer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_writer import ROOT, Corpus  # noqa: E402

warnings.filterwarnings("ignore")
SOURCE = "jax2onnx"
CONTROL_FLOW = {"Loop", "Scan", "If"}
f32, i32 = jnp.float32, jnp.int32


# --------------------------------------------------------------------------------------------
# the programs: lax.scan
# --------------------------------------------------------------------------------------------

def scan_carry_stacked(x):
    """A tanh recurrence over the leading axis: the last state and every state x 2."""
    def body(c, xt):
        c = jnp.tanh(c * 0.8 + xt)
        return c, c * 2.0
    return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)


def scan_reverse(x):
    """A decaying sum from the last row backwards, states stacked in the input's order:
    ``lax.scan`` over ``x[::-1]``, outputs flipped back (jax2onnx 0.17.1 refuses
    ``reverse=True``: "Reverse scan is not supported in IR pipeline")."""
    def body(c, xt):
        c = c * 0.5 + xt
        return c, c
    c, ys = lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), jnp.flip(x, 0))
    return c, jnp.flip(ys, 0)


def scan_length_only(x):
    """No scanned input (``xs=None, length=6``): a Fibonacci-like pair, the first stacked."""
    def body(c, _):
        a, b = c
        return (b, a + b * 0.5), a
    return lax.scan(body, (x, x * 0.5), None, length=6)


def scan_multi_xs(x, w):
    """Two carries updated together from two scanned inputs; their difference stacked."""
    def body(c, xw):
        a, b = c
        xt, wt = xw
        a2 = a + b * wt
        b2 = jnp.sin(a) + xt
        return (a2, b2), a2 - b2
    init = (jnp.zeros(x.shape[1:], x.dtype), jnp.ones(x.shape[1:], x.dtype))
    return lax.scan(body, init, (x, w))


def scan_unrolled(x):
    """``unroll=3`` on a length-7 scan (JAX emits three steps per iteration, then the rest)."""
    def body(c, xt):
        c = c * 0.9 + jnp.cos(xt)
        return c, c.sum()
    return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x, unroll=3)


def scan_pytree(x, y):
    """A dict of scanned inputs and a dict carry; a tuple of stacked outputs."""
    def body(c, xs):
        s = c["s"] + xs["a"] * xs["b"]
        m = jnp.maximum(c["m"], xs["a"])
        return {"s": s, "m": m}, (s, m - s)
    init = {"s": jnp.zeros(x.shape[1:], x.dtype), "m": jnp.full(x.shape[1:], -10.0, x.dtype)}
    return lax.scan(body, init, {"a": x, "b": y})


def scan_carry_only(x):
    """A scan whose body stacks nothing (``ys=None``): only the carry comes out."""
    def body(c, xt):
        return c * xt + 0.5, None
    c, _ = lax.scan(body, jnp.ones(x.shape[1:], x.dtype), x)
    return c


def scan_int_counter(x):
    """An int32 counter of positive rows carried with a float running mean."""
    def body(c, xt):
        n, mean = c
        pos = (xt.sum() > 0).astype(i32)
        n = n + pos
        mean = jnp.where(pos > 0, mean + (xt - mean) / jnp.maximum(n, 1).astype(f32), mean)
        return (n, mean), n
    return lax.scan(body, (jnp.int32(0), jnp.zeros(x.shape[1:], x.dtype)), x)


def lax_map_rows(x, w):
    """``lax.map`` over the rows of x (a scan without carry): a small MLP per row."""
    return lax.map(lambda r: jnp.tanh(r @ w).sum() * r, x)


# --------------------------------------------------------------------------------------------
# fori_loop and while_loop
# --------------------------------------------------------------------------------------------

def repeat(n, body, init):
    """``lax.fori_loop(0, n, body, init)`` for a run-time n, written as the while loop JAX
    makes of it (jax2onnx 0.17.1 converts ``fori_loop`` only with static bounds)."""
    return lax.while_loop(lambda s: s[0] < n, lambda s: (s[0] + 1, body(s[0], s[1])),
                          (jnp.int32(0), init))[1]


def fori_static(x):
    """``fori_loop(0, 7, ...)``: static bounds, which JAX lowers to a scan."""
    return lax.fori_loop(0, 7, lambda i, v: v * 0.9 + i.astype(f32) * 0.1, x)


def fori_dynamic(x, n):
    """A loop ``for i in range(n)`` with n an input (`repeat`): a while loop on a counter."""
    return repeat(n, lambda i, v: jnp.sin(v) + i.astype(f32) * 0.1, x)


def fori_row_writes(x):
    """``h = h.at[i].set(tanh(h[i - 1] + x[i]))`` for i from 1 (static bounds): reads and
    writes by index. x travels in the carry (jax2onnx 0.17.1 cannot convert a fori_loop
    body that closes over a traced input)."""
    def body(i, s):
        h, xs = s
        return h.at[i].set(jnp.tanh(h[i - 1] + xs[i])), xs
    return lax.fori_loop(1, x.shape[0], body, (x, x))[0]


def while_counter(x, n):
    """``while i < n``: a counter and a state; both out."""
    def cond(s):
        return s[0] < n

    def body(s):
        i, y = s
        return i + 1, y * 1.5 + 0.1
    return lax.while_loop(cond, body, (jnp.int32(0), x))


def while_zero_trips(x, n):
    """The same shape of loop with n = 0: the body never runs."""
    return while_counter(x, n)


def while_newton(a):
    """Newton's iteration for sqrt until the update is below 1e-5; the step count too."""
    def cond(s):
        return (jnp.abs(s[1]).max() > 1e-5) & (s[2] < 50)

    def body(s):
        y, _, k = s
        new = 0.5 * (y + a / y)
        return new, new - y, k + 1
    y, _, k = lax.while_loop(cond, body, (jnp.ones_like(a), jnp.ones_like(a), jnp.int32(0)))
    return y, k


def while_collatz(x):
    """Elementwise Collatz steps on int32 until every value is 1; the step counts."""
    def cond(s):
        return (s[0] > 1).any()

    def body(s):
        v, steps = s
        active = v > 1
        nxt = jnp.where(v % 2 == 0, v // 2, 3 * v + 1)
        return jnp.where(active, nxt, v), steps + active.astype(i32)
    return lax.while_loop(cond, body, (x, jnp.zeros_like(x)))


def while_gcd(a, b):
    """Euclid's algorithm elementwise on int32 pairs while any remainder is nonzero."""
    def cond(s):
        return (s[1] != 0).any()

    def body(s):
        a, b = s
        nz = b != 0
        r = jnp.where(nz, a % jnp.where(nz, b, 1), b)
        return jnp.where(nz, b, a), jnp.where(nz, r, 0)
    return lax.while_loop(cond, body, (a, b))[0]


def while_bisection(c, tol):
    """Bisection for x**3 = c on [0, 4] until the bracket is narrower than tol."""
    def cond(s):
        return (s[1] - s[0]).max() > tol

    def body(s):
        lo, hi, it = s
        mid = (lo + hi) * 0.5
        up = mid * mid * mid > c
        return jnp.where(up, lo, mid), jnp.where(up, mid, hi), it + 1
    lo, hi, it = lax.while_loop(cond, body, (jnp.zeros_like(c), jnp.full_like(c, 4.0),
                                             jnp.int32(0)))
    return (lo + hi) * 0.5, it


def while_sliding_window(x, t):
    """A window of 3 read by ``lax.dynamic_slice`` at a run-time start that advances by 1
    or 2 (data-dependent), until the window means sum past t or the window runs out."""
    n = x.shape[0]

    def cond(s):
        i, acc, _ = s
        return (i + 3 <= n) & (acc < t)

    def body(s):
        i, acc, k = s
        w = lax.dynamic_slice(x, (i,), (3,))
        step = jnp.where(w[0] > 0, 2, 1).astype(i32)
        return i + step, acc + w.mean(), k + 1
    return lax.while_loop(cond, body, (jnp.int32(0), jnp.float32(0.0), jnp.int32(0)))


def while_window_rows(x, limit):
    """A window of 2 rows (``dynamic_slice`` on axis 0 of a 2-D input at a run-time start),
    its column maxima accumulated, while the accumulated norm stays under limit."""
    n = x.shape[0]

    def cond(s):
        i, acc = s
        return (i + 2 <= n) & (jnp.sqrt((acc * acc).sum()) < limit)

    def body(s):
        i, acc = s
        w = lax.dynamic_slice(x, (i, 0), (2, x.shape[1]))
        return i + 1, acc + w.max(axis=0)
    return lax.while_loop(cond, body, (jnp.int32(0), jnp.zeros(x.shape[1], x.dtype)))


def while_flag_carry(x, n):
    """An int, a float state and a bool flag carried; the flag stops the loop early."""
    def cond(s):
        i, _, done = s
        return (i < n) & ~done

    def body(s):
        i, y, _ = s
        y = y * 1.3 + 0.05
        return i + 1, y, y.max() > 3.0
    return lax.while_loop(cond, body, (jnp.int32(0), x, jnp.bool_(False)))


def matrix_power(a, k):
    """Matrix power by squaring: ``while k > 0`` with a ``lax.cond`` on k odd."""
    def cond(s):
        return s[2] > 0

    def body(s):
        r, b, kk = s
        r = lax.cond(kk % 2 == 1, lambda: r @ b, lambda: r)
        return r, b @ b, kk // 2
    return lax.while_loop(cond, body, (jnp.eye(a.shape[0], dtype=a.dtype), a, k))[0]


# --------------------------------------------------------------------------------------------
# cond and switch
# --------------------------------------------------------------------------------------------

def cond_scalar(x):
    """``lax.cond`` on ``x.sum() > 0``: a scaled copy or a sine with another shape path."""
    return lax.cond(x.sum() > 0, lambda v: v * 2.0 + 1.0, lambda v: jnp.sin(v) - 1.0, x)


def switch_index(x, k):
    """``lax.switch`` on an int32 index input over two branches (clamped by JAX; jax2onnx
    0.17.1 converts two-branch switches only), the second inside a loop on k."""
    return lax.switch(k, [lambda v: v + 1.0,
                          lambda v: repeat(k, lambda i, u: jnp.tanh(u) * 3.0, v)], x)


def cond_in_scan(x):
    """``lax.cond`` in a scan body on the current row's sum."""
    def body(c, xt):
        c = lax.cond(xt.sum() > 0, lambda: c + xt, lambda: c * 0.5 - xt)
        return c, c.sum()
    return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)


def switch_in_fori(x, n):
    """Three ways on ``i % 3`` (a ``lax.cond`` nested in a ``lax.switch``) in a loop with a
    run-time bound."""
    def step(i, v):
        return lax.switch(jnp.minimum(i % 3, 1), [
            lambda u: u * 0.5 + 1.0,
            lambda u: lax.cond(i % 3 == 1, jnp.cos, lambda w: w - w.mean(), u)], v)
    return repeat(n, step, x)


def loops_in_cond(x, n):
    """A counted loop in one branch of a cond, a data-dependent ``while_loop`` in the other."""
    def up(v):
        return repeat(n, lambda i, u: u - 0.1 * i.astype(f32), v)

    def down(v):
        return lax.while_loop(lambda u: u.sum() < 0, lambda u: u + 0.5, v)
    return lax.cond(x.sum() > 0, up, down, x)


# --------------------------------------------------------------------------------------------
# vmap and nesting
# --------------------------------------------------------------------------------------------

def vmap_scan(x):
    """``jax.vmap`` over the batch of a scan written for one sequence."""
    def one(seq):
        def body(c, xt):
            c = jnp.tanh(c + xt * 0.5)
            return c, c
        return lax.scan(body, jnp.zeros(seq.shape[1:], seq.dtype), seq)
    return jax.vmap(one)(x)


def vmap_while(x, n):
    """``jax.vmap`` over a while loop whose trip count differs per row (n per row)."""
    def one(v, m):
        return lax.while_loop(lambda s: s[0] < m, lambda s: (s[0] + 1, s[1] * 0.7 + 1.0),
                              (jnp.int32(0), v))[1]
    return jax.vmap(one)(x, n)


def nested_scan(x):
    """A scan over the outer axis whose body scans the inner axis."""
    def inner(c, xt):
        c = c * 0.5 + xt
        return c, c
    def outer(h, row):
        c, ys = lax.scan(inner, h, row)
        return c * 0.9, ys.sum(0)
    return lax.scan(outer, jnp.zeros(x.shape[2:], x.dtype), x)


def while_in_scan(x):
    """Per row: halve until the norm is at most 1 (a while loop in a scan body); counts."""
    def body(c, row):
        def cond(s):
            return jnp.sqrt((s[0] * s[0]).sum()) > 1.0

        def step(s):
            return s[0] * 0.5, s[1] + 1
        r, k = lax.while_loop(cond, step, (row, jnp.int32(0)))
        return c + r, k
    return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)


def scan_in_while(x, n):
    """A while loop on a counter whose body runs a cumulative scan over the rows."""
    def body(s):
        i, v = s
        _, ys = lax.scan(lambda c, r: (c + r, jnp.tanh(c + r)), jnp.zeros_like(v[0]), v)
        return i + 1, ys * 0.5
    return lax.while_loop(lambda s: s[0] < n, body, (jnp.int32(0), x))[1]


def triple_nested(x, n):
    """Three levels: a loop on n (`repeat`) around a scan over rows around
    ``fori_loop(0, 2)``."""
    def row_step(c, r):
        r = lax.fori_loop(0, 2, lambda k, u: u * 0.9 + k.astype(f32) * 0.01, r + c)
        return c * 0.5 + r.mean(), r
    def outer(i, v):
        _, rows = lax.scan(row_step, jnp.float32(0.0), v)
        return rows + i.astype(f32) * 0.01
    return repeat(n, outer, x)


# --------------------------------------------------------------------------------------------
# flax nnx recurrent cells stepped by lax.scan
# --------------------------------------------------------------------------------------------

def _cell_scan(cell, carry_of):
    def run(x):
        carry, ys = lax.scan(lambda c, xt: cell(c, xt), carry_of(x), x)
        return ys, carry
    return run


def nnx_lstm():
    """``nnx.LSTMCell(3, 5)`` over a time-major input; outputs stacked, (c, h) out."""
    cell = nnx.LSTMCell(3, 5, rngs=nnx.Rngs(0))
    return _cell_scan(cell, lambda x: (jnp.zeros((x.shape[1], 5)), jnp.zeros((x.shape[1], 5))))


def nnx_optimized_lstm():
    """``nnx.OptimizedLSTMCell(4, 6)``: the fused-gate LSTM, over time."""
    cell = nnx.OptimizedLSTMCell(4, 6, rngs=nnx.Rngs(1))
    return _cell_scan(cell, lambda x: (jnp.zeros((x.shape[1], 6)), jnp.zeros((x.shape[1], 6))))


def nnx_gru():
    """``nnx.GRUCell(3, 4)`` over a time-major input."""
    cell = nnx.GRUCell(3, 4, rngs=nnx.Rngs(2))
    return _cell_scan(cell, lambda x: jnp.zeros((x.shape[1], 4)))


def nnx_simple_reverse():
    """``nnx.SimpleCell(3, 4)`` over time backwards (flipped, as `scan_reverse`)."""
    cell = nnx.SimpleCell(3, 4, rngs=nnx.Rngs(3))

    def run(x):
        carry, ys = lax.scan(lambda c, xt: cell(c, xt), jnp.zeros((x.shape[1], 4)),
                             jnp.flip(x, 0))
        return jnp.flip(ys, 0), carry
    return run


def nnx_lstm_masked():
    """An LSTM cell over padded sequences: the state is kept where t >= length."""
    cell = nnx.LSTMCell(3, 4, rngs=nnx.Rngs(4))

    def run(x, lengths):
        def body(c, xt_t):
            xt, t = xt_t
            new, y = cell(c, xt)
            keep = (t < lengths)[:, None]
            c2 = tuple(jnp.where(keep, a, b) for a, b in zip(new, c))
            return c2, jnp.where(keep, y, 0.0)
        z = jnp.zeros((x.shape[1], 4))
        carry, ys = lax.scan(body, (z, z), (x, jnp.arange(x.shape[0], dtype=i32)))
        return ys, carry
    return run


def nnx_gru_decoder():
    """A GRU cell fed back its own projected output for n steps (`repeat`)."""
    cell = nnx.GRUCell(3, 5, rngs=nnx.Rngs(5))
    proj = nnx.Linear(5, 3, rngs=nnx.Rngs(6))

    def run(h, n):
        def body(i, s):
            h, x = s
            h, y = cell(h, x)
            return h, jnp.tanh(proj(y))
        return repeat(n, body, (h, jnp.zeros((h.shape[0], 3))))
    return run


# --------------------------------------------------------------------------------------------
# cumulative ops
# --------------------------------------------------------------------------------------------

def cumsum_in_fori(x, n):
    """``jnp.cumsum`` on both axes and a reversed ``lax.cumsum`` in a loop body."""
    def body(i, v):
        a = jnp.cumsum(v, axis=0)
        b = lax.cumsum(v, axis=1, reverse=True)
        return jnp.tanh(a - b) + jnp.maximum(v, 0.0)
    return repeat(n, body, x)


def cumulative_scan(x):
    """A running sum written as a scan next to ``jnp.cumsum``, and ``cummax``. (jax2onnx
    0.17.1 writes ``jnp.cumprod`` as a ``CumProd`` node, an op no ONNX opset it targets
    has: ONNX Runtime refuses the file, so cumprod is left out.)"""
    _, by_scan = lax.scan(lambda c, r: (c + r, c + r), jnp.zeros(x.shape[1:], x.dtype), x)
    return by_scan - jnp.cumsum(x, axis=0), lax.cumsum(by_scan, axis=1, reverse=True), \
        lax.cummax(x, axis=0)


def cumlogsumexp_in_scan(x):
    """``lax.cumlogsumexp`` and ``lax.cummin`` on the carried state in a scan."""
    def body(c, xt):
        c = lax.cumlogsumexp(c + xt, axis=0) * 0.3
        return c, lax.cummin(c, axis=0)
    return lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)


# --------------------------------------------------------------------------------------------
# decoders with dynamic_update_slice
# --------------------------------------------------------------------------------------------

def _weights(seed, *shape, scale=0.5):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def decoder_kv_cache(start, steps_left):
    """Greedy decoding with single-head attention over a key/value cache: at step t the new
    key and value go into row t of the caches (``lax.dynamic_update_slice``), the query
    attends to rows <= t, the argmax is the next token; tokens written the same way."""
    emb, wq, wk, wv, wo = (_weights(10, 7, 4), _weights(11, 4, 4), _weights(12, 4, 4),
                           _weights(13, 4, 4), _weights(14, 4, 7))
    total = 6

    def body(t, s):
        tok, kc, vc, toks = s
        h = jnp.asarray(emb)[tok]
        kc = lax.dynamic_update_slice(kc, (h @ wk)[None], (t, 0))
        vc = lax.dynamic_update_slice(vc, (h @ wv)[None], (t, 0))
        score = jnp.where(jnp.arange(total) <= t, kc @ (h @ wq) / 2.0, -1e9)
        ctx = jax.nn.softmax(score) @ vc
        nxt = jnp.argmax(ctx @ wo + h @ wo).astype(i32)
        return nxt, kc, vc, lax.dynamic_update_slice(toks, nxt[None], (t,))
    zeros = jnp.zeros((total, 4))
    init = (start, zeros, zeros, jnp.zeros((total,), i32))
    _, kc, vc, toks = repeat(jnp.minimum(steps_left, total), body, init)
    return toks, kc, vc


def greedy_eos_while(h, max_len):
    """Batched greedy decoding in a while loop: a tanh cell, argmax tokens written at column
    t by ``dynamic_update_slice``, rows stop at EOS (token 0); stops when all rows have."""
    emb, wh, wo = _weights(20, 6, 5), _weights(21, 5, 5), _weights(22, 5, 6)
    width = 8

    def cond(s):
        t, _, _, done, _ = s
        return (t < jnp.minimum(max_len, width)) & ~done.all()

    def body(s):
        t, h, tok, done, toks = s
        h = jnp.tanh(h @ wh + jnp.asarray(emb)[tok])
        nxt = jnp.where(done, 0, jnp.argmax(h @ wo, axis=-1).astype(i32))
        toks = lax.dynamic_update_slice(toks, nxt[:, None], (0, t))
        return t + 1, h, nxt, done | (nxt == 0), toks
    b = h.shape[0]
    init = (jnp.int32(0), h, jnp.ones((b,), i32), jnp.zeros((b,), bool),
            jnp.zeros((b, width), i32))
    t, h, _, _, toks = lax.while_loop(cond, body, init)
    return toks, t, h


def scan_buffer_writes(x):
    """A carried buffer with a carried write position: rows whose sum is positive are
    appended at the position (``dynamic_update_slice``), the count out too."""
    def body(c, row):
        buf, pos = c
        take = row.sum() > 0
        buf = lax.cond(take, lambda: lax.dynamic_update_slice(buf, row[None], (pos, 0)),
                       lambda: buf)
        return (buf, pos + take.astype(i32)), pos
    (buf, pos), seen = lax.scan(body, (jnp.zeros_like(x), jnp.int32(0)), x)
    return buf, pos, seen


def attention_steps(q, k, v):
    """Dot-product attention one query at a time (a scan over the queries)."""
    def body(c, qt):
        w = jax.nn.softmax(k @ qt / 2.0)
        return c + w.max(), w @ v
    return lax.scan(body, jnp.float32(0.0), q)


def topk_in_scan(x):
    """``lax.top_k`` of the carried best values and the new row at each step."""
    def body(best, row):
        vals, _ = lax.top_k(jnp.concatenate([best, row]), best.shape[0])
        return vals, vals.sum()
    return lax.scan(body, jnp.full((3,), -5.0, x.dtype), x)


# --------------------------------------------------------------------------------------------
# the case table
# --------------------------------------------------------------------------------------------

@dataclass
class Case:
    """One program: how to get it, its feeds, which inputs get symbolic shapes (a JAX
    shape spec string), the output names, and the opset jax2onnx writes."""

    name: str
    fn: Callable  # the program, or (``make=True``) a function returning it
    feeds: Callable[[np.random.Generator], dict]
    tags: tuple
    description: str
    outputs: list
    symbolic: dict | None = None
    opset: int = 23
    make: bool = False
    rtol: float = 1e-4
    atol: float = 1e-5


def fl(rng, *shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def it(v):
    return np.array(v, dtype=np.int32)


CASES = [
    Case("scan_carry_stacked", scan_carry_stacked, lambda r: {"x": fl(r, 6, 2, 3)},
         ("scan",), "lax.scan: tanh recurrence, last carry and stacked states", ["c", "ys"],
         {"x": "T, B, 3"}),
    Case("scan_carry_stacked_op18", scan_carry_stacked, lambda r: {"x": fl(r, 5, 3)},
         ("scan",), "the same scan at opset 18, static shapes", ["c", "ys"], opset=18),
    Case("scan_reverse", scan_reverse, lambda r: {"x": fl(r, 5, 3)}, ("scan", "reverse"),
         "a scan from the last row backwards (over the flipped input, outputs flipped back)",
         ["c", "ys"], {"x": "T, 3"}),
    Case("scan_zero_length", scan_carry_stacked, lambda r: {"x": fl(r, 0, 3)},
         ("scan", "empty"), "lax.scan over a static length-0 axis", ["c", "ys"]),
    Case("scan_zero_length_dynamic", scan_carry_stacked, lambda r: {"x": fl(r, 0, 2, 3)},
         ("scan", "empty"), "lax.scan over a symbolic axis fed with length 0: after no "
         "iteration the stacked output's batch axis, unknown in the loop body, has no value "
         "in the file", ["c", "ys"],
         {"x": "T, B, 3"}),
    Case("scan_length_only", scan_length_only, lambda r: {"x": fl(r, 2, 3)}, ("scan",),
         "lax.scan(f, init, None, length=6): no scanned input", ["a", "b", "ys"]),
    Case("scan_multi_xs", scan_multi_xs, lambda r: {"x": fl(r, 4, 3), "w": fl(r, 4, 3)},
         ("scan", "state"), "two carries updated together from two scanned inputs",
         ["a", "b", "ys"], opset=21),
    Case("scan_unrolled", scan_unrolled, lambda r: {"x": fl(r, 7, 3)}, ("scan",),
         "lax.scan(..., unroll=3) over 7 rows", ["c", "sums"]),
    Case("scan_pytree", scan_pytree, lambda r: {"x": fl(r, 5, 2), "y": fl(r, 5, 2)},
         ("scan", "state"), "dicts of scanned inputs and carries, a tuple of stacked outputs",
         ["m", "s", "ys_s", "ys_d"]),
    Case("scan_carry_only", scan_carry_only, lambda r: {"x": fl(r, 6, 4)}, ("scan",),
         "a scan that stacks nothing (ys=None)", ["c"], {"x": "T, 4"}, opset=19),
    Case("scan_int_counter", scan_int_counter, lambda r: {"x": fl(r, 7, 3)},
         ("scan", "state"), "an int32 counter and a float running mean carried",
         ["n", "mean", "ns"]),
    Case("lax_map_rows", lax_map_rows, lambda r: {"x": fl(r, 5, 3), "w": fl(r, 3, 4)},
         ("scan", "map_fn"), "lax.map over rows: a scan without carry", ["y"]),
    Case("fori_static", fori_static, lambda r: {"x": fl(r, 2, 3)}, ("loop",),
         "fori_loop(0, 7, ...) with static bounds", ["y"]),
    Case("fori_dynamic", fori_dynamic, lambda r: {"x": fl(r, 2, 3), "n": it(6)},
         ("loop", "while"),
         "for i in range(n) with n an int32 input, as JAX's while loop on a counter", ["y"],
         opset=18),
    Case("fori_row_writes", fori_row_writes, lambda r: {"x": fl(r, 5, 3)},
         ("loop", "index_put"), "h.at[i].set(tanh(h[i - 1] + x[i])) for i in 1..T-1", ["h"]),
    Case("while_counter", while_counter, lambda r: {"x": fl(r, 2, 3), "n": it(5)},
         ("while",), "while i < n, counter and state out", ["i", "y"]),
    Case("while_zero_trips", while_zero_trips, lambda r: {"x": fl(r, 2, 3), "n": it(0)},
         ("while", "empty"), "while i < n with n = 0: no iteration", ["i", "y"]),
    Case("while_newton", while_newton, lambda r: {"a": fl(r, 2, 4, lo=0.5, hi=9.0)},
         ("while",), "Newton's sqrt until the update is below 1e-5", ["y", "steps"]),
    Case("while_collatz", while_collatz,
         lambda r: {"x": r.integers(1, 30, size=(2, 4)).astype(np.int32)},
         ("while",), "elementwise Collatz on int32 until all values are 1", ["y", "steps"],
         opset=17),
    Case("while_gcd", while_gcd,
         lambda r: {"a": r.integers(1, 90, size=6).astype(np.int32),
                    "b": r.integers(1, 90, size=6).astype(np.int32)},
         ("while",), "Euclid's gcd elementwise on int32", ["g"]),
    Case("while_bisection", while_bisection,
         lambda r: {"c": fl(r, 3, lo=0.5, hi=30.0), "tol": np.array(1e-3, np.float32)},
         ("while",), "bisection for the cube root until the bracket is below tol",
         ["root", "iters"]),
    Case("while_sliding_window", while_sliding_window,
         lambda r: {"x": fl(r, 12), "t": np.array(1.5, np.float32)},
         ("while", "dynamic_slice"), "a window of 3 read by lax.dynamic_slice at a run-time "
         "start that advances by 1 or 2; stops on a threshold or at the end",
         ["i", "acc", "steps"]),
    Case("while_window_rows", while_window_rows,
         lambda r: {"x": fl(r, 7, 3), "limit": np.array(4.0, np.float32)},
         ("while", "dynamic_slice"), "a 2-row window by lax.dynamic_slice on a 2-D input "
         "at a run-time start; column maxima accumulated under a norm limit", ["i", "acc"],
         opset=18),
    Case("while_flag_carry", while_flag_carry, lambda r: {"x": fl(r, 3), "n": it(20)},
         ("while", "break", "state"), "a bool flag carried that stops the loop early",
         ["i", "y", "done"]),
    Case("matrix_power", matrix_power,
         lambda r: {"a": fl(r, 3, 3, lo=-0.6, hi=0.6), "k": it(11)}, ("while", "cond"),
         "matrix power by squaring: while k > 0 with lax.cond on k odd", ["r"]),
    Case("cond_scalar", cond_scalar, lambda r: {"x": fl(r, 2, 3, lo=-1.0, hi=0.2)},
         ("cond",), "lax.cond on x.sum() > 0 (the else branch taken)", ["y"]),
    Case("switch_index", switch_index, lambda r: {"x": fl(r, 2, 3), "k": it(3)},
         ("cond",), "lax.switch over two branches on an int32 input, a loop in the second",
         ["y"]),
    Case("cond_in_scan", cond_in_scan, lambda r: {"x": fl(r, 6, 3)}, ("scan", "cond"),
         "lax.cond in a scan body on the row's sum", ["c", "sums"], {"x": "T, 3"}),
    Case("switch_in_fori", switch_in_fori, lambda r: {"x": fl(r, 2, 3), "n": it(7)},
         ("loop", "cond"), "lax.switch / lax.cond on i % 3 in a loop with a run-time bound",
         ["y"]),
    Case("loops_in_cond", loops_in_cond,
         lambda r: {"x": fl(r, 2, 3, lo=-1.0, hi=-0.1), "n": it(4)}, ("while", "cond"),
         "a counted loop and a while_loop in the branches of a cond (the while taken)", ["y"]),
    Case("vmap_scan", vmap_scan, lambda r: {"x": fl(r, 3, 5, 2)}, ("scan", "vmap"),
         "jax.vmap around a scan over one sequence", ["c", "ys"]),
    Case("vmap_while", vmap_while, lambda r: {"x": fl(r, 4, 2), "n": it([0, 3, 1, 5])},
         ("while", "vmap"), "jax.vmap around a while loop with a trip count per row", ["y"]),
    Case("nested_scan", nested_scan, lambda r: {"x": fl(r, 3, 4, 2)}, ("scan", "nested"),
         "a scan over the outer axis whose body scans the inner axis", ["h", "ys"]),
    Case("while_in_scan", while_in_scan, lambda r: {"x": fl(r, 4, 3, lo=-3.0, hi=3.0)},
         ("scan", "while", "nested"), "halve each row until its norm <= 1: a while in a scan",
         ["acc", "counts"]),
    Case("scan_in_while", scan_in_while, lambda r: {"x": fl(r, 4, 3), "n": it(3)},
         ("while", "scan", "nested"), "a cumulative scan in a while loop on a counter", ["y"]),
    Case("triple_nested", triple_nested, lambda r: {"x": fl(r, 3, 2), "n": it(2)},
         ("loop", "scan", "nested"), "a counted loop around a scan around fori_loop(0, 2)", ["y"]),
    Case("nnx_lstm", nnx_lstm, lambda r: {"x": fl(r, 6, 2, 3)}, ("scan", "lstm"),
         "flax nnx.LSTMCell stepped by lax.scan", ["ys", "c", "h"], make=True),
    Case("nnx_optimized_lstm", nnx_optimized_lstm, lambda r: {"x": fl(r, 5, 2, 4)},
         ("scan", "lstm"), "flax nnx.OptimizedLSTMCell stepped by lax.scan",
         ["ys", "c", "h"], make=True, opset=18),
    Case("nnx_gru", nnx_gru, lambda r: {"x": fl(r, 6, 2, 3)}, ("scan", "gru"),
         "flax nnx.GRUCell stepped by lax.scan", ["ys", "h"], {"x": "T, 2, 3"}, make=True),
    Case("nnx_simple_reverse", nnx_simple_reverse, lambda r: {"x": fl(r, 5, 2, 3)},
         ("scan", "rnn", "reverse"), "flax nnx.SimpleCell over time backwards",
         ["ys", "h"], make=True),
    Case("nnx_lstm_masked", nnx_lstm_masked,
         lambda r: {"x": fl(r, 6, 3, 3), "lengths": it([6, 2, 4])},
         ("scan", "lstm", "masking"), "LSTM cell over padded sequences with lengths",
         ["ys", "c", "h"], make=True),
    Case("nnx_gru_decoder", nnx_gru_decoder, lambda r: {"h": fl(r, 2, 5), "n": it(5)},
         ("loop", "gru", "decoder"), "a GRU cell fed its own projected output n times",
         ["h_out", "y"], make=True),
    Case("cumsum_in_fori", cumsum_in_fori, lambda r: {"x": fl(r, 3, 4), "n": it(3)},
         ("loop", "cumulative"), "cumsum on both axes, one reversed, in a loop", ["y"]),
    Case("cumulative_scan", cumulative_scan, lambda r: {"x": fl(r, 5, 3)},
         ("scan", "cumulative"),
         "a scanned running sum against jnp.cumsum; a reversed cumsum, cummax",
         ["diff", "rsum", "mx"]),
    Case("cumlogsumexp_in_scan", cumlogsumexp_in_scan, lambda r: {"x": fl(r, 4, 5)},
         ("scan", "cumulative"), "lax.cumlogsumexp and lax.cummin in a scan body",
         ["c", "mins"], opset=21),
    Case("decoder_kv_cache", decoder_kv_cache,
         lambda r: {"start": it(3), "steps": it(6)}, ("loop", "decoder", "cache"),
         "greedy decoding with attention over a key/value cache written by "
         "lax.dynamic_update_slice at row t", ["tokens", "k_cache", "v_cache"]),
    Case("decoder_kv_cache_short", decoder_kv_cache,
         lambda r: {"start": it(5), "steps": it(3)}, ("loop", "decoder", "cache"),
         "the same decoder stopped after 3 of 6 steps", ["tokens", "k_cache", "v_cache"],
         opset=19),
    Case("greedy_eos_while", greedy_eos_while,
         lambda r: {"h": fl(r, 3, 5), "max_len": it(8)}, ("while", "decoder", "break"),
         "batched greedy decoding with per-row EOS; tokens by dynamic_update_slice",
         ["tokens", "t", "h_out"]),
    Case("scan_buffer_writes", scan_buffer_writes, lambda r: {"x": fl(r, 6, 3)},
         ("scan", "cond", "index_put"), "rows with a positive sum appended into a carried "
         "buffer at a carried position", ["buf", "pos", "seen"]),
    Case("attention_steps", attention_steps,
         lambda r: {"q": fl(r, 3, 4), "k": fl(r, 5, 4), "v": fl(r, 5, 2)}, ("scan",),
         "dot-product attention one query at a time", ["wmax", "y"]),
    Case("topk_in_scan", topk_in_scan, lambda r: {"x": fl(r, 6, 4)}, ("scan", "topk"),
         "lax.top_k of the carried best values and each new row", ["best", "sums"]),
]


# --------------------------------------------------------------------------------------------
# convert and record
# --------------------------------------------------------------------------------------------

def control_flow(graph: onnx.GraphProto) -> set:
    found = set()
    for node in graph.node:
        if node.op_type in CONTROL_FLOW:
            found.add(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found |= control_flow(attr.g)
            for g in attr.graphs:
                found |= control_flow(g)
    return found


def specs(case: Case, feeds: dict) -> list:
    """The input specs: concrete shapes, or symbolic ones sharing one scope."""
    scope = export.SymbolicScope()
    out = []
    for name, value in feeds.items():
        shape = value.shape
        if case.symbolic and name in case.symbolic:
            shape = export.symbolic_shape(case.symbolic[name], scope=scope)
        out.append(jax.ShapeDtypeStruct(shape, value.dtype))
    return out


@contextlib.contextmanager
def quiet():
    """jax2onnx logs its plugin choices; keep the generator's log readable."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        yield


def first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:300]


class Generator:
    def __init__(self):
        versions = {
            "jax": jax.__version__, "jaxlib": jaxlib.__version__,
            "flax": flax.__version__, "onnx": onnx.__version__,
            "onnxruntime": onnxruntime.__version__, "openvino": ov.__version__,
            "converter": f"jax2onnx {jax2onnx_version()}",
        }
        self.corpus = Corpus(SOURCE, versions)
        self.failures: list[str] = []

    def convert(self, case: Case):
        fn = case.fn() if case.make else case.fn
        seed = sum(map(ord, case.name))
        feeds = case.feeds(np.random.default_rng(seed))
        expected = [np.asarray(v) for v in
                    jax.tree_util.tree_leaves(jax.jit(fn)(*feeds.values()))]
        if len(expected) != len(case.outputs):
            self.failures.append(f"{case.name}: JAX gives {len(expected)} outputs, the case "
                                 f"names {len(case.outputs)}; left out")
            return
        path = self.corpus.path(case.name, ".onnx")
        try:
            with quiet():
                model = to_onnx(fn, specs(case, feeds), model_name=case.name,
                                opset=case.opset, input_names=list(feeds),
                                output_names=case.outputs)
        except Exception as exc:  # noqa: BLE001 - a converter failure is reported, not fatal
            self.failures.append(f"{case.name}: jax2onnx: {first_line(exc)}")
            return
        onnx.save(model, str(path))
        self.add(case, path, model, feeds, expected)

    def add(self, case: Case, path: Path, model: onnx.ModelProto, feeds: dict,
            expected: list):
        kinds = control_flow(model.graph)
        if not kinds:
            self.failures.append(f"{case.name}: converted without Loop / Scan / If; left out")
            path.unlink()
            return
        weights = {t.name for t in model.graph.initializer}
        names = [i.name for i in model.graph.input if i.name not in weights]
        if names != list(feeds):
            self.failures.append(f"{case.name}: the file's inputs {names} are not the "
                                 f"program's {list(feeds)}; left out")
            path.unlink()
            return
        peer = self.peers(case, path, feeds, expected)
        oracle, desc = "framework", case.description
        if peer["onnxruntime"].startswith("mismatch"):
            # the file computes something else than JAX: its own semantics, as ONNX Runtime
            # runs it, are what a converter must keep
            sess = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
            desc += (f" (jax2onnx's file computes something else than JAX (ONNX Runtime on it: "
                     f"{peer['onnxruntime']}); the expected outputs are ONNX Runtime's)")
            expected = [np.asarray(v) for v in sess.run(None, feeds)]
            oracle = "onnxruntime"
            peer = self.peers(case, path, feeds, expected)
        version = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
        self.corpus.add(case.name, path, feeds, expected,
                        converter=f"jax2onnx {jax2onnx_version()} (jax2onnx.to_onnx)",
                        opset=version, oracle=oracle, rtol=case.rtol, atol=case.atol,
                        tags=case.tags, description=desc,
                        output_names=[o.name for o in model.graph.output], peer=peer)
        print(f"  {case.name}: {sorted(kinds)} {path.stat().st_size} B {peer}", flush=True)

    @staticmethod
    def peers(case: Case, path: Path, feeds: dict, expected: list) -> dict:
        return {rt: run_peer(rt, path, feeds, expected, case.rtol, case.atol).replace(
            f"{ROOT}/", "") for rt in ("onnxruntime", "openvino")}

    def run(self):
        only = set(sys.argv[1:])
        for case in CASES:
            if only and case.name not in only:
                continue
            print(f"[jax2onnx] {case.name}", flush=True)
            self.convert(case)
        self.corpus.save()
        ok = {"onnxruntime": 0, "openvino": 0}
        for m in self.corpus.models:
            for rt, res in m["peer"].items():
                ok[rt] += res == "ok"
        print(f"\n{SOURCE}: {len(self.corpus.models)} entries; peers ok {ok}")
        print(f"conversion failures and notes ({len(self.failures)}):")
        for line in self.failures:
            print("  " + line)


def jax2onnx_version() -> str:
    from importlib.metadata import version

    return getattr(jax2onnx, "__version__", None) or version("jax2onnx")


if __name__ == "__main__":
    Generator().run()

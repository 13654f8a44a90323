"""Rules of the two ``itergraph`` ops `passes.lower_sampling` builds for ONNX Runtime's
``Sampling``: ``SamplingUniforms`` (the uniform numbers of NumPy's generator, drawn on the
host by a callback inside the program) and ``TopPFilter`` (ORT's top-p filtering, with a
fast path that needs no sort of the vocabulary where the kept tokens are among the few
largest). Their NumPy kernels, which define them, are in
`backends.numpy.kernels.gen_sampling`."""

from __future__ import annotations

import numpy as np

from ..table import lowering
from .extra import _small_top_k

#: how many of the largest scores the top-p fast path looks at (max passes)
FAST_K = 8


@lowering("SamplingUniforms", domain="itergraph")
def _sampling_uniforms(cx, input_ids, max_length, seed=None):
    """``[max_length - S, B]`` float64 (`semantics.generation.sampling_uniforms`: NumPy's
    generator, which XLA does not have) by a host callback, once per run; the shape is known
    while tracing (max_length specialises the program). The numbers cross as pairs of uint32
    words: a 64-bit callback result is refused where the program is called outside JAX's
    64-bit mode (`fast_call`, for 32-bit feeds)."""
    import jax

    from ....errors import InputError, where
    from ....semantics.generation import NEGATIVE_SEED, sampling_uniforms

    rows, prompt = input_ids.shape
    steps = max(cx.ints(max_length, "max_length (input 1)")[0] - prompt, 0)
    out = jax.ShapeDtypeStruct((steps, rows, 2), np.uint32)

    def draw(s):
        u = np.ascontiguousarray(sampling_uniforms(s, steps, rows), "<f8")
        return u.view("<u4").reshape(steps, rows, 2)

    seed = cx.xp.asarray(0 if seed is None else seed).reshape(-1)[:1]
    of = str(cx.attr("of", where(cx.node)))
    cx.tc.check(cx.frame, (seed < 0).any(), f"{of}: {NEGATIVE_SEED}", InputError)
    words = jax.pure_callback(draw, out, seed)
    return jax.lax.bitcast_convert_type(words, np.float64)


@lowering("TopPFilter", domain="itergraph")
def _top_p_filter(cx, s):
    """``gen_sampling.top_p_filter`` of the scores `s` [rows, vocab] float32: the tokens
    whose cumulative probability in ascending order is at most ``1 - top_p`` set to
    ``filter_value``, but for the ``min_tokens_to_keep`` largest. The filtered tokens are all
    but the T largest (ties: the higher index is the larger, as an ascending stable sort
    orders them). Where T and ``min_tokens_to_keep`` are at most `FAST_K` for every row (the
    usual case: the nucleus is a few tokens), T comes from the `FAST_K` largest alone (the
    mass above the t-th largest, ``P_t``, against ``top_p``: ``1 - P_t <= 1 - top_p``);
    else from the sorted row (``lax.cond``). Cumulative sums in float64; their rounding may
    differ from NumPy's."""
    import jax
    import jax.numpy as jnp

    top_p = float(cx.attr("top_p"))
    keep = int(cx.attr("min_tokens_to_keep", 1))
    fill = np.float32(cx.attr("filter_value", -np.inf))
    rows, vocab = s.shape
    thr = np.float64(1.0 - top_p)
    s64 = s.astype(np.float64)
    e = jnp.exp(s64 - s64.max(axis=1, keepdims=True))
    z = e.sum(axis=1, keepdims=True)
    col = jnp.arange(vocab)
    # -0 and +0 are equal scores (NumPy's sort ties them), not two places of the bits order
    # top_k sorts by
    key = jnp.where(s == 0, np.float32(0), s)

    def cut(count, tv, ti):
        """Keep the `count` [rows, 1] largest; (tv, ti): the smallest kept's value, index."""
        kept = (s > tv) | ((s == tv) & (col[None] >= ti))
        return jnp.where((count > 0) & kept, s, fill)

    def fast(ops):
        v, idx, t0 = ops
        count = jnp.clip(jnp.maximum(t0, keep), 1, v.shape[1])
        at = count - 1
        return cut(count, jnp.take_along_axis(v, at, 1), jnp.take_along_axis(idx, at, 1))

    def full(_):
        v, order = jax.lax.top_k(-key, vocab)               # ascending, ties: lower index
        v = -v
        c = jnp.cumsum(jnp.take_along_axis(e / z, order, 1), axis=1)
        m = jnp.minimum((c <= thr).sum(axis=1, keepdims=True), max(vocab - keep, 0))
        at = jnp.clip(m, 0, vocab - 1)
        return cut(vocab - m, jnp.take_along_axis(v, at, 1), jnp.take_along_axis(order, at, 1))

    k = min(FAST_K, vocab)
    if keep > k:
        return full(None)
    v, j = _small_top_k(key[:, ::-1], k)                    # ties: the higher index first
    p = jnp.exp(v.astype(np.float64) - s64.max(axis=1, keepdims=True)) / z
    above = jnp.concatenate([jnp.zeros((rows, 1)), jnp.cumsum(p, axis=1)[:, :-1]], 1)
    hit = 1.0 - above <= thr                                # [rows, k]
    t0 = jnp.argmax(hit, axis=1)[:, None]                   # the first t, [rows, 1]
    return jax.lax.cond(hit.any(axis=1).all(), fast, full, (v, vocab - 1 - j, t0))

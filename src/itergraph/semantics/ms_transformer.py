"""ONNX Runtime's fused transformer operators (domain ``com.microsoft``, plus
``SimplifiedLayerNormalization`` which ONNX Runtime registers in the standard domain), as its
transformer optimizer writes them into GPT-2 / BERT / T5 graphs; written once over an array
module ``xp`` (NumPy or ``jax.numpy``):

- ``SkipLayerNormalization(input, skip, gamma, beta?, bias?)``: ``s = input + skip (+ bias)``,
  then layer normalization of ``s`` over its last axis:
  ``(s - mean) * inv_std_var * gamma (+ beta)`` with
  ``inv_std_var = 1 / sqrt(mean((s - mean)^2) + epsilon)`` (``epsilon`` default 1e-12).
  ``input`` is 3-D ``(B, S, H)`` or 2-D ``(T, H)``; ``skip`` has the input's shape, or for a
  3-D input ``(1, S, H)`` or ``(S, H)`` (broadcast over the batch); ``gamma``, ``beta``,
  ``bias`` are ``(H,)``. Optional outputs: ``mean`` and ``inv_std_var`` (float32, the input's
  shape with last axis 1) and ``input_skip_bias_sum`` (``s``).
- ``SkipSimplifiedLayerNormalization(input, skip, gamma, bias?)``: the same with RMS
  normalization, ``s * inv_std_var * gamma`` with ``inv_std_var = 1 / sqrt(mean(s^2) +
  epsilon)``; its ``mean`` output is zeros (ONNX Runtime writes 0 there).
- ``SimplifiedLayerNormalization(X, scale)`` (standard domain): RMS normalization over the
  axes from ``axis`` (default -1) on, ``epsilon`` default 1e-5, computed in ``stash_type``
  (float32 by default); outputs ``Y`` and ``inv_std_var`` (kept dims).
- ``Gelu(X)``: ``0.5 * x * (1 + erf(x / sqrt(2)))``; ``BiasGelu(A, B)``: ``Gelu(A + B)``.
- ``FastGelu(X, bias?)``: ``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))`` of
  ``x = X (+ bias)``.
- ``QuickGelu(X)``: ``x * sigmoid(alpha * x)``, ``alpha`` default 1.702.
- ``BiasAdd(X, bias, skip)``: ``X + bias + skip`` for ``X``, ``skip`` of shape ``(N, S, C)``
  and ``bias`` of shape ``(C,)``.

Half-precision inputs are computed in float32 and the result cast back, as ONNX Runtime's CPU
kernels do. Shapes ONNX Runtime refuses raise `ModelError` naming the node.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError, UnsupportedError, where
from ..ir.attributes import attr
from ..ir.graph import MICROSOFT_DOMAIN

DOMAIN = MICROSOFT_DOMAIN
SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
QUICK_GELU_ALPHA = 1.702
SKIP_NORM_EPSILON = 1e-12
SIMPLIFIED_NORM_EPSILON = 1e-5


def work_dtype(dtype) -> np.dtype:
    """float32 for half-precision types, else `dtype` itself."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype.itemsize < 4 else dtype


def _refuse(node, msg: str):
    raise ModelError(f"{where(node)}: {msg}")


# ---------------------------------------------------------------------------- layer norms


def check_skip_norm(node, x, skip, gamma, beta=None, bias=None) -> None:
    """The shapes ONNX Runtime accepts for ``Skip(Simplified)LayerNormalization``."""
    if x.ndim not in (2, 3):
        _refuse(node, f"input must be 2-D or 3-D, got shape {tuple(x.shape)}")
    if skip.ndim not in (2, 3):
        _refuse(node, f"skip must be 2-D or 3-D, got shape {tuple(skip.shape)}")
    ok = tuple(skip.shape) == tuple(x.shape)
    if not ok and x.ndim == 3:
        ok = tuple(skip.shape[-2:]) == tuple(x.shape[-2:]) and (skip.ndim == 2 or
                                                                skip.shape[0] == 1)
    if not ok:
        _refuse(node, f"skip of shape {tuple(skip.shape)} does not match input of shape "
                      f"{tuple(x.shape)} (same shape, or (1, S, H) / (S, H))")
    hidden = x.shape[-1]
    for name, v in (("gamma", gamma), ("beta", beta), ("bias", bias)):
        if v is not None and (v.ndim != 1 or v.shape[0] != hidden):
            _refuse(node, f"{name} must have shape ({hidden},), got {tuple(v.shape)}")


def skip_sum(xp, x, skip, bias=None, wd=None):
    """``input + skip (+ bias)`` in the type `wd` (default the input's); the
    ``input_skip_bias_sum`` output is it in the input's type."""
    wd = x.dtype if wd is None else wd
    s = x.astype(wd) + skip.astype(wd)
    if bias is not None:
        s = s + bias.astype(wd)
    return s


def _normalize(xp, s, axes, eps: float, simplified: bool, wd):
    """``(mean, inv_std_var, normalized)`` of `s` over `axes` in the type `wd`."""
    s = s.astype(wd)
    if simplified:
        mean = xp.zeros(s.shape[:len(s.shape) - len(axes)] + (1,) * len(axes), wd)
        d = s
    else:
        mean = xp.mean(s, axis=axes, keepdims=True)
        d = s - mean
    inv = 1 / xp.sqrt(xp.mean(d * d, axis=axes, keepdims=True) + np.asarray(eps, wd))
    return mean, inv, d * inv


normalize = _normalize  # shared with `ms_embed_norm`


def skip_layer_norm(node, xp, x, skip, gamma, beta=None, bias=None, *,
                    simplified: bool = False) -> tuple:
    """``Skip(Simplified)LayerNormalization``: ``(output, mean, inv_std_var,
    input_skip_bias_sum)``, cut to the node's output count."""
    check_skip_norm(node, x, skip, gamma, beta, bias)
    eps = float(attr(node, "epsilon", SKIP_NORM_EPSILON))
    wd = work_dtype(x.dtype)
    s = skip_sum(xp, x, skip, bias, wd)
    mean, inv, y = _normalize(xp, s, (s.ndim - 1,), eps, simplified, wd)
    y = y * gamma.astype(wd)
    if beta is not None:
        y = y + beta.astype(wd)
    outs = (y.astype(x.dtype), mean.astype(np.float32), inv.astype(np.float32),
            s.astype(x.dtype))
    return outs[:max(1, len(node.outputs))]


def simplified_layer_norm(node, xp, x, scale) -> tuple:
    """``SimplifiedLayerNormalization``: ``(Y, inv_std_var)``, cut to the output count."""
    r = x.ndim
    axis = int(attr(node, "axis", -1))
    if not -r <= axis < r:
        _refuse(node, f"axis {axis} out of range for an input of rank {r}")
    eps = float(attr(node, "epsilon", SIMPLIFIED_NORM_EPSILON))
    stash = np.float64 if int(attr(node, "stash_type", 1)) == 11 else np.float32
    wd = np.promote_types(stash, work_dtype(x.dtype))
    _, inv, y = _normalize(xp, x, tuple(range(axis % r, r)), eps, True, wd)
    y = (y * scale.astype(wd)).astype(x.dtype)
    outs = (y, inv.astype(stash))
    return outs[:max(1, len(node.outputs))]


# ---------------------------------------------------------------------------- activations


def _in_work(fn):
    """`fn(xp, x, ...)` computed in the work type of `x` and cast back."""

    def wrapped(xp, x, *args, **kw):
        wd = work_dtype(x.dtype)
        return fn(xp, x.astype(wd), *args, **kw).astype(x.dtype)

    wrapped.__doc__ = fn.__doc__
    return wrapped


@_in_work
def gelu(xp, x, erf):
    """``0.5 * x * (1 + erf(x / sqrt(2)))`` (`erf` the backend's error function)."""
    half = np.asarray(0.5, x.dtype)
    return half * x * (1 + erf(x * np.asarray(1 / math.sqrt(2), x.dtype)))


@_in_work
def fast_gelu(xp, x):
    """``0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))``."""
    k = np.asarray(SQRT_2_OVER_PI, x.dtype)
    c = np.asarray(0.044715, x.dtype)
    return np.asarray(0.5, x.dtype) * x * (1 + xp.tanh(k * (x + c * x * x * x)))


@_in_work
def quick_gelu(xp, x, alpha: float):
    """``x * sigmoid(alpha * x)``, the sigmoid as ``(1 + tanh(v / 2)) / 2`` (no overflow)."""
    half = np.asarray(0.5, x.dtype)
    return x * (half + half * xp.tanh(x * np.asarray(alpha * 0.5, x.dtype)))


def check_bias(node, x, bias, name: str = "bias") -> None:
    """`bias` must be 1-D of the input's last dimension."""
    if x.ndim < 1 or bias.ndim != 1 or bias.shape[0] != x.shape[-1]:
        _refuse(node, f"{name} must be 1-D of the input's last dimension "
                      f"{x.shape[-1] if x.ndim else None}, got shape {tuple(bias.shape)}")


def gelu_node(node, xp, x, erf):
    """``Gelu`` (com.microsoft)."""
    return gelu(xp, x, erf)


def bias_gelu_node(node, xp, a, b, erf):
    """``BiasGelu``: ``Gelu(A + B)``, B 1-D of A's last dimension."""
    check_bias(node, a, b, "B")
    wd = work_dtype(a.dtype)
    return gelu(xp, a.astype(wd) + b.astype(wd), erf).astype(a.dtype)


def fast_gelu_node(node, xp, x, bias=None):
    """``FastGelu``: the tanh approximation of ``X (+ bias)``, bias 1-D of the last dimension."""
    dtype = x.dtype
    if bias is not None:
        check_bias(node, x, bias)
        wd = work_dtype(dtype)
        x = x.astype(wd) + bias.astype(wd)
    return fast_gelu(xp, x).astype(dtype)


def quick_gelu_node(node, xp, x):
    """``QuickGelu``: ``x * sigmoid(alpha * x)``."""
    return quick_gelu(xp, x, float(attr(node, "alpha", QUICK_GELU_ALPHA)))


def bias_add_node(node, xp, x, bias, skip):
    """``BiasAdd``: ``X + bias + skip``, X and skip ``(N, S, C)``, bias ``(C,)``."""
    if x.ndim != 3:
        _refuse(node, f"X must be 3-D (N, S, C), got shape {tuple(x.shape)}")
    check_bias(node, x, bias)
    if tuple(skip.shape) != tuple(x.shape):
        _refuse(node, f"skip must have X's shape {tuple(x.shape)}, got {tuple(skip.shape)}")
    return x + bias + skip


# ---------------------------------------------------------------------------- Attention

MASK_FILTER_VALUE = -10000.0


def _attention_sizes(node, w) -> tuple[int, int, int]:
    """The hidden sizes of Q, K and V (``qkv_hidden_sizes``, else a third of W's columns)."""
    sizes = attr(node, "qkv_hidden_sizes", None)
    if sizes is not None and len(list(sizes)):
        sizes = [int(s) for s in sizes]
        if len(sizes) != 3:
            _refuse(node, f"qkv_hidden_sizes must have 3 entries, got {sizes}")
    else:
        if w.shape[1] % 3:
            _refuse(node, f"weights' second dimension {w.shape[1]} is not divisible by 3")
        sizes = [w.shape[1] // 3] * 3
    if sum(sizes) != w.shape[1]:
        _refuse(node, f"qkv_hidden_sizes {sizes} do not sum to the weights' second "
                      f"dimension {w.shape[1]}")
    return tuple(sizes)


def _heads(xp, t, n: int):
    """``(B, S, n * d) -> (B, n, S, d)``."""
    b, s, hd = t.shape
    return xp.transpose(xp.reshape(t, (b, s, n, hd // n)), (0, 2, 1, 3))


def attention_mask(node, xp, mask, batch: int, seq: int, total: int, causal: bool, dtype,
                   valid=None):
    """The additive mask ``(B, 1, S, T)`` of ``mask_index`` and ``unidirectional``: 0 where a
    query may attend to a key, ``mask_filter_value`` where it may not. ``mask_index`` is a
    raw 0/1 mask ``(B, T)`` or ``(B, S, T)`` (0 masks), or key lengths ``(B)`` (keys from the
    length on masked), or ``(2B)`` (end positions, then start positions: keys before the
    start masked too), or ``(3B + 2)`` of which ONNX Runtime's CPU kernel reads the first
    ``B`` entries as key lengths (the rest are start offsets other kernels use). With
    ``unidirectional`` a query at position ``i`` (after the past's ``P = T - S`` keys) sees
    keys ``j <= P + i``: later keys get the type's lowest value, so that a query whose
    visible keys are all masked (left padding) spreads its weight over
    those keys only, as ONNX Runtime's CPU kernel does.

    `valid` (a run-time count, default `total`): only the first `valid` of the `total` keys
    are keys (a fixed-capacity cache buffer); ``P = valid - S`` and the keys from `valid` on
    get ``-inf``, so their softmax weight is exactly 0."""
    fill = np.asarray(float(attr(node, "mask_filter_value", MASK_FILTER_VALUE)), dtype)
    zero = np.asarray(0, dtype)
    add = None
    if mask is not None:
        keys = xp.arange(total)
        shape = tuple(mask.shape)
        if shape == (batch, total):
            keep = (mask > 0)[:, None, :]
        elif shape == (batch, seq, total):
            keep = mask > 0
        elif shape in ((batch,), (3 * batch + 2,)):
            keep = (keys[None, :] < mask[:batch, None])[:, None, :]
        elif shape == (2 * batch,):
            end, start = mask[:batch, None], mask[batch:, None]
            keep = ((keys[None, :] < end) & (keys[None, :] >= start))[:, None, :]
        else:
            raise UnsupportedError(f"{where(node)}: mask_index of shape {shape} is not "
                                   f"supported ((B, T), (B, S, T), (B), (2B) or (3B + 2) with "
                                   f"B={batch}, "
                                   f"S={seq}, T={total})")
        add = xp.where(keep, zero, fill)
    if causal:
        lowest = np.asarray(np.finfo(dtype).min, dtype)
        if valid is None:
            future = np.arange(total)[None, :] > total - seq + np.arange(seq)[:, None]
            add = np.where(future, lowest, zero)[None] if add is None else \
                xp.where(future[None], lowest, add)
        else:
            future = xp.arange(total)[None, :] > valid - seq + xp.arange(seq)[:, None]
            add = xp.where(future, lowest, zero)[None] if add is None else \
                xp.where(future[None], lowest, add)
    if valid is not None:
        beyond = (xp.arange(total) >= valid)[None, None, :]
        add = xp.where(beyond, np.asarray(-np.inf, dtype), zero if add is None else add)
    return None if add is None else add[:, None]


def attend(node, xp, matmul, q, k, v, mask, attention_bias, head_size: int, dtype,
           valid=None):
    """``softmax(q k^T * scale + mask + attention_bias) v`` over heads ``[B, N, S, H]``:
    `scale` the node's or ``1 / sqrt(head_size)``, the mask as `attention_mask` reads it
    (with the node's ``unidirectional``). `valid`: only the first `valid` keys and values
    hold any (a fixed-capacity buffer, `attention_mask`); the others weigh exactly 0 and
    their values are read as 0, so whatever the buffer holds there cannot reach the
    result."""
    batch, seq, total = q.shape[0], q.shape[2], k.shape[2]
    if valid is not None:
        v = xp.where((xp.arange(total) < valid)[:, None], v, np.asarray(0, v.dtype))
    scale = float(attr(node, "scale", 0.0)) or 1.0 / math.sqrt(head_size)
    scores = matmul(q, xp.swapaxes(k, -1, -2)) * np.asarray(scale, dtype)
    add = attention_mask(node, xp, mask, batch, seq, total,
                         bool(int(attr(node, "unidirectional", 0))), dtype, valid)
    if add is not None:
        scores = scores + add
    if attention_bias is not None:
        scores = scores + attention_bias
    scores = scores - xp.max(scores, axis=-1, keepdims=True)
    e = xp.exp(scores)
    return matmul(e / xp.sum(e, axis=-1, keepdims=True), v)


def concat_past(xp, past, k, v):
    """Keys and values after the past's: ``(K, V, valid)``, `valid` None (all of them)."""
    return (xp.concatenate([past[0].astype(k.dtype), k], axis=2),
            xp.concatenate([past[1].astype(v.dtype), v], axis=2), None)


def attention_node(node, xp, x, w, bias=None, mask=None, past=None, attention_bias=None,
                   past_sequence_length=None, *, matmul=None, append=concat_past):
    """``Attention`` (com.microsoft): multi-head self-attention with the merged Q/K/V
    projection ``x @ weights + bias`` split by ``qkv_hidden_sizes``; each head
    ``softmax(scale * Q K^T + mask (+ attention_bias)) V`` with ``scale`` default
    ``1 / sqrt(head_size)``; with ``past`` ``(2, B, N, P, head_size)`` the keys and values
    follow the past's, and ``present`` is the concatenation. Returns ``(output, present)``
    cut to the node's output count. Refused: rotary embedding, a shared past/present buffer,
    4-D masks.

    ``append(xp, past, k, v) -> (K, V, valid)`` puts the new keys and values after the
    past's (`concat_past`); a fixed-capacity past writes them at its valid length instead
    and says how many keys are valid (`attend`): ``present`` is then that buffer."""
    matmul = matmul or xp.matmul
    for name in ("do_rotary", "past_present_share_buffer"):
        if int(attr(node, name, 0)):
            raise UnsupportedError(f"{where(node)}: attribute {name} is not supported")
    if past_sequence_length is not None:
        raise UnsupportedError(f"{where(node)}: past_sequence_length (a shared past/present "
                               "buffer) is not supported")
    n = int(attr(node, "num_heads", 0))
    if x.ndim != 3 or w.ndim != 2 or w.shape[0] != x.shape[2]:
        _refuse(node, f"input {tuple(x.shape)} and weights {tuple(w.shape)} do not match "
                      "((B, S, D) and (D, hidden sizes))")
    hq, hk, hv = _attention_sizes(node, w)
    if n <= 0 or hq % n or hk % n or hv % n or hq != hk:
        _refuse(node, f"hidden sizes {(hq, hk, hv)} are not multiples of num_heads {n} with "
                      "equal Q and K sizes")
    if bias is not None and tuple(bias.shape) != (hq + hk + hv,):
        _refuse(node, f"bias must have shape ({hq + hk + hv},), got {tuple(bias.shape)}")
    batch, seq = x.shape[0], x.shape[1]
    qkv = matmul(x, w)
    if bias is not None:
        qkv = qkv + bias
    q = _heads(xp, qkv[..., :hq], n)
    k = _heads(xp, qkv[..., hq:hq + hk], n)
    v = _heads(xp, qkv[..., hq + hk:], n)
    if past is not None:
        if hk != hv or past.ndim != 5 or tuple(past.shape[:3]) != (2, batch, n) or \
                past.shape[4] != hk // n:
            _refuse(node, f"past of shape {tuple(past.shape)} does not match "
                          f"(2, {batch}, {n}, P, {hk // n}) (or V's size differs from K's)")
    valid = None
    if past is not None:
        k, v, valid = append(xp, past, k, v)
    out = attend(node, xp, matmul, q, k, v, mask, attention_bias, hq // n, x.dtype, valid)
    out = xp.reshape(xp.transpose(out, (0, 2, 1, 3)), (batch, seq, hv))
    if len(node.outputs) < 2:
        return (out.astype(x.dtype),)
    if hk != hv:
        _refuse(node, f"present needs equal K and V hidden sizes, got {hk} and {hv}")
    return out.astype(x.dtype), xp.stack([k, v]).astype(x.dtype)


def multi_head_attention_node(node, xp, query, key=None, value=None, bias=None,
                              key_padding_mask=None, attention_bias=None, past_key=None,
                              past_value=None, past_sequence_length=None,
                              cache_indirection=None, *, matmul=None):
    """``MultiHeadAttention`` (com.microsoft) in the forms ONNX Runtime's CPU kernel and its
    BART / T5 / Whisper fusions use: ``query`` ``(B, S, D)``; ``key`` and ``value`` either
    ``(B, L, D)`` / ``(B, L, D_v)`` (projected here into heads, then appended to
    ``past_key`` / ``past_value`` ``(B, N, P, H)`` when given) or already in heads
    ``(B, N, L, H)`` (cross attention: used as they are, the pasts ignored); ``bias``
    ``(D + D + D_v)`` added to the projections of the 3-D forms; each head
    ``softmax(scale * Q K^T + mask (+ attention_bias)) V`` with ``scale`` default
    ``1 / sqrt(H)``, ``key_padding_mask`` read as `attention_mask` reads ``mask_index`` and
    ``unidirectional`` as there. Returns ``(output (B, S, D_v), present_key,
    present_value)`` cut to the node's output count (the presents are the keys and values
    attended to, ``(B, N, T, H)``). Refused: packed QKV / KV, a shared past/present buffer,
    cache indirection, the ``qk`` output."""
    matmul = matmul or xp.matmul
    if past_sequence_length is not None or cache_indirection is not None:
        raise UnsupportedError(f"{where(node)}: past_sequence_length / cache_indirection (a "
                               "shared past/present buffer) is not supported")
    if len(node.outputs) > 3:
        raise UnsupportedError(f"{where(node)}: the qk output is not supported")
    n = int(attr(node, "num_heads", 0))
    if key is None or value is None or query.ndim != 3:
        raise UnsupportedError(f"{where(node)}: packed QKV / KV inputs are not supported "
                               "(query (B, S, D) with key and value given)")
    batch, seq, d = query.shape
    if n <= 0 or d % n:
        _refuse(node, f"query hidden size {d} is not a multiple of num_heads {n}")
    hs = d // n
    dv = value.shape[1] * value.shape[3] if value.ndim == 4 else value.shape[-1]
    q = query if bias is None else query + bias[:d]
    q = _heads(xp, q, n)
    if key.ndim == 4:  # (B, N, L, H): keys and values already projected, as they come
        if value.ndim != 4 or tuple(key.shape[:2]) != (batch, n) or key.shape[3] != hs:
            _refuse(node, f"key {tuple(key.shape)} / value {tuple(value.shape)} do not match "
                          f"({batch}, {n}, L, {hs})")
        k, v = key, value
    elif key.ndim == 3 and value.ndim == 3:
        if key.shape[2] != d or key.shape[0] != batch or value.shape[:2] != key.shape[:2] \
                or dv % n:
            _refuse(node, f"key {tuple(key.shape)} / value {tuple(value.shape)} do not match "
                          f"query {tuple(query.shape)}")
        if bias is not None:
            key, value = key + bias[d:2 * d], value + bias[2 * d:]
        k, v = _heads(xp, key, n), _heads(xp, value, n)
        if past_key is not None and past_value is not None:
            k = xp.concatenate([past_key.astype(k.dtype), k], axis=2)
            v = xp.concatenate([past_value.astype(v.dtype), v], axis=2)
    else:
        raise UnsupportedError(f"{where(node)}: key {tuple(key.shape)} / value "
                               f"{tuple(value.shape)} forms are not supported")
    out = attend(node, xp, matmul, q, k, v, key_padding_mask, attention_bias, hs, query.dtype)
    out = xp.reshape(xp.transpose(out, (0, 2, 1, 3)), (batch, seq, dv))
    return (out.astype(query.dtype), k.astype(query.dtype),
            v.astype(query.dtype))[:max(1, len(node.outputs))]

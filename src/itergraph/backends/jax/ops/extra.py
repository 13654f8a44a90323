"""More tensor rules: Pad, Trilu, OneHot, TopK, GatherND, CumProd, DepthToSpace,
SpaceToDepth, EyeLike, Shrink, Swish.

Semantics as in the ONNX specification (the NumPy backend runs these through
``onnx.reference``). Pads, k, depth and block sizes must be known at trace time.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, where
from ...common.nd_index import index_depth
from ...common.slicing import check_pad_crop
from ..table import lowering
from ._util import astype, attr, attr_or_default, attr_str, norm_axis, np_dtype
from .indexing import nd_indices
from .reduce import cumulative

# ----------------------------------------------------------------------------- Pad


def _pad(cx, x, pads: list[int], mode: str, value, axes: list[int] | None):
    xp = cx.xp
    r = x.ndim
    axes = list(range(r)) if axes is None else [norm_axis(cx, a, r) for a in axes]
    if len(pads) != 2 * len(axes):
        raise ExecutionError(f"{where(cx.node)}: pads has {len(pads)} entries for "
                             f"{len(axes)} axes")
    before, after = [0] * r, [0] * r
    for k, a in enumerate(axes):
        before[a], after[a] = pads[k], pads[k + len(axes)]
    for a, (b, e) in enumerate(zip(before, after)):  # negative pads crop
        check_pad_crop(cx.node, x.shape[a], b, e)
    idx = tuple(slice(max(-b, 0), x.shape[a] - max(-e, 0)) for a, (b, e) in
                enumerate(zip(before, after)))
    x = x[idx]
    width = [(max(b, 0), max(e, 0)) for b, e in zip(before, after)]
    if not any(b or e for b, e in width):
        return x
    if mode == "constant":
        v = np.zeros((), x.dtype) if value is None else value
        return xp.pad(x, width, mode="constant", constant_values=astype(cx, xp.reshape(
            xp.asarray(v), ()), x.dtype) if not isinstance(v, np.ndarray) else
            v.reshape(()).astype(x.dtype))
    if mode in ("reflect", "edge", "wrap"):
        return xp.pad(x, width, mode=mode)
    cx.fail(f"Pad mode {mode!r} is not lowered")


@lowering("Pad", since=11, fold=True)
def _pad11(cx, x, pads, value=None, axes=None):
    mode = attr_str(cx.node, "mode", "constant")
    return _pad(cx, x, cx.ints(pads, "pads (input 1)"), mode, value,
                None if axes is None else cx.ints(axes, "axes (input 3)"))


# ----------------------------------------------------------------------------- Trilu, EyeLike


@lowering("Trilu", since=14, fold=True)
def _trilu(cx, x, k=None):
    kk = 0 if k is None else int(cx.const(k, "k (input 1)").reshape(()))
    fn = cx.xp.triu if attr_or_default(cx.node, "upper") else cx.xp.tril
    return fn(x, kk)


@lowering("EyeLike", since=9, fold=True)
def _eye_like(cx, x):
    dt = attr(cx.node, "dtype")
    dtype = x.dtype if dt is None else np_dtype(dt, cx.node)
    return cx.xp.eye(x.shape[0], x.shape[1], k=int(attr_or_default(cx.node, "k")), dtype=dtype)


# ----------------------------------------------------------------------------- OneHot


@lowering("OneHot", since=9, fold=True)
def _one_hot(cx, indices, depth, values):
    xp = cx.xp
    dv = cx.const(depth, "depth (input 1)")
    if dv.size != 1:
        raise ExecutionError(f"{where(cx.node)}: depth must hold one element, got {dv.shape}")
    d = int(dv.reshape(()))
    if d < 0:
        raise ExecutionError(f"{where(cx.node)}: depth must not be negative, got {d}")
    if int(np.prod(values.shape, dtype=np.int64)) != 2:
        raise ExecutionError(f"{where(cx.node)}: values must hold [off, on], got "
                             f"{tuple(values.shape)}")
    axis = int(attr_or_default(cx.node, "axis"))
    r = indices.ndim + 1
    a = axis + r if axis < 0 else axis
    if not 0 <= a < r:
        raise ExecutionError(f"{where(cx.node)}: axis {axis} out of range for rank {r}")
    values = xp.reshape(values, (2,))
    idx = xp.asarray(indices)
    idx = xp.where(idx < 0, idx + d, idx).astype(np.int64)
    hot = xp.expand_dims(idx, -1) == xp.arange(d)
    hot = xp.moveaxis(hot, -1, a)
    off, on = values[0], values[1]
    return xp.where(hot, on, off).astype(values.dtype)


# ----------------------------------------------------------------------------- TopK


#: the largest k `_small_top_k` serves (k passes over the axis, against a sort of it)
SMALL_K = 16


def _small_top_k(key, k: int):
    """``jax.lax.top_k(key, k)`` of a float32 `key` along its last axis, by k max passes,
    without the stable sort of the whole axis that XLA's CPU backend makes of top_k (a beam
    search's TopK over beams x vocabulary every step): the same values and indices.

    Each element gets one int64 key, its float32 bits as a total order (-NaN < -inf < ... <
    -0 < +0 < ... < inf < NaN) in the high half and its index reversed in the low half, so
    that keys are distinct and ties go to the lower index first. A pass takes the largest
    key below the previous pass's: one reduction reading the keys (one kernel each; taking
    the picked element out of a copy instead costs a second kernel a pass, and every kernel
    adds to the XLA compile of a generation loop). Values and indices are decoded from the
    picked keys, bit for bit."""
    import jax
    import jax.numpy as jnp

    bits = jax.lax.bitcast_convert_type(key, np.int32)
    order = jnp.where(bits < 0, bits ^ np.int32(0x7FFFFFFF), bits).astype(np.int64)
    low = np.int64(0xFFFFFFFF)
    packed = order * np.int64(1 << 32) + (low - jnp.arange(key.shape[-1], dtype=np.int64))
    floor = np.iinfo(np.int64).min  # below every key
    picks = []
    for j in range(k):
        below = packed if j == 0 else jnp.where(packed < picks[-1][..., None], packed, floor)
        picks.append(jnp.max(below, axis=-1))
    if not picks:
        return key[..., :0], jnp.zeros((*key.shape[:-1], 0), np.int64)
    got = jnp.stack(picks, axis=-1)
    idx = low - (got & low)
    top = (got >> 32).astype(np.int32)
    vals = jax.lax.bitcast_convert_type(
        jnp.where(top < 0, top ^ np.int32(0x7FFFFFFF), top), np.float32)
    return vals, idx


def _topk(cx, x, k: int):
    import jax
    import jax.numpy as jnp

    a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), x.ndim)
    largest = bool(attr_or_default(cx.node, "largest"))
    if k < 0 or k > x.shape[a]:
        raise ExecutionError(f"{where(cx.node)}: k={k} out of range for axis length "
                             f"{x.shape[a]}")
    xm = jnp.moveaxis(jnp.asarray(x), a, -1)
    if x.dtype.kind == "f" or largest:
        if x.dtype.kind == "f":
            # lax.top_k orders NaNs by their sign bit (a NaN of 0xFF bytes is negative):
            # a NaN counts as the largest value whatever its sign, as in NumPy's sort and
            # ONNX Runtime
            xm = jnp.where(jnp.isnan(xm), jnp.asarray(np.nan, xm.dtype), xm)
        key = xm if largest else -xm
        if key.dtype == np.float32 and k <= SMALL_K:
            vals, idx = _small_top_k(key, k)
        else:
            vals, idx = jax.lax.top_k(key, k)  # ties: lower index first, as ONNX asks
        vals = vals if largest else -vals
    else:  # smallest of unsigned/ints: sort ascending, stable
        idx = jnp.argsort(xm, axis=-1, stable=True)[..., :k]
        vals = jnp.take_along_axis(xm, idx, axis=-1)
    return jnp.moveaxis(vals, -1, a), jnp.moveaxis(idx.astype(np.int64), -1, a)


@lowering("TopK", since=10)
def _topk10(cx, x, k):
    return _topk(cx, x, int(cx.const(k, "k (input 1)").reshape(-1)[0]))


# ----------------------------------------------------------------------------- GatherND


@lowering("GatherND", since=11, fold=True)
def _gather_nd(cx, data, indices):
    xp = cx.xp
    b = int(attr_or_default(cx.node, "batch_dims"))
    m = index_depth(cx.node, data.shape, indices.shape, b)
    key = nd_indices(cx, indices, data.shape[b:b + m], "GatherND")
    if b == 0:
        return data[key]
    idx = xp.stack(key, axis=-1)
    batch = int(np.prod(data.shape[:b], dtype=np.int64))
    d2 = xp.reshape(data, (batch, *data.shape[b:]))
    i2 = xp.reshape(idx, (batch, -1, m))
    bi = xp.arange(batch)[:, None]
    g = d2[(bi, *tuple(xp.moveaxis(i2, -1, 0)))]
    return xp.reshape(g, (*indices.shape[:-1], *data.shape[b + m:]))


# ----------------------------------------------------------------------------- CumProd


@lowering("CumProd", since=26, fold=True)
def _cumprod(cx, x, axis):
    return cumulative(cx, x, axis, "cumprod", 1)


# ----------------------------------------------------------------------------- space/depth


@lowering("DepthToSpace", since=1, fold=True)
def _depth_to_space(cx, x):
    xp = cx.xp
    bs = int(attr(cx.node, "blocksize"))
    n, c, hh, ww = x.shape
    if attr_str(cx.node, "mode", "DCR") == "DCR":
        t = xp.reshape(x, (n, bs, bs, c // bs ** 2, hh, ww))
        t = xp.transpose(t, (0, 3, 4, 1, 5, 2))
    else:
        t = xp.reshape(x, (n, c // bs ** 2, bs, bs, hh, ww))
        t = xp.transpose(t, (0, 1, 4, 2, 5, 3))
    return xp.reshape(t, (n, c // bs ** 2, hh * bs, ww * bs))


@lowering("SpaceToDepth", since=1, fold=True)
def _space_to_depth(cx, x):
    xp = cx.xp
    bs = int(attr(cx.node, "blocksize"))
    n, c, hh, ww = x.shape
    t = xp.reshape(x, (n, c, hh // bs, bs, ww // bs, bs))
    crd = attr_str(cx.node, "mode", "DCR") == "CRD"  # (opset 28)
    t = xp.transpose(t, (0, 1, 3, 5, 2, 4) if crd else (0, 3, 5, 1, 2, 4))
    return xp.reshape(t, (n, c * bs * bs, hh // bs, ww // bs))


# ----------------------------------------------------------------------------- activations


@lowering("Shrink", since=9)
def _shrink(cx, x):
    xp = cx.xp
    bias = float(attr_or_default(cx.node, "bias"))
    lambd = float(attr_or_default(cx.node, "lambd"))
    y = xp.where(x < -lambd, x + bias, xp.where(x > lambd, x - bias, 0))
    return astype(cx, y, x.dtype)


@lowering("Swish", since=24)
def _swish(cx, x):
    from jax import lax

    alpha = float(attr_or_default(cx.node, "alpha"))
    return astype(cx, x * lax.logistic(alpha * x), x.dtype)



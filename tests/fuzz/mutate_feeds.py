"""Mutation operators on a run's feeds (``{input name: ndarray}``): another element type,
another shape (an axis more or fewer, a dimension zero or larger), NaN and infinities, extreme
integers (trip counts, indices, lengths), a feed missing or one too many.

Each operator edits the dict in place and returns a description; `NotApplicable` when there
is nothing to mutate (no feeds).
"""

from __future__ import annotations

import numpy as np

from .common import NotApplicable, Registry, pick

OPS = Registry()
DTYPES = (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8,
          np.uint64, np.bool_, np.complex64, np.str_)


def _one(feeds, rng, kinds=None):
    names = [k for k, v in feeds.items() if kinds is None or np.asarray(v).dtype.kind in kinds]
    name = pick(rng, sorted(names))
    return name, np.asarray(feeds[name])


@OPS.register("feed_dtype")
def feed_dtype(feeds, rng):
    """One feed cast to another element type."""
    name, v = _one(feeds, rng)
    dt = pick(rng, DTYPES)
    feeds[name] = v.astype(dt)
    return f"feed '{name}' {v.dtype} -> {np.dtype(dt)}"


@OPS.register("feed_shape")
def feed_shape(feeds, rng):
    """One feed reshaped: an axis added or dropped, a dimension made 0, doubled, or 1."""
    name, v = _one(feeds, rng)
    how = pick(rng, ["add_axis", "drop_axis", "zero", "double", "one", "scalar"])
    if how == "add_axis":
        new = np.expand_dims(v, int(rng.integers(v.ndim + 1)))
    elif how == "drop_axis" and v.ndim:
        new = np.take(v, 0, axis=int(rng.integers(v.ndim))) if v.size else \
            v.reshape(v.shape[1:])
    elif how == "zero" and v.ndim:
        ax = int(rng.integers(v.ndim))
        new = np.take(v, np.arange(0), axis=ax)
    elif how == "double" and v.ndim:
        new = np.concatenate([v, v], axis=int(rng.integers(v.ndim)))
    elif how == "one" and v.ndim:
        ax = int(rng.integers(v.ndim))
        new = np.take(v, np.arange(min(1, v.shape[ax])), axis=ax)
    else:
        new = v.reshape(-1)[:1].reshape(()) if v.size else np.zeros((), v.dtype)
    feeds[name] = np.ascontiguousarray(new)
    return f"feed '{name}' {how}: {v.shape} -> {new.shape}"


@OPS.register("feed_values")
def feed_values(feeds, rng):
    """Some values of one feed set to NaN, +-inf, huge or tiny floats, or (integers) extreme,
    negative or zero (trip counts, indices, sequence lengths). No subnormal floats: XLA on
    CPU flushes them to zero, NumPy does not (a known difference, see README.md)."""
    name, v = _one(feeds, rng, "fiub")
    v = v.copy()
    if v.size == 0:
        raise NotApplicable("an empty feed")
    flat = v.reshape(-1)
    idx = rng.integers(0, flat.size, max(1, flat.size // int(pick(rng, [1, 2, 10, 1000]))))
    if v.dtype.kind == "f":
        value = pick(rng, [np.nan, np.inf, -np.inf, 1e30, -1e30, 1e-30, 0.0, 65504.0])
    elif v.dtype.kind == "b":
        value = pick(rng, [True, False])
    else:
        info = np.iinfo(v.dtype)
        value = pick(rng, [info.max, info.min, -1, 0, 2**31 - 1, 1000]
                     if v.dtype.kind == "i" else [info.max, 0, 1000])
        value = np.array(value).astype(v.dtype)
    flat[idx] = value
    feeds[name] = v
    return f"feed '{name}' {len(set(idx.tolist()))} values -> {value!r}"


@OPS.register("feed_missing")
def feed_missing(feeds, rng):
    """One feed left out, or one added that the model does not have, or one renamed."""
    how = pick(rng, ["drop", "extra", "rename"])
    if how == "extra":
        feeds["fuzz_extra"] = np.zeros(2, np.float32)
        return "feed 'fuzz_extra' added"
    name, v = _one(feeds, rng)
    del feeds[name]
    if how == "rename":
        feeds[name + "_fuzz"] = v
    return f"feed '{name}' {how}"


@OPS.register("feed_kind")
def feed_kind(feeds, rng):
    """One feed given as something other than an array: a Python list, a scalar, None, a
    string, a non-contiguous, read-only, reversed, broadcast (zero strides), unaligned or
    byte-swapped view, a masked array (its first element masked) or a 0-d array."""
    name, v = _one(feeds, rng)
    how = pick(rng, ["list", "scalar", "none", "str", "strided", "readonly", "fortran",
                     "reversed", "broadcast", "unaligned", "byteswapped", "masked", "0-d"])
    if how in _VIEWS:
        feeds[name] = _VIEWS[how](v)
        return f"feed '{name}' as {how}"
    if how == "list":
        feeds[name] = v.tolist()
    elif how == "scalar":
        feeds[name] = v.reshape(-1)[0].item() if v.size else 0
    elif how == "none":
        feeds[name] = None
    elif how == "str":
        feeds[name] = "fuzz"
    elif how == "strided":
        feeds[name] = np.repeat(v, 2, axis=-1)[..., ::2] if v.ndim else v
    elif how == "readonly":
        v = v.copy()
        v.flags.writeable = False
        feeds[name] = v
    else:
        feeds[name] = np.asfortranarray(v)
    return f"feed '{name}' as {how}"


def _unaligned(v: np.ndarray) -> np.ndarray:
    buf = np.zeros(v.nbytes + 1, np.uint8)
    out = np.ndarray(v.shape, v.dtype, buf.data, offset=1)
    out[...] = v
    return out


def _masked(v: np.ndarray) -> np.ndarray:
    mask = np.zeros(v.shape, bool)
    mask.reshape(-1)[:1] = True
    return np.ma.masked_array(v, mask=mask)


_VIEWS = {
    "reversed": lambda v: v[..., ::-1] if v.ndim else v,
    "broadcast": lambda v: np.broadcast_to(v.reshape(-1)[:1].reshape((1,) * v.ndim), v.shape)
    if v.size else v,
    "unaligned": _unaligned,
    "byteswapped": lambda v: v.astype(v.dtype.newbyteorder()) if v.dtype.itemsize > 1 else v,
    "masked": _masked,
    "0-d": lambda v: np.asarray(v.reshape(-1)[0]) if v.size else np.asarray(0, v.dtype),
}


@OPS.register("feed_nonfinite")
def feed_nonfinite(feeds, rng):
    """A float feed made all NaN, all +inf or -inf, or a mix of NaN, +-inf and its own values
    (NaN everywhere: every op of the model then sees it)."""
    name, v = _one(feeds, rng, "f")
    if v.size == 0:
        raise NotApplicable("an empty feed")
    how = pick(rng, ["nan", "inf", "-inf", "mix"])
    if how == "mix":
        pool = np.array([np.nan, np.inf, -np.inf], v.dtype)
        mask = rng.random(v.shape) < 0.5
        new = np.where(mask, pool[rng.integers(0, 3, v.shape)], v).astype(v.dtype)
    else:
        new = np.full(v.shape, float(how), v.dtype)
    feeds[name] = new
    return f"feed '{name}' {how}"

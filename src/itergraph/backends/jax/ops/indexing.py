"""Indexing rules: Concat, Split, Slice, Gather, GatherElements, ReverseSequence.

Slice clamps as ONNX does (see the NumPy kernel). Gather and GatherElements accept negative
indices; an out-of-range index is an `ExecutionError` (found at trace time for constant
indices, else flagged at run time).
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ...common.nd_index import check_updates, out_of_range
from ...common.slicing import check_slice_vectors, slice_of, split_sizes
from ..table import lowering
from ._util import attr, attr_or_default, norm_axis


@lowering("Concat", since=1, fold=True)
def _concat(cx, *xs):
    axis = int(attr(cx.node, "axis", 1))
    ranks = {x.ndim for x in xs}
    if len(ranks) != 1:
        raise ExecutionError(f"{where(cx.node)}: cannot concatenate shapes "
                             f"{[tuple(x.shape) for x in xs]} on axis {axis}")
    return cx.xp.concatenate(xs, axis=norm_axis(cx, axis, xs[0].ndim))


def _split(cx, x, axis: int, split: list[int] | None):
    n = len(cx.node.outputs)
    a = norm_axis(cx, axis, x.ndim)
    sizes = split_sizes(cx.node, x.shape[a], split, n)
    idx = [slice(None)] * x.ndim
    out, pos = [], 0
    for s in sizes:
        idx[a] = slice(pos, pos + s)
        out.append(x[tuple(idx)])
        pos += s
    return out[0] if n == 1 else tuple(out)


@lowering("Split", since=13, fold=True)
def _split13(cx, x, split=None):
    s = None if split is None else cx.ints(split, "split (input 1)")
    return _split(cx, x, int(attr_or_default(cx.node, "axis")), s)


def _slice(cx, x, starts, ends, axes, steps):
    n = len(starts)
    if len(ends) != n or (axes is not None and len(axes) != n) or (
            steps is not None and len(steps) != n):
        raise ExecutionError(f"{where(cx.node)}: starts/ends/axes/steps lengths differ")
    axes = list(range(n)) if axes is None else axes
    steps = [1] * n if steps is None else steps
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        ax = norm_axis(cx, a, x.ndim)
        if st == 0:
            raise ExecutionError(f"{where(cx.node)}: slice step cannot be 0")
        idx[ax] = slice_of(s, e, st, x.shape[ax])
    return x[tuple(idx)]


@lowering("Slice", since=10, fold=True)
def _slice10(cx, x, starts, ends, axes=None, steps=None):
    check_slice_vectors(cx.node, (starts, ends, axes, steps))
    axes = None if axes is None else cx.ints(axes, "axes (input 3)")
    steps = None if steps is None else cx.ints(steps, "steps (input 4)")
    if not (isinstance(starts, np.ndarray) and isinstance(ends, np.ndarray)):
        return _dynamic_slice(cx, x, starts, ends, axes, steps)
    return _slice(cx, x, cx.ints(starts, "starts (input 1)"), cx.ints(ends, "ends (input 2)"),
                  axes, steps)


def _dynamic_slice(cx, x, starts, ends, axes, steps):
    """Run-time starts/ends whose difference is known (``x[i : i + k]``): a dynamic slice of
    static size (axes whose bounds are both constants: a static slice). Bounds that would
    give another size (out of range, wrapping negative indices) are handled by redoing the
    run on NumPy."""
    from jax import lax

    from ..affine import window_forms
    from ..context import Bailout, CannotLower

    forms = window_forms(cx.tc, starts, ends)
    if forms is None:
        raise CannotLower(cx.node, "starts/ends (inputs 1, 2) must be known at compile time, or "
                                   "differ by a known amount (it is computed from run-time "
                                   "data)", needs_static=True)
    sf, ef = forms
    n = sf.offset.size
    axes = list(range(n)) if axes is None else axes
    steps = [1] * n if steps is None else steps
    if len(axes) != n or len(steps) != n:
        raise ExecutionError(f"{where(cx.node)}: starts/ends/axes/steps lengths differ")
    if any(st != 1 for st in steps):
        raise CannotLower(cx.node, "run-time starts with a step other than 1 are not lowered")
    xp = cx.xp
    svec = xp.reshape(xp.asarray(starts), (-1,)).astype(np.int64)
    evec = xp.reshape(xp.asarray(ends), (-1,)).astype(np.int64)
    y = x
    for k, a in enumerate(axes):
        ax = norm_axis(cx, a, x.ndim)
        dim, s0, e0 = x.shape[ax], int(sf.offset[k]), int(ef.offset[k])
        if not sf.relative[k]:  # both bounds constants on this axis: a static slice
            y = y[(slice(None),) * ax + (slice_of(s0, e0, 1, dim),)]
            continue
        size = e0 - s0
        if size <= 0:
            y = lax.slice_in_dim(y, 0, 0, axis=ax)
            continue
        s_eff = xp.where(svec[k] < 0, svec[k] + dim, svec[k])
        e_eff = xp.where(evec[k] < 0, evec[k] + dim, evec[k])
        cx.check((s_eff < 0) | (e_eff > dim) | (e_eff - s_eff != size),
                 f"run-time bounds leave the static slice size {size} on axis {ax}", Bailout)
        y = lax.dynamic_slice_in_dim(y, s_eff, size, axis=ax)
    return y


def _indices(cx, idx, dim: int, what: str):
    """Negative indices resolved; out-of-range ones reported (now or at run time)."""
    xp = cx.xp
    if isinstance(idx, np.ndarray):
        bad = (idx < -dim) | (idx >= dim)
        if bad.any():
            raise ExecutionError(f"{where(cx.node)}: {what} index {int(idx[bad][0])} is out of "
                                 f"range for an axis of length {dim}")
        return np.where(idx < 0, idx + dim, idx)
    cx.check(xp.any((idx < -dim) | (idx >= dim)),
             f"{what} index out of range for an axis of length {dim}")
    return xp.where(idx < 0, idx + dim, idx)


@lowering("Gather", since=1, fold=True)
def _gather(cx, data, indices):
    a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), data.ndim)
    idx = _indices(cx, indices, data.shape[a], "Gather")
    if cx.folding:
        return np.take(data, idx, axis=a)
    return cx.xp.take(data, idx, axis=a, mode="clip")


@lowering("GatherElements", since=11, fold=True)
def _gather_elements(cx, data, indices):
    a = norm_axis(cx, int(attr_or_default(cx.node, "axis")), data.ndim)
    idx = _indices(cx, indices, data.shape[a], "GatherElements")
    if cx.folding:
        return np.take_along_axis(data, idx, axis=a)
    return cx.xp.take_along_axis(data, idx, axis=a, mode="clip")


def _scatter_elements(cx, data, indices, updates, axis: int, reduction: str):
    """A copy of `data` with `updates` written (or combined) at `indices` along `axis`."""
    if reduction not in ("none", "add", "mul", "max", "min"):
        raise ExecutionError(f"{where(cx.node)}: unknown reduction {reduction!r}")
    a = norm_axis(cx, axis, data.ndim)
    idx = _indices(cx, indices, data.shape[a], "ScatterElements")
    grid = list(np.indices(tuple(indices.shape), sparse=True))
    grid[a] = idx
    return _written(cx, data, tuple(grid), updates, reduction)


def _written(cx, data, key: tuple, updates, reduction: str):
    """A copy of `data` with `updates` written at `key` (combined by `reduction`)."""
    if cx.folding:
        out = np.array(data, copy=True)
        if reduction == "none":
            out[key] = updates
        else:
            {"add": np.add, "mul": np.multiply, "max": np.maximum,
             "min": np.minimum}[reduction].at(out, key, updates)
        return out
    ref = cx.xp.asarray(data).at[key]
    return {"none": ref.set, "add": ref.add, "mul": ref.multiply, "max": ref.max,
            "min": ref.min}[reduction](updates)


def nd_indices(cx, indices, dims, what: str) -> tuple:
    """Index vectors (last axis of `indices`) as a tuple of index arrays, negative entries
    counted from the end; out-of-range ones reported (now or at run time)."""
    dims = np.asarray(dims, np.int64)
    # constant indices are checked now, in NumPy (a jnp op inside a jit trace gives a tracer)
    xp = np if isinstance(indices, np.ndarray) else cx.xp
    idx = xp.asarray(indices).astype(np.int64)
    bad = (idx < -dims) | (idx >= dims)
    if xp is np:
        if bad.any():
            raise out_of_range(cx.node, what)
    else:
        cx.check(xp.any(bad), f"{what} index out of range for the data's axes")
    idx = xp.where(idx < 0, idx + dims, idx)
    return tuple(xp.moveaxis(idx, -1, 0))


@lowering("ScatterND", since=11, fold=True)
def _scatter_nd(cx, data, indices, updates):
    """`backends.common.nd_index`: ``data.at[index vectors]`` set or combined."""
    red = attr_or_default(cx.node, "reduction")
    red = red.decode() if isinstance(red, bytes) else red
    if red not in ("none", "add", "mul", "max", "min"):
        raise ModelError(f"{where(cx.node)}: unknown reduction {red!r}")
    k = check_updates(cx.node, data.shape, indices.shape, updates.shape)
    return _written(cx, data, nd_indices(cx, indices, data.shape[:k], "ScatterND"), updates,
                    red)


@lowering("Scatter", since=9, fold=True)
def _scatter(cx, data, indices, updates):
    axis = int(attr_or_default(cx.node, "axis"))
    return _scatter_elements(cx, data, indices, updates, axis, "none")


@lowering("ScatterElements", since=11, fold=True)
def _scatter_elements_rule(cx, data, indices, updates):
    red = attr_or_default(cx.node, "reduction")
    red = red.decode() if isinstance(red, bytes) else red
    return _scatter_elements(cx, data, indices, updates, int(attr_or_default(cx.node, "axis")), red)


@lowering("ReverseSequence", since=10)
def _reverse_sequence(cx, x, lens):
    """Each batch entry's first ``sequence_lens[b]`` steps along ``time_axis`` reversed, the
    rest kept (one gather along the time axis); a length outside ``[0, steps]`` is an
    `ExecutionError`, as in ONNX Runtime."""
    xp = cx.xp
    batch_axis = norm_axis(cx, int(attr_or_default(cx.node, "batch_axis")), x.ndim)
    time_axis = norm_axis(cx, int(attr_or_default(cx.node, "time_axis")), x.ndim)
    steps = x.shape[time_axis]
    shape = [1] * x.ndim
    shape[time_axis] = steps
    t = xp.reshape(xp.arange(steps, dtype=np.int64), shape)
    shape = [1] * x.ndim
    shape[batch_axis] = -1
    n = xp.reshape(xp.asarray(lens).astype(np.int64), shape)
    cx.check(xp.any((n < 0) | (n > steps)),
             f"sequence_lens must lie in [0, {steps}] (the length of the time axis)")
    idx = xp.broadcast_to(xp.where(t < n, n - 1 - t, t), x.shape)
    return xp.take_along_axis(x, idx, axis=time_axis)

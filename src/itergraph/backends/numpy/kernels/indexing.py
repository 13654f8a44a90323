"""Indexing kernels: Concat, Split, Slice, Gather, GatherElements, the scatters, GatherND.

Slice follows ONNX clamping: after adding the dim to negative starts/ends, starts and ends are
clamped to ``[0, dim]`` for positive steps and ``[-1, dim - 1]`` for negative steps, where -1
means "before the first element" (not "the last", as in Python).
"""

from __future__ import annotations

import numpy as np
from numpy import asarray, ndarray

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr, attr_or_default, const_input, has_input
from ...common.nd_index import check_updates, index_depth, out_of_range
from ...common.slicing import check_slice_vectors, slice_of, split_sizes
from . import kernel

_CACHE_SIZE = 64  # entries kept per kernel in the per-shape caches below

# ----------------------------------------------------------------------------- Concat


@kernel("Concat", since=1)
def _concat(node, ctx):
    axis = int(attr(node, "axis", 1))
    concatenate = np.concatenate

    def fn(*xs):
        rank = xs[0].ndim
        if not -rank <= axis < rank:  # NumPy reads -2**31 as "flatten first"
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {rank}")
        try:
            return concatenate(xs, axis=axis)
        except ValueError as e:
            shapes = [x.shape for x in xs]
            raise ExecutionError(
                f"{where(node)}: cannot concatenate shapes {shapes} on axis {axis}"
            ) from e

    return fn


# ----------------------------------------------------------------------------- Split


def _split_fn(node, axis: int, n: int, split_of, const_sizes: bool = False):
    """The Split closure. With `const_sizes` (the sizes do not depend on the `split` value
    given at run time: an attribute, an initializer, or equal parts) the index tuples are
    kept per (rank, axis length), so a repeated call only slices."""

    def slow(x, split=None):
        a = axis + x.ndim if axis < 0 else axis
        sizes = split_sizes(node, x.shape[a], split_of(split), n)
        idx = [slice(None)] * x.ndim
        out = []
        pos = 0
        for s in sizes:
            idx[a] = slice(pos, pos + s)
            out.append(tuple(idx))
            pos += s
        return out

    def fn(x, split=None):
        out = [x[i] for i in slow(x, split)]
        return out[0] if n == 1 else tuple(out)

    if not const_sizes:
        return fn
    cache: dict[tuple[int, int], list] = {}

    def fn_cached(x, split=None):
        rank = x.ndim
        if not -rank <= axis < rank:
            return fn(x, split)  # reports the error
        key = (rank, x.shape[axis])
        idx = cache.get(key)
        if idx is None:
            idx = cache[key] = slow(x, split)
        if n == 1:
            return x[idx[0]]
        return tuple([x[i] for i in idx])

    return fn_cached


@kernel("Split", since=13)
def _split(node, ctx):
    """Split 13+: sizes from the optional `split` input; 18+: or ``num_outputs`` parts."""
    axis = int(attr_or_default(node, "axis"))
    n = len(node.outputs)
    num_outputs = attr(node, "num_outputs")
    if num_outputs is not None and int(num_outputs) != n:
        raise ModelError(f"{where(node)}: num_outputs={num_outputs} but {n} outputs")
    const = const_input(node, 1)
    return _split_fn(node, axis, n, lambda s: None if s is None else s.reshape(-1).tolist(),
                     const_sizes=not has_input(node, 1) or const is not None)


# ----------------------------------------------------------------------------- Slice


def _slice_index(node, shape, starts, ends, axes, steps) -> tuple:
    """The NumPy index for ONNX Slice parameters (Python lists; axes/steps may be None)."""
    n = len(starts)
    if len(ends) != n or (axes is not None and len(axes) != n) or (
        steps is not None and len(steps) != n
    ):
        raise ExecutionError(f"{where(node)}: starts/ends/axes/steps lengths differ")
    rank = len(shape)
    idx = [slice(None)] * rank
    for k in range(n):
        a = k if axes is None else axes[k]
        ax = a + rank if a < 0 else a
        if not 0 <= ax < rank:
            raise ExecutionError(f"{where(node)}: axis {a} out of range for rank {rank}")
        try:
            idx[ax] = slice_of(starts[k], ends[k], 1 if steps is None else steps[k], shape[ax])
        except ValueError as err:
            raise ExecutionError(f"{where(node)}: {err}") from None
    return tuple(idx)


@kernel("Slice", since=10)
def _slice(node, ctx):
    """Slice 10+: starts, ends and the optional axes, steps are inputs."""
    consts = [const_input(node, i) for i in range(1, 5)]
    given = [i < len(node.inputs) and node.inputs[i] is not None for i in range(1, 5)]
    if all(c is not None or not g for c, g in zip(consts, given)):
        st, en, ax, sp = [None if c is None else c.reshape(-1).tolist() for c in consts]

        cache: dict[tuple, tuple] = {}  # input shape -> index

        def fn_const(x, *_):
            idx = cache.get(x.shape)
            if idx is None:
                check_slice_vectors(node, consts)
                idx = _slice_index(node, x.shape, st, en, ax, sp)
                if len(cache) >= _CACHE_SIZE:
                    cache.clear()
                cache[x.shape] = idx
            return x[idx]

        return fn_const

    cache = {}  # (input shape, parameters) -> index

    def fn(x, starts, ends, axes=None, steps=None):
        # parameters computed at run time mostly repeat (shapes of a streaming model)
        key = (x.shape, _key(starts), _key(ends), _key(axes), _key(steps))
        idx = cache.get(key)
        if idx is None:
            check_slice_vectors(node, (starts, ends, axes, steps))
            idx = _slice_index(
                node, x.shape, starts.tolist(), ends.tolist(),
                None if axes is None else axes.tolist(),
                None if steps is None else steps.tolist())
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
            cache[key] = idx
        return x[idx]

    return fn


def _key(a) -> tuple | None:
    """An integer parameter array as a dictionary key."""
    return None if a is None else (a.dtype.str, a.shape, a.tobytes())


# ----------------------------------------------------------------------------- Gather


@kernel("Gather", since=1)
def _gather(node, ctx):
    """Gather: ``np.take`` along `axis`; negative indices count from the end."""
    axis = int(attr_or_default(node, "axis"))
    take = np.take
    heads = [(slice(None),) * a for a in range(8)]  # index prefixes for axis 0..7

    def fn(data, indices):
        if indices.ndim == 0 and indices.dtype.kind in "iu":  # one index: basic indexing
            rank = data.ndim
            a = axis + rank if axis < 0 else axis
            if 0 <= a < rank and a < 8:
                try:
                    r = data[heads[a] + (indices,)]
                except IndexError as e:
                    raise ExecutionError(f"{where(node)}: {e}") from None
                return r if r.__class__ is ndarray else asarray(r)
        if not -data.ndim <= axis < data.ndim:  # np.take reads -2**31 as "flatten first"
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {data.ndim}")
        try:
            return asarray(take(data, indices, axis=axis))
        except IndexError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None

    return fn


@kernel("GatherElements", since=11)
def _gather_elements(node, ctx):
    axis = int(attr_or_default(node, "axis"))

    def fn(data, indices):
        a = axis + data.ndim if axis < 0 else axis
        dim = data.shape[a] if 0 <= a < data.ndim else 0
        bad = indices[(indices < -dim) | (indices >= dim)] if indices.size else indices
        if bad.size:
            raise ExecutionError(f"{where(node)}: index {int(bad.reshape(-1)[0])} is out of "
                                 f"range for axis {axis} of shape {list(data.shape)}")
        idx = np.where(indices < 0, indices + data.shape[a], indices)
        try:
            return np.take_along_axis(data, idx, axis=a)
        except IndexError as e:
            raise ExecutionError(f"{where(node)}: {e}") from None

    return fn


# ----------------------------------------------------------------------------- Scatter


_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _reduction(node, reduction) -> str:
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    if reduction != "none" and reduction not in _COMBINE:
        raise ModelError(f"{where(node)}: unknown reduction {reduction!r}")
    return reduction


def _written(data, key: tuple, updates, reduction: str):
    """A copy of `data` with `updates` written at `key` (combined by `reduction`)."""
    out = np.array(data, copy=True)
    if reduction == "none":
        out[key] = updates
    else:
        _COMBINE[reduction].at(out, key, updates)
    return out


def _scatter_elements(node, axis: int, reduction: str):
    """ScatterElements (and the deprecated Scatter): a copy of `data` with `updates` written
    at `indices` along `axis`; `reduction` combines instead of overwriting (opset 16/18)."""
    reduction = _reduction(node, reduction)

    def fn(data, indices, updates):
        a = axis + data.ndim if axis < 0 else axis
        dim = data.shape[a] if 0 <= a < data.ndim else 0
        bad = indices[(indices < -dim) | (indices >= dim)] if indices.size else indices
        if bad.size:
            raise ExecutionError(f"{where(node)}: index {int(bad.reshape(-1)[0])} is out of "
                                 f"range for axis {axis} of shape {list(data.shape)}")
        idx = np.where(indices < 0, indices + data.shape[a], indices).astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= data.shape[a]):
            raise ExecutionError(f"{where(node)}: index out of range for axis of {data.shape[a]}")
        grid = list(np.indices(idx.shape, sparse=True))
        grid[a] = idx
        return _written(data, tuple(grid), updates, reduction)

    return fn


@kernel("Scatter", since=9)
def _scatter(node, ctx):
    return _scatter_elements(node, int(attr_or_default(node, "axis")), "none")


@kernel("ScatterElements", since=11)
def _scatter_elements_kernel(node, ctx):
    return _scatter_elements(node, int(attr_or_default(node, "axis")),
                             attr_or_default(node, "reduction"))


def _nd_indices(node, indices, dims, what: str) -> tuple:
    """Index vectors (last axis of `indices`) as a tuple of index arrays, negative entries
    counted from the end, checked against `dims`."""
    idx = np.asarray(indices, np.int64)
    dims = np.asarray(dims, np.int64)
    idx = np.where(idx < 0, idx + dims, idx)
    if idx.size and ((idx < 0) | (idx >= dims)).any():
        raise out_of_range(node, what)
    return tuple(np.moveaxis(idx, -1, 0))


@kernel("ScatterND", since=11)
def _scatter_nd(node, ctx):
    """ScatterND (`backends.common.nd_index`): a copy of `data` with `updates` written at the
    index vectors of `indices`; `reduction` combines instead (opset 16/18)."""
    reduction = _reduction(node, attr_or_default(node, "reduction"))

    def fn(data, indices, updates):
        k = check_updates(node, data.shape, indices.shape, updates.shape)
        key = _nd_indices(node, indices, data.shape[:k], "ScatterND")
        return _written(data, key, updates, reduction)

    return fn


@kernel("GatherND", since=11)
def _gather_nd(node, ctx):
    """GatherND (`backends.common.nd_index`) with `batch_dims` leading axes shared."""
    b = int(attr_or_default(node, "batch_dims"))

    def fn(data, indices):
        k = index_depth(node, data.shape, indices.shape, b)
        key = _nd_indices(node, indices, data.shape[b:b + k], "GatherND")
        if b == 0:
            return np.asarray(data[key])
        grid = np.indices(indices.shape[:b], sparse=True)
        grid = [g.reshape(g.shape + (1,) * (indices.ndim - 1 - b)) for g in grid]
        return np.asarray(data[(*grid, *key)])

    return fn


# ----------------------------------------------------------------------------- OneHot


@kernel("OneHot", since=9)
def _one_hot(node, ctx):
    """``out[..., d, ...] = on if indices[...] (wrapped when negative) == d else off``, with the
    depth axis inserted at `axis`; a negative depth is an error, as in ONNX Runtime."""
    axis = int(attr_or_default(node, "axis"))

    def fn(indices, depth, values):
        d = np.asarray(depth)
        if d.size != 1:
            raise ExecutionError(f"{where(node)}: depth must hold one element, got {d.shape}")
        n = int(d.reshape(()))
        if n < 0:
            raise ExecutionError(f"{where(node)}: depth must not be negative, got {n}")
        values = np.asarray(values)
        if values.size != 2:
            raise ExecutionError(f"{where(node)}: values must hold [off, on], got {values.shape}")
        idx = np.asarray(indices).astype(np.int64)
        rank = idx.ndim + 1
        ax = axis + rank if axis < 0 else axis
        if not 0 <= ax < rank:
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {rank}")
        idx = np.where(idx < 0, idx + n, idx)
        hot = np.expand_dims(idx, ax) == np.arange(n).reshape(
            [n if i == ax else 1 for i in range(rank)])
        flat = values.reshape(-1)
        return asarray(np.where(hot, flat[1], flat[0]).astype(values.dtype, copy=False))

    return fn


# ----------------------------------------------------------------------------- ReverseSequence


@kernel("ReverseSequence", since=10)
def _reverse_sequence(node, ctx):
    """Each batch entry's first ``sequence_lens[b]`` steps along ``time_axis`` reversed, the
    rest kept; a length outside ``[0, steps]`` is an `ExecutionError`, as in ONNX Runtime
    (`onnx.reference` read past the axis). The axes are 0 and 1, one each (checked at load)."""
    batch_axis = int(attr_or_default(node, "batch_axis"))
    time_axis = int(attr_or_default(node, "time_axis"))

    def fn(x, lens):
        steps = x.shape[time_axis]
        n = lens.astype(np.int64).reshape(-1)
        if n.size != x.shape[batch_axis]:
            raise ExecutionError(f"{where(node)}: {n.size} sequence_lens for a batch of "
                                 f"{x.shape[batch_axis]}")
        if n.size and (n.min() < 0 or n.max() > steps):
            raise ExecutionError(f"{where(node)}: sequence_lens must lie in [0, {steps}] (the "
                                 "length of the time axis)")
        shape = [1] * x.ndim
        shape[time_axis] = steps
        t = np.arange(steps, dtype=np.int64).reshape(shape)
        shape = [1] * x.ndim
        shape[batch_axis] = -1
        n = n.reshape(shape)
        idx = np.broadcast_to(np.where(t < n, n - 1 - t, t), x.shape)
        return np.take_along_axis(x, idx, axis=time_axis)

    return fn

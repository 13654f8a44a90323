"""Shape-changing kernels: Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Expand, Tile,
Shape, Size.

Reshape, Transpose, Squeeze, Unsqueeze and Flatten return views of their input (kernels never
write into their inputs). Expand returns a fresh array. Where a shape/axes operand is an
initializer, the factory resolves it once at compile time.
"""

from __future__ import annotations

import numpy as np
from numpy import asarray

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr, attr_ints, attr_or_default, const_input
from ...common.reshape import reshape_target, shape_not_a_vector
from . import kernel

# ----------------------------------------------------------------------------- Reshape


@kernel("Reshape", since=5)
def _reshape(node, ctx):
    """Reshape: 0 copies the input dim (unless ``allowzero``), -1 is inferred."""
    allowzero = bool(attr_or_default(node, "allowzero"))
    const = const_input(node, 1)
    if const is not None and const.ndim != 1:
        raise ModelError(shape_not_a_vector(node, const.shape))
    if const is not None and (allowzero or 0 not in const.tolist()):
        target = tuple(int(d) for d in const.reshape(-1))

        def fn_const(x, shape):
            return x.reshape(target)

        return fn_const

    def fn(x, shape):
        if shape.ndim != 1:
            raise ExecutionError(shape_not_a_vector(node, shape.shape))
        return x.reshape(reshape_target(node, shape.tolist(), x.shape, allowzero))

    return fn


# ----------------------------------------------------------------------------- Transpose


@kernel("Transpose", since=1)
def _transpose(node, ctx):
    perm = attr_ints(node, "perm")
    if perm is None:
        return lambda x: x.transpose()
    perm_t = tuple(perm)
    return lambda x: x.transpose(perm_t)


# ----------------------------------------------------------------------------- Squeeze / Unsqueeze


def _squeeze_fn(node, axes_of):
    def fn(x, axes=None):
        ax = axes_of(axes)
        if ax is None:
            return asarray(x.squeeze())
        if not ax:
            return x
        try:
            return asarray(x.squeeze(tuple(ax)))
        except ValueError as e:
            raise ExecutionError(
                f"{where(node)}: cannot squeeze axes {list(ax)} of shape {x.shape}"
            ) from e

    return fn


def _by_shape(fn):
    """For axes fixed at compile time: remember the result shape per input shape, so that a
    repeated call is one ``reshape`` (a view, as the uncached kernel gives)."""
    cache: dict[tuple, tuple] = {}

    def cached(x, axes=None):
        shape = cache.get(x.shape)
        if shape is not None:
            return x.reshape(shape)
        r = fn(x, axes)
        if len(cache) >= 64:
            cache.clear()
        cache[x.shape] = r.shape
        return r

    return cached


def _by_shape_and_axes(fn):
    """`_by_shape` for axes given at run time: the result shape per (input shape, axes)."""
    cache: dict[tuple, tuple] = {}

    def cached(x, axes=None):
        key = (x.shape, None if axes is None else (axes.dtype.str, axes.shape, axes.tobytes()))
        shape = cache.get(key)
        if shape is not None:
            return x.reshape(shape)
        r = fn(x, axes)
        if len(cache) >= 64:
            cache.clear()
        cache[key] = r.shape
        return r

    return cached


@kernel("Squeeze", since=13)
def _squeeze(node, ctx):
    const = const_input(node, 1)
    if const is not None:
        axes = const.reshape(-1).tolist()
        return _by_shape(_squeeze_fn(node, lambda _: axes))
    if len(node.inputs) < 2 or node.inputs[1] is None:
        return _by_shape(_squeeze_fn(node, lambda _: None))
    return _by_shape_and_axes(
        _squeeze_fn(node, lambda a: None if a is None else a.reshape(-1).tolist()))


def _unsqueeze_fn(node, axes_of):
    def fn(x, axes=None):
        ax = axes_of(axes)
        try:
            return np.expand_dims(x, tuple(ax))
        except (ValueError, np.exceptions.AxisError) as e:
            raise ExecutionError(
                f"{where(node)}: cannot unsqueeze shape {x.shape} at axes {list(ax)}"
            ) from e

    return fn


@kernel("Unsqueeze", since=13)
def _unsqueeze(node, ctx):
    const = const_input(node, 1)
    if const is not None:
        axes = const.reshape(-1).tolist()
        return _by_shape(_unsqueeze_fn(node, lambda _: axes))
    return _by_shape_and_axes(_unsqueeze_fn(node, lambda a: a.reshape(-1).tolist()))


# ----------------------------------------------------------------------------- Flatten


@kernel("Flatten", since=1)
def _flatten(node, ctx):
    """Flatten: 2-D ``(prod(shape[:axis]), prod(shape[axis:]))``; axis may be negative (11+)."""
    axis = int(attr_or_default(node, "axis"))

    def fn(x):
        if not -x.ndim <= axis <= x.ndim:
            raise ExecutionError(f"{where(node)}: axis {axis} out of range for rank {x.ndim}")
        a = axis + x.ndim if axis < 0 else axis
        outer = 1
        for d in x.shape[:a]:
            outer *= d
        inner = 1
        for d in x.shape[a:]:
            inner *= d
        return x.reshape(outer, inner)

    return fn


# ----------------------------------------------------------------------------- Expand, Tile


@kernel("Expand", since=8)
def _expand(node, ctx):
    """Expand: bidirectional broadcast of the input with `shape`."""

    def fn(x, shape):
        try:
            out = np.broadcast_shapes(x.shape, tuple(int(d) for d in shape.reshape(-1)))
        except ValueError as e:
            raise ExecutionError(
                f"{where(node)}: cannot expand shape {x.shape} to {shape.tolist()}"
            ) from e
        return np.array(np.broadcast_to(x, out))

    return fn


@kernel("Tile", since=6)
def _tile(node, ctx):
    """Tile (``Tile``-1 is read into this form: `ir.legacy_forms`)."""

    def fn(x, repeats):
        reps = tuple(int(r) for r in repeats.reshape(-1))
        if len(reps) != x.ndim:
            raise ExecutionError(
                f"{where(node)}: repeats has {len(reps)} entries for an input of rank {x.ndim}"
            )
        if any(r < 0 for r in reps):
            raise ExecutionError(f"{where(node)}: repeats must not be negative, got {list(reps)}")
        return asarray(np.tile(x, reps))

    return fn


# ----------------------------------------------------------------------------- Shape, Size


@kernel("Shape", since=1)
def _shape(node, ctx):
    """Shape: int64 1-D; `start`/`end` (opset 15) select a clamped range of dims."""
    start = attr_or_default(node, "start")
    end = attr(node, "end")
    sl = slice(int(start), None if end is None else int(end))
    int64 = np.int64

    def fn(x):
        return np.array(x.shape[sl], dtype=int64)

    return fn


@kernel("Size", since=1)
def _size(node, ctx):
    int64 = np.int64
    return lambda x: np.array(x.size, dtype=int64)


@kernel("Trilu", since=14)
def _trilu(node, ctx):
    """The upper (``upper=1``) or lower triangle of the last two axes, from diagonal `k`."""
    keep = np.triu if int(attr_or_default(node, "upper")) else np.tril

    def fn(x, k=None):
        if x.ndim < 2:
            raise ExecutionError(f"{where(node)}: Trilu needs rank 2 or more, got {x.ndim}")
        kk = 0 if k is None else int(np.asarray(k).reshape(()))
        return keep(x, kk)

    return fn

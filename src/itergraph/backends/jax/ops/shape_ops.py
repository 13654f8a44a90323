"""Shape-changing rules: Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Expand, Tile, Shape,
Size, Identity, Dropout (inference).

Target shapes, axes and repeats must be known at trace time (constants, or values computed
from constants and shapes); Shape and Size are always static, since shapes are.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ...common.reshape import reshape_target, shape_not_a_vector
from ..table import lowering
from ._util import attr, attr_ints, attr_or_default, norm_axis


def _reshape(cx, x, target):
    try:
        return cx.xp.reshape(x, tuple(target))
    except (ValueError, TypeError) as e:
        raise ExecutionError(f"{where(cx.node)}: cannot reshape {tuple(x.shape)} to "
                             f"{list(target)}: {e}") from None


@lowering("Reshape", since=5, fold=True)
def _reshape5(cx, x, shape):
    if len(getattr(shape, "shape", (0,))) != 1:  # a constant's fault is the model's
        error = ModelError if isinstance(shape, np.ndarray) else ExecutionError
        raise error(shape_not_a_vector(cx.node, shape.shape))
    s = cx.ints(shape, "the target shape (input 1)")
    zero = bool(attr_or_default(cx.node, "allowzero"))
    return _reshape(cx, x, reshape_target(cx.node, s, x.shape, zero))


@lowering("Transpose", since=1, fold=True)
def _transpose(cx, x):
    perm = attr_ints(cx.node, "perm")
    return cx.xp.transpose(x, None if perm is None else tuple(perm))


def _squeeze(cx, x, axes):
    if axes is None:
        axes = [i for i, d in enumerate(x.shape) if d == 1]
    if not axes:
        return x
    ax = tuple(a + x.ndim if a < 0 else a for a in axes)
    if any(not 0 <= a < x.ndim or x.shape[a] != 1 for a in ax):
        raise ExecutionError(f"{where(cx.node)}: cannot squeeze axes {list(axes)} of shape "
                             f"{tuple(x.shape)}")
    return cx.xp.squeeze(x, ax)


@lowering("Squeeze", since=13, fold=True)
def _squeeze13(cx, x, axes=None):
    return _squeeze(cx, x, None if axes is None else cx.ints(axes, "axes (input 1)"))


def _unsqueeze(cx, x, axes):
    rank = x.ndim + len(axes)
    ax = sorted(a + rank if a < 0 else a for a in axes)
    if len(set(ax)) != len(ax) or any(not 0 <= a < rank for a in ax):
        raise ExecutionError(f"{where(cx.node)}: cannot unsqueeze shape {tuple(x.shape)} at "
                             f"axes {list(axes)}")
    return cx.xp.expand_dims(x, tuple(ax))


@lowering("Unsqueeze", since=13, fold=True)
def _unsqueeze13(cx, x, axes):
    return _unsqueeze(cx, x, cx.ints(axes, "axes (input 1)"))


@lowering("Flatten", since=1, fold=True)
def _flatten(cx, x):
    axis = int(attr_or_default(cx.node, "axis"))
    a = axis if axis == x.ndim else norm_axis(cx, axis, x.ndim)  # axis may be the rank
    outer = int(np.prod(x.shape[:a], dtype=np.int64))
    inner = int(np.prod(x.shape[a:], dtype=np.int64))
    return cx.xp.reshape(x, (outer, inner))


@lowering("Expand", since=8, fold=True)
def _expand(cx, x, shape):
    dims = tuple(cx.ints(shape, "the target shape (input 1)"))
    try:
        out = np.broadcast_shapes(tuple(x.shape), dims)
    except ValueError:
        raise ExecutionError(f"{where(cx.node)}: cannot expand shape {tuple(x.shape)} to "
                             f"{list(dims)}") from None
    r = cx.xp.broadcast_to(x, out)
    return np.array(r) if cx.folding else r


@lowering("Tile", since=6, fold=True)
def _tile(cx, x, repeats):
    reps = cx.ints(repeats, "repeats (input 1)")
    if len(reps) != x.ndim:
        raise ExecutionError(f"{where(cx.node)}: repeats has {len(reps)} entries for an input "
                             f"of rank {x.ndim}")
    if any(r < 0 for r in reps):
        raise ExecutionError(f"{where(cx.node)}: repeats must not be negative, got {reps}")
    return cx.xp.tile(x, tuple(reps))


@lowering("Shape", since=1)
def _shape(cx, x):
    start = attr_or_default(cx.node, "start")
    end = attr(cx.node, "end")
    return np.array(tuple(x.shape)[slice(int(start), None if end is None else int(end))],
                    dtype=np.int64)


@lowering("Size", since=1)
def _size(cx, x):
    return np.array(int(np.prod(x.shape, dtype=np.int64)), dtype=np.int64)


@lowering("Identity", since=1, fold=True)
def _identity(cx, x):
    return x


@lowering("Dropout", since=1, fold=True)
def _dropout(cx, x, ratio=None, training_mode=None):
    """Inference only: a training-mode Dropout (random mask) is left to NumPy. Opset 12 on
    (older nodes were rewritten at import: `ir.legacy_forms`): the mask is bool."""
    if training_mode is not None:
        if not bool(cx.const(training_mode, "training_mode").reshape(())):
            training_mode = None
        else:
            cx.fail("training-mode Dropout draws a random mask; it is not lowered")
    if len(cx.node.outputs) == 1:
        return x
    return x, cx.xp.ones(x.shape, dtype=bool)


@lowering("NonEmpty", domain="itergraph")
def _non_empty(cx, x, of=None):
    """The guard of `passes.split_sequence_reads` (see the NumPy kernel): the length is
    static while tracing, so the check costs nothing at run time."""
    v = x if of is None else of
    if v.shape[int(attr(cx.node, "axis", 0))] == 0:
        raise ExecutionError(str(attr(cx.node, "message", where(cx.node))))
    return x

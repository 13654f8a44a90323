"""Pad (opset 1-25) on NumPy.

Forms: opset 1 takes the widths in the attribute ``paddings``, opset 2 in ``pads``, both with
the fill in the float attribute ``value`` (default 0); from opset 11 the widths are the
int64 input ``pads`` and the fill the optional scalar input ``constant_value`` (default 0,
``False`` or the empty string, after the element type); from opset 18 the optional input
``axes`` (negative counts from the back) names the axes the widths are for, the others are
not padded.

``pads`` lists ``[b_1, ..., b_k, e_1, ..., e_k]``: ``b_i`` elements are added before and
``e_i`` after axis ``i``. A negative width removes that many elements from that side instead;
removing more than the axis has is an error. Cropping comes first, the padding is made from
what is left (as ONNX Runtime does).

Modes (``mode``, default ``constant``): ``constant`` fills with the value; ``reflect`` mirrors
the axis without repeating its edge (``[1, 2, 3]`` padded by 2 at the front:
``[3, 2, 1, 2, 3]``); ``edge`` repeats the edge element; ``wrap`` (opset 19) continues
periodically (``[2, 3, 1, 2, 3]``).

Constant padding allocates the output filled with the value and assigns the input (or its
cropped part) into it; the other modes gather each padded axis with one precomputed index
array (``take``). The geometry of each (input shape, widths, axes) is computed once and
kept.
"""

from __future__ import annotations

import numpy as np

from ....errors import ExecutionError, ModelError, where
from ....ir.attributes import attr_str, const_input
from ...common.slicing import check_pad_crop
from . import kernel

_MAX_PLANS = 64  # geometries kept per node (shapes rarely vary; a bound all the same)

_MODES = ("constant", "reflect", "edge", "wrap")


class _Plan:
    """The geometry of one padding: cropped part of the input, where it goes, output shape."""

    __slots__ = ("same", "src", "dst", "shape", "gather_src", "takes")

    def __init__(self, node, shape, pads, axes, mode):
        rank = len(shape)
        if axes is None:
            axes = list(range(rank))
        else:
            bad = [a for a in axes if not -rank <= a < rank]
            if bad:
                raise ExecutionError(f"{where(node)}: axes {list(axes)} out of range for an "
                                     f"input of rank {rank}")
            axes = [a % rank for a in axes]
            if len(set(axes)) != len(axes):
                raise ExecutionError(f"{where(node)}: axes {list(axes)} repeat an axis")
        if len(pads) != 2 * len(axes):
            raise ExecutionError(f"{where(node)}: {len(pads)} pads for {len(axes)} axes "
                                 f"(need 2 per axis: all begins, then all ends)")
        before, after = [0] * rank, [0] * rank
        for a, b, e in zip(axes, pads[:len(axes)], pads[len(axes):]):
            before[a], after[a] = int(b), int(e)
        src, dst, out = [], [], []
        gather_src, takes = [], []  # non-constant modes: crop, then one gather per padded axis
        for a, (d, b, e) in enumerate(zip(shape, before, after)):
            cut_b, cut_e = max(0, -b), max(0, -e)
            kept = d - cut_b - cut_e
            check_pad_crop(node, d, b, e)
            add_b, add_e = max(0, b), max(0, e)
            src.append(slice(cut_b, d - cut_e))
            dst.append(slice(add_b, add_b + kept))
            out.append(add_b + kept + add_e)
            if mode != "constant" and (add_b or add_e):
                if kept == 0:
                    raise ExecutionError(f"{where(node)}: cannot pad an empty axis in {mode} "
                                         "mode")
                takes.append((a, cut_b + _source(mode, kept, add_b, add_e)))
                gather_src.append(slice(None))
            else:
                gather_src.append(src[-1])
        self.same = not any(before) and not any(after)
        self.src, self.dst, self.shape = tuple(src), tuple(dst), tuple(out)
        self.gather_src, self.takes = tuple(gather_src), takes


def _source(mode: str, n: int, b: int, e: int) -> np.ndarray:
    """For each element of an axis of `n` elements padded by `b` before and `e` after: the
    element it copies (``reflect``, ``edge`` or ``wrap``)."""
    j = np.arange(-b, n + e)
    if mode == "edge":
        return np.clip(j, 0, n - 1)
    if mode == "wrap":
        return j % n
    if n == 1:
        return np.zeros_like(j)
    m = j % (2 * n - 2)  # reflect: period 2 (n - 1), the edges not repeated
    return np.where(m < n, m, 2 * n - 2 - m)


def _padder(node, mode: str):
    """``pad(x, pads, value, axes)`` for the node's mode, keeping one plan per geometry."""
    if mode not in _MODES:
        raise ModelError(f"{where(node)}: unknown Pad mode {mode!r} (constant, reflect, edge "
                         "or wrap)")
    plans: dict[tuple, _Plan] = {}

    def plan(shape, pads, axes) -> _Plan:
        key = (shape, pads, axes)
        p = plans.get(key)
        if p is None:
            if len(plans) >= _MAX_PLANS:
                plans.clear()
            p = plans[key] = _Plan(node, shape, pads, axes, mode)
        return p

    if mode == "constant":
        def pad(x, pads, value, axes):
            p = plan(x.shape, pads, axes)
            if p.same:
                return x
            if x.dtype == object:  # strings: the empty string unless told
                y = np.full(p.shape, "" if value is None else value, object)
            elif value is None or not value:
                y = np.zeros(p.shape, x.dtype)
            else:
                y = np.full(p.shape, value, x.dtype)
            y[p.dst] = x[p.src]
            return y

        return pad

    def pad_mode(x, pads, value, axes):
        p = plan(x.shape, pads, axes)
        if p.same:
            return x
        y = x[p.gather_src]
        for axis, index in p.takes:
            y = y.take(index, axis=axis)
        return y

    return pad_mode


def _scalar(v):
    """The fill value of a ``constant_value`` input (absent or empty: the default)."""
    if v is None or v.size == 0:
        return None
    return v.reshape(-1)[0]


@kernel("Pad", since=11)
def _pad_inputs(node, ctx):
    """Opset 11 and later: widths, fill value and (opset 18) axes are inputs."""
    pad = _padder(node, attr_str(node, "mode", "constant") or "constant")
    pads_c, axes_c = const_input(node, 1), const_input(node, 3)
    pads_k = None if pads_c is None else tuple(int(p) for p in pads_c.reshape(-1))
    axes_k = None if axes_c is None else tuple(int(a) for a in axes_c.reshape(-1))

    def fn(x, pads, value=None, axes=None):
        p = pads_k if pads is pads_c else tuple(pads.reshape(-1).tolist())
        if axes is None:
            a = None
        else:
            a = axes_k if axes is axes_c else tuple(axes.reshape(-1).tolist())
        return pad(x, p, _scalar(value), a)

    return fn

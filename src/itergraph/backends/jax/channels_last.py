"""Channels-last forms of channel-first values, carried through a trace.

ONNX lays images out channels first (``[N, C, *spatial]``). XLA's CPU code pads, broadcasts
per-channel vectors and shifts depthwise windows several times faster with the channels on
the last axis (the innermost loop then runs over contiguous channels), and its matrix
products read a 1x1 convolution's operand either way. So the convolutions compute channels
last (`ops.conv`) and record, for the channel-first result they hand back (a transpose of
their own), the channels-last array it came from. A later convolution, pooling, batch
normalization or element-wise node whose inputs have such a form computes on the form
directly and records its own result the same way: in a CNN, every value between two layers
is then held channels last, and the transposes back to channels first are left for the
consumers that read the channel-first order (a Reshape, a Transpose, the graph outputs), or
removed by XLA where nothing reads them.

What each value means is unchanged: a recorded form is only another layout of the value, and
every rule that does not ask for it sees the channel-first value, as before.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from ...ir.traits import ELEMENTWISE, traits
from .context import TraceContext, is_static

#: the least rank a channels-last form is kept for (a batch, a channel and a spatial axis)
MIN_RANK = 3


def form(tc: TraceContext, x: Any):
    """The recorded channels-last array of channel-first `x`, or None."""
    e = tc.channels_last.get(id(x))
    return e[0] if e is not None and e[1] is x else None


def to_last(tc: TraceContext, x: Any):
    """`x` (``[N, C, *spatial]``) channels last: its recorded form, else a transpose."""
    z = None if is_static(x) else form(tc, x)
    if z is not None:
        return z
    return np.moveaxis(x, 1, -1) if is_static(x) else _jnp().moveaxis(x, 1, -1)


def from_last(tc: TraceContext, z: Any):
    """The channel-first value of channels-last `z`, with `z` recorded as its form."""
    if is_static(z):
        return np.moveaxis(z, -1, 1)
    x = _jnp().moveaxis(z, -1, 1)
    tc.channels_last[id(x)] = (z, x)
    return x


def elementwise(tc: TraceContext, node, inputs: list, call) -> list | None:
    """An element-wise node computed on its inputs' channels-last forms: ``call(inputs)``
    runs the node's rule on the given inputs. None (nothing done) unless the node is
    element-wise, some input has a form, every input with a form has the same shape, and
    every other input broadcasts along the channel axis alone (a per-channel vector, a
    scalar)."""
    if not traits(node.op_type, node.domain) & ELEMENTWISE or "broadcast" in node.attrs:
        return None
    forms = [None if x is None or is_static(x) else form(tc, x) for x in inputs]
    shapes = {tuple(x.shape) for x, z in zip(inputs, forms) if z is not None}
    if len(shapes) != 1:
        return None
    (shape,) = shapes
    if len(shape) < MIN_RANK:
        return None
    moved = []
    for x, z in zip(inputs, forms):
        if x is None or z is not None:
            moved.append(z)
            continue
        full = (1,) * (len(shape) - x.ndim) + tuple(x.shape)
        if x.ndim > len(shape) or any(d != 1 for i, d in enumerate(full) if i != 1):
            return None
        xp = np if is_static(x) else _jnp()
        moved.append(xp.moveaxis(xp.reshape(x, full), 1, -1))
    out = call(moved)
    last = (shape[0], *shape[2:], shape[1])
    if len(node.outputs) != 1 or tuple(getattr(out, "shape", ())) != last:
        return None
    return [from_last(tc, out)]


#: ops computed on their inputs' forms with their axis attribute moved (`along_axis`)
AXIS_OPS = ("Concat", "Split")


def along_axis(tc: TraceContext, node, inputs: list, call) -> list | None:
    """A Concat or Split of values held channels last, or a Resize of one, computed on the
    forms: ``call(inputs, node)`` runs the rule for a copy of the node whose ``axis`` (or
    whose scales, sizes and roi) follow the channels-last order. None (nothing done) unless
    every tensor input has a form."""
    if node.domain != "" or (node.op_type not in AXIS_OPS and node.op_type != "Resize"):
        return None
    tensors = inputs[:1] if node.op_type in ("Split", "Resize") else inputs
    forms = [None if x is None or is_static(x) else form(tc, x) for x in tensors]
    if not forms or any(z is None for z in forms) or tensors[0].ndim < MIN_RANK:
        return None
    rank = tensors[0].ndim
    moved = copy.copy(node)
    if node.op_type == "Resize":
        if "axes" in node.attrs or len(inputs) < 3:
            return None
        rest = [_permuted(v, rank) for v in inputs[1:]]
        if any(r is False for r in rest):
            return None
        out = call([forms[0], *rest], node)
    else:
        axis = int(node.attrs.get("axis", 1 if node.op_type == "Concat" else 0))
        if not -rank <= axis < rank:
            return None
        moved.attrs = {**node.attrs, "axis": _last_axis(axis % rank, rank)}
        out = call(forms + list(inputs[len(forms):]), moved)
    outs = list(out) if len(node.outputs) > 1 else [out]
    return [from_last(tc, z) for z in outs]


def _last_axis(a: int, rank: int) -> int:
    """Where axis `a` of a channel-first value sits in its channels-last form."""
    return a if a == 0 else rank - 1 if a == 1 else a - 1


def _permuted(v, rank: int):
    """A Resize's roi, scales or sizes in channels-last order (None stays None); False
    when it is not a constant of the expected length."""
    if v is None or (is_static(v) and v.size == 0):
        return v
    if not is_static(v) or v.ndim != 1 or v.size not in (rank, 2 * rank):
        return False
    order = [0, *range(2, rank), 1]
    if v.size == rank:
        return v[order]
    return np.concatenate([v[:rank][order], v[rank:][order]])


def _jnp():
    import jax.numpy as jnp

    return jnp

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


def _jnp():
    import jax.numpy as jnp

    return jnp

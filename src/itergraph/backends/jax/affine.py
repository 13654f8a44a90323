"""Tracking integer values of the form ``base + constant`` through a trace.

A loop body that slices ``x[i : i + 1]`` with the iteration number ``i`` has run-time starts
and ends, but a slice size known at trace time (``(i + 1) - i``). XLA can express that as a
dynamic slice of static size. To see it, the tracer records, for small traced integer
values, that they equal a traced `base` plus a constant offset (per element), and carries
that through Add/Sub with constants and reshaping ops. `Slice` asks for it.

The base is a scalar (broadcast to every element) or a small traced vector itself, element
for element: ``ends = starts + [2, 3]`` with ``starts`` a run-time ``Concat`` of an index and
a constant (a two-axis ``lax.dynamic_slice`` as jax2onnx writes it) has a known difference
from ``starts`` even though ``starts`` is no scalar plus constants.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import TraceContext, is_static

MAX_ELEMENTS = 8


def affine_of(tc: TraceContext, x) -> tuple[Any, np.ndarray] | None:
    """(base, offset) with x == base + offset (flat element k of x is the base's element k,
    or its only one, plus offset element k), or None. Static x: (None, x). A small traced
    integer value without a recorded form is its own base."""
    if is_static(x):
        return (None, x.astype(np.int64)) if x.dtype.kind in "iu" else None
    e = tc.affine.get(id(x))
    if e is not None and e[2] is x:
        return e[0], e[1]
    if 0 < getattr(x, "size", 0) <= MAX_ELEMENTS and np.dtype(x.dtype).kind in "iu":
        return x, np.zeros(tuple(x.shape), np.int64)
    return None


def _record(tc: TraceContext, out, base, off) -> None:
    if base is None or is_static(out) or not hasattr(out, "shape") \
            or base.size not in (1, out.size):  # a vector base broadcast: not element-wise
        return
    off = np.broadcast_to(np.asarray(off, np.int64), tuple(out.shape)).copy() \
        if off.size != int(np.prod(out.shape)) else np.asarray(off, np.int64).reshape(out.shape)
    tc.affine[id(out)] = (base, off, out)  # keep `out` alive so its id stays unique


def _add_sub(tc: TraceContext, node, inputs: list, out) -> None:
    if len(inputs) != 2:
        return
    a, b = (affine_of(tc, x) if x is not None else None for x in inputs)
    if a is None or b is None or (a[0] is not None and b[0] is not None):
        return
    if node.op_type == "Add":
        base = a[0] if a[0] is not None else b[0]
        _record(tc, out, base, np.broadcast_to(a[1] + b[1], tuple(out.shape)))
    elif a[0] is not None:  # base + c - d
        _record(tc, out, a[0], np.broadcast_to(a[1] - b[1], tuple(out.shape)))


def _same_elements(tc: TraceContext, node, inputs: list, out) -> None:
    """Ops that keep the elements (reshaping, casting): the offsets follow them."""
    if not inputs or inputs[0] is None:
        return
    a = affine_of(tc, inputs[0])
    if a is not None and a[0] is not None and a[1].size in (1, out.size):
        _record(tc, out, a[0], a[1].reshape(-1) if a[1].size == out.size else a[1])


def _concat(tc: TraceContext, node, inputs: list, out) -> None:
    parts = [affine_of(tc, x) for x in inputs]
    bases = {id(p[0]) for p in parts if p is not None and p[0] is not None}
    if any(p is None for p in parts) or len(bases) != 1:
        return
    if any(p[0] is None for p in parts):
        return  # mixed constants and base: offsets alone would lie for constants
    base = next(p[0] for p in parts if p[0] is not None)
    if base.size != 1:
        return  # the pieces of a vector base do not line up with the result's elements
    _record(tc, out, base, np.concatenate([p[1].reshape(-1) for p in parts]))


# op -> rule recording the affine form of the op's output from its inputs' forms
RULES = {
    "Add": _add_sub, "Sub": _add_sub, "Concat": _concat,
    **dict.fromkeys(("Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity", "Cast", "Expand"),
                    _same_elements),
}


def propagate(tc: TraceContext, node, inputs: list, outputs: list) -> None:
    """After `node` was traced: record the affine form of its output when one follows (the
    op has a rule in `RULES`)."""
    rule = RULES.get(node.op_type)
    if rule is None or len(outputs) != 1:
        return
    out = outputs[0]
    if is_static(out) or not hasattr(out, "size") or out.size > MAX_ELEMENTS \
            or np.dtype(out.dtype).kind not in "iu":
        return
    try:
        rule(tc, node, inputs, out)
    except (ValueError, TypeError):
        return

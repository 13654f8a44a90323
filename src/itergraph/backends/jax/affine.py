"""Tracking integer values of the form ``base + constant`` through a trace.

A loop body that slices ``x[i : i + 1]`` with the iteration number ``i`` has run-time starts
and ends, but a slice size known at trace time (``(i + 1) - i``). XLA can express that as a
dynamic slice of static size. To see it, the tracer records, for small traced integer
values, that they equal a traced scalar `base` plus a constant offset (per element), and
carries that through Add/Sub with constants, reshaping ops and casts. Exporters that compute
an index in float (paddle2onnx: ``end = cast(float(i) * 1.0 + 1.0)``) keep it too: a float
value records the same form while its constants are whole numbers, and a product with ones
keeps it. `Slice` asks for it and checks at run time that the bounds give the size it
assumed (a float too large to hold the integer exactly sends the run to NumPy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .context import TraceContext, is_static

MAX_ELEMENTS = 8


def affine_of(tc: TraceContext, x) -> tuple[Any, np.ndarray] | None:
    """(base, offset) with x == base + offset, or None. Static x: (None, x)."""
    if is_static(x):
        if x.dtype.kind in "iu":
            return None, x.astype(np.int64)
        whole = x.dtype.kind == "f" and x.size <= MAX_ELEMENTS and bool(
            np.all(np.isfinite(x)) and np.all(x == np.round(x)))
        return (None, x.astype(np.int64)) if whole else None
    e = tc.affine.get(id(x))
    if e is not None and e[2] is x:
        return e[0], e[1]
    if getattr(x, "size", 0) == 1 and np.dtype(x.dtype).kind in "iu":
        return x, np.zeros(tuple(x.shape), np.int64)
    return None


def _record(tc: TraceContext, out, base, off) -> None:
    if base is None or is_static(out) or not hasattr(out, "shape"):
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


def _times_one(tc: TraceContext, node, inputs: list, out) -> None:
    """``x * 1`` (a constant of ones): the form of `x`."""
    if len(inputs) != 2 or any(x is None for x in inputs):
        return
    for x, c in (inputs, inputs[::-1]):
        if is_static(c) and c.size <= MAX_ELEMENTS and bool(np.all(c == 1)):
            a = affine_of(tc, x)
            if a is not None and a[0] is not None:
                _record(tc, out, a[0], np.broadcast_to(a[1], tuple(out.shape)))
            return


def _concat(tc: TraceContext, node, inputs: list, out) -> None:
    parts = [affine_of(tc, x) for x in inputs]
    bases = {id(p[0]) for p in parts if p is not None and p[0] is not None}
    if any(p is None for p in parts) or len(bases) != 1:
        return
    if any(p[0] is None for p in parts):
        return  # mixed constants and base: offsets alone would lie for constants
    base = next(p[0] for p in parts if p[0] is not None)
    _record(tc, out, base, np.concatenate([p[1].reshape(-1) for p in parts]))


# op -> rule recording the affine form of the op's output from its inputs' forms
RULES = {
    "Add": _add_sub, "Sub": _add_sub, "Mul": _times_one, "Concat": _concat,
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
            or np.dtype(out.dtype).kind not in "iuf":
        return
    try:
        rule(tc, node, inputs, out)
    except (ValueError, TypeError):
        return

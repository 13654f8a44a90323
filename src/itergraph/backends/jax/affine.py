"""Tracking integer values of the form ``base + constant`` through a trace.

A loop body that slices ``x[i : i + 1]`` with the iteration number ``i`` has run-time starts
and ends, but a slice size known at trace time (``(i + 1) - i``). XLA can express that as a
dynamic slice of static size. To see it, the tracer records, for small traced integer
values, which elements equal a traced `base` plus a constant offset and which are constants,
and carries that through Add/Sub with constants, a product with ones, Concat, reshaping ops
and casts. `Slice` asks for it (`window_forms`) and checks at run time that the bounds give
the size it assumed.

The base is a scalar (broadcast to every element) or a small traced vector itself, element
for element. Both forms of a two-axis ``lax.dynamic_slice`` as converters write it are seen:
``ends = starts + [2, 3]`` with ``starts = Concat(i, 0)`` (jax2onnx), and ``starts =
Concat(i, 0)``, ``ends = Concat(i + 2, 3)`` built apart. Exporters that compute an index in
float (paddle2onnx: ``end = cast(float(i) * 1.0 + 1.0)``) keep the form too: a float constant
counts while it holds whole numbers (a float too large to hold the integer exactly fails the
run-time check and sends the run to NumPy).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .context import TraceContext, is_static

MAX_ELEMENTS = 8


class Affine(NamedTuple):
    """Flat element k of a value is ``base[k] + offset[k]`` where ``relative[k]`` (``base[0]``
    for a one-element base), else the constant ``offset[k]``. `base` None: all constant."""

    base: Any
    offset: np.ndarray
    relative: np.ndarray


def affine_of(tc: TraceContext, x) -> Affine | None:
    """The form of `x`, or None. Static x: all constant. A small traced integer value
    without a recorded form is its own base."""
    if is_static(x):
        whole = x.dtype.kind == "f" and x.size <= MAX_ELEMENTS and bool(
            np.all(np.isfinite(x)) and np.all(x == np.round(x)))
        if x.dtype.kind not in "iu" and not whole:
            return None
        return Affine(None, x.astype(np.int64), np.zeros(x.shape, bool))
    e = tc.affine.get(id(x))
    if e is not None and e[1] is x:
        return e[0]
    if 0 < getattr(x, "size", 0) <= MAX_ELEMENTS and np.dtype(x.dtype).kind in "iu":
        return Affine(x, np.zeros(tuple(x.shape), np.int64), np.ones(tuple(x.shape), bool))
    return None


def window_forms(tc: TraceContext, starts, ends) -> tuple[Affine, Affine] | None:
    """The flat forms of `starts` and `ends` when ``ends - starts`` is known per element
    while tracing (each pair the same base plus constants, or both constants), else None."""
    a, b = affine_of(tc, starts), affine_of(tc, ends)
    if a is None or b is None or a.offset.size != b.offset.size:
        return None
    ra, rb = a.relative.reshape(-1), b.relative.reshape(-1)
    if (ra != rb).any() or (ra.any() and a.base is not b.base):
        return None
    return (Affine(a.base, a.offset.reshape(-1), ra), Affine(b.base, b.offset.reshape(-1), rb))


def _record(tc: TraceContext, out, base, off, rel) -> None:
    if is_static(out) or not hasattr(out, "shape"):
        return
    rel = np.asarray(rel, bool)
    if base is None or not rel.any():
        base = None
    elif base.size not in (1, out.size):  # a vector base broadcast: not element-wise
        return
    shape = tuple(out.shape)
    off = np.broadcast_to(np.asarray(off, np.int64), shape).copy() \
        if off.size != int(np.prod(shape)) else np.asarray(off, np.int64).reshape(shape)
    rel = np.broadcast_to(rel, shape).copy() if rel.size != off.size else rel.reshape(shape)
    tc.affine[id(out)] = (Affine(base, off, rel), out)  # keep `out` alive: its id stays unique


def _add_sub(tc: TraceContext, node, inputs: list, out) -> None:
    if len(inputs) != 2:
        return
    a, b = (affine_of(tc, x) if x is not None else None for x in inputs)
    if a is None or b is None or (a.base is not None and b.base is not None):
        return
    shape = tuple(out.shape)
    if node.op_type == "Add":
        base, rel = (a.base, a.relative) if a.base is not None else (b.base, b.relative)
        _record(tc, out, base, np.broadcast_to(a.offset + b.offset, shape),
                np.broadcast_to(rel, shape))
    elif b.base is None:  # base + c - d
        _record(tc, out, a.base, np.broadcast_to(a.offset - b.offset, shape),
                np.broadcast_to(a.relative, shape))


def _same_elements(tc: TraceContext, node, inputs: list, out) -> None:
    """Ops that keep the elements (reshaping, casting): the forms follow them."""
    if not inputs or inputs[0] is None:
        return
    a = affine_of(tc, inputs[0])
    if a is not None and a.base is not None and a.offset.size in (1, out.size):
        _record(tc, out, a.base, a.offset.reshape(-1) if a.offset.size == out.size
                else a.offset, a.relative.reshape(-1) if a.relative.size == out.size
                else a.relative)


def _times_one(tc: TraceContext, node, inputs: list, out) -> None:
    """``x * 1`` (a constant of ones): the form of `x`."""
    if len(inputs) != 2 or any(x is None for x in inputs):
        return
    for x, c in (inputs, inputs[::-1]):
        if is_static(c) and c.size <= MAX_ELEMENTS and bool(np.all(c == 1)):
            a = affine_of(tc, x)
            if a is not None and a.base is not None:
                shape = tuple(out.shape)
                _record(tc, out, a.base, np.broadcast_to(a.offset, shape),
                        np.broadcast_to(a.relative, shape))
            return


def _concat(tc: TraceContext, node, inputs: list, out) -> None:
    parts = [affine_of(tc, x) for x in inputs]
    if any(p is None for p in parts):
        return
    bases = {id(p.base): p.base for p in parts if p.base is not None}
    if len(bases) != 1:
        return
    base = next(iter(bases.values()))
    if base.size != 1:
        return  # the pieces of a vector base do not line up with the result's elements
    _record(tc, out, base, np.concatenate([p.offset.reshape(-1) for p in parts]),
            np.concatenate([p.relative.reshape(-1) for p in parts]))


# op -> rule recording the form of the op's output from its inputs' forms
RULES = {
    "Add": _add_sub, "Sub": _add_sub, "Mul": _times_one, "Concat": _concat,
    **dict.fromkeys(("Unsqueeze", "Squeeze", "Reshape", "Flatten", "Identity", "Cast", "Expand"),
                    _same_elements),
}


def propagate(tc: TraceContext, node, inputs: list, outputs: list) -> None:
    """After `node` was traced: record the form of its output when one follows (the op has
    a rule in `RULES`)."""
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

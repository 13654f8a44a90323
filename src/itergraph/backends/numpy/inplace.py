"""Element-wise pairs the NumPy planner runs in place: an arithmetic node (``Add``, ``Sub``,
``Mul``, ``Div``), whose kernel always returns a new array ``t``, followed by the one node
that reads ``t`` -- ``Clip``, or ``Add``/``Sub``/``Mul``/``Div`` with ``t`` as either
operand -- which then writes its result into ``t`` instead of a new array (a hard-swish
``Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)`` allocates two arrays in place of four).

The second node runs in place only where that changes nothing but the memory: ``t`` is of a
floating type, the other operands have ``t``'s element type and broadcast into ``t``'s shape;
otherwise it runs as its own kernel would, on ``t``. Both nodes' kernels are the backend's
own (`kernels`), so results are bitwise those of the unfused pair.

`inplace_pair(node, consumer)` returns ``(kernel, inputs)`` for `fusions.fusion_for`, or None.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...ir import Node
from .kernels import factory_for
from .kernels.elementwise import clip

_PRODUCERS = frozenset({"Add", "Sub", "Mul", "Div"})
_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


def _fits(t: np.ndarray, o) -> bool:
    """Can ``ufunc(t, o, out=t)`` run: `o` an array of `t`'s type broadcasting into `t`?"""
    if o.__class__ is not np.ndarray or o.dtype != t.dtype or o.ndim > t.ndim:
        return False
    return all(d == 1 or d == e for d, e in zip(o.shape[::-1], t.shape[::-1]))


def _kernel(node: Node):
    return factory_for(node.op_type, node.version, node.domain)(node, None)


def binary_step(consumer: Node, slot: int):
    """``step(t, other)``: the consumer computed into `t`, which is its input `slot`."""
    ufunc = _BINARY[consumer.op_type]
    plain = _kernel(consumer)

    def step(t, o):
        if t.dtype.kind == "f" and _fits(t, o):
            return ufunc(t, o, out=t) if slot == 0 else ufunc(o, t, out=t)
        return plain(t, o) if slot == 0 else plain(o, t)

    return step


def _clip_step(consumer: Node):
    """``step(t, lo=None, hi=None)``: Clip (opset 11 on: bounds as inputs) computed into `t`."""
    plain = _kernel(consumer)

    def step(t, lo=None, hi=None):
        if t.dtype.kind != "f" or not all(b is None or _fits(t, b) for b in (lo, hi)):
            return plain(t, lo, hi)
        return clip(t, lo, hi, out=t)

    return step


def inplace_pair(node: Node, consumer: Node, known: Callable) -> tuple | None:
    """The kernel running `node` and `consumer` (the one reader of its output) with the
    second in place, and its inputs; None when the pair is none of this module's, or when
    `node`'s inputs are all known when compiling (the planner folds it instead)."""
    if (node.op_type not in _PRODUCERS or len(node.inputs) != 2 or len(consumer.outputs) != 1
            or all(isinstance(known(v), np.ndarray) for v in node.inputs)):
        return None
    t = node.outputs[0]
    slots = [i for i, v in enumerate(consumer.inputs) if v is t]
    if len(slots) != 1:
        return None
    slot = slots[0]
    produce = _kernel(node)
    if consumer.op_type == "Clip" and slot == 0:
        step = _clip_step(consumer)
        rest = list(consumer.inputs[1:])
    elif consumer.op_type in _BINARY and len(consumer.inputs) == 2:
        step = binary_step(consumer, slot)
        rest = [consumer.inputs[1 - slot]]
    else:
        return None
    n_rest = len(rest)

    if n_rest == 0:
        def fused0(a, b):
            return step(produce(a, b))

        return fused0, list(node.inputs)
    if n_rest == 1:
        def fused1(a, b, c):
            return step(produce(a, b), c)

        return fused1, [*node.inputs, *rest]

    def fused(a, b, *more):
        return step(produce(a, b), *more)

    return fused, [*node.inputs, *rest]

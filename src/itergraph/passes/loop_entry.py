"""Whether a loop surely runs its body, and which body nodes may run although it does not.

A pass that moves work out of a loop body (`hoist_invariants`) makes it run before the loop
has tested whether it runs at all. That is exact (values and errors) only when the loop
surely runs at least one iteration (`surely_entered`), or when the work cannot raise
(`cannot_raise`): a moved node that raises would raise where the original, running zero
iterations, does not.

A node cannot raise when its op has the ``TOTAL`` trait (`ir.traits`), or when its op fails
only on operands of unfit shapes and the static shapes of its operands fit (`_shapes_fit`:
element-wise floating-point arithmetic that broadcasts, ``Transpose`` by a permutation of its
rank, ``MatMul`` whose contracted dimensions agree): the weights a loop body transposes,
scales or multiplies.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Node
from ..ir.loop import Loop
from ..ir.static_values import const_value, static_int, static_shape
from ..ir.traits import Trait, has, transpose_perm
from ..ir.types import TensorType

#: broadcasting ops that raise on unfit shapes only (on floating-point operands: an integer
#: ``Div`` or ``Mod`` by zero raises; comparisons and logic have no such case)
_ARITHMETIC = frozenset("Add Sub Mul Div Max Min Mean Sum Pow".split())


def cannot_raise(node: Node, shapes: dict[int, tuple] | None = None) -> bool:
    """Whether `node` never raises on inputs of their declared types (see the module).

    `shapes` (value uid -> static shape) tells shapes the declared types do not, for values
    of nodes already found unable to raise; the shape of `node`'s output is added to it
    when it cannot raise and the shape is known."""
    if node.subgraphs() or not has(node, Trait.PURE):
        return False
    shapes = {} if shapes is None else shapes
    ins = [None if v is None else shapes.get(v.uid) or static_shape(v) for v in node.inputs]
    if has(node, Trait.TOTAL):
        if node.op_type not in ("Shape", "Size") and ins and ins[0] is not None:
            shapes[node.outputs[0].uid] = ins[0]
        return True
    if any(s is None for s in ins) or not ins or len(node.outputs) != 1:
        return False
    out = _fitting_shape(node, ins)
    if out is not None:
        shapes[node.outputs[0].uid] = out
    return out is not None


def _fitting_shape(node: Node, shapes: list[tuple]) -> tuple | None:
    """The output shape of `node` on operands of `shapes` when it cannot raise on them."""
    if node.op_type in _ARITHMETIC:
        if not all(_floating(v) for v in node.inputs):
            return None
        return _broadcast(*shapes)
    if node.op_type == "Transpose" and len(shapes) == 1:
        (s,) = shapes
        perm = transpose_perm(node, len(s))
        return tuple(s[p] for p in perm) if sorted(perm) == list(range(len(s))) else None
    if node.op_type == "MatMul" and len(shapes) == 2 and all(_floating(v) for v in node.inputs):
        a, b = shapes
        if len(a) < 2 or len(b) < 2 or a[-1] != b[-2]:
            return None  # (vectors: not worth the cases)
        batch = _broadcast(a[:-2], b[:-2])
        return None if batch is None else (*batch, a[-2], b[-1])
    return None


def _broadcast(*shapes: tuple) -> tuple | None:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


_FLOATS = frozenset({"float16", "bfloat16", "float32", "float64"})


def _floating(v) -> bool:
    """Whether `v` holds floating-point numbers (by its constant, else its declared type)."""
    if v.const is not None and v.producer is None:
        return str(np.asarray(v.const).dtype) in _FLOATS
    t = v.type
    return isinstance(t, TensorType) and t.dtype is not None and str(t.dtype) in _FLOATS


def surely_entered(loop: Loop) -> bool:
    """Whether `loop` runs its first iteration whatever its inputs, as far as constants and
    declared shapes tell: no precondition, an initial condition absent or constant true, a
    trip count absent, unbounded or a constant of at least 1, and every sliced input of a
    static shape yielding at least one piece."""
    if loop.precondition is not None:
        return False
    if loop.initial_condition is not None:
        cond = const_value(loop.initial_condition)
        if cond is None or cond.size != 1 or not bool(cond.reshape(())):
            return False
    if loop.trip_count is not None:
        trip = static_int(loop.trip_count)
        if trip is None or (trip < 1 and not (trip < 0 and
                                               loop.negative_trip_count == "unbounded")):
            return False
    for p in loop.sliced:
        shape = static_shape(p.value)
        if shape is None or not -len(shape) <= p.axis < len(shape) or p.count(shape[p.axis]) < 1:
            return False
    return True

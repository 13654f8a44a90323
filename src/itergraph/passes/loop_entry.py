"""Whether a loop surely runs its body, and which body nodes may run although it does not.

A pass that moves work out of a loop body (`hoist_invariants`) makes it run before the loop
has tested whether it runs at all. That is exact (values and errors) only when the loop
surely runs at least one iteration (`surely_entered`), or when the work cannot raise
(`cannot_raise`: the ``TOTAL`` trait of `ir.traits`): a moved node that raises would raise
where the original, running zero iterations, does not.
"""

from __future__ import annotations

from ..ir.graph import Node
from ..ir.loop import Loop
from ..ir.static_values import const_value, static_int, static_shape
from ..ir.traits import Trait, has


def cannot_raise(node: Node) -> bool:
    """Whether `node` never raises on inputs of their declared types (``PURE`` and ``TOTAL``)."""
    return has(node, Trait.PURE | Trait.TOTAL) and not node.subgraphs()


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

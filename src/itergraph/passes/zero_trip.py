"""Loops known to run no iteration replaced by what they give then."""

from __future__ import annotations

import numpy as np

from ..ir.builder import Builder
from ..semantics.empty_stack import zero_iteration_output
from ..ir.graph import Graph, Value
from ..ir.loop import Concat, Last, Loop
from .base import LoopPass
from .loop_build import drop_unread_initializers
from .loop_facts import static_count
from .skip_report import SkipReport


class ZeroTrip(SkipReport, LoopPass):
    """A loop that runs no iteration, known before it starts, becomes its outputs.

    Applies to: every canonical `Loop` at any depth that `loop_facts.static_count` says runs
    0 iterations (a trip count of 0, or clamped to 0, an initial condition constant false,
    or a sliced input of static length 0; no precondition) whose outputs all have a value
    after no iteration: a ``Last`` output of a carried value (its initial value) and a
    ``Concat`` output without padding ``length`` or ``empty_error`` (the empty tensor both
    backends give, `ir.empty_stack`: the element shape the body declares, unknown
    dimensions 0). OpenVINO's CPU plugin evaluates such a loop while compiling it, and
    refuses it ("Zero count of iteration not supported") or dies of a floating-point
    exception.

    Returns: the number of loops replaced; `skipped` lists the zero-iteration loops left and
    why.

    Guarantees: every output keeps its value (and type) for every input; a loop of no
    iteration raises nothing, and neither do the ``Identity`` nodes that replace it.
    """

    name = "zero_trip"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        n, _ = static_count(loop)
        if n != 0:
            return 0
        values = [_value(loop, o) for o in loop.output_ports]
        why = next((v for v in values if isinstance(v, str)), "")
        if why:
            return self.skip(loop, why)
        b = Builder(graph, loop.name or "zero_trip")
        for o, v in zip(loop.output_ports, values):
            v = v if isinstance(v, Value) else b.const(v, "empty")
            b.node("Identity", [v], out=o.output, version=16)
        at = graph.nodes.index(loop)
        graph.nodes[at:at + 1] = b.nodes
        drop_unread_initializers(graph, loop.inputs)
        return 1


def _value(loop: Loop, o) -> Value | np.ndarray | str:
    """Output port `o`'s value after no iteration (a value of the graph or a constant), or
    why it has none that is known before the run."""
    if isinstance(o, Last):
        c = loop.carried_for_result(o.result)
        return c.value if c is not None else \
            f"its output '{o.output.name}' is the last value of a non-carried one"
    assert isinstance(o, Concat)
    if o.length is not None or o.empty_error is not None:
        return f"its output '{o.output.name}' is padded or an error when empty"
    value = zero_iteration_output(o)
    return value if value is not None else \
        f"its output '{o.output.name}' joins on an axis out of range"


zero_trip = ZeroTrip()

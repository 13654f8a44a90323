"""Loop-invariant code motion: body nodes whose inputs never change move out of the loop."""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.loop import Loop
from .base import Pass
from .loop_motion import LoopScope, is_pure, move_out


class HoistInvariants(Pass):
    """Loop-invariant code motion: body nodes whose inputs never change move out of the loop.

    Applies to: every canonical `Loop` at any depth, innermost first, so that code moved out
    of an inner loop can move on out of the outer one. A body node moves to the enclosing
    graph, right before its loop, when its op is pure (`loop_motion.is_pure`: deterministic
    tensor ops; an ``If`` or bounded ``Loop`` whose subgraphs hold only such ops) and
    everything it reads (inputs, and what its subgraphs capture) is loop-invariant: an
    ``Invariant`` port's parameter, a ``Carried`` parameter whose result is the parameter
    itself, a body initializer, a value defined outside the loop, or the output of a node
    that moves. A moved node reads the outer values those parameters are bound to; body
    initializers it reads move out with it (the body then captures them); the body reads its
    outputs as outer-scope captures. A loop result that was a moved value is read through a
    new body ``Identity``, so loop results stay body values (and a ``Last`` output after zero
    iterations keeps failing as it did).

    Returns: the number of nodes moved.

    Guarantees: every output keeps its value for every input on which the original graph
    runs without error. A moved node now runs once before its loop, also when the loop runs
    zero iterations; where it fails, the transformed graph fails where the original might
    not have (the NumPy backend guards against this by falling back to the original loop).
    """

    name = "hoist_invariants"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        moved = 0
        for node in list(graph.nodes):
            for g in node.subgraphs():
                moved += self(g)
            if isinstance(node, Loop):
                moved += _hoist(graph, node)
        return moved


hoist_invariants = HoistInvariants()


def _hoist(graph: Graph, loop: Loop) -> int:
    scope = LoopScope(loop)
    chosen = []
    for n in loop.body.nodes:
        if is_pure(n) and all(scope.is_invariant(v) for v in n.reads()):
            chosen.append(n)
            for v in n.outputs:
                scope.add_invariant(v)
    move_out(graph, loop, scope, chosen)
    return len(chosen)

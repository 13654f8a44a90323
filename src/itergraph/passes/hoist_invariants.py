"""Loop-invariant code motion: body nodes whose inputs never change move out of the loop."""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.loop import Loop
from .base import LoopPass
from .loop_entry import cannot_raise, surely_entered
from .loop_motion import LoopScope, is_pure, move_out


class HoistInvariants(LoopPass):
    """Loop-invariant code motion: body nodes whose inputs never change move out of the loop.

    Applies to: every canonical `Loop` at any depth, innermost first, so that code moved out
    of an inner loop can move on out of the outer one. A body node moves to the enclosing
    graph, right before its loop, when its op is pure (`loop_motion.is_pure`: deterministic
    tensor ops; an ``If`` or bounded ``Loop`` whose subgraphs hold only such ops) and
    everything it reads (inputs, and what its subgraphs capture) is loop-invariant, and it
    cannot raise (`loop_entry.cannot_raise`) or the loop surely runs at least one iteration
    (`loop_entry.surely_entered`), so that the moved node raises only where the original
    would. Loop-invariant means: an
    ``Invariant`` port's parameter, a ``Carried`` parameter whose result is the parameter
    itself, a body initializer, a value defined outside the loop, or the output of a node
    that moves. A moved node reads the outer values those parameters are bound to; body
    initializers it reads move out with it (the body then captures them); the body reads its
    outputs as outer-scope captures. A loop result that was a moved value is read through a
    new body ``Identity``, so loop results stay body values (and a ``Last`` output after zero
    iterations keeps failing as it did).

    Returns: the number of nodes moved.

    Guarantees: every output keeps its value, and every run that fails keeps failing with
    the same error class, for every input. A moved node runs once before its loop, also when
    the loop runs zero iterations, which is why only nodes that cannot raise move out of a
    loop that may not run.
    """

    name = "hoist_invariants"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        return _hoist(graph, loop)


hoist_invariants = HoistInvariants()


def _hoist(graph: Graph, loop: Loop) -> int:
    scope = LoopScope(loop)
    entered = surely_entered(loop)
    shapes: dict[int, tuple] = {}
    chosen = []
    for n in loop.body.nodes:
        if (is_pure(n) and (entered or cannot_raise(n, shapes))
                and all(scope.is_invariant(v) for v in n.reads())):
            chosen.append(n)
            for v in n.outputs:
                scope.add_invariant(v)
    move_out(graph, loop, scope, chosen)
    return len(chosen)

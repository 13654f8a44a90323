"""Loops whose condition never changes lose their condition result.

An ONNX Loop body must return a condition; bodies that only count iterations return their
condition input unchanged (often through ``Identity``). The condition then equals the initial
condition in every iteration, which is what a loop without a condition result does: the
number of iterations is known when the loop starts, and backends can size their buffers
and precompute work for all iterations (see `precompute_sliced`).
"""

from __future__ import annotations

from ..ir.graph import Graph, Value
from ..ir.loop import Loop
from .base import Pass


class PassthroughCondition(Pass):
    """Loops whose condition never changes lose their condition result.

    Applies to: every canonical `Loop` at any depth whose ``condition_result`` is its
    ``condition_param``, directly or through a chain of ``Identity`` nodes of the body; its
    ``condition_result`` is set to None. The condition parameter stays (it keeps receiving
    the initial condition, as before).

    Returns: the number of loops changed.

    Guarantees: outputs are unchanged for every input.
    """

    name = "passthrough_condition"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        changed = 0
        for node in graph.nodes:
            for g in node.subgraphs():
                changed += self(g)
            if isinstance(node, Loop) and passes_through(node):
                node.condition_result = None
                changed += 1
        return changed


passthrough_condition = PassthroughCondition()


def passes_through(loop: Loop) -> bool:
    """Whether `loop`'s condition result is its condition parameter through Identity nodes."""
    param = loop.condition_param
    v: Value | None = loop.condition_result
    if param is None or v is None:
        return False
    in_body = {id(n) for n in loop.body.nodes}
    while v is not param:
        n = v.producer
        if (n is None or id(n) not in in_body or n.op_type != "Identity"
                or n.domain != "" or not n.inputs or n.inputs[0] is None):
            return False
        v = n.inputs[0]
    return True

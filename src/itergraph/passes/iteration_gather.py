"""Gathers indexed by the iteration number become sliced loop inputs.

A body node ``Gather(data, i, axis=a)`` where ``i`` is the loop's iteration parameter and
``data`` is loop-invariant reads piece k of ``data`` along ``a`` in iteration k: exactly what
a ``Sliced`` port gives, without a kernel call per iteration (and it lets
`precompute_sliced` compute what depends on the piece for all iterations at once).
"""

from __future__ import annotations

from ..ir.graph import Graph
from ..ir.loop import Loop, Sliced
from ..ir.types import TensorType
from .base import LoopPass
from .loop_motion import LoopScope


class IterationGather(LoopPass):
    """Gathers indexed by the iteration number become sliced loop inputs.

    Applies to: body nodes ``Gather(data, i, axis=a)`` of every canonical `Loop` at any
    depth, where ``i`` is the loop's iteration parameter and ``data`` is loop-invariant (see
    `loop_motion.LoopScope`), in a loop whose iteration parameter has a known rank, 0 (the
    ONNX iteration number: the piece drops the axis) or 1 (OpenVINO's ``[1]`` current
    iteration: the piece keeps the axis with size 1), and that either has no sliced input yet
    or is already marked ``strict_slices``, and is not marked ``equal_slices`` (a new sliced
    input could be longer than the others). The Gather's output becomes the parameter of a
    new ``Sliced(data, axis=a, stride=1)`` port (an invariant parameter is replaced by its
    outer value; a body initializer moves to the enclosing graph), and the loop is marked
    ``strict_slices``.

    Returns: the number of Gathers replaced.

    Guarantees: outputs are unchanged for every input; iterating beyond the end of `data`
    stays an execution error (as the Gather's index error was) instead of ending the loop.
    Only the error's text changes.
    """

    name = "iteration_gather"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        return _convert(graph, loop)


iteration_gather = IterationGather()


def _convert(graph: Graph, loop: Loop) -> int:
    it = loop.iteration_param
    if it is None or not isinstance(it.type, TensorType) or it.type.rank not in (0, 1):
        return 0
    if it.type.rank == 1 and it.type.shape[0] not in (1, None):
        return 0
    if (loop.sliced and not loop.strict_slices) or loop.equal_slices:
        return 0
    keep_axis = it.type.rank == 1
    scope = LoopScope(loop)
    body = loop.body
    picked = []
    for n in body.nodes:
        if (n.op_type == "Gather" and n.domain == "" and len(n.inputs) == 2
                and len(n.outputs) == 1 and n.inputs[1] is it and n.inputs[0] is not None
                and scope.is_invariant(n.inputs[0]) and isinstance(n.attrs.get("axis", 0), int)):
            picked.append(n)
    if not picked:
        return 0
    gone = {id(n) for n in picked}
    body.nodes = [n for n in body.nodes if id(n) not in gone]
    for n in picked:
        data = n.inputs[0]
        outer = scope.bound.get(data.uid, data)
        init = scope.initializers.pop(data.uid, None)
        if init is not None:
            body.initializers = [i for i in body.initializers if i is not init]
            graph.initializers.append(init)
        piece = n.outputs[0]
        piece.producer = None
        piece.index = 0
        body.inputs.append(piece)
        loop.input_ports.append(Sliced(outer, piece, axis=int(n.attrs.get("axis", 0)),
                                       keep_axis=keep_axis))
    loop.strict_slices = True
    return len(picked)

"""Shared machinery of the passes that move computation out of loop bodies.

Not a pass itself: `hoist_invariants`, `precompute_sliced` and `iteration_gather` use it.

- `is_pure(node)`: a node of an op with the ``PURE`` trait (`ir.traits`: deterministic
  functions of their tensor inputs, no random numbers, no sequences or optionals whose Python
  lists could be shared), or an ``If`` / bounded canonical ``Loop`` whose subgraphs hold only
  pure nodes: only these may run somewhere else, or a different number of times, than the
  graph says.
- `LoopScope`: for one loop, which body values are loop-invariant and the outer value each
  invariant parameter stands for; and `move_out`, which takes body nodes out of the loop into
  the enclosing graph, right before the loop.
"""

from __future__ import annotations

from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Invariant, Loop
from ..ir.static_values import const_value, static_shape  # noqa: F401 - re-exported
from ..ir.traits import Trait, has
from ..ir.traversal import replace_all_uses, replace_input


def is_pure(node: Node) -> bool:
    """Whether `node` computes a deterministic function of its inputs and captures alone."""
    if isinstance(node, Loop):
        if node.condition_result is not None or node.precondition is not None:
            return False  # may run forever where the original never runs it
        if node.trip_count is None and not node.sliced:
            return False
        return all(is_pure(n) for n in node.body.nodes)
    if not (has(node, Trait.PURE) or (node.op_type == "If" and node.domain == "")):
        return False
    return all(is_pure(n) for g in node.subgraphs() for n in g.nodes)


class LoopScope:
    """What is loop-invariant in `loop`'s body, and where invariant parameters come from.

    `bound` maps the uid of an Invariant port's parameter, and of a Carried parameter whose
    result is the parameter itself (a pass-through state), to the outer value it receives.
    A value is invariant (`is_invariant`) when it is bound, a body initializer, defined
    outside the body, or marked with `add_invariant` (outputs of nodes to be moved out).
    """

    def __init__(self, loop: Loop):
        self.loop = loop
        body = loop.body
        self.bound: dict[int, Value] = {}
        for p in loop.input_ports:
            if isinstance(p, Invariant) or (isinstance(p, Carried) and p.result is p.param):
                self.bound[p.param.uid] = p.value
        self.initializers = {v.uid: v for v in body.initializers}
        self.defined = body.defined()
        self._extra: set[int] = set()

    def is_invariant(self, v: Value) -> bool:
        u = v.uid
        return (u in self.bound or u in self.initializers or u not in self.defined
                or u in self._extra)

    def add_invariant(self, v: Value) -> None:
        self._extra.add(v.uid)


def body_value_uses(loop: Loop) -> dict[int, int]:
    """How often each value is read inside `loop`'s body: by body nodes (their subgraphs'
    captures included), as a loop result, or as a body output."""
    body = loop.body
    count: dict[int, int] = {}

    def use(v: Value | None) -> None:
        if v is not None:
            count[v.uid] = count.get(v.uid, 0) + 1

    for n in body.nodes:
        for v in n.reads():
            use(v)
    for v in loop_results(loop):
        use(v)
    return count


def loop_results(loop: Loop) -> list[Value]:
    """Body values the loop reads as results: ports, condition, precondition, body outputs."""
    out: list[Value] = [p.result for p in loop.carried]
    out += [p.result for p in loop.output_ports]
    out += [v for v in (loop.condition_result, loop.precondition) if v is not None]
    out += list(loop.body.outputs)
    return out


def move_out(graph: Graph, loop: Loop, scope: LoopScope, nodes: list[Node]) -> None:
    """Move `nodes` (body nodes of `loop`, in body order) into `graph`, right before `loop`.

    Their reads of bound parameters become reads of the outer values; body initializers they
    read move to `graph` (the body then captures them). Loop results that are outputs of
    moved nodes are read through a new body ``Identity`` so that results stay body values.
    """
    if not nodes:
        return
    body = loop.body
    moved = {id(n) for n in nodes}
    for n in nodes:
        uses = n.reads()
        for v in uses:
            outer = scope.bound.get(v.uid)
            if outer is not None:
                replace_input(n, v, outer)
                for g in n.subgraphs():
                    replace_all_uses(g, v, outer)
            init = scope.initializers.pop(v.uid, None)
            if init is not None:
                body.initializers = [i for i in body.initializers if i is not init]
                graph.initializers.append(init)
    body.nodes = [n for n in body.nodes if id(n) not in moved]
    at = graph.nodes.index(loop)
    graph.nodes[at:at] = nodes
    outs = {v.uid for n in nodes for v in n.outputs}
    _reread_results(loop, outs)


def _reread_results(loop: Loop, outer_ids: set[int]) -> None:
    """Point every loop result that is in `outer_ids` at a body Identity of it."""
    body = loop.body
    alias: dict[int, Value] = {}

    def through(v: Value | None) -> Value | None:
        if v is None or v.uid not in outer_ids:
            return v
        a = alias.get(v.uid)
        if a is None:
            a = Value(v.name, v.type)
            v.name = f"{v.name}_hoisted" if v.name else v.name
            body.nodes.insert(0, Node("Identity", [v], [a], version=1,
                                      name=f"{a.name}_in_loop" if a.name else ""))
            alias[v.uid] = a
        return a

    for p in loop.carried:
        p.result = through(p.result)
    for p in loop.output_ports:
        p.result = through(p.result)
    loop.condition_result = through(loop.condition_result)
    loop.precondition = through(loop.precondition)
    body.outputs = [through(v) for v in body.outputs]

"""Building the nodes that replace a loop or part of one: the emission of body copies.

Not a pass itself: `unroll` and the loop-form passes use it, with the IR's node builder
(`ir.builder.Builder`, re-exported here).

- `copy_iterations(b, loop, ks, state, piece)`: the body of `loop` copied once per
  iteration number in `ks`, wired in sequence from the carried values `state`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ..ir.builder import Builder
from ..ir.clone import clone_node, clone_value
from ..ir.graph import Graph, Value
from ..ir.loop import Carried, Invariant, Loop, Sliced
from .loop_facts import bool_const, int_const


def copy_iterations(b: Builder, loop: Loop, ks: Iterable[int], state: list[Value],
                    piece: Callable[[Sliced, int], Value],
                    iteration: Callable[[int], Value] | None = None,
                    shared: dict[int, Value] | None = None) -> tuple[list[Value], list[dict]]:
    """Copies of `loop`'s body, one per iteration number in `ks`, appended to `b.nodes`.

    Copy k reads: for a `Carried` parameter, the value `state` holds (the first copy: `state`
    itself, then the previous copy's result); for an `Invariant` one, its outer value; for a
    `Sliced` one, ``piece(port, k)``; for the iteration parameter, ``iteration(k)`` (default:
    a constant k of its type); for the condition parameter, a constant true (callers only
    copy bodies whose condition never stops the loop). `shared` (uid -> value), when given,
    binds body initializers and may rebind invariant parameters; without it body
    initializers are copied once into `b.graph`.

    Returns the carried values after the last copy and, per copy, the mapping from body
    value uids to that copy's values (look results up with ``m.get(v.uid, v)``).
    """
    body = loop.body
    if shared is None:
        shared = {}
        for init in body.initializers:
            c = clone_value(init)
            c.name = b.fresh(init.name or "init")
            b.graph.initializers.append(c)
            shared[init.uid] = c
    read = {v.uid for n in body.nodes for v in n.reads()}
    read.update(v.uid for v in loop.body_results())
    maps: list[dict] = []
    for k in ks:
        m: dict[int, Value] = dict(shared)
        carried = iter(state)
        for p in loop.input_ports:
            if isinstance(p, Invariant):
                m.setdefault(p.param.uid, p.value)
            elif isinstance(p, Carried):
                m[p.param.uid] = next(carried)
            else:
                m[p.param.uid] = piece(p, k)
        it = loop.iteration_param
        if it is not None and it.uid in read:
            m[it.uid] = iteration(k) if iteration else b.const(int_const(it.type, k), "iter")
        if loop.condition_param is not None and loop.condition_param.uid in read:
            m[loop.condition_param.uid] = b.const(bool_const(loop.condition_param.type), "true")
        for n in body.nodes:
            c = clone_node(n, m)
            for v in c.outputs:
                if v.name:
                    v.name = f"{v.name}_it{k}"
            c.name = f"{c.name}_it{k}" if c.name else ""
            b.nodes.append(c)
        state = [m.get(p.result.uid, p.result) for p in loop.carried]
        maps.append(m)
    return state, maps


def drop_unread_initializers(graph: Graph, candidates: Iterable[Value | None]) -> None:
    """Remove from `graph` those of `candidates` that are its initializers and that nothing
    reads any more (a replaced loop's trip count, say)."""
    inits = {v.uid for v in graph.initializers}
    gone = {v.uid for v in candidates if v is not None and v.uid in inits}
    if not gone:
        return
    gone -= {v.uid for n in graph.nodes for v in n.reads()}
    gone -= {v.uid for v in graph.outputs}
    graph.initializers = [v for v in graph.initializers if v.uid not in gone]

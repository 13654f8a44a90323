"""Building the nodes that replace a loop or part of one: a small node factory and the
emission of body copies.

Not a pass itself: `unroll` and the loop-form passes use it.

- `Builder(graph, prefix)`: appends standard nodes (opset 13 spellings) to a list and
  constants to `graph`'s initializers, with names under `prefix`;
- `copy_iterations(b, loop, ks, state, piece)`: the body of `loop` copied once per
  iteration number in `ks`, wired in sequence from the carried values `state`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..ir.clone import clone_node, clone_value
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Invariant, Loop, Sliced
from ..ir.types import Type
from .loop_facts import bool_const, const_type, int_const


class Builder:
    """Nodes for `graph`, collected in `nodes` (the caller places them), and constants added
    to `graph` as initializers. Every name starts with `prefix`."""

    def __init__(self, graph: Graph, prefix: str):
        self.graph = graph
        self.prefix = prefix or "loop"
        self.nodes: list[Node] = []
        self._n = 0

    def fresh(self, hint: str) -> str:
        self._n += 1
        return f"{self.prefix}_{hint}_{self._n}"

    def const(self, array, hint: str = "c") -> Value:
        a = np.asarray(array)
        v = Value(self.fresh(hint), const_type(a), a)
        self.graph.initializers.append(v)
        return v

    def i64(self, values, hint: str = "c") -> Value:
        return self.const(np.asarray(values, np.int64), hint)

    def node(self, op: str, inputs: Iterable[Value | None], attrs: dict[str, Any] | None = None,
             *, out: Value | None = None, type: Type | None = None, version: int = 13,
             hint: str | None = None) -> Value:
        """Append ``op(inputs)`` and return its output (`out` when given, else a new value of
        `type`)."""
        if out is None:
            out = Value(self.fresh(hint or op.lower()), type)
        self.nodes.append(Node(op, list(inputs), [out], attrs, version=version,
                               name=self.fresh(op)))
        return out

    def unsqueeze(self, v: Value, axis: int, **kw) -> Value:
        return self.node("Unsqueeze", [v, self.i64([axis], "axes")], **kw)

    def concat(self, vals: list[Value], axis: int, out: Value | None = None) -> Value:
        if len(vals) == 1:
            return self.node("Identity", vals, out=out, version=16)
        return self.node("Concat", vals, {"axis": axis}, out=out)

    def piece(self, x: Value, axis: int, start: int, size: int, keep_axis: bool,
              type: Type | None = None) -> Value:
        """``x[start:start+size]`` along `axis`, the axis dropped when not `keep_axis` (then
        `size` is 1)."""
        if not keep_axis:
            return self.node("Gather", [x, self.i64(start, "index")], {"axis": axis}, type=type)
        return self.node("Slice", [x, self.i64([start], "start"), self.i64([start + size], "end"),
                                   self.i64([axis], "axis")], type=type)


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

"""The names of body tensors, as a user of the file writes them.

Every value defined directly in a loop body (the body's parameters and its nodes' outputs; not
the inside of an If branch) at any depth of loops is a *body tensor*. Its qualified name is the
names of its enclosing loop nodes, outermost first, and its own name, joined by ``/``
(``outer_loop/inner_loop/h``). A user may write the bare name where it is unambiguous, or any
tail of the qualified name (``inner_loop/h``). A loop node without a name is called
``<op>#<k>`` (its origin's op and its position among its graph's loops).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from ..errors import InputError
from ..ir.graph import Graph, Value
from ..ir.loop import Loop


@dataclass(eq=False)
class BodyTensor:
    """One nameable body tensor: `value` in the body of `path[-1]`; `position` is the index of
    its producer in that body (-1 for a parameter or an outer value)."""

    key: str
    name: str
    value: Value
    path: list[Loop]
    loop_names: list[str]
    position: int
    positions: list[int] = field(default_factory=list)  # each loop's index in its graph

    def order(self, steps: tuple[int, ...]) -> tuple:
        """Sort key of this tensor at `steps` in execution order: loop position, step, inner
        loop position, step, ..., position in the innermost body."""
        key: list[int] = []
        for pos, s in zip(self.positions, steps):
            key += [pos, s]
        # a loop's outputs exist once all its steps ran: after its body's tensors
        after = (float("inf"),) if isinstance(self.value.producer, Loop) else ()
        return (*key, self.position, *after)


def loop_name(graph: Graph, loop: Loop) -> str:
    if loop.name:
        return loop.name
    loops = [n for n in graph.nodes if isinstance(n, Loop)]
    op = (loop.origin or "Loop").rpartition(".")[2] or "Loop"
    return f"{op}#{loops.index(loop)}"


def _layer_name(node) -> str:
    """The OpenVINO layer name a node was read from (its ``meta["element"]`` ends with
    ``layer ID 'NAME' (Type-opsetN)``), or ''."""
    m = re.search(r"layer \S+ '([^']*)' \([^()]*\)$", str(node.meta.get("element") or ""))
    return m.group(1) if m else ""


class TensorIndex:
    """Every body tensor of `graph`, by qualified name, and the loops, outermost first."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.tensors: dict[str, BodyTensor] = {}
        self.loops: list[tuple[list[Loop], list[str], list[int]]] = []
        self._walk(graph, [], [], [])

    def _walk(self, g: Graph, path: list[Loop], names: list[str], positions: list[int]) -> None:
        for i, node in enumerate(g.nodes):
            if not isinstance(node, Loop):
                continue
            p, n, ps = [*path, node], [*names, loop_name(g, node)], [*positions, i]
            self.loops.append((p, n, ps))
            body = node.body
            found = [(v, -1) for v in body.inputs]
            found += [(v, j) for j, b in enumerate(body.nodes) for v in b.outputs]
            for v, pos in found:
                if v.name:
                    self._add(v, p, n, ps, pos)
            self._walk(body, p, n, ps)

    def _add(self, v: Value, path, names, positions, pos: int) -> BodyTensor:
        key = "/".join([*names, v.name])
        t = self.tensors.get(key)
        if t is None or t.value is not v:
            if t is not None:  # two values of one body under one name: keep both apart
                key = f"{key}#{v.uid}"
            t = self.tensors[key] = BodyTensor(key, v.name, v, path, names, pos, positions)
        return t

    def entry_for(self, v: Value, path: list[Loop], names: list[str],
                  positions: list[int]) -> BodyTensor:
        """The body tensor for `v` read by the innermost loop of `path` (a port result may be
        a parameter or an outer value; it is still traced per step of that loop)."""
        for t in self.tensors.values():
            if t.value is v and t.path == path:
                return t
        body = path[-1].body
        pos = next((j for j, b in enumerate(body.nodes) if v in b.outputs), -1)
        name = v.name or f"value{v.uid}"
        return self._register(v, name, path, names, positions, pos)

    def _register(self, v, name, path, names, positions, pos) -> BodyTensor:
        key = "/".join([*names, name])
        t = BodyTensor(key, name, v, path, names, pos, positions)
        self.tensors.setdefault(key, t)
        return self.tensors[key]

    def defaults(self) -> list[tuple[BodyTensor, str]]:
        """Every loop's carried results and its condition, with their kinds."""
        out: list[tuple[BodyTensor, str]] = []
        seen: set[tuple[int, int]] = set()
        for path, names, positions in self.loops:
            loop = path[-1]
            picks = [(c.result, "carried") for c in loop.carried]
            if loop.condition_result is not None:
                picks.append((loop.condition_result, "condition"))
            for v, kind in picks:
                if (id(loop), v.uid) in seen:
                    continue
                seen.add((id(loop), v.uid))
                out.append((self.entry_for(v, path, names, positions), kind))
        return out

    def aliases(self) -> dict[str, BodyTensor]:
        """Each body tensor also answers to the name of the node producing it, when that node
        has one output (OpenVINO IR names layers, not always their output tensors)."""
        out: dict[str, BodyTensor] = {}
        for t in self.tensors.values():
            p = t.value.producer
            if p is None or len(p.outputs) != 1:
                continue
            for alias in (p.name, _layer_name(p)):
                key = "/".join([*t.loop_names, alias])
                if alias and alias != t.name and key not in out:
                    out[key] = BodyTensor(key, alias, t.value, t.path, t.loop_names,
                                          t.position, t.positions)
        return out

    def lookup(self, name: str) -> BodyTensor:
        """The body tensor `name` means; `InputError` if none or several, with candidates.
        Tensor names come first, then producing nodes' names (`aliases`)."""
        if name in self.tensors:
            return self.tensors[name]
        hits = [t for k, t in self.tensors.items() if k.endswith("/" + name)]
        if not hits:
            aliases = self.aliases()
            if name in aliases:
                return aliases[name]
            hits = [t for k, t in aliases.items() if k.endswith("/" + name)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            raise InputError(f"tensor name '{name}' is ambiguous: it is in several loop bodies; "
                             f"qualify it: {', '.join(t.key for t in hits)}")
        words = sorted({*self.tensors, *(t.name for t in self.tensors.values()),
                        *self.aliases()})
        close = difflib.get_close_matches(name, words, n=6, cutoff=0.5)
        hint = f"; close matches: {', '.join(close)}" if close else (
            f"; body tensors are, e.g.: {', '.join(list(self.tensors)[:8])}"
            if self.tensors else "; the model has no loop body tensors")
        raise InputError(f"no tensor '{name}' in any loop body{hint}")

"""Which layers run inside which loop or conditional, inferred from data flow (TensorRT's rule).

A *scope* is a `Loop` or an `IfConditional`; ``None`` is the network itself. For every tensor
we compute ``deps``: the scopes whose interior values it depends on. Interior values are
the outputs of a loop's iterators and recurrences and of a conditional's input layers; a
loop output (conditional output) carries only what the scope itself depends on::

    deps(iterator/recurrence output of S) = {S} | A(S)
    deps(loop output of S)                = A(S)
    deps(output of any other layer)       = union of deps(inputs)
    A(S) = union of deps(every input of S's boundary layers) - {S}

``A(S)`` is the set of scopes S uses values of, hence is nested in (TensorRT: "if loop B uses
values defined inside loop A, B is nested inside A"). The equations are recursive, so they are
solved as a least fixpoint. A layer belongs to the innermost scope in ``deps`` of its
outputs; a layer that depends on no interior value is loop-invariant and stays outside.
Nesting must be clean: ``A(S)`` is a chain, and no two scopes use each other's interiors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ModelError
from .control import (
    IfConditional,
    IfConditionalInputLayer,
    IfConditionalOutputLayer,
    IteratorLayer,
    Loop,
    LoopOutputLayer,
    RecurrenceLayer,
)
from .core import Layer, Tensor

Scope = Loop | IfConditional
_DEFAULT_NAME = re.compile(r"\(Unnamed Layer\* \d+\) \[[^\]]+\]_output(_\d+)?$")


def owner(layer: Layer) -> Scope | None:
    """The loop or conditional a boundary layer belongs to (None for other layers)."""
    return getattr(layer, "_loop", None) or getattr(layer, "_conditional", None)


def tensor_desc(t: Tensor) -> str:
    """``'name' (output of Layer 'x')``, or just the layer when the tensor has its default name."""
    p = t.producer
    if p is None:
        return f"network input '{t.name}'"
    if _DEFAULT_NAME.match(t.name) or t.name.startswith(f"{p.name}_output"):
        return f"the output of {p.what()}"
    return f"'{t.name}' (output of {p.what()})"


@dataclass
class Analysis:
    """Result of `analyze`: scopes, nesting, and the scope of every tensor and layer."""

    order: list[Layer]  # every layer, topological without recurrence back edges
    scopes: list[Scope]
    deps: dict[int, frozenset] = field(default_factory=dict)  # id(tensor) -> scopes
    uses: dict[Scope, frozenset] = field(default_factory=dict)  # A(S)
    parent: dict[Scope, Scope | None] = field(default_factory=dict)

    def deps_of(self, t: Tensor) -> frozenset:
        return self.deps.get(id(t), frozenset())

    def deps_of_inputs(self, layer: Layer) -> frozenset:
        """The scopes whose interior values the inputs of `layer` depend on."""
        return frozenset().union(*(self.deps_of(t) for t in layer.inputs if t is not None))

    def tensor_scope(self, t: Tensor) -> Scope | None:
        """The innermost scope `t` is defined in (None: outside every loop)."""
        p = t.producer
        if isinstance(p, (IteratorLayer, RecurrenceLayer, IfConditionalInputLayer)):
            return owner(p)
        if isinstance(p, (LoopOutputLayer, IfConditionalOutputLayer)):
            return self.parent[owner(p)]
        return self.innermost(self.deps_of(t))

    def layer_scope(self, layer: Layer) -> Scope | None:
        """The scope a layer runs in; a boundary layer belongs to its loop/conditional."""
        s = owner(layer)
        if s is not None:
            return s
        return self.tensor_scope(layer.outputs[0]) if layer.outputs else None

    def innermost(self, scopes: frozenset) -> Scope | None:
        if not scopes:
            return None
        return max(scopes, key=lambda s: len(self.uses[s]))

    def inside(self, s: Scope | None, outer: Scope | None) -> bool:
        """Is scope `s` equal to `outer` or nested in it (None is the whole network)?"""
        return outer is None or s is outer or (s is not None and outer in self.uses[s])


def boundary_inputs(s: Scope) -> list[tuple[Layer, int, Tensor]]:
    out = []
    for layer in s.boundary_layers():
        for i, t in enumerate(layer.inputs):
            if t is not None:
                out.append((layer, i, t))
    return out


def _back_edge(layer: Layer, index: int) -> bool:
    return isinstance(layer, RecurrenceLayer) and index == 1


def dependency_order(roots: list, preds, on_cycle) -> list:
    """Depth-first post-order of `roots` and everything they depend on (``preds(u)`` lists
    what u reads). On a cycle, ``on_cycle(path)`` is called with ``[a, ..., a]`` and must raise.
    """
    state: dict[int, int] = {}  # 1: on the stack, 2: done
    order: list = []
    for root in roots:
        if id(root) in state:
            continue
        state[id(root)] = 1
        stack = [(root, list(preds(root)))]
        while stack:
            u, ps = stack[-1]
            if not ps:
                stack.pop()
                state[id(u)] = 2
                order.append(u)
                continue
            nxt = ps.pop()
            if state.get(id(nxt)) == 1:
                path = [entry[0] for entry in stack]
                on_cycle(path[path.index(nxt):] + [nxt])
            if id(nxt) not in state:
                state[id(nxt)] = 1
                stack.append((nxt, list(preds(nxt))))
    return order


def topo_order(layers: list[Layer]) -> list[Layer]:
    """Layers in dependency order, ignoring recurrence back edges; a cycle is a ModelError."""

    def preds(layer: Layer) -> list[Layer]:
        return [t.producer for i, t in enumerate(layer.inputs)
                if t is not None and t.producer is not None and not _back_edge(layer, i)]

    def cycle(path: list[Layer]) -> None:
        raise ModelError(
            "the network has a cycle that is not a recurrence back edge: "
            + " -> ".join(f"'{x.name}'" for x in reversed(path))
            + " (only input 1 of a recurrence layer may feed back)"
        )

    return dependency_order(layers, preds, cycle)


def analyze(network) -> Analysis:
    order = topo_order(list(network.layers))
    scopes: list[Scope] = [*network.loops, *network.conditionals]
    an = Analysis(order=order, scopes=scopes)
    uses = {s: frozenset() for s in scopes}
    while True:
        an.uses = uses
        deps = an.deps = {}
        for layer in order:
            s = owner(layer)
            if isinstance(layer, (IteratorLayer, RecurrenceLayer, IfConditionalInputLayer)):
                d = uses[s] | {s}
            elif isinstance(layer, (LoopOutputLayer, IfConditionalOutputLayer)):
                d = uses[s]
            else:
                d = frozenset()
                for t in layer.inputs:
                    if t is not None:
                        d |= deps.get(id(t), frozenset())
            for t in layer.outputs:
                deps[id(t)] = d
        new = {
            s: frozenset().union(*(an.deps_of(t) for _, _, t in boundary_inputs(s))) - {s}
            for s in scopes
        }
        if new == uses:
            break
        uses = new
    _check_nesting(an)
    for s in scopes:
        an.parent[s] = an.innermost(an.uses[s])
    _check_layers(an)
    return an


def _witness(an: Analysis, s: Scope, inner: Scope) -> str:
    """Why scope `s` uses a value defined inside `inner`: a boundary input of `s`."""
    for layer, _i, t in boundary_inputs(s):
        if inner in an.deps_of(t):
            return f"{layer.what()} reads {tensor_desc(t)}, which depends on {inner.what()}"
    return "?"


def _check_nesting(an: Analysis) -> None:
    for s in an.scopes:
        for x in an.uses[s]:
            if s in an.uses[x]:
                raise ModelError(
                    f"{s.what()} and {x.what()} are not cleanly nested: each uses values "
                    f"defined inside the other ({_witness(an, s, x)}; {_witness(an, x, s)})"
                )
        chain = sorted(an.uses[s], key=lambda x: len(an.uses[x]))
        for a, b in zip(chain, chain[1:]):
            if a not in an.uses[b]:
                raise ModelError(
                    f"{s.what()} uses values defined inside {a.what()} and inside {b.what()}, "
                    f"which are not nested in one another ({_witness(an, s, a)}; "
                    f"{_witness(an, s, b)})"
                )


def _check_layers(an: Analysis) -> None:
    """Every ordinary layer's inputs must come from one chain of nested scopes."""
    for layer in an.order:
        if owner(layer) is not None or not layer.outputs:
            continue
        d = an.deps_of(layer.outputs[0])
        inner = an.innermost(d)
        for x in d:
            if x is not inner and x not in an.uses[inner]:
                a = next(t for t in layer.inputs if t is not None and inner in an.deps_of(t))
                b = next(t for t in layer.inputs if t is not None and x in an.deps_of(t))
                raise ModelError(
                    f"{layer.what()} uses values defined inside {inner.what()} "
                    f"({tensor_desc(a)}) and inside {x.what()} ({tensor_desc(b)}), which are "
                    "not nested in one another; a value leaves a loop only through a loop "
                    "output layer"
                )

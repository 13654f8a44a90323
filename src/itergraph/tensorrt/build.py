"""`build(network) -> ir.Graph`: check a network and translate it into the itergraph IR.

Steps: infer scopes (:mod:`.scopes`), check the rules (:mod:`.validate`), keep what the
network outputs need, then emit each scope's layers and nested scopes in dependency order:
a loop becomes a canonical `ir.Loop` (origin ``"network"``), a conditional an ONNX ``If``.

Loops are emitted by :mod:`.loop_emit` (the port mapping, lazy recurrences, zero-trip
output shapes).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..ir import Graph, Value, verify
from .checks import finish_outputs, profile_checks
from .control import (
    IfConditional,
    IfConditionalInputLayer,
    IfConditionalOutputLayer,
    IteratorLayer,
    LoopOutputLayer,
    RecurrenceLayer,
)
from .control import Loop as NetLoop
from .core import Layer, Tensor
from .layers_tensor import AssertionLayer
from .loop_emit import LoopEmitter
from .lower import OPSET, Emitter, lower_layer
from .scopes import Analysis, analyze, dependency_order, owner
from .validate import validate


def build(network) -> Graph:
    an = analyze(network)
    validate(network, an)
    live = _liveness(network)
    reserved = {id(t): t.name for t in [*network.inputs, *network.outputs]}
    top = Graph(name=network.name, opset_imports={"": OPSET})
    em = Emitter(top, reserved)
    for t in network.inputs:
        v = em.new_value(t)
        top.inputs.append(v)
    em.checks.extend(profile_checks(network, em))
    _Builder(network, an, live, em).emit_scope(None, top, None)
    finish_outputs(network, em, top, em.checks)
    verify(top)
    return top


class _Live:
    """Layers and scopes needed by the network outputs."""

    def __init__(self):
        self.layers: set[int] = set()
        self.scopes: set[int] = set()
        self.tensors: set[int] = set()

    def has(self, x) -> bool:
        return id(x) in self.layers or id(x) in self.scopes


def _liveness(network) -> _Live:
    """What the outputs need, and the assertion layers (outside loops and conditionals)."""
    live = _Live()
    todo: list = list(network.outputs)
    todo += [x for x in network.layers if isinstance(x, AssertionLayer)]
    while todo:
        x = todo.pop()
        if x is None:
            continue
        if isinstance(x, Tensor):
            if id(x) not in live.tensors:
                live.tensors.add(id(x))
                todo.append(x.producer)
        elif isinstance(x, Layer):
            if id(x) not in live.layers:
                live.layers.add(id(x))
                todo.extend(x.inputs)
                s = owner(x)
                if s is not None:
                    todo.append(s)
        elif id(x) not in live.scopes:  # a loop or conditional
            live.scopes.add(id(x))
            if isinstance(x, NetLoop):
                todo.extend(x.trip_limits)
                todo.extend(x.iterators)  # they bound the iteration (running out is an error)
            else:
                todo.append(x.condition)
    return live


class _Builder:
    def __init__(self, network, an: Analysis, live: _Live, em: Emitter):
        self.network = network
        self.an = an
        self.live = live
        self.em = em
        # every live layer and scope, grouped by the scope it runs in
        self.members: dict[int, list] = {}
        for layer in an.order:
            if live.has(layer) and owner(layer) is None:
                self.members.setdefault(id(an.layer_scope(layer)), []).append(layer)
        for s in an.scopes:
            if live.has(s):
                self.members.setdefault(id(an.parent[s]), []).append(s)
        self._external: dict[int, list[Tensor]] = {}

    # -- dependency order inside one scope ------------------------------------------------
    def unit_of(self, t: Tensor, scope) -> object | None:
        """The member of `scope` that produces `t` (None: a parameter or an outer value)."""
        if self.an.tensor_scope(t) is not scope:
            return None
        p = t.producer
        if p is None:
            return None
        if isinstance(p, (LoopOutputLayer, IfConditionalOutputLayer)):
            return owner(p)
        if isinstance(p, (IteratorLayer, RecurrenceLayer, IfConditionalInputLayer)):
            return None
        return p

    def external_inputs(self, s) -> list[Tensor]:
        """Tensors read by live layers of scope `s` (at any depth) that are defined outside it."""
        if id(s) not in self._external:
            out: list[Tensor] = []
            for layer in self.network.layers:
                if not self.live.has(layer):
                    continue
                where = self.an.layer_scope(layer)
                if where is None or not self.an.inside(where, s):
                    continue
                for t in layer.inputs:
                    if t is not None and not self.an.inside(self.an.tensor_scope(t), s):
                        out.append(t)
            self._external[id(s)] = out
        return self._external[id(s)]

    def inputs_of(self, unit) -> list[Tensor]:
        if isinstance(unit, Layer):
            return [t for t in unit.inputs if t is not None]
        return self.external_inputs(unit)

    def ordered(self, scope, units: list) -> list:
        ids = {id(u) for u in units}

        def label(u) -> str:
            return u.what() if isinstance(u, Layer) else u.what()

        def cycle(path: list) -> None:
            raise ModelError("the network has a cycle through a loop or conditional: "
                             + " -> ".join(label(x) for x in path))

        return dependency_order(units, lambda u: self._preds(u, scope, ids), cycle)

    def _preds(self, unit, scope, ids) -> list:
        preds = []
        for t in self.inputs_of(unit):
            p = self.unit_of(t, scope)
            if p is not None and p is not unit and id(p) in ids:
                preds.append(p)
        return preds

    # -- emission -------------------------------------------------------------------------
    def emit_scope(self, scope, graph: Graph, units: list | None) -> None:
        units = self.members.get(id(scope), []) if units is None else units
        for unit in self.ordered(scope, units):
            self.em.graph = graph
            if isinstance(unit, NetLoop):
                self.emit_loop(unit, graph)
            elif isinstance(unit, IfConditional):
                self.emit_if(unit, graph)
            else:
                lower_layer(unit, self.em)
            self.em.graph = graph

    def result(self, t: Tensor, body: Graph, name: str, taken=()) -> Value:
        """The value of `t` as a result of `body`: an Identity node of `body` is added when
        `t` is not made by a node of `body` (a parameter or an outer value) or when its value
        is already the result of another carried port (uid in `taken`)."""
        v = self.em.value(t)
        if v.uid not in taken and v.producer is not None and any(
                n is v.producer for n in body.nodes):
            return v
        saved, self.em.graph, self.em.prefix = self.em.graph, body, name
        out = self.em.node("Identity", [v])
        out.type = v.type
        self.em.graph = saved
        return out

    def emit_loop(self, loop: NetLoop, graph: Graph) -> None:
        LoopEmitter(self, loop, graph).emit()

    @staticmethod
    def covers(count, x: Tensor, axis: int) -> bool:
        """Is the COUNT known to reach the iterated axis' end (no leading slice needed)?"""
        c = count.required_input(0).const_value()
        return c is not None and 0 <= x.shape[axis] <= int(c.reshape(()))

    def trip_count(self, t: Tensor) -> Value:
        """COUNT as an INT64 scalar; negative counts mean zero iterations."""
        em = self.em
        c = t.const_value()
        if c is not None:
            return em.const(np.array(max(int(c.reshape(())), 0), dtype=np.int64),
                            f"{t.name}/count")
        em.prefix = f"{t.name}/count"
        return em.as_int64(t)  # the Loop says negative_trip_count="zero"

    def emit_if(self, cond: IfConditional, graph: Graph) -> None:
        em = self.em
        for inp in cond.inputs:
            em.alias(inp.outputs[0], em.value(inp.required_input(0)))
        outs = [o for o in cond.outputs if self.live.has(o)]
        units = self.members.get(id(cond), [])
        branch = {0: self.reach(cond, [o.inputs[0] for o in outs], units),
                  1: self.reach(cond, [o.inputs[1] for o in outs], units)}
        both = [u for u in units if id(u) in branch[0] and id(u) in branch[1]]
        if both:
            u = both[0]
            label = u.what() if isinstance(u, Layer) else u.what()
            raise ModelError(
                f"{label} is used by both the true and the false branch of {cond.what()}; "
                "compute it before the conditional, or duplicate it"
            )
        graphs = []
        for side, gname in ((0, "then"), (1, "else")):
            g = Graph(name=f"{cond.name}/{gname}")
            self.emit_scope(cond, g, [u for u in units if id(u) in branch[side]])
            g.outputs = [self.result(o.inputs[side], g, f"{o.name}/{gname}") for o in outs]
            graphs.append(g)
        em.graph = graph
        em.prefix = cond.name
        c = em.value(cond.condition.required_input(0))
        values = [em.new_value(o.outputs[0]) for o in outs]
        em.add("If", [c], values, {"then_branch": graphs[0], "else_branch": graphs[1]},
               name=em.fresh(cond.name, em.node_names))

    def reach(self, scope, tensors: list[Tensor], units: list) -> set[int]:
        ids = {id(u) for u in units}
        seen: set[int] = set()
        todo = list(tensors)
        while todo:
            t = todo.pop()
            u = self.unit_of(t, scope)
            if u is None or id(u) in seen or id(u) not in ids:
                continue
            seen.add(id(u))
            todo.extend(self.inputs_of(u))
        return seen


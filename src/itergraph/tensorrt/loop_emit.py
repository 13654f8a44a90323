"""Emitting one network loop as a canonical `ir.Loop`, with TensorRT's lazy semantics.

Mapping: iterator -> `Sliced` (keep_axis=False, stride -1 when reversed; with a COUNT limit a
reversed iterator first takes the leading COUNT entries, since TensorRT reads ``X[M-1-i]``
with M the trip count), recurrence -> `Carried`, COUNT -> ``trip_count`` (int64, a negative
count runs zero times), WHILE -> ``precondition``, LAST_VALUE -> `Last`, CONCATENATE / REVERSE
-> `Concat(new_axis=True, reverse=..., length=...)`. Loops with iterators are marked
``strict_slices``: iterating beyond an iterator's end is an execution error.

Laziness. TensorRT evaluates sequence elements "as needed": in an n-trip loop the next value
``Y_{n-1}`` that a recurrence computes on the last trip is demanded only by a LAST_VALUE output
of it, or by the WHILE condition that ends the loop. The other recurrences are *lazy*: the
layers only their next values need run inside an ONNX ``If`` whose condition is "another trip
follows" (``k + 1 < COUNT``, and the WHILE condition recomputed on the next values), so that
their last-trip value is never evaluated, and an error there (an out-of-range gather of
``offsets[i + 1]``) is no error. The else branch passes the current value through (it is never
read).

Zero trips. A CONCATENATE / REVERSE output of a loop that runs no trip is its length of
entries of the shape TensorRT's shape propagation gives the concatenated tensor. When that
shape has run-time dimensions, an ``If`` after the loop builds those entries (zeros) from the
shape of the tensor the value is known to share its shape with (a recurrence's initial value,
an iterator's input), or else from the concatenated layers evaluated once on the initial values
(see `ZeroTrip`).
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..ir import Carried, Concat, Graph, Last, Sliced, Value, tensor
from ..ir import Loop as IRLoop
from . import layers as L
from .control import IteratorLayer, LoopOutputLayer, RecurrenceLayer
from .core import Layer, Tensor
from .enums import DataType, LoopOutput, TripLimit, to_ir, to_numpy
from .lower import lower_layer
from .shapes import ir_shape, norm_axis

_I64 = DataType.INT64

# layers whose output has the shape of their (first) input
_SAME_SHAPE = (L.IdentityLayer, L.ActivationLayer, L.UnaryLayer, L.CastLayer, L.SoftMaxLayer)


def _ir_type(t: Tensor):
    return tensor(to_ir(t.compute_dtype), ir_shape(t.shape))


class LoopEmitter:
    """Emits `loop` into `graph` for the network builder `b` (see :mod:`.build`)."""

    def __init__(self, b, loop, graph: Graph):
        self.b, self.em, self.loop, self.graph = b, b.em, loop, graph
        self.an = b.an
        self.count = next((t for t in loop.trip_limits if t.kind is TripLimit.COUNT), None)
        self.cond = next((t for t in loop.trip_limits if t.kind is TripLimit.WHILE), None)
        self.recs = [r for r in loop.recurrences if b.live.has(r)]
        self.outs = [o for o in loop.outputs if b.live.has(o)]

    # -- which recurrences are lazy -------------------------------------------------------
    def _cond_recurrences(self) -> set[int]:
        """Recurrences the WHILE condition reads (directly or through layers of the loop)."""
        found: set[int] = set()
        if self.cond is None:
            return found
        seen: set[int] = set()
        stack = [self.cond.required_input(0)]
        while stack:
            t = stack.pop()
            if id(t) in seen or self.loop not in self.an.deps_of(t):
                continue
            seen.add(id(t))
            p = t.producer
            if isinstance(p, RecurrenceLayer):
                found.add(id(p))
            elif p is not None:
                stack.extend(x for x in p.inputs if x is not None)
        return found

    def _split(self, units: list):
        """(eager units, lazy units, lazy recurrences whose next value a lazy unit makes)."""
        last = {id(o.required_input(0).producer) for o in self.outs
                if o.kind is LoopOutput.LAST_VALUE}
        demanded = last | self._cond_recurrences()
        lazy_recs = [r for r in self.recs if id(r) not in demanded]
        roots = [o.required_input(0) for o in self.outs if o.kind is not LoopOutput.LAST_VALUE]
        roots += [r.inputs[1] for r in self.recs if id(r) in demanded]
        if self.cond is not None:
            roots.append(self.cond.required_input(0))
        eager = self.b.reach(self.loop, roots, units)
        lazy = self.b.reach(self.loop, [r.inputs[1] for r in lazy_recs], units) - eager
        if lazy and self.cond is not None and not self._cone(self.cond.required_input(0)):
            eager |= lazy  # the condition cannot be recomputed: no laziness (see _cone)
            lazy = set()
        lazy_units = [u for u in units if id(u) in lazy]
        deferred = [r for r in lazy_recs
                    if self.b.reach(self.loop, [r.inputs[1]], units) - eager]
        return [u for u in units if id(u) not in lazy], lazy_units, deferred

    def _cone(self, t: Tensor, stop=frozenset()) -> list[Layer] | None:
        """Layers of this loop (not of nested scopes) between `t` and the recurrence outputs,
        iterator outputs and outside values it reads, in dependency order; None when a nested
        loop or conditional is on the way (it cannot be re-emitted)."""
        order: list[Layer] = []
        seen: set[int] = set()

        def visit(x: Tensor) -> bool:
            if id(x) in seen or id(x) in stop or self.loop not in self.an.deps_of(x):
                return True
            seen.add(id(x))
            p = x.producer
            if isinstance(p, (RecurrenceLayer, IteratorLayer)) and p.loop is self.loop:
                return True
            if p is None or self.an.layer_scope(p) is not self.loop or isinstance(
                    p, LoopOutputLayer) or not all(visit(i) for i in p.inputs if i is not None):
                return False
            order.append(p)
            return True

        return order if visit(t) else None

    def relower(self, t: Tensor, subst: dict[int, Value], graph: Graph) -> Value | None:
        """Emit `t`'s cone (see `_cone`) again into `graph` with the tensors of `subst` bound to
        other values; the tensor -> value map is restored afterwards."""
        cone = self._cone(t, frozenset(subst))
        if cone is None:
            return None
        em = self.em
        saved, saved_graph = dict(em.values), em.graph
        em.values.update(subst)
        em.graph = graph
        try:
            for layer in cone:
                lower_layer(layer, em)
            return em.value(t)
        finally:
            em.values, em.graph = saved, saved_graph

    # -- emission -------------------------------------------------------------------------
    def emit(self) -> None:
        b, em, loop, graph = self.b, self.em, self.loop, self.graph
        body = Graph(name=loop.name)
        em.prefix = loop.name
        trip = b.trip_count(self.count.required_input(0)) if self.count is not None else None
        ports = []
        for it in loop.iterators:
            x = it.required_input(0)
            axis = norm_axis(it.axis, len(x.shape), it.what())
            value = em.value(x)
            if it.reverse and self.count is not None and not b.covers(self.count, x, axis):
                em.prefix = it.name
                end = em.node("Unsqueeze", [trip, em.ints([0])])
                value = em.node("Slice", [value, em.ints([0]), end, em.ints([axis])])
            param = em.new_value(it.outputs[0])
            body.inputs.append(param)
            ports.append(Sliced(value, param, axis=axis, stride=-1 if it.reverse else 1))
        carried: dict[int, Carried] = {}
        for rec in self.recs:
            param = em.new_value(rec.outputs[0])
            body.inputs.append(param)
            port = Carried(em.value(rec.required_input(0)), param, param)
            ports.append(port)
            carried[id(rec)] = port
        units = b.members.get(id(loop), [])
        eager, lazy, deferred = self._split(units)
        b.emit_scope(loop, body, eager)
        iteration = None
        if lazy:
            iteration = Value(em.fresh(f"{loop.name}/iteration"), tensor("int64", ()))
            body.inputs.append(iteration)
            self._emit_lazy(body, lazy, deferred, carried, trip, iteration)
        taken: set[int] = set()
        for rec in self.recs:
            port = carried[id(rec)]
            if port.result is port.param:  # not set by the lazy If
                port.result = b.result(rec.inputs[1], body, f"{rec.name}/next", taken)
            taken.add(port.result.uid)
        precondition = None
        if self.cond is not None:
            precondition = b.result(self.cond.required_input(0), body, self.cond.name)
        outs, fixes = [], []
        for lo in self.outs:
            out_v = em.new_value(lo.outputs[0])
            if lo.kind is LoopOutput.LAST_VALUE:
                outs.append(Last(carried[id(lo.required_input(0).producer)].result, out_v))
                continue
            x = lo.required_input(0)
            axis = norm_axis(lo.axis, len(x.shape) + 1, lo.what())
            em.prefix = lo.name
            em.graph = graph
            n = em.as_int64(lo.length())
            r = b.result(x, body, lo.name)
            target = out_v
            if -1 in x.shape and not self._surely_runs():
                target = Value(em.fresh(f"{out_v.name}/trips"), out_v.type)
                fixes.append((lo, axis, n, target, out_v))
            outs.append(Concat(r, target, axis=axis, reverse=lo.kind is LoopOutput.REVERSE,
                               new_axis=True, length=n))
        trips = None
        if fixes and self.cond is not None:
            trips = self._count_trips(body, ports, outs)
        results: list[Value] = []
        for v in [precondition, *(p.result for p in carried.values()),
                  *(o.result for o in outs)]:
            if v is not None and all(v is not r for r in results):
                results.append(v)
        body.outputs = results
        graph.add(IRLoop(body, ports, outs, trip_count=trip, precondition=precondition,
                         iteration_param=iteration, name=em.fresh(loop.name, em.node_names),
                         origin="network", negative_trip_count="zero",
                         strict_slices=bool(loop.iterators)))
        for fix in fixes:
            ZeroTrip(self, *fix).emit(trip if trips is None else trips)

    def _surely_runs(self) -> bool:
        """Does the loop run at least one trip whatever the inputs (a COUNT known > 0)?"""
        count = self.loop.static_count()
        return count is not None and count > 0

    def _emit_lazy(self, body: Graph, lazy: list, deferred: list, carried: dict,
                   trip: Value | None, k: Value) -> None:
        """An If in `body` computing the next values of the `deferred` recurrences only when
        another trip follows; its outputs become their carried results."""
        b, em, loop = self.b, self.em, self.loop
        em.graph, em.prefix = body, f"{loop.name}/lazy"
        k1 = em.node("Add", [k, em.scalar(1, _I64)])
        more = None
        if trip is not None:
            more = em.node("Less", [k1, trip])
        if self.cond is not None:
            reads = self._cond_recurrences()
            subst = {id(r.outputs[0]): em.value(r.inputs[1]) for r in self.recs
                     if id(r) in reads}
            nxt = self.relower(self.cond.required_input(0), subst, body)
            em.graph, em.prefix = body, f"{loop.name}/lazy"
            more = nxt if more is None else em.node("And", [more, nxt])
        then_g = Graph(name=f"{loop.name}/next_trip")
        b.emit_scope(loop, then_g, lazy)
        then_g.outputs = [b.result(r.inputs[1], then_g, f"{r.name}/next") for r in deferred]
        else_g = Graph(name=f"{loop.name}/last_trip")
        em.graph, em.prefix = else_g, f"{loop.name}/last_trip"
        else_g.outputs = [em.node("Identity", [carried[id(r)].param]) for r in deferred]
        em.graph = body
        outs = []
        for r in deferred:
            v = Value(em.fresh(f"{r.name}/next"), _ir_type(r.outputs[0]))
            carried[id(r)].result = v
            outs.append(v)
        em.add("If", [more], outs, {"then_branch": then_g, "else_branch": else_g},
               name=em.fresh(f"{loop.name}/lazy", em.node_names), graph=body)

    def _count_trips(self, body: Graph, ports: list, outs: list) -> Value:
        """A carried trip counter (for loops whose trip count only the run tells)."""
        em = self.em
        param = Value(em.fresh(f"{self.loop.name}/trip"), tensor("int64", ()))
        body.inputs.append(param)
        em.graph, em.prefix = body, f"{self.loop.name}/trip"
        result = em.node("Add", [param, em.scalar(1, _I64)])
        ports.append(Carried(em.scalar(0, _I64), param, result))
        out = Value(em.fresh(f"{self.loop.name}/trips"), tensor("int64", ()))
        outs.append(Last(result, out))
        em.graph = self.graph
        return out


class ZeroTrip:
    """After the loop: ``output = zeros([length] + entry shape) if trips == 0 else output``,
    with the entry shape of the concatenated tensor found as the module docstring says."""

    def __init__(self, le: LoopEmitter, lo, axis: int, length: Value, raw: Value, out: Value):
        self.le, self.em, self.lo, self.axis = le, le.em, lo, axis
        self.length, self.raw, self.out = length, raw, out

    def _source(self, x: Tensor) -> tuple[Tensor, int | None] | None:
        """(tensor outside the loop, axis it drops) whose shape `x` has, if one is known."""
        loop, an = self.le.loop, self.le.an
        while True:
            if loop not in an.deps_of(x):
                return x, None
            p = x.producer
            if isinstance(p, RecurrenceLayer) and p.loop is loop:
                x = p.required_input(0)
                continue
            if isinstance(p, IteratorLayer) and p.loop is loop:
                src = p.required_input(0)
                return src, norm_axis(p.axis, len(src.shape), p.what())
            rec = next((r for r in loop.recurrences if r.inputs[1] is x), None)
            if rec is not None:
                x = rec.required_input(0)
                continue
            if isinstance(p, _SAME_SHAPE):
                x = p.required_input(0)
                continue
            return None

    def _shape_by_evaluation(self, x: Tensor, g: Graph) -> Value | None:
        """Shape of `x` from its layers evaluated once on the initial values (iterators:
        zeros of a piece's shape)."""
        em, loop = self.em, self.le.loop
        subst: dict[int, Value] = {}
        em.graph = g
        for r in loop.recurrences:
            subst[id(r.outputs[0])] = em.value(r.required_input(0))
        for it in loop.iterators:
            src = it.required_input(0)
            axis = norm_axis(it.axis, len(src.shape), it.what())
            shape = self._drop(em.node("Shape", [em.value(src)]), len(src.shape), axis)
            zero = np.zeros(1, to_numpy(src.compute_dtype))
            subst[id(it.outputs[0])] = em.node("ConstantOfShape", [shape], {"value": zero})
        v = self.le.relower(x, subst, g)
        em.graph = g
        return None if v is None else em.node("Shape", [v])

    def _drop(self, shape: Value, rank: int, axis: int | None) -> Value:
        if axis is None:
            return shape
        keep = [i for i in range(rank) if i != axis]
        return self.em.node("Gather", [shape, self.em.ints(keep)], {"axis": 0})

    def emit(self, trips: Value) -> None:
        em, lo = self.em, self.lo
        x = lo.required_input(0)
        graph = self.le.graph
        em.graph, em.prefix = graph, f"{lo.name}/zero_trips"
        then_g = Graph(name=f"{lo.name}/zero_trips")
        em.graph = then_g
        src = self._source(x)
        if src is not None:
            t, axis = src
            entry = self._drop(em.node("Shape", [em.value(t)]), len(t.shape), axis)
        else:
            entry = self._shape_by_evaluation(x, then_g)
        if entry is None:
            raise ModelError(
                f"{lo.what()}: the shape of its entries when the loop runs no trip cannot be "
                "derived (the concatenated value is computed by a nested loop or conditional)")
        em.graph, em.prefix = then_g, f"{lo.name}/zero_trips"
        rank = len(x.shape)
        n = em.node("Reshape", [self.length, em.ints([1])])
        parts = [em.node("Slice", [entry, em.ints([0]), em.ints([self.axis])]), n,
                 em.node("Slice", [entry, em.ints([self.axis]), em.ints([rank])])]
        full = em.node("Concat", parts, {"axis": 0})
        zero = np.zeros(1, to_numpy(x.compute_dtype))
        then_g.outputs = [em.node("ConstantOfShape", [full], {"value": zero})]
        else_g = Graph(name=f"{lo.name}/trips")
        em.graph = else_g
        else_g.outputs = [em.node("Identity", [self.raw])]
        em.graph = graph
        none = em.node("Less", [trips, em.scalar(1, _I64)])
        em.add("If", [none], [self.out], {"then_branch": then_g, "else_branch": else_g},
               name=em.fresh(f"{lo.name}/zero_trips", em.node_names), graph=graph)

__all__ = ["LoopEmitter"]

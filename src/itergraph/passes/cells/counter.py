"""While loops that only count, as counted loops (for `ops`).

Not a pass. TensorFlow writes a Keras RNN as a while loop over a time counter: a carried
``t`` starting at 0 and stepping by 1, the condition ``t + 1 < L`` for an invariant ``L``
(the sequence length), the step input ``Gather(X, t)`` (tf2onnx) or a sliced input
(OpenVINO), plus counters and pass-through values nobody reads. `counted_copy` returns a copy
of such a loop in which the condition is a trip count ``L``, ``t`` is the iteration number,
and carried values and outputs the enclosing graph does not read are gone: the form
`fuse_cells` recognises. The copy computes the same outputs the enclosing graph reads.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ...ir.builder import Builder
from ...ir.clone import clone_node
from ...ir.graph import Graph, Node, Value
from ...ir.loop import UNBOUNDED_TRIP_COUNT, Carried, Loop
from ...ir.types import DataType, TensorType
from ..loop_motion import LoopScope, const_value
from .match import strip


def _uncast(v: Value | None, scope: LoopScope | None = None) -> Value | None:
    """`v` without the integer/float ``Cast`` and ``Identity`` nodes in front of it (with
    `scope`: those of the loop body only, so that an outer value stays one the loop reads)."""
    v = strip(v)
    while v is not None and v.producer is not None and v.producer.op_type == "Cast" \
            and v.producer.domain == "" and (scope is None or v.uid in scope.defined):
        v = strip(v.producer.inputs[0])
    return v


def _scalar(v: Value | None) -> int | None:
    c = const_value(v)
    if c is None or c.size != 1 or c.dtype.kind not in "iuf":
        return None
    return int(c.reshape(()))


def _step(c: Carried) -> bool:
    """Whether `c` is a counter: its result is ``param + 1``."""
    p = strip(c.result).producer
    if p is None or p.op_type != "Add" or p.domain != "" or len(p.inputs) != 2:
        return False
    a, b = (strip(x) for x in p.inputs)
    return (a is c.param and _scalar(b) == 1) or (b is c.param and _scalar(a) == 1)


def _terms(v: Value | None) -> list[Value]:
    """The conjuncts of condition `v` (``And`` flattened)."""
    v = strip(v)
    p = None if v is None else v.producer
    if p is not None and p.op_type == "And" and p.domain == "" and len(p.inputs) == 2:
        return _terms(p.inputs[0]) + _terms(p.inputs[1])
    return [] if v is None else [v]


def _outer_limit(b: Value | None, scope: LoopScope):
    """Limit `b` of a comparison as an outer value or constant, or None."""
    if b is None:
        return None
    if const_value(b) is not None:
        return const_value(b)
    if b.uid in scope.bound:
        return scope.bound[b.uid]
    if b.uid not in scope.defined:
        return b
    return None


def _limits(loop: Loop, scope: LoopScope) -> list[tuple[Carried | None, object]] | None:
    """(counter port, limit) per conjunct of a ``t + 1 < L`` condition, or of several such
    conjuncts (TensorFlow's ``maximum_iterations``, ``tf.scan``), where a conjunct may also
    compare the iteration number ``k < L`` (counter None); None for any other condition."""
    out: list[tuple[Carried | None, object]] = []
    for term in _terms(loop.condition_result):
        p = term.producer
        if p is None or p.op_type != "Less" or p.domain != "" or len(p.inputs) != 2:
            return None
        a, b = (_uncast(x, scope) for x in p.inputs)
        limit = _outer_limit(b, scope)
        if limit is None or a is None:
            return None
        if a is loop.iteration_param and a is not None:
            out.append((None, limit))
            continue
        counter = next((c for c in loop.carried if strip(c.result) is a and _step(c)), None)
        if counter is None or _scalar(counter.value) != 0:
            return None
        out.append((counter, limit))
    return out or None


def _same(x: Value | None, y) -> bool:
    """Whether outer value `x` is `y` (a value, or equal constants)."""
    x = _uncast(x)
    if isinstance(y, np.ndarray):
        c = const_value(x)
        return c is not None and c.size == 1 and c.reshape(()) == y.reshape(())
    return x is _uncast(y) or (const_value(x) is not None and const_value(_uncast(y)) is not None
                               and np.array_equal(const_value(x), const_value(_uncast(y))))


def _initial_terms(loop: Loop, limits: list) -> bool | None:
    """True when the initial condition is the loop condition's conjuncts at the initial
    values (``t0 < L``, ``0 < L``), False when it is absent or a constant true; None for
    anything else."""
    v = strip(loop.initial_condition)
    if v is None:
        return False
    c = const_value(v)
    if c is not None:
        return False if c.size == 1 and bool(c.reshape(())) else None
    def tests(t: Value, counter: Carried | None, limit) -> bool:
        p = t.producer
        start = counter.value if counter is not None else np.zeros((), np.int64)
        return (p is not None and p.op_type == "Less" and p.domain == ""
                and len(p.inputs) == 2 and _same(p.inputs[0], start)
                and _same(p.inputs[1], limit))

    terms = _terms(v)
    if len(terms) != len(limits) or not all(
            any(tests(t, c, limit) for c, limit in limits) for t in terms) or not all(
            any(tests(t, c, limit) for t in terms) for c, limit in limits):
        return None
    return True


def _unbounded(loop: Loop) -> bool:
    """Whether `loop`'s trip count bounds nothing: absent, a constant beyond
    `UNBOUNDED_TRIP_COUNT`, or a negative constant where that means no bound (OpenVINO's -1;
    in ONNX a negative count runs no iteration, a bound like any other)."""
    if loop.trip_count is None:
        return True
    n = _scalar(loop.trip_count)
    if n is None:
        return False
    return n >= UNBOUNDED_TRIP_COUNT or (n < 0 and loop.negative_trip_count == "unbounded")


def counted_copy(graph: Graph, loop: Loop, read: set[int]) -> tuple[Loop, list[Node]] | None:
    """A counted copy of `loop` (see the module docstring) and the nodes computing its trip
    count, to put before it; None when `loop` is not such a while loop. `read`: uids of the
    values the enclosing graph reads (besides `loop`'s own reads).

    The trip count is the least of the loop's own (when it has one) and one bound per
    conjunct of the condition: ``L`` for ``t + 1 < L``, ``L + 1`` for ``k < L`` (after
    iteration k the loop goes on while k < L), or 0 where the initial condition is that
    conjunct at the initial values and does not hold."""
    if loop.precondition is not None:
        return None
    scope = LoopScope(loop)
    limits = _limits(loop, scope)
    checked = None if limits is None else _initial_terms(loop, limits)
    if checked is None:
        return None
    counters = list({id(c): c for c, _ in limits if c is not None}.values())
    for counter in counters:
        users = [n for n in loop.body.nodes if any(x is counter.param for x in n.inputs)]
        gathers = [n for n in users if n.op_type == "Gather" and n.domain == ""
                   and len(n.inputs) == 2 and n.inputs[1] is counter.param]
        if len(users) - len(gathers) != 1 or (gathers and loop.iteration_param is None):
            return None
    mapping: dict[int, Value] = {}
    copy = copy_loop(loop, mapping)
    steps = {mapping[c.param.uid].uid for c in counters}
    for n in copy.body.nodes:
        if n.op_type == "Gather" and len(n.inputs) == 2 and n.inputs[1].uid in steps:
            n.inputs = [n.inputs[0], copy.iteration_param]
    trip = _Trip(graph, loop.name)
    bounds = [] if _unbounded(loop) else [trip.scalar(loop.trip_count)]
    for counter, limit in limits:
        bound = trip.scalar(limit)
        bounds.append(bound if counter is not None else trip.after_last(bound, checked))
    copy.trip_count = trip.value(trip.least(bounds))
    copy.initial_condition, copy.condition_result = None, None
    copy.negative_trip_count = "zero"  # t0 < L false: no iteration
    copy.set_output_ports([p for p in copy.output_ports if p.output.uid in read])
    _drop_unread_carried(copy)
    return copy, trip.nodes


class _Trip:
    """Scalar int64 arithmetic on limits (outer values or constants), folded when constant:
    the nodes computing a counted copy's trip count, put before the loop."""

    def __init__(self, graph: Graph, name: str):
        self.b = Builder(graph, f"{name}/trip_count")
        self.nodes = self.b.nodes

    def _node(self, op: str, ins: list, what: str, attrs: dict | None = None,
              version: int | None = None) -> Value:
        return self.b.node(op, [self.value(x) for x in ins], attrs, hint=what,
                           type=TensorType(DataType.INT64, ()), version=version)

    def value(self, x) -> Value:
        return x if isinstance(x, Value) else self.b.i64(x, "const")

    def scalar(self, limit):
        """`limit` as an int64 scalar."""
        if isinstance(limit, np.ndarray) or const_value(limit) is not None:
            c = limit if isinstance(limit, np.ndarray) else const_value(limit)
            return np.asarray(int(c.reshape(())), np.int64)
        cast = self._node("Cast", [limit], "cast", {"to": 7})
        return self._node("Reshape", [cast, np.zeros(0, np.int64)], "scalar", version=14)

    def after_last(self, bound, checked: bool):
        """The iterations a ``k < L`` conjunct allows: L + 1, or (`checked`: the initial
        condition tests ``0 < L`` first) 0 when L <= 0."""
        if isinstance(bound, np.ndarray):
            n = int(bound) + 1
            return np.asarray(0 if checked and int(bound) <= 0 else n, np.int64)
        more = self._node("Add", [bound, np.asarray(1, np.int64)], "plus_one", version=14)
        if not checked:
            return more
        zero = np.asarray(0, np.int64)
        runs = self._node("Greater", [bound, zero], "runs")
        return self._node("Where", [runs, more, zero], "bound", version=16)

    def least(self, bounds: list):
        consts = [b for b in bounds if isinstance(b, np.ndarray)]
        values = [b for b in bounds if not isinstance(b, np.ndarray)]
        if consts:
            values.append(np.asarray(min(int(c) for c in consts), np.int64))
        if len(values) == 1:
            return values[0]
        return self._node("Min", values, "min")


def copy_loop(loop: Loop, mapping: dict[int, Value] | None = None) -> Loop:
    """A copy of `loop` (body included) producing `loop`'s own output values, to be put in
    its place; `mapping` collects old -> new body values."""
    copy = clone_node(loop, {} if mapping is None else mapping)
    copy.set_output_ports([dataclasses.replace(new, output=old.output)
                           for old, new in zip(loop.output_ports, copy.output_ports)])
    return copy


def _drop_unread_carried(loop: Loop) -> None:
    """Remove the carried ports whose values no output port needs (counters, pass-through
    values nobody reads) and the body nodes nothing needs any more."""
    body = loop.body
    producer = {v.uid: n for n in body.nodes for v in n.outputs}
    dead = [c for c in loop.carried]
    while True:
        roots = [p.result for p in loop.output_ports]
        roots += [c.result for c in loop.carried if c not in dead]
        live: set[int] = set()
        todo = [producer[v.uid] for v in roots if v is not None and v.uid in producer]
        while todo:
            n = todo.pop()
            if id(n) in live:
                continue
            live.add(id(n))
            todo += [producer[v.uid] for v in n.reads() if v.uid in producer]
        needed = {v.uid for n in body.nodes if id(n) in live for v in n.reads()}
        needed |= {v.uid for v in roots if v is not None}
        keep = [c for c in dead if c.param.uid in needed]
        if not keep:
            break
        dead = [c for c in dead if c not in keep]
    for c in dead:
        loop.input_ports.remove(c)
        body.inputs = [v for v in body.inputs if v is not c.param]
    body.nodes = [n for n in body.nodes if id(n) in live]

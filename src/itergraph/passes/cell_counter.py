"""While loops that only count, as counted loops (for `cell_ops`).

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

from ..ir.clone import clone_node
from ..ir.graph import Graph, Node, Value
from ..ir.loop import UNBOUNDED_TRIP_COUNT, Carried, Loop
from ..ir.types import DataType, TensorType
from .cell_match import strip
from .loop_motion import STD, LoopScope, const_value


def _uncast(v: Value | None) -> Value | None:
    """`v` without the integer/float ``Cast`` and ``Identity`` nodes in front of it."""
    v = strip(v)
    while v is not None and v.producer is not None and v.producer.op_type == "Cast" \
            and v.producer.domain in STD:
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
    if p is None or p.op_type != "Add" or p.domain not in STD or len(p.inputs) != 2:
        return False
    a, b = (strip(x) for x in p.inputs)
    return (a is c.param and _scalar(b) == 1) or (b is c.param and _scalar(a) == 1)


def _limit(loop: Loop, scope: LoopScope):
    """(counter port, outer limit value or constant) of a ``t + 1 < L`` condition."""
    cond = strip(loop.condition_result)
    p = None if cond is None else cond.producer
    if p is None or p.op_type != "Less" or p.domain not in STD or len(p.inputs) != 2:
        return None
    a, b = (_uncast(x) for x in p.inputs)
    counter = next((c for c in loop.carried if strip(c.result) is a and _step(c)), None)
    if counter is None or _scalar(counter.value) != 0 or b is None:
        return None
    if const_value(b) is not None:
        return counter, const_value(b)
    if b.uid in scope.bound:
        return counter, scope.bound[b.uid]
    if b.uid not in scope.defined:
        return counter, b
    return None


def _same(x: Value | None, y) -> bool:
    """Whether outer value `x` is `y` (a value, or equal constants)."""
    x = _uncast(x)
    if isinstance(y, np.ndarray):
        c = const_value(x)
        return c is not None and c.size == 1 and c.reshape(()) == y.reshape(())
    return x is _uncast(y) or (const_value(x) is not None and const_value(_uncast(y)) is not None
                               and np.array_equal(const_value(x), const_value(_uncast(y))))


def _initially_true(loop: Loop, counter: Carried, limit) -> bool:
    """Whether the initial condition is absent, true, or ``t0 < L`` itself."""
    v = strip(loop.initial_condition)
    if v is None:
        return True
    c = const_value(v)
    if c is not None:
        return c.size == 1 and bool(c.reshape(()))
    p = v.producer
    return (p is not None and p.op_type == "Less" and p.domain in STD and len(p.inputs) == 2
            and _same(p.inputs[0], counter.value) and _same(p.inputs[1], limit))


def _unbounded(trip: Value | None) -> bool:
    if trip is None:
        return True
    n = _scalar(trip)
    return n is not None and (n < 0 or n >= UNBOUNDED_TRIP_COUNT)


def counted_copy(graph: Graph, loop: Loop, read: set[int]) -> tuple[Loop, list[Node]] | None:
    """A counted copy of `loop` (see the module docstring) and the nodes computing its trip
    count, to put before it; None when `loop` is not such a while loop. `read`: uids of the
    values the enclosing graph reads (besides `loop`'s own reads)."""
    if loop.precondition is not None or not _unbounded(loop.trip_count):
        return None
    scope = LoopScope(loop)
    found = _limit(loop, scope)
    if found is None or not _initially_true(loop, *found):
        return None
    counter, limit = found
    users = [n for n in loop.body.nodes if any(x is counter.param for x in n.inputs)]
    gathers = [n for n in users if n.op_type == "Gather" and n.domain in STD
               and len(n.inputs) == 2 and n.inputs[1] is counter.param]
    if len(users) - len(gathers) != 1 or (gathers and loop.iteration_param is None):
        return None
    mapping: dict[int, Value] = {}
    copy = copy_loop(loop, mapping)
    for n in copy.body.nodes:
        if n.op_type == "Gather" and len(n.inputs) == 2 and \
                n.inputs[1] is mapping[counter.param.uid]:
            n.inputs = [n.inputs[0], copy.iteration_param]
    nodes: list[Node] = []
    if isinstance(limit, np.ndarray):
        trip: Value = Value(f"{loop.name}/trip_count", TensorType(DataType.INT64, ()),
                            np.asarray(int(limit.reshape(())), np.int64))
        graph.initializers.append(trip)
    else:
        cast = Node("Cast", [limit], [Value(f"{loop.name}/trip_count64")], {"to": 7},
                    version=13, name=f"{loop.name}/trip_count_cast")
        shape = Value(f"{loop.name}/scalar_shape", TensorType(DataType.INT64, (0,)),
                      np.zeros(0, np.int64))
        graph.initializers.append(shape)
        trip = Value(f"{loop.name}/trip_count", TensorType(DataType.INT64, ()))
        nodes += [cast, Node("Reshape", [cast.outputs[0], shape], [trip], version=14,
                             name=f"{loop.name}/trip_count_scalar")]
    copy.trip_count, copy.initial_condition, copy.condition_result = trip, None, None
    copy.negative_trip_count = "zero"  # t0 < L false: no iteration
    copy.set_output_ports([p for p in copy.output_ports if p.output.uid in read])
    _drop_unread_carried(copy)
    return copy, nodes


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

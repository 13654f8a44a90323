"""Loops counted by their sliced inputs alone: the shared step of `loop_to_scan` and
`loop_to_ti`.

ONNX Scan and OpenVINO TensorIterator have no trip count, condition or iteration number:
their number of iterations is the length of their sliced inputs. `count_by_slices` turns
a canonical loop whose condition never stops it and whose number of iterations is known
(statically, or as a trip count equal to the length of its sliced input) into that form:
rows gathered by the iteration number become sliced inputs (`iteration_gather`), sliced
inputs longer than the count are cut to it, the iteration number becomes a sliced input
over ``0..N-1`` (a constant ``[N]`` sliced input carries the count when there is no
other), and the trip
count and conditions go. A loop that would need such a constant longer than
`MAX_STEPS_CONSTANT` is left a loop.
"""

from __future__ import annotations

import numpy as np

from ..ir.builder import Builder, const_type
from ..ir.graph import Graph, Value
from ..ir.loop import Concat, Last, Loop, Sliced
from ..ir.static_values import static_value
from ..ir.traits import Trait, has
from ..ir.traversal import replace_all_uses
from ..ir.types import DataType, TensorType
from .iteration_gather import iteration_gather
from .loop_facts import bool_const, condition_never_stops, static_count
from .loop_motion import static_shape

#: the most entries of the constant sliced input that carries the iteration number or the
#: count (``0..N-1``, 8 bytes each): a loop that needs a longer one stays a loop, so that
#: writing a model never allocates in proportion to its trip count
MAX_STEPS_CONSTANT = 1 << 20


def count_by_slices(graph: Graph, loop: Loop, read_slice: bool = False,
                    known_count: bool = False) -> str:
    """Rewrite `loop` (a node of `graph`) so that its sliced inputs alone count its
    iterations; "" when done, else why not (the loop is then unchanged but for
    `iteration_gather`'s exact rewrite of row reads). With `read_slice`, only a loop whose
    body will read one of its sliced inputs is rewritten (OpenVINO drops an unread sliced
    input of a TensorIterator, which then runs once). With `known_count`, only a loop whose
    number of iterations is known before the run (OpenVINO's TensorIterator fails on zero
    iterations)."""
    if loop.precondition is not None:
        return "it has a precondition (a while loop)"
    if not condition_never_stops(loop):
        return "its condition may stop it early"
    if any(isinstance(o, Concat) and o.length is not None for o in loop.output_ports):
        return "a concatenated output has a padding length"
    iteration_gather.rewrite_loop(graph, loop)
    n, why = static_count(loop)
    if n == 0:
        return "it runs no iteration"
    if n is None and known_count:
        return ("its number of iterations is known only at run time (OpenVINO's "
                "TensorIterator fails on zero iterations)")
    it = loop.iteration_param
    if read_slice and not (any(_reads(loop, s.param) for s in loop.sliced)
                           or (it is not None and _reads(loop, it))):
        return ("its body reads no sliced input nor the iteration number (OpenVINO would "
                "drop a count-only sliced input and run one iteration)")
    count_value: Value | None = None
    if n is None:
        if loop.trip_count is not None:
            if not loop.sliced or not all(_is_length(loop.trip_count, s) for s in loop.sliced):
                return why or "its trip count is not the length of its sliced inputs"
            count_value = loop.trip_count
        elif len(loop.sliced) > 1 and not loop.equal_slices:
            return "its sliced inputs may have different lengths"
        elif not loop.sliced:
            return why
        if it is not None and _reads(loop, it):
            if count_value is None:
                s = loop.sliced[0]
                if not _whole_single_steps(s):
                    return "its iteration number has no count to come from"
            if not _iteration_type_ok(it):
                return "its iteration number is not an integer scalar or [1]"
    elif it is not None and _reads(loop, it) and not _iteration_type_ok(it):
        return "its iteration number is not an integer scalar or [1]"
    elif n > MAX_STEPS_CONSTANT and ((it is not None and _reads(loop, it)) or not loop.sliced):
        return (f"it runs {n} iterations: a sliced input of its iteration numbers would be a "
                f"constant of {n} entries (at most {MAX_STEPS_CONSTANT} are written)")
    b = Builder(graph, loop.name or "loop")
    if n is not None:
        _cut_to(b, loop, n)
    if it is not None and _reads(loop, it):
        _iteration_as_slice(b, loop, it, n, count_value)
    elif it is not None:
        loop.body.inputs = [v for v in loop.body.inputs if v is not it]
    loop.iteration_param = None
    if not loop.sliced:  # a static count and no sliced input: a count-only one
        q = Value(f"{loop.name or 'loop'}_step", TensorType(DataType.INT64, ()))
        loop.body.inputs.append(q)
        loop.input_ports.append(Sliced(b.const(np.zeros(n, np.int64), "steps"), q))
    _drop_condition(loop)
    loop.trip_count = None
    loop.strict_slices = False
    at = graph.nodes.index(loop)
    graph.nodes[at:at] = b.nodes
    return ""


def _reads(loop: Loop, v: Value) -> bool:
    body = loop.body
    return any(v is u for n in body.nodes for u in n.reads()) or any(
        v is r for r in loop.body_results())


def _iteration_type_ok(it: Value) -> bool:
    t = it.type
    return (isinstance(t, TensorType) and (t.dtype is None or t.dtype.is_integer)
            and t.shape is not None and (t.rank == 0 or tuple(t.shape) in ((1,), (None,))))


def _whole_single_steps(s: Sliced) -> bool:
    return s.part_size == 1 and abs(s.stride) == 1 and (s.start, s.end) in ((0, -1), (-1, 0))


def _is_length(v: Value, s: Sliced) -> bool:
    """Whether `v` is, by construction, the length of `s`'s axis, which `s` takes whole, one
    element at a time: ``Shape(x)[axis]`` through casts, squeezes and reshapes."""
    if not _whole_single_steps(s):
        return False
    seen = 0
    while v.producer is not None and seen < 8:
        n = v.producer
        seen += 1
        if n.domain != "":
            return False
        if (has(n, Trait.RESHAPE) or n.op_type == "Cast") and n.inputs:
            v = n.inputs[0]
            continue
        if n.op_type == "Gather" and len(n.inputs) == 2:
            idx = static_value(n.inputs[1])
            shape = n.inputs[0].producer
            if (idx is None or idx.size != 1 or shape is None or shape.op_type != "Shape"
                    or int(n.attrs.get("axis", 0)) != 0):
                return False
            axis = int(idx.reshape(-1)[0]) + int(shape.attrs.get("start", 0))
            return shape.inputs[0] is s.value and _same_axis(axis, s)
        if n.op_type == "Shape" and "start" in n.attrs:
            start, end = int(n.attrs["start"]), n.attrs.get("end")
            return (n.inputs[0] is s.value and end is not None and int(end) == start + 1
                    and _same_axis(start, s))
        return False
    return False


def _same_axis(axis: int, s: Sliced) -> bool:
    if axis == s.axis:
        return True
    shape = static_shape(s.value)
    rank = len(shape) if shape is not None else getattr(s.value.type, "rank", None)
    return rank is not None and axis % rank == s.axis % rank


def _cut_to(b: Builder, loop: Loop, n: int) -> None:
    """Cut every sliced input yielding more than `n` pieces to exactly `n` (a ``Slice``
    before the loop)."""
    for s in loop.sliced:
        dim = static_shape(s.value)[s.axis]
        if s.count(dim) == n:
            continue
        lo, hi = s.bounds(dim)
        span = (n - 1) * abs(s.stride) + s.part_size
        lo, hi = (lo, lo + span) if s.stride > 0 else (hi - span, hi)
        shape = list(static_shape(s.value))
        shape[s.axis] = span
        s.value = b.node("Slice", [s.value, b.i64([lo]), b.i64([hi]), b.i64([s.axis])],
                         type=TensorType(getattr(s.value.type, "dtype", None), tuple(shape)))
        s.start, s.end = (0, -1) if s.stride > 0 else (-1, 0)


def _iteration_as_slice(b: Builder, loop: Loop, it: Value, n: int | None,
                        count: Value | None) -> None:
    """Bind the iteration parameter to a sliced input over ``0..N-1``."""
    t = it.type
    dtype = t.dtype if isinstance(t, TensorType) and t.dtype is not None else DataType.INT64
    keep = t.rank == 1
    if n is not None:
        steps = b.const(np.arange(n, dtype=dtype.numpy), "iterations")
    else:
        i64 = TensorType(DataType.INT64, ())
        if count is None:
            s = loop.sliced[0]
            shape = b.node("Shape", [s.value], type=TensorType(DataType.INT64, (None,)))
            count = b.node("Gather", [shape, b.i64(s.axis % _rank(s))], {"axis": 0}, type=i64)
        count = b.node("Cast", [count], {"to": DataType.INT64.onnx}, type=i64)
        count = b.node("Reshape", [count, b.i64([])], type=i64, version=14)
        steps = b.node("Range", [b.i64(0), count, b.i64(1)], version=11,
                       type=TensorType(DataType.INT64, (None,)))
        if dtype != DataType.INT64:
            steps = b.node("Cast", [steps], {"to": dtype.onnx}, type=TensorType(dtype, (None,)))
    loop.input_ports.append(Sliced(steps, it, keep_axis=keep))


def _rank(s: Sliced) -> int:
    shape = static_shape(s.value)
    if shape is not None:
        return len(shape)
    r = getattr(s.value.type, "rank", None)
    return r if r is not None else s.axis + 1


def _drop_condition(loop: Loop) -> None:
    """Remove the condition: its parameter, where still read, becomes a constant true."""
    param, result = loop.condition_param, loop.condition_result
    if result is not None:  # the body's outputs as read (ONNX's list) lose it too
        loop.body.outputs = [v for v in loop.body.outputs if v is not result]
    loop.condition_result = None
    loop.initial_condition = None
    loop.condition_param = None
    if param is None:
        return
    body = loop.body
    body.inputs = [v for v in body.inputs if v is not param]
    if _reads_value(body, param, loop):
        a = bool_const(param.type)
        true = Value(param.name or "cond", const_type(a), a)
        body.initializers.append(true)
        replace_all_uses(body, param, true)
        for p in loop.output_ports:
            if p.result is param:
                p.result = true
        _prune_copies_of(loop, true)


def _prune_copies_of(loop: Loop, true: Value) -> None:
    """Remove the ``Identity`` chain that passed the condition through, now unread, and the
    constant itself when nothing reads it any more."""
    body = loop.body
    chain = {true.uid}
    for n in body.nodes:
        if n.op_type == "Identity" and n.inputs and n.inputs[0] is not None \
                and n.inputs[0].uid in chain:
            chain.update(v.uid for v in n.outputs)
    while True:
        read = {v.uid for n in body.nodes for v in n.reads()}
        read.update(v.uid for v in loop.body_results())
        read.update(v.uid for v in body.outputs)
        dead = [n for n in body.nodes if n.op_type == "Identity" and n.outputs[0].uid in chain
                and not any(v.uid in read for v in n.outputs)]
        if not dead:
            break
        gone = {id(n) for n in dead}
        body.nodes = [n for n in body.nodes if id(n) not in gone]
    if true.uid not in read:
        body.initializers = [v for v in body.initializers if v is not true]


def _reads_value(body: Graph, v: Value, loop: Loop) -> bool:
    return any(v is u for n in body.nodes for u in n.reads()) or any(
        v is p.result for p in [*loop.carried, *loop.output_ports])


def is_tensor_iterator_form(loop: Loop) -> bool:
    """What OpenVINO's writer writes as a TensorIterator: sliced inputs and nothing but
    ports."""
    return (loop.trip_count is None and loop.initial_condition is None
            and loop.condition_result is None and loop.iteration_param is None
            and loop.condition_param is None and loop.precondition is None
            and bool(loop.sliced))


def last_is_carried(loop: Loop) -> bool:
    return all(not isinstance(o, Last) or loop.carried_for_result(o.result) is not None
               or o.result.uid not in loop.body.defined() for o in loop.output_ports)


"""Sliced inputs read by the iteration number: the form the ONNX writer writes as ``Loop``
(for runtimes without ``Scan``) and OpenVINO's as ``Loop``."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Invariant, Loop, Sliced
from ..ir.types import DataType, TensorType
from .base import LoopPass
from .loop_motion import static_shape


class ScanToLoop(LoopPass):
    """Sliced inputs read by the iteration number (the form written as ONNX ``Loop``).

    Applies to: every canonical `Loop` at any depth with sliced inputs, no trip count, no
    condition and no precondition (an ONNX ``Scan``, an OpenVINO ``TensorIterator``), whose
    sliced inputs take their whole axis one element at a time (stride ±1, ``part_size`` 1).
    The loop gets a trip count, the length of its first sliced input's axis (a constant when
    static, else ``Shape(x)[axis]``), and an iteration number ``i`` (int64 scalar; the
    existing one when it has one); each sliced input becomes an invariant input read in the
    body as ``Gather(x, i)`` (``Gather(x, len - 1 - i)`` when reversed; an ``Unsqueeze`` keeps
    the axis where the piece kept it).

    Returns: the number of loops rewritten.

    Guarantees: every output keeps its value for every input the original runs without
    error (sliced inputs of unequal lengths: the original stops at the shortest or, from a
    ``Scan``, fails; the rewritten loop fails reading past the end of a shorter one, or reads
    only part of a longer one).
    """

    name = "scan_to_loop"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        if (not loop.sliced or loop.trip_count is not None or loop.initial_condition is not None
                or loop.condition_result is not None or loop.precondition is not None):
            return 0
        if any(s.part_size != 1 or abs(s.stride) != 1 or (s.start, s.end) not in
               ((0, -1), (-1, 0)) for s in loop.sliced):
            return 0
        it = loop.iteration_param
        if it is not None and not (isinstance(it.type, TensorType) and it.type.rank == 0):
            return 0
        _rewrite(graph, loop)
        return 1


scan_to_loop = ScanToLoop()


def _length(b: Builder, s: Sliced) -> Value:
    i64 = TensorType(DataType.INT64, ())
    shape = static_shape(s.value)
    if shape is not None:
        return b.i64(shape[s.axis], "length")
    full = b.node("Shape", [s.value], type=TensorType(DataType.INT64, (None,)))
    return b.node("Gather", [full, b.i64(s.axis)], {"axis": 0}, type=i64)


def _rewrite(graph: Graph, loop: Loop) -> None:
    name = loop.name or "loop"
    b = Builder(graph, name)
    body = loop.body
    bb = Builder(body, f"{name}_body")
    i64 = TensorType(DataType.INT64, ())
    it = loop.iteration_param
    if it is None:
        it = Value(f"{name}_i", i64)
        body.inputs.insert(0, it)
        loop.iteration_param = it
    elif it.type.dtype not in (None, DataType.INT64):
        wide = Value(f"{name}_i", i64)
        body.inputs = [wide if v is it else v for v in body.inputs]
        body.nodes.insert(0, Node("Cast", [wide], [it], {"to": it.type.dtype.onnx}, version=13,
                                  name=bb.fresh("Cast")))
        loop.iteration_param = it = wide
    lengths = {id(s): _length(b, s) for s in loop.sliced}
    loop.trip_count = lengths[id(loop.sliced[0])]
    reads: list[Node] = []
    ports = []
    for p in loop.input_ports:
        if not isinstance(p, Sliced):
            ports.append(p)
            continue
        whole = Value(f"{p.param.name or 'x'}_whole", p.value.type)
        body.inputs = [whole if v is p.param else v for v in body.inputs]
        ports.append(Invariant(p.value, whole))
        index = it
        if p.stride < 0:
            shape = static_shape(p.value)
            if shape is not None:  # a constant in the body (OpenVINO: not through a port)
                last = bb.i64(shape[p.axis] - 1, "last")
            else:
                n = Value(bb.fresh("length"), i64)
                ports.append(Invariant(lengths[id(p)], n))
                body.inputs.append(n)
                last = bb.node("Sub", [n, bb.i64(1)], type=i64, version=14)
            index = bb.node("Sub", [last, it], type=i64, version=14)
        if p.keep_axis:
            row = bb.node("Gather", [whole, index], {"axis": p.axis})
            bb.node("Unsqueeze", [row, bb.i64([p.axis], "axes")], out=p.param)
        else:
            bb.node("Gather", [whole, index], {"axis": p.axis}, out=p.param)
    reads.extend(bb.nodes)
    loop.input_ports = ports
    body.nodes[0:0] = reads
    loop.negative_trip_count = "zero"
    loop.equal_slices = False
    loop.strict_slices = False
    at = graph.nodes.index(loop)
    graph.nodes[at:at] = b.nodes

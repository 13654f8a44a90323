"""Loops rewritten into the form the ONNX writer writes as ``Scan``."""

from __future__ import annotations

from ..ir.builder import Builder
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Concat, Last, Loop
from ..ir.types import TensorType
from .base import LoopPass
from .loop_motion import static_shape
from .skip_report import SkipReport
from .slice_counted import count_by_slices, is_tensor_iterator_form


class LoopToScan(SkipReport, LoopPass):
    """Loops rewritten into the form the ONNX writer writes as ``Scan``.

    Applies to: every canonical `Loop` at any depth not already in Scan form, whose condition
    never stops it (none, the condition input passed through, or a constant true; no
    precondition), whose number of iterations is known before it runs (a constant trip
    count, possibly from static shapes, or sliced inputs of static length) or is a trip count
    equal to the length of its sliced inputs (``Shape(x)[axis]``), whose ``Last`` outputs are
    carried values, whose concatenated outputs stack on a new axis (or join pieces of size 1,
    then squeezed), whose sliced inputs step one element at a time (OpenVINO's kept axis of
    size 1 is squeezed), and whose carried and concatenated results have a known rank. Row
    reads ``Gather(x, i)`` become sliced inputs (`iteration_gather`); sliced inputs longer
    than the count are cut to it; the iteration number becomes a sliced input over
    ``0..N-1`` (or a constant ``[N]`` one carries the count); trip count and condition go.

    Returns: the number of loops rewritten; `skipped` lists the loops left and why.

    Guarantees: every output keeps its value for every input the original runs without
    error. Gathers of rows may have become sliced inputs in a loop that is then skipped
    (an exact rewrite).
    """

    name = "loop_to_scan"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        if is_tensor_iterator_form(loop) and _scan_ports(loop):
            return 0
        why = _precheck(loop) or count_by_slices(graph, loop)
        if why:
            return self.skip(loop, why)
        _to_scan_ports(graph, loop)
        # count_by_slices leaves sliced inputs of one length: say so, as a Scan does
        loop.equal_slices = True
        loop.origin = "onnx.Scan"
        return 1


loop_to_scan = LoopToScan()


def _precheck(loop: Loop) -> str:
    for o in loop.output_ports:
        if isinstance(o, Last) and loop.carried_for_result(o.result) is None \
                and o.result.uid in loop.body.defined():
            return "a Last output is not a carried value (Scan returns only those)"
        if isinstance(o, Concat) and not o.new_axis and _dim(o.result, o.axis) != 1:
            return "a concatenated output joins pieces longer than 1 (Scan stacks them)"
    for s in loop.sliced:
        if s.part_size != 1 or abs(s.stride) != 1:
            return "a sliced input steps by more than one element"
        if (s.start, s.end) not in ((0, -1), (-1, 0)) and static_shape(s.value) is None:
            return "a sliced input covers part of an axis of unknown length"
    results = [c.result for c in loop.carried]
    results += [o.result for o in loop.output_ports if isinstance(o, Concat)]
    if any(getattr(r.type, "rank", None) is None for r in results):
        return "a carried or concatenated result has no known rank (ONNX Runtime's Scan needs it)"
    return ""


def _dim(v: Value, axis: int):
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None or not -t.rank <= axis < t.rank:
        return None
    return t.shape[axis]


def _scan_ports(loop: Loop) -> bool:
    return (all(not s.keep_axis and s.part_size == 1 and abs(s.stride) == 1
                and (s.start, s.end) in ((0, -1), (-1, 0)) for s in loop.sliced)
            and all(not isinstance(o, Concat) or o.new_axis for o in loop.output_ports))


def _to_scan_ports(graph: Graph, loop: Loop) -> None:
    """Sliced inputs dropping their axis over its whole range, outputs stacked on a new
    axis."""
    b = Builder(graph, loop.name or "scan")
    body = loop.body
    bb = Builder(body, f"{loop.name or 'scan'}_body")
    for s in loop.sliced:
        if (s.start, s.end) not in ((0, -1), (-1, 0)):
            dim = static_shape(s.value)[s.axis]
            lo, hi = s.bounds(dim)
            s.value = b.node("Slice", [s.value, b.i64([lo]), b.i64([hi]), b.i64([s.axis])])
            s.start, s.end = (0, -1) if s.stride > 0 else (-1, 0)
        if s.keep_axis:
            old = s.param
            t = old.type
            q = Value(f"{old.name or 'piece'}_row", _drop(t, s.axis))
            body.inputs = [q if v is old else v for v in body.inputs]
            body.nodes.insert(0, Node("Unsqueeze", [q, bb.i64([s.axis], "axes")], [old],
                                      version=13, name=bb.fresh("Unsqueeze")))
            s.param, s.keep_axis = q, False
    for o in loop.output_ports:
        if isinstance(o, Concat) and not o.new_axis:
            row = bb.node("Squeeze", [o.result, bb.i64([o.axis], "axes")],
                          type=_drop(o.result.type, o.axis))
            body.nodes.extend(bb.nodes)
            bb.nodes = []
            o.result, o.new_axis = row, True
    at = graph.nodes.index(loop)
    graph.nodes[at:at] = b.nodes


def _drop(t, axis: int):
    if not isinstance(t, TensorType) or t.shape is None:
        return t
    shape = list(t.shape)
    del shape[axis]
    return TensorType(t.dtype, tuple(shape))


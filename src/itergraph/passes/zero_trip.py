"""Loops known to run no iteration replaced by what they give then."""

from __future__ import annotations

import numpy as np

from ..ir.builder import Builder
from ..ir.graph import Graph
from ..ir.loop import Concat, Last, Loop
from ..ir.types import TensorType
from .base import LoopPass
from .loop_build import drop_unread_initializers
from .loop_facts import static_count
from .skip_report import SkipReport


class ZeroTrip(SkipReport, LoopPass):
    """A loop that runs no iteration, known before it starts, becomes its outputs.

    Applies to: every canonical `Loop` at any depth that `loop_facts.static_count` says runs
    0 iterations (a trip count of 0, or clamped to 0, an initial condition constant false,
    or a sliced input of static length 0; no precondition) whose outputs all have a value
    after no iteration: a ``Last`` output of a carried value (its initial value) and a
    ``Concat`` output without padding ``length`` or ``empty_error`` whose shape is known
    before the run (an empty tensor). OpenVINO's CPU plugin evaluates such a loop while
    compiling it and refuses it ("Zero count of iteration not supported").

    Returns: the number of loops replaced; `skipped` lists the zero-iteration loops left and
    why.

    Guarantees: every output keeps its value (and type) for every input; a loop of no
    iteration raises nothing, and neither do the ``Identity`` nodes that replace it.
    """

    name = "zero_trip"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        n, _ = static_count(loop)
        if n != 0:
            return 0
        b = Builder(graph, loop.name or "zero_trip")
        for o in loop.output_ports:
            why = _emit(b, loop, o)
            if why:
                return self.skip(loop, why)
        at = graph.nodes.index(loop)
        graph.nodes[at:at + 1] = b.nodes
        drop_unread_initializers(graph, loop.inputs)
        return 1


def _emit(b: Builder, loop: Loop, o) -> str:
    """Append the node giving output port `o`'s value after no iteration; "" or why not."""
    if isinstance(o, Last):
        c = loop.carried_for_result(o.result)
        if c is None:
            return f"its output '{o.output.name}' is the last value of a non-carried one"
        b.node("Identity", [c.value], out=o.output, version=16)
        return ""
    assert isinstance(o, Concat)
    if o.length is not None or o.empty_error is not None:
        return f"its output '{o.output.name}' is padded or an error when empty"
    shape = _empty_shape(o)
    if shape is None:
        return f"the shape of its output '{o.output.name}' is not known before it runs"
    empty = b.const(np.zeros(shape, o.result.type.dtype.numpy), "empty")
    b.node("Identity", [empty], out=o.output, version=16)
    return ""


def _static(t) -> tuple[int, ...] | None:
    if not isinstance(t, TensorType) or t.dtype is None or t.shape is None \
            or not all(isinstance(d, int) for d in t.shape):
        return None
    return tuple(t.shape)


def _empty_shape(o: Concat) -> tuple[int, ...] | None:
    """The shape of `o`'s output after no iteration: its declared shape when static, else the
    per-iteration value's static shape with the joined axis made (or inserted as) 0."""
    out = _static(o.output.type)
    if out is not None:
        return out
    piece = _static(o.result.type)
    if piece is None:
        return None
    rank = len(piece) + (1 if o.new_axis else 0)
    axis = o.axis + rank if o.axis < 0 else o.axis
    if not 0 <= axis < rank:
        return None
    if o.new_axis:
        return piece[:axis] + (0,) + piece[axis:]
    return piece[:axis] + (0,) + piece[axis + 1:]


zero_trip = ZeroTrip()

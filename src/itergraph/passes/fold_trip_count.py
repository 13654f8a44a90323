"""Trip counts known before a run become constants; one equal to a slice count goes."""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Value
from ..ir.loop import Loop, Sliced
from ..ir.static_values import static_int, static_value
from ..ir.traits import Trait, has
from ..ir.types import DataType, TensorType
from .base import LoopPass
from .loop_motion import const_value


class FoldTripCount(LoopPass):
    """Fold a loop's trip count when its value is known before the run.

    Applies to: every canonical `Loop` at any depth whose ``trip_count`` is not already a
    constant (initializer or ``Constant``):

    - when the count follows from constants and static shapes (`static_values`: ``Shape``
      of a value whose shape is static, then ``Gather``, ``Slice``, ``Cast``, arithmetic,
      ``Min``/``Max``...), it becomes an int64 scalar initializer of the loop's graph;
    - otherwise, when it is the length of the whole axis that a ``Sliced`` input with part
      size 1 and stride ±1 walks (``Gather(Shape(x), axis)`` or ``Shape(x)[axis:axis+1]``,
      through ``Cast``/``Squeeze``/``Unsqueeze``/``Reshape``/``Identity``), it is dropped:
      that input bounds the loop to the same count.

    Returns: the number of trip counts folded or dropped.

    Guarantees: every loop runs the same iterations and every output keeps its value. The
    expression that computed the old count stays (``dead-ports`` removes it when unused).
    """

    name = "fold_trip_count"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        t = loop.trip_count
        if t is None or const_value(t) is not None:
            return 0
        value = static_int(t)
        if value is not None:
            c = Value(f"{loop.name or 'loop'}_trip_count", TensorType(DataType.INT64, ()),
                      const=np.array(value, dtype=np.int64))
            graph.initializers.append(c)
            loop.trip_count = c
            return 1
        if any(walks_whole_axis(s, *src) for s in loop.sliced
               for src in [shape_source(t)] if src is not None):
            loop.trip_count = None
            return 1
        return 0


fold_trip_count = FoldTripCount()


def shape_source(v: Value) -> tuple[Value, int] | None:
    """``(x, axis)`` when `v` is the length of `x`'s axis `axis`, read from its shape."""
    for _ in range(16):
        n = v.producer
        if n is None or n.domain != "":
            return None
        if has(n, Trait.RESHAPE) or n.op_type == "Cast":  # the integer's value passes
            v = n.inputs[0]
            continue
        if n.op_type == "Gather" and n.attrs.get("axis", 0) == 0:
            shape_node = n.inputs[0].producer
            idx = static_value(n.inputs[1])
            if shape_node is None or shape_node.op_type != "Shape" or idx is None \
                    or idx.size != 1 or shape_node.attrs.get("start", 0) != 0:
                return None
            return shape_node.inputs[0], int(idx.reshape(()))
        if n.op_type == "Shape":
            start, end = n.attrs.get("start", 0), n.attrs.get("end")
            if start >= 0 and end == start + 1:
                return n.inputs[0], start
        return None
    return None


def walks_whole_axis(s: Sliced, x: Value, axis: int) -> bool:
    if s.value is not x or s.part_size != 1 or abs(s.stride) != 1:
        return False
    if axis < 0 or s.axis < 0:
        return False  # a negative axis needs the rank, which the match does not ask for
    return s.axis == axis and {s.start, s.end} == {0, -1}

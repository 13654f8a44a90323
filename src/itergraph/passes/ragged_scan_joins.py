"""A loop's scan output that is only split back into its pieces and joined on an existing
axis, with pieces that may change shape, becomes a carried tensor grown by ``Concat``.

``torch.onnx`` writes a scripted ``for`` loop that appends to a list and then calls
``torch.cat`` so::

    ys = Loop(...) { ...; scan output: piece }        # the pieces, stacked on a new axis
    y = ConcatFromSequence(SplitToSequence(ys, axis=0, keepdims=0), axis=a)

which asks for the pieces joined along their axis `a`. When a piece's length changes from one
iteration to the next (``x[:i+1]``, a slice of data-dependent length) the stacked form has no
shape: ONNX Runtime and itergraph's backends stop ("Inconsistent shape in loop output"), and
OpenVINO's ``Loop`` writes each piece into a buffer sized by another iteration's piece and
returns a tensor of the wrong shape, without an error (its one-thread mode even returns any
run-time error as empty outputs, so no check written into the IR can stop it). The join
itself is well defined: grown in the loop, it is what the program computes::

    acc = <empty tensor of the piece's rank>          # carried
    Loop(...) {
        fit = Reshape(acc, shape(piece) with -1 at a)  # the empty start takes the piece's dims
        acc' = Concat(fit, piece, axis=a)
    }
    y = acc after the loop
"""

from __future__ import annotations

import numpy as np

from ..analysis.loop_features import shape_varying
from ..ir.attributes import attr_or_default
from ..ir.builder import Builder
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Concat, Last, Loop
from ..ir.types import DataType, TensorType
from .base import LoopPass


class RaggedScanJoins(LoopPass):
    """Scan outputs only re-joined on an existing axis, whose pieces may change shape,
    become a carried tensor grown by ``Concat``.

    Applies to: a `Concat` output port of a canonical `Loop` (at any depth) that stacks on a
    new axis 0, not reversed, without a padded length, whose piece has a known element type
    and rank r >= 1 and may change shape between iterations
    (`analysis.loop_features.shape_varying`), and whose output is read by nothing but one
    ``SplitToSequence`` (axis 0, ``keepdims=0``, no split sizes) read by nothing but one
    ``ConcatFromSequence`` (``new_axis=0``, axis within [-r, r)) that is not a graph output
    of a body.

    Returns: the number of ports rewritten.

    Guarantees: where the original runs without error (every piece of one shape), the join
    keeps its value and name. Where pieces change shape along the join axis (an
    `ExecutionError` in the original) the join is the pieces concatenated, as the program
    that wrote the loop meant; a loop of no iteration (an error in the original: the join of
    an empty list) gives an empty tensor.
    """

    name = "ragged_scan_joins"
    in_place = True

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        return _rewrite_loop(graph, loop)


ragged_scan_joins = RaggedScanJoins()


def _readers(graph: Graph, v: Value) -> list[Node] | None:
    """The nodes of `graph` that read `v`; None when anything else does (a graph output, a
    subgraph capture)."""
    if any(o is v for o in graph.outputs):
        return None
    out = []
    for n in graph.nodes:
        if any(u is v for u in n.reads()):
            if any(u is v for g in n.subgraphs() for u in g.captures()):
                return None
            out.append(n)
    return out


def _join_of(graph: Graph, port: Concat, rank: int) -> tuple[Node, Node] | None:
    """The ``SplitToSequence`` and ``ConcatFromSequence`` that re-join `port`'s pieces."""
    split_nodes = _readers(graph, port.output)
    if not split_nodes or len(split_nodes) != 1:
        return None
    split = split_nodes[0]
    if not (split.op_type == "SplitToSequence" and split.domain == "" and len(split.inputs) == 1
            and split.inputs[0] is port.output and int(attr_or_default(split, "axis")) == 0
            and int(attr_or_default(split, "keepdims")) == 0):
        return None
    joins = _readers(graph, split.outputs[0])
    if not joins or len(joins) != 1:
        return None
    join = joins[0]
    if not (join.op_type == "ConcatFromSequence" and join.domain == ""
            and int(join.attrs.get("new_axis", 0)) == 0
            and -rank <= int(join.attrs.get("axis", 0)) < rank):
        return None
    return split, join


def _rewrite_loop(graph: Graph, loop: Loop) -> int:
    shaped = None
    done = 0
    for port in list(loop.output_ports):
        if not (isinstance(port, Concat) and port.new_axis and port.axis == 0
                and not port.reverse and port.length is None):
            continue
        t = port.result.type
        if not (isinstance(t, TensorType) and t.dtype is not None and t.rank):
            continue
        found = _join_of(graph, port, t.rank)
        if found is None:
            continue
        shaped = shape_varying(loop) if shaped is None else shaped
        if port.result.uid not in shaped:
            continue
        _grow(graph, loop, port, *found)
        done += 1
    return done


def _grow(graph: Graph, loop: Loop, port: Concat, split: Node, join: Node) -> None:
    piece = port.result
    t: TensorType = piece.type
    axis = int(join.attrs.get("axis", 0)) % t.rank
    joined = join.outputs[0]
    stem = joined.name or "join"
    body = loop.body
    inner = Builder(body, stem, nodes=body.nodes)
    grown_type = TensorType(t.dtype, tuple(None if i == axis else d
                                           for i, d in enumerate(t.shape)))
    acc = Value(inner.fresh("so_far"), grown_type)
    body.inputs.append(acc)
    shape = inner.node("Shape", [piece], type=TensorType(DataType.INT64, (t.rank,)),
                       hint="piece_shape")
    dims = TensorType(DataType.INT64, (None,))
    parts = []
    if axis > 0:
        parts.append(inner.node("Slice", [shape, inner.i64([0], "lo"), inner.i64([axis], "hi")],
                                type=dims, hint="before"))
    parts.append(inner.i64([-1], "minus_one"))
    if axis < t.rank - 1:
        parts.append(inner.node("Slice", [shape, inner.i64([axis + 1], "lo"),
                                          inner.i64([t.rank], "hi")], type=dims, hint="after"))
    target = inner.concat(parts, 0)
    fit = inner.node("Reshape", [acc, target], type=grown_type, hint="fit")
    grown = inner.node("Concat", [fit, piece], {"axis": axis}, type=grown_type, hint="grown")
    start = Builder(graph, stem).const(np.zeros((0,) * t.rank, t.dtype.numpy), "empty")
    loop.input_ports.append(Carried(start, acc, grown))
    graph.nodes = [n for n in graph.nodes if n is not split and n is not join]
    ports = [p for p in loop.output_ports if p is not port]
    loop.set_output_ports([*ports, Last(grown, joined)])

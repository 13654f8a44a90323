"""Reads of a sequence split from a tensor read the tensor itself.

torch.onnx (TorchScript, opset 11 and later) writes a loop over the rows of a tensor, a
``torch.chunk`` and a ``torch.cat`` of a tensor's rows with sequences::

    s = SplitToSequence(x, axis=a, keepdims=k)        # the pieces of x along a
    y = SequenceAt(s, i)                               # piece i (in a loop: i = iteration)
    z = ConcatFromSequence(s, axis=b, new_axis=n)      # the pieces joined again

Each read has a tensor form: piece ``i`` is ``Gather(x, i, axis=a)`` (``k = 0``), unsqueezed on
``a`` again (``k = 1``), or a ``Slice`` of ``x`` from the sum of the first ``i``
split sizes (explicit ``split`` sizes); the join is the join of the pieces stacked on a new
axis 0, i.e. of ``x`` with axis ``a`` moved first. Runtimes without sequence types (OpenVINO,
XLA) run the tensor form; OpenVINO's own ONNX frontend makes the same rewrite. A ``Gather``
by the iteration number then becomes a sliced loop input (`iteration_gather`).
"""

from __future__ import annotations

import numpy as np

from ..errors import where
from ..ir.attributes import attr_or_default
from ..ir.graph import Graph, Node, Value
from ..ir.loop import Loop
from ..ir.types import DataType, TensorType
from .base import Pass
from .sequence_scan_outputs import joined_from_stack

I64 = DataType.INT64
#: (domain, op type) of the guard that keeps a join of an empty sequence an error
GUARD = ("itergraph", "NonEmpty")


class SplitSequenceReads(Pass):
    """``SequenceAt`` and ``ConcatFromSequence`` of a ``SplitToSequence`` read its tensor.

    Applies to: at any depth, a ``SequenceAt(s, i)`` or ``ConcatFromSequence(s)`` node whose
    sequence ``s`` is the output of a ``SplitToSequence(x[, split], axis=a, keepdims=k)`` node
    (in the same graph or an enclosing one) where, when ``split`` is given, it is known to
    be a 1-D tensor (chunk sizes, `_chunk_sizes`). A ``ConcatFromSequence`` needs the rank
    of ``x`` (from its type or the join's output type); one of explicit chunks is rewritten
    only when it joins them on axis ``a`` again.

    Returns: the number of ``SequenceAt`` and ``ConcatFromSequence`` nodes replaced.

    Guarantees: every output keeps its value on every input the original runs without error.
    A ``SequenceAt`` becomes a ``Gather`` (no ``split``; ``Unsqueeze``d with ``keepdims``) or
    a ``Slice`` (chunk sizes) of
    ``x`` computing the same value into the same output value; a ``ConcatFromSequence``
    becomes a ``Transpose`` (and ``Unsqueeze``/``Reshape`` as its axes need) of ``x``, or an
    ``Identity`` of it. A ``SplitToSequence`` left without readers is removed. A join of an
    empty sequence stays an error, through a `GUARD` node in front of the tensor form (its
    message names the ``ConcatFromSequence``; the OpenVINO IR writer, whose IR cannot hold
    the error, writes the guard as its input).
    """

    name = "split_sequence_reads"
    in_place = True

    def applicable(self, graph: Graph) -> bool:
        return any(_source(n) is not None for _, n in graph.walk())

    def __call__(self, graph: Graph) -> int:
        done = _rewrite_graph(graph)
        splits = {id(n): n for _, n in graph.walk() if _is_std(n, "SplitToSequence")}
        if done and splits:
            read = _read_values(graph)
            for g, n in list(graph.walk()):
                if id(n) in splits and n.outputs[0].uid not in read and n in g.nodes:
                    g.nodes.remove(n)
        return done


split_sequence_reads = SplitSequenceReads()


def _is_std(node: Node | None, op: str) -> bool:
    return node is not None and node.op_type == op and node.domain == ""


def _rank(v: Value | None) -> int | None:
    t = None if v is None else v.type
    return t.rank if isinstance(t, TensorType) else None


def _source(node: Node) -> Node | None:
    """The ``SplitToSequence`` whose sequence `node` reads, when the pass applies to it."""
    if not (_is_std(node, "SequenceAt") or _is_std(node, "ConcatFromSequence")):
        return None
    split = node.inputs[0].producer if node.inputs and node.inputs[0] is not None else None
    if not _is_std(split, "SplitToSequence"):
        return None
    sizes = _sizes(split)
    if sizes is not None and not _chunk_sizes(sizes):
        return None
    if node.op_type == "ConcatFromSequence":
        r = _x_rank(split, node)
        if r is None or not _axes_fit(split, node, r) or (
                sizes is not None and not _rejoins(node, split, r)):
            return None
    return split


def _axes_fit(split: Node, concat: Node, r: int) -> bool:
    """Whether the split's axis lies within the rank `r` of its input and the join's within
    its pieces' (one more with ``new_axis``); else the pass leaves the join to the kernel,
    which names the axis."""
    a = int(attr_or_default(split, "axis"))
    keep = _sizes(split) is not None or bool(int(attr_or_default(split, "keepdims")))
    limit = (r if keep else r - 1) + int(concat.attrs.get("new_axis", 0))
    b = int(concat.attrs.get("axis", 0))
    return -r <= a < r and -limit <= b < limit


def _chunk_sizes(sizes: Value) -> bool:
    """Whether `sizes` is known to be 1-D (a scalar ``split`` is one chunk length): by its type,
    its data, or as a ``Concat`` output (``split`` has rank 0 or 1, a Concat's is at least 1)."""
    if sizes.const is not None:
        return np.ndim(sizes.const) == 1
    return _rank(sizes) == 1 or _is_std(sizes.producer, "Concat")


def _sizes(split: Node) -> Value | None:
    return split.inputs[1] if len(split.inputs) > 1 else None


def _x_rank(split: Node, concat: Node) -> int | None:
    """The rank of the split tensor: its type's, or what the join's output type implies."""
    r = _rank(split.inputs[0])
    if r is not None:
        return r
    out = _rank(concat.outputs[0])
    if out is None:
        return None
    keep = _sizes(split) is not None or bool(int(attr_or_default(split, "keepdims")))
    return out - int(concat.attrs.get("new_axis", 0)) + (0 if keep else 1)


def _axis(split: Node, r: int | None) -> int:
    """The split axis, counted from the front when the rank `r` is known."""
    a = int(attr_or_default(split, "axis"))
    return a + r if a < 0 and r is not None else a


def _rejoins(concat: Node, split: Node, r: int) -> bool:
    """Whether `concat` joins the chunks on the axis they were cut from (giving x back)."""
    if int(concat.attrs.get("new_axis", 0)):
        return False
    b = int(concat.attrs.get("axis", 0))
    return (b + r if b < 0 else b) == _axis(split, r)


def _rewrite_graph(graph: Graph) -> int:
    done = 0
    for node in list(graph.nodes):
        for g in node.subgraphs():
            done += _rewrite_graph(g)
        split = _source(node)
        if split is None:
            continue
        if node.op_type == "SequenceAt":
            new = _at(graph, node, split)
        else:
            new = _join(graph, node, split)
        k = graph.nodes.index(node)
        graph.nodes[k:k + 1] = new
        done += 1
    return done


def _const(graph: Graph, name: str, values) -> Value:
    a = np.asarray(values, np.int64)
    v = Value(name, TensorType(I64, a.shape), a)
    graph.initializers.append(v)
    return v


def _i64(nodes: list, v: Value, name: str) -> Value:
    """`v` as int64 (a ``Cast`` unless its type says it already is)."""
    t = v.type
    if isinstance(t, TensorType) and t.dtype == I64:
        return v
    out = Value(name, TensorType(I64, t.shape if isinstance(t, TensorType) else None))
    nodes.append(Node("Cast", [v], [out], {"to": I64.onnx}, version=13, name=name))
    return out


def _at(graph: Graph, node: Node, split: Node) -> list[Node]:
    """Nodes computing ``SequenceAt(split's pieces, i)`` from split's input into the
    SequenceAt's own output value."""
    x, pos, sizes = split.inputs[0], node.inputs[1], _sizes(split)
    axis, name, out = _axis(split, _rank(x)), node.name or node.outputs[0].name, node.outputs[0]
    nodes: list[Node] = []
    if sizes is None:  # a Gather by the position itself, which `iteration_gather` knows
        if not int(attr_or_default(split, "keepdims")):
            return [Node("Gather", [x, pos], [out], {"axis": axis}, version=13, name=name)]
        row = Value(f"{name}_row")
        return [Node("Gather", [x, pos], [row], {"axis": axis}, version=13, name=f"{name}_row"),
                Node("Unsqueeze", [row, _const(graph, f"{name}_axes", [axis])], [out],
                     version=13, name=name)]
    sizes = _i64(nodes, sizes, f"{name}_sizes")
    pos = _i64(nodes, pos, f"{name}_pos")
    pos1 = Value(f"{name}_index")
    nodes.append(Node("Reshape", [pos, _const(graph, f"{name}_one", [1])], [pos1], version=14,
                      name=f"{name}_index"))
    before = Value(f"{name}_before")
    nodes.append(Node("Slice", [sizes, _const(graph, f"{name}_zero", [0]), pos1], [before],
                      version=13, name=f"{name}_before"))
    start = Value(f"{name}_start")
    nodes.append(Node("ReduceSum", [before], [start], {"keepdims": 1}, version=13,
                      name=f"{name}_start"))
    size = Value(f"{name}_size")
    nodes.append(Node("Gather", [sizes, pos1], [size], {"axis": 0}, version=13,
                      name=f"{name}_size"))
    end = Value(f"{name}_end")
    nodes.append(Node("Add", [start, size], [end], version=14, name=f"{name}_end"))
    nodes.append(Node("Slice", [x, start, end, _const(graph, f"{name}_axis", [axis])], [out],
                      version=13, name=name))
    return nodes


def _guarded(nodes: list[Node], node: Node, x: Value, of: Value | None, axis: int) -> Value:
    """`x` through a `GUARD` node (appended to `nodes`) raising the error of `node`, a
    ``ConcatFromSequence``, when `of` (default `x`) has no entry on `axis`."""
    name = node.name or node.outputs[0].name
    out = Value(f"{name}_nonempty", x.type)
    msg = f"{where(node)}: cannot concatenate an empty sequence"
    nodes.append(Node(GUARD[1], [x] if of is None else [x, of], [out],
                      {"axis": axis, "message": msg}, domain=GUARD[0], version=1,
                      name=f"{name}_nonempty"))
    return out


def _join(graph: Graph, node: Node, split: Node) -> list[Node]:
    """Nodes computing ``ConcatFromSequence(split's pieces)`` from split's input into the
    join's own output value, behind a `GUARD`."""
    x, r = split.inputs[0], _x_rank(split, node)
    axis, name, out = _axis(split, r), node.name or node.outputs[0].name, node.outputs[0]
    nodes: list[Node] = []
    if _sizes(split) is not None:  # chunks joined where they were cut
        x = _guarded(nodes, node, x, _sizes(split), 0)
        return [*nodes, Node("Identity", [x], [out], version=16, name=name)]
    x = _guarded(nodes, node, x, None, axis)
    keep = bool(int(attr_or_default(split, "keepdims")))
    stacked = x
    if axis != 0:
        perm = [axis, *(d for d in range(r) if d != axis)]
        stacked = Value(f"{name}_stacked")
        nodes.append(Node("Transpose", [x], [stacked], {"perm": perm}, version=13,
                          name=f"{name}_stacked"))
    if keep:
        kept = Value(f"{name}_kept")
        nodes.append(Node("Unsqueeze", [stacked, _const(graph, f"{name}_axes", [axis + 1])],
                          [kept], version=13, name=f"{name}_kept"))
        stacked = kept
    joined = joined_from_stack(graph, node, stacked, r if keep else r - 1, out)
    nodes += joined[:-1]
    if joined[-1] is not out:  # the stack itself is the join
        nodes.append(Node("Identity", [joined[-1]], [out], version=16, name=name))
    return nodes


def _read_values(graph: Graph) -> set[int]:
    """uids of the values something reads: node inputs and captures, graph outputs and loop
    port results, at any depth."""
    read: set[int] = set()

    def visit(g: Graph) -> None:
        read.update(v.uid for v in g.outputs if v is not None)
        for n in g.nodes:
            read.update(v.uid for v in n.inputs if v is not None)
            if isinstance(n, Loop):
                read.update(v.uid for v in n.body_results() if v is not None)
            for sg in n.subgraphs():
                visit(sg)

    visit(graph)
    return read

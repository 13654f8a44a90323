"""Sequences whose elements are known values become those values.

A sequence built by ``SequenceConstruct`` (then ``SequenceInsert`` / ``SequenceErase`` at
known positions) holds a list of values fixed when the graph is written::

    s = SequenceConstruct(a, b)              # [a, b]
    s2 = SequenceInsert(s, c)                # [a, b, c]
    y = SequenceAt(s2, -1)                   # c
    n = SequenceLength(s2)                   # 3
    z = ConcatFromSequence(s2, axis=1)       # Concat(a, b, c, axis=1)
    w = ConcatFromSequence(s2, axis=0, new_axis=1)   # Concat(Unsqueeze(a, 0), ..., axis=0)

Runtimes without sequence types (OpenVINO, XLA) run the right-hand forms.
"""

from __future__ import annotations

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.static_values import static_int
from ..ir.types import DataType, TensorType
from .base import Pass

#: the sequence ops whose result this pass can know, and those that read one
_BUILDERS = ("SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase")
_READERS = ("SequenceAt", "SequenceLength", "ConcatFromSequence")


class StaticSequences(Pass):
    """Reads of sequences whose elements are known values read the values.

    Applies to: ``SequenceAt`` with a constant position inside the sequence,
    ``SequenceLength`` and ``ConcatFromSequence`` of a non-empty sequence (standard domain,
    any depth) whose sequence input is made by ``SequenceConstruct`` or ``SequenceEmpty``
    followed by any chain of ``SequenceInsert`` / ``SequenceErase`` with no position or a
    constant one inside the sequence.

    Returns: the number of reading nodes replaced.

    Guarantees: every output keeps its value on every input; each reader's output keeps
    its name, computed by ``Identity`` of the element, of the constant length, or by
    ``Concat`` (after ``Unsqueeze`` with ``new_axis=1``) of the elements; sequence-building
    nodes left without readers (and not graph outputs) are removed. Reads at positions
    outside the sequence and joins of an empty one are left as they are (they are errors).
    """

    name = "static_sequences"

    def applicable(self, graph: Graph) -> bool:
        return any(n.op_type in _READERS and n.domain == "" and
                   elements(n.inputs[0]) is not None for _, n in graph.walk())

    def __call__(self, graph: Graph) -> int:
        done = 0
        for g, n in list(graph.walk()):
            if n.op_type in _READERS and n.domain == "" and n in g.nodes:
                replacement = _replacement(g, n)
                if replacement is not None:
                    i = g.nodes.index(n)
                    g.nodes[i:i + 1] = replacement
                    done += 1
        if done:
            _drop_unread_builders(graph)
        return done


static_sequences = StaticSequences()


def elements(v: Value | None) -> list[Value] | None:
    """The values the sequence `v` holds, in order, when its builders say them; else None."""
    node = v.producer if v is not None else None
    if node is None or node.domain != "" or node.op_type not in _BUILDERS:
        return None
    if node.op_type == "SequenceConstruct":
        return list(node.inputs)
    if node.op_type == "SequenceEmpty":
        return []
    base = elements(node.inputs[0])
    if base is None:
        return None
    n = len(base)
    at = node.inputs[2] if node.op_type == "SequenceInsert" and len(node.inputs) > 2 else \
        node.inputs[1] if node.op_type == "SequenceErase" and len(node.inputs) > 1 else None
    if node.op_type == "SequenceInsert":
        pos = n if at is None else static_int(at)
        if pos is None or not -n <= pos <= n:
            return None
        pos = pos + n if pos < 0 else pos
        return [*base[:pos], node.inputs[1], *base[pos:]]
    pos = n - 1 if at is None else static_int(at)
    if pos is None or not -n <= pos < n:
        return None
    pos = pos + n if pos < 0 else pos
    return [*base[:pos], *base[pos + 1:]]


def _replacement(graph: Graph, node: Node) -> list[Node] | None:
    """The nodes computing `node`'s output from the elements, or None."""
    items = elements(node.inputs[0])
    if items is None:
        return None
    out = node.outputs[0]
    if node.op_type == "SequenceAt":
        k = static_int(node.inputs[1])
        if k is None or not -len(items) <= k < len(items):
            return None
        return [Node("Identity", [items[k]], [out], version=13, name=node.name)]
    if node.op_type == "SequenceLength":
        length = _int64(graph, f"{out.name}_length", np.int64(len(items)))
        return [Node("Identity", [length], [out], version=13, name=node.name)]
    if not items:
        return None
    axis, new_axis = int(node.attrs.get("axis", 0)), int(node.attrs.get("new_axis", 0))
    before: list[Node] = []
    if new_axis:
        axes = _int64(graph, f"{out.name}_axes", np.array([axis], np.int64))
        unsqueezed = []
        for k, v in enumerate(items):
            u = Value(f"{out.name}_item{k}", _unsqueezed_type(v.type, axis))
            before.append(Node("Unsqueeze", [v, axes], [u], version=13,
                               name=f"{node.name or out.name}_item{k}"))
            unsqueezed.append(u)
        items = unsqueezed
    return [*before, Node("Concat", items, [out], {"axis": axis}, version=13, name=node.name)]


def _unsqueezed_type(t, axis: int) -> TensorType:
    if not isinstance(t, TensorType) or t.shape is None:
        return TensorType(getattr(t, "dtype", None))
    shape = list(t.shape)
    shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, 1)
    return TensorType(t.dtype, tuple(shape))


def _int64(graph: Graph, name: str, value) -> Value:
    value = np.asarray(value, np.int64)
    v = Value(name, TensorType(DataType.INT64, value.shape), value)
    graph.initializers.append(v)
    return v


def _drop_unread_builders(graph: Graph) -> None:
    """Remove, at every depth, sequence builders whose result nothing reads any more."""
    changed = True
    while changed:
        changed = False
        read = {v.uid for _, n in graph.walk() for v in n.reads() if v is not None}
        for g in [graph, *(sg for _, n in graph.walk() for sg in n.subgraphs())]:
            outputs = {v.uid for v in g.outputs}
            for n in list(g.nodes):
                if n.op_type in _BUILDERS and n.domain == "" and \
                        n.outputs[0].uid not in read and n.outputs[0].uid not in outputs:
                    g.nodes.remove(n)
                    changed = True

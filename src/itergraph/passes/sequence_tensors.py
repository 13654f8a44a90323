"""Lists only appended to and then joined become the joined tensor, grown as they grow.

A list that a loop appends to conditionally, or with pieces of different lengths, has no scan
output form (`sequence_scan_outputs`)::

    s0 = SequenceEmpty()                                   # or SequenceConstruct(t0)
    s = Loop(..., s0) {
        s2 = If(c) { SequenceInsert(s_in, t) } else { Identity(s_in) }
    }
    y = ConcatFromSequence(s, axis=a, new_axis=n)

but when every use of the list is an append (``SequenceInsert`` without a position), a
pass-through (``Identity``, an ``If`` branch output, a loop's carried value) or that final
join, the list can be held as the join of what it holds so far: ``SequenceEmpty`` becomes an
empty tensor, ``SequenceConstruct`` the join of its elements, ``SequenceInsert(s, t)``
``Concat(s, t)`` (``Unsqueeze`` first with ``new_axis``) and ``ConcatFromSequence`` the value
itself. Runtimes without sequence types (OpenVINO) run that form: a carried tensor that grows.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.loop import Carried, Concat, Last, Loop
from ..ir.types import DataType, SequenceType, TensorType
from .base import Pass

_ROOTS = ("SequenceEmpty", "SequenceConstruct")


class SequenceTensors(Pass):
    """Lists only appended to, passed on and finally joined become their joined tensor.

    Applies to: a connected set of sequence values (joined by ``SequenceInsert`` input and
    output, ``Identity``, ``If`` branch outputs and the ``If`` outputs, a loop's carried
    value, body parameter, body result and last value) that starts at ``SequenceEmpty`` or
    ``SequenceConstruct`` nodes (standard domain, any depth), whose every other use is a
    ``SequenceInsert`` without a position (the list as its first input) or a
    ``ConcatFromSequence`` (at least one; all with one ``axis`` and ``new_axis``), none a
    graph output, a loop's scan output or another op's input; the tensors put in the list
    must have a known rank, and when a list starts empty, known dims except the join axis.

    Returns: the number of such sets rewritten.

    Guarantees: every ``ConcatFromSequence`` output keeps its value (and name) on every
    input the original runs without error; the set's values become tensors of the join's
    rank. A join of an empty list (an error before) gives the empty tensor.
    """

    name = "sequence_tensors"
    in_place = True

    def __init__(self, through_if: bool = True):
        # without `through_if`, a set that passes through an If (a conditional append) is
        # left as it is: its tensor grows by a length known only at run time, which a
        # compiler's conditional (XLA's: one shape per branch output) cannot return
        self.through_if = through_if

    def applicable(self, graph: Graph) -> bool:
        return any(n.op_type in _ROOTS and n.domain == "" for _, n in graph.walk())

    def __call__(self, graph: Graph) -> int:
        done = 0
        for comp in _components(graph):
            if not self.through_if and _passes_if(comp):
                continue
            plan = _plan(graph, comp)
            if plan is not None:
                _rewrite(graph, comp, *plan)
                done += 1
        return done


sequence_tensors = SequenceTensors()


def _passes_if(comp: dict) -> bool:
    """Whether a value of the set is an If's output."""
    return any(v.producer is not None and _std(v.producer, "If")
               for v in comp["values"].values())


def _std(n: Node, *ops: str) -> bool:
    return n.domain == "" and n.op_type in ops


def _components(graph: Graph) -> list[dict]:
    """Connected sets of values linked as lists flow, each containing a list root."""
    parent: dict[int, int] = {}
    values: dict[int, Value] = {}

    def find(u: int) -> int:
        while parent.setdefault(u, u) != u:
            parent[u] = parent[parent[u]]
            u = parent[u]
        return u

    def link(a: Value | None, b: Value | None) -> None:
        if a is None or b is None:
            return
        values[a.uid], values[b.uid] = a, b
        parent[find(a.uid)] = find(b.uid)

    roots = []
    for _, n in graph.walk():
        if _std(n, *_ROOTS):
            roots.append(n)
            values[n.outputs[0].uid] = n.outputs[0]
            find(n.outputs[0].uid)
        elif _std(n, "SequenceInsert", "Identity"):
            link(n.inputs[0], n.outputs[0])
        elif _std(n, "If"):
            for g in n.subgraphs():
                for v, out in zip(g.outputs, n.outputs):
                    link(v, out)
        elif isinstance(n, Loop):
            for c in n.carried:
                link(c.value, c.param)
                link(c.param, c.result)
            for p in n.output_ports:
                if isinstance(p, Last):
                    link(p.result, p.output)
    groups: dict[int, dict] = {}
    for n in roots:
        key = find(n.outputs[0].uid)
        groups.setdefault(key, {"roots": [], "values": {}})["roots"].append(n)
    for uid, v in values.items():
        key = find(uid)
        if key in groups:
            groups[key]["values"][uid] = v
    return list(groups.values())


def _plan(graph: Graph, comp: dict):
    """(inserts, joins, constructs, empties, axis, new_axis, dtype, rank, template) when the
    set is only appended to, passed on and joined; else None."""
    members = comp["values"]
    owner: dict[int, Graph] = {}
    inserts, joins = [], []
    top_outputs = {v.uid for v in graph.outputs}
    if top_outputs & set(members):
        return None
    for g, n in graph.walk():
        for i, v in enumerate(n.inputs):
            if v is None or v.uid not in members:
                continue
            if _std(n, "SequenceInsert") and i == 0 and \
                    len([x for x in n.inputs if x is not None]) == 2 and n.inputs[1] is not None:
                if n.inputs[1].uid in members:
                    return None
                inserts.append((g, n))
            elif _std(n, "Identity") or _std(n, "ConcatFromSequence") and i == 0:
                if _std(n, "ConcatFromSequence"):
                    joins.append((g, n))
            elif isinstance(n, Loop) and any(isinstance(p, Carried) and p.value is v
                                            for p in n.input_ports):
                if any(not isinstance(p, Carried) and p.value is v for p in n.input_ports
                       if hasattr(p, "value")):
                    return None
            else:
                return None
        if isinstance(n, Loop):
            if any(isinstance(p, Concat) and p.result.uid in members for p in n.output_ports):
                return None
            for c in n.carried:
                if (c.value.uid in members) != (c.result.uid in members):
                    return None
        for sub in n.subgraphs():
            owner[id(sub)] = n
    # every member is made by a list op, a pass-through or is a loop's body parameter
    params = {c.param.uid for _, n in graph.walk() if isinstance(n, Loop) for c in n.carried}
    for v in members.values():
        p = v.producer
        if p is None:
            if v.uid not in params:
                return None
        elif not (_std(p, *_ROOTS, "SequenceInsert", "Identity", "If") or isinstance(p, Loop)):
            return None
    if not joins:
        return None
    modes = {(int(n.attrs.get("axis", 0)), int(n.attrs.get("new_axis", 0))) for _, n in joins}
    if len(modes) != 1:
        return None
    axis, new_axis = modes.pop()
    elements = [n.inputs[1] for _, n in inserts]
    constructs = [n for n in comp["roots"] if n.op_type == "SequenceConstruct"]
    empties = [n for n in comp["roots"] if n.op_type == "SequenceEmpty"]
    for n in constructs:
        if any(v is None or v.uid in members or isinstance(v.type, SequenceType)
               for v in n.inputs):
            return None
        elements += list(n.inputs)
    types = [v.type for v in elements if isinstance(v.type, TensorType)]
    types += [v.type.elem for v in members.values() if isinstance(v.type, SequenceType)
              and isinstance(v.type.elem, TensorType)]
    ranks = {t.rank for t in types if t.rank is not None}
    dtypes = {t.dtype for t in types if t.dtype is not None}
    if len(ranks) != 1 or len(dtypes) != 1 or not elements:
        return None
    rank = ranks.pop()
    out_rank = rank + 1 if new_axis else rank
    if not -out_rank <= axis < out_rank:
        return None
    axis %= out_rank
    template = None
    if empties:  # the empty list's tensor: the elements' dims, none on the join axis
        dims = []
        for d in range(rank):
            if not new_axis and d == axis:
                dims.append(0)
                continue
            known = {t.shape[d] for t in types if t.shape is not None
                     and isinstance(t.shape[d], int)}
            if len(known) > 1:
                return None
            dims.append(known.pop() if known else None)
        template = tuple(dims[:axis] + [0] + dims[axis:]) if new_axis else tuple(dims)
    return inserts, joins, constructs, empties, axis, new_axis, dtypes.pop(), out_rank, \
        template


def _rewrite(graph: Graph, comp: dict, inserts, joins, constructs, empties, axis: int,
             new_axis: int, dtype, out_rank: int, template) -> None:
    names: defaultdict[str, int] = defaultdict(int)

    def const(name: str, array: np.ndarray) -> Value:
        names[name] += 1
        v = Value(f"{name}_{names[name]}",
                  TensorType(DataType.from_numpy(array.dtype), array.shape), array)
        graph.initializers.append(v)
        return v

    axes = const("sequence_tensor_axis", np.array([axis], np.int64)) if new_axis else None

    def piece(g_nodes: list, t: Value, at: str) -> Value:
        if not new_axis:
            return t
        u = Value(f"{at}_piece")
        g_nodes.append(Node("Unsqueeze", [t, axes], [u], version=13, name=f"{at}_piece"))
        return u

    def replace(g: Graph, n: Node, new: list[Node]) -> None:
        i = g.nodes.index(n)
        g.nodes[i:i + 1] = new

    if template is not None and None in template:
        # an empty list whose elements' dims are known at run time only: it starts as an
        # all-zero shape, and each append first gives it the piece's dims (but the length
        # on the join axis), so that the first join matches
        template = (0,) * out_rank
        onehot = np.zeros(out_rank, np.int64)
        onehot[axis] = 1
        on, off = const("sequence_tensor_on", onehot), const("sequence_tensor_off", 1 - onehot)
        flat = const("sequence_tensor_flat", np.array([-1], np.int64))
    else:
        on = None
    for g, n in inserts:
        seq, t = n.inputs[0], n.inputs[1]
        new: list[Node] = []
        at = n.name or n.outputs[0].name
        p = piece(new, t, at)
        if on is not None:
            seq = _fit(new, seq, p, on, off, flat, at)
        new.append(Node("Concat", [seq, p], [n.outputs[0]], {"axis": axis}, version=13,
                        name=n.name))
        replace(g, n, new)
    for g, n in joins:
        replace(g, n, [Node("Identity", [n.inputs[0]], [n.outputs[0]], version=16,
                            name=n.name)])
    for g, n in _located(graph, constructs):
        new = []
        parts = [piece(new, t, f"{n.name or n.outputs[0].name}_{k}")
                 for k, t in enumerate(n.inputs)]
        new.append(Node("Concat", parts, [n.outputs[0]], {"axis": axis}, version=13,
                        name=n.name) if len(parts) > 1 else
                   Node("Identity", parts, [n.outputs[0]], version=16, name=n.name))
        replace(g, n, new)
    for g, n in _located(graph, empties):
        array = np.zeros(template, dtype.numpy)
        c = const(f"{n.outputs[0].name or 'sequence'}_empty", array)
        replace(g, n, [Node("Identity", [c], [n.outputs[0]], version=16, name=n.name)])
    for v in comp["values"].values():
        v.type = TensorType(dtype, (None,) * out_rank)
    for _, n in joins:
        t = n.outputs[0].type
        if not isinstance(t, TensorType) or t.dtype is None:
            n.outputs[0].type = TensorType(dtype, (None,) * out_rank)


def _fit(new: list[Node], acc: Value, piece: Value, on: Value, off: Value, flat: Value,
         at: str) -> Value:
    """`acc` reshaped to `piece`'s dims but its own length on the join axis (`on` marks it):
    ``Reshape(Reshape(acc, [-1]), Shape(acc) * on + Shape(piece) * off)``. The shape is
    made by Mul and Add and the empty tensor flattened first: OpenVINO's CPU plugin kept the
    input's shape in a Reshape of an empty tensor to a computed shape of the same rank."""
    names = [f"{at}_{k}" for k in ("acc_shape", "piece_shape", "len", "dims", "target",
                                    "flat", "fit")]
    vals = [Value(x) for x in names]
    acc_shape, piece_shape, length, dims, target, flat_acc, fitted = vals
    new += [
        Node("Shape", [acc], [acc_shape], version=13, name=names[0]),
        Node("Shape", [piece], [piece_shape], version=13, name=names[1]),
        Node("Mul", [acc_shape, on], [length], version=14, name=names[2]),
        Node("Mul", [piece_shape, off], [dims], version=14, name=names[3]),
        Node("Add", [length, dims], [target], version=14, name=names[4]),
        Node("Reshape", [acc, flat], [flat_acc], version=14, name=names[5]),
        Node("Reshape", [flat_acc, target], [fitted], version=14, name=names[6]),
    ]
    return fitted


def _located(graph: Graph, nodes: list[Node]) -> list[tuple[Graph, Node]]:
    want = {id(n) for n in nodes}
    return [(g, n) for g, n in graph.walk() if id(n) in want]

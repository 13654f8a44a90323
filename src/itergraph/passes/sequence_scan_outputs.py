"""Lists built by appending in a loop become scan outputs.

``out = []; for ...: out.append(t)`` followed by ``torch.stack(out)`` / ``torch.cat(out)`` is
how exporters write a list built in a loop at newer opsets (torch.onnx at opset >= 13,
tf2onnx's TensorArray at some opsets)::

    s0 = SequenceEmpty()
    s = Loop(..., s0) { s_out = SequenceInsert(s_in, t) }     # appended once per iteration
    y = ConcatFromSequence(s, axis=a, new_axis=n)

is the same as a scan output of ``t`` (stacked on a new axis 0) moved to axis ``a``, or with
``new_axis=0`` merged into the existing axis ``a``; a list that starts with elements
(``SequenceConstruct(t0)``, as ``out = [t0]`` is written) is those elements followed by the
scan output. Runtimes without sequence types (OpenVINO,
XLA) can run the second form; OpenVINO's own ONNX frontend makes the same rewrite.
"""

from __future__ import annotations

import numpy as np

from ..errors import where
from ..ir.graph import Graph, Node, Value
from ..ir.inference import node_output_types
from ..ir.loop import Carried, Concat, Last, Loop
from ..ir.traversal import replace_all_uses
from ..ir.types import DataType, SequenceType, TensorType
from .base import LoopPass
from .loop_motion import body_value_uses


class SequenceScanOutputs(LoopPass):
    """Sequences appended to once per iteration and then concatenated become scan outputs.

    Applies to: a carried value of a canonical `Loop` (any depth) whose initial value is
    ``SequenceEmpty()`` or ``SequenceConstruct(t0, ...)`` of tensors, read by nothing else,
    whose body result is ``SequenceInsert(param, t)`` (no position: an append) of a tensor
    ``t``, the parameter and that result being read by nothing else in the body, and whose
    final value is read only by ``ConcatFromSequence`` nodes of the enclosing graph (not a
    graph output). When ``axis`` is not 0, the rank of ``t`` must be known; a join on an
    existing axis (``new_axis=0``) needs ``t``'s length on that axis to be a known constant
    (``torch.cat`` of pieces of different lengths has no scan output form).

    Returns: the number of carried sequences replaced.

    Guarantees: each ``ConcatFromSequence`` output keeps its value on every input the
    original runs without error; the carried sequence, its ``SequenceInsert`` and (if it has
    no other reader) the ``SequenceEmpty`` are gone, replaced by a ``Concat`` port of ``t``
    (stacked on axis 0), after a list's first elements (``Unsqueeze`` and ``Concat``), and,
    where the axis is not 0 or the list was joined on an existing axis, a ``Transpose`` /
    ``Reshape`` after the loop. A list that starts empty in a loop that runs no iteration
    stays an error (``ConcatFromSequence`` of the empty sequence, as ONNX Runtime): the port's
    `empty_error` names the join. (The OpenVINO IR writer cannot express that: the IR it
    writes gives an empty tensor there.)
    """

    name = "sequence_scan_outputs"
    in_place = True

    def applicable(self, graph: Graph) -> bool:
        if not any(_is_std(n, "SequenceInsert") for _, n in graph.walk()):
            return False
        return super().applicable(graph)

    def rewrite_loop(self, graph: Graph, loop: Loop) -> int:
        done = 0
        for c in list(loop.carried):
            match = _match(graph, loop, c)
            if match is not None:
                _rewrite(graph, loop, c, *match)
                done += 1
        return done


sequence_scan_outputs = SequenceScanOutputs()


def _readers(graph: Graph, v: Value) -> list[Node]:
    """Nodes of `graph` (this level) that read `v`, directly or inside their subgraphs."""
    return [n for n in graph.nodes if any(u is v for u in n.reads())]


def _is_std(node: Node | None, op: str) -> bool:
    return node is not None and node.op_type == op and node.domain == ""


def _match(graph: Graph, loop: Loop, c: Carried):
    init = c.value.producer
    if not (_is_std(init, "SequenceEmpty") or _is_std(init, "SequenceConstruct")) or \
            _readers(graph, c.value) != [loop]:
        return None
    prefix = list(init.inputs) if init.op_type == "SequenceConstruct" else []
    if any(v is None or isinstance(v.type, SequenceType) for v in prefix):
        return None
    if any(p.value is c.value for p in loop.input_ports if p is not c):
        return None
    insert = c.result.producer
    if not _is_std(insert, "SequenceInsert") or len([v for v in insert.inputs if v]) != 2:
        return None
    if insert.inputs[0] is not c.param or insert not in loop.body.nodes:
        return None
    element = insert.inputs[1]
    if isinstance(element.type, SequenceType):
        return None
    lasts = [p for p in loop.output_ports if p.result is c.result]
    if any(not isinstance(p, Last) for p in lasts):
        return None
    uses = body_value_uses(loop)
    in_outputs = sum(1 for v in loop.body.outputs if v is c.result)
    if uses.get(c.param.uid, 0) != 1 or \
            uses.get(c.result.uid, 0) != 1 + len(lasts) + in_outputs:
        return None
    concats: list[Node] = []
    for p in lasts:
        if any(v is p.output for v in graph.outputs):
            return None
        readers = _readers(graph, p.output)
        if not all(_is_std(n, "ConcatFromSequence") and n.inputs[0] is p.output
                   and p.output not in n.captured() for n in readers):
            return None
        concats += readers
    rank = _element_rank(element, c, concats)
    for n in concats:
        axis, new_axis = int(n.attrs.get("axis", 0)), int(n.attrs.get("new_axis", 0))
        if axis != 0 and rank is None:
            return None
        if not new_axis and not _fixed_length(element, c, axis, prefix):
            return None  # pieces of different lengths on the axis: no scan output holds them
        if rank is not None:
            limit = rank + 1 if new_axis else rank
            if not -limit <= axis < limit:
                return None
    return insert, element, rank, lasts, concats, prefix


def _fixed_length(element: Value, c: Carried, axis: int, prefix: list[Value]) -> bool:
    """Whether the appended tensors and the list's first elements `prefix` are known to have
    one length on `axis` (joining them on an existing axis allows pieces of different
    lengths, a scan output does not)."""
    def length(t):
        if isinstance(t, TensorType) and t.shape is not None and -len(t.shape) <= axis < \
                len(t.shape) and isinstance(t.shape[axis], int):
            return t.shape[axis]
        return None

    known = [length(t) for t in (element.type, *(getattr(v.type, "elem", None)
                                                 for v in (c.result, c.param)))]
    known = [k for k in known if k is not None]
    if not known:
        return False
    return all(length(v.type) == known[0] for v in prefix)


def _element_rank(element: Value, c: Carried, concats: list[Node]) -> int | None:
    """The rank of the appended tensors: what ONNX's inference computes for their producer,
    else from their type, the sequence's, or a join's. Declared types may be wrong (ONNX
    Runtime warns and runs a body output declared of another rank): a rank the producer's
    inference contradicts, or declarations that disagree, give None."""
    computed = _computed_rank(element)
    if computed is not None:
        return computed
    declared = {t.rank for t in (element.type, *(getattr(v.type, "elem", None)
                                                 for v in (c.result, c.param)))
                if isinstance(t, TensorType) and t.rank is not None}
    if len(declared) > 1:
        return None
    if declared:
        return declared.pop()
    for n in concats:
        t = n.outputs[0].type
        if isinstance(t, TensorType) and t.rank is not None:
            return t.rank - int(n.attrs.get("new_axis", 0))
    return None


def _computed_rank(element: Value) -> int | None:
    """The rank ONNX's inference gives `element` from its producer's inputs, if any
    (`ir.inference`)."""
    n = element.producer
    if n is None or n.domain != "" or n.subgraphs():
        return None
    try:
        types = node_output_types(n, n.version or 21)
    except Exception:  # noqa: BLE001 - inference is a hint here: any failure means unknown
        return None
    for v, t in zip(n.outputs, types, strict=True):
        if v is element and isinstance(t, TensorType) and t.rank is not None:
            return t.rank
    return None


def _rewrite(graph: Graph, loop: Loop, c: Carried, insert: Node, element: Value,
             rank: int | None, lasts: list[Last], concats: list[Node],
             prefix: list[Value]) -> None:
    body = loop.body
    body.nodes.remove(insert)
    body.inputs = [v for v in body.inputs if v is not c.param]
    body.outputs = [v for v in body.outputs if v is not c.result]
    loop.input_ports.remove(c)
    init = c.value.producer
    if not _readers(graph, c.value):
        graph.nodes.remove(init)
    types = [t for t in (element.type, *(getattr(v.type, "elem", None)
                                         for v in (c.result, c.param)))
             if isinstance(t, TensorType)]
    etype = next((t for t in types if t.shape is not None), types[0] if types else TensorType())
    if etype is not element.type and etype.shape is not None:
        element.type = etype  # the sequence's type says it: a zero-step join keeps its shape
    stacked_shape = (None, *etype.shape) if etype.shape is not None else \
        (None,) * (rank + 1) if rank is not None else None
    stacked_type = TensorType(etype.dtype, stacked_shape)
    empty = None if prefix else \
        f"{where(concats[0])}: cannot concatenate an empty sequence (the loop " \
        f"{where(loop)} ran no iteration)"
    plain = [n for n in concats if _is_plain_stack(n, rank)]
    if plain:  # the stack itself: the port's output keeps the name the file gives it
        stacked = plain[0].outputs[0]
        stacked.type = stacked_type
        graph.nodes.remove(plain[0])
        concats = [n for n in concats if n is not plain[0]]
    else:
        stacked = Value(f"{element.name}_stacked", stacked_type)
    ports = [p for p in loop.output_ports if not any(p is q for q in lasts)]
    appended = Value(f"{element.name}_appended", stacked_type) if prefix else stacked
    ports.append(Concat(element, appended, axis=0, new_axis=True, empty_error=empty))
    old_outputs = [p.output for p in lasts]
    loop.set_output_ports(ports)
    if prefix:  # the list's first elements, then what the iterations appended
        at = graph.nodes.index(loop) + 1
        graph.nodes[at:at] = _stacked_after(graph, prefix, appended, stacked)
    for n in concats:
        after = joined_from_stack(graph, n, stacked, rank)
        graph.nodes[graph.nodes.index(n):graph.nodes.index(n) + 1] = after[:-1]
        replace_all_uses(graph, n.outputs[0], after[-1])
    for old in old_outputs:
        old.producer = None


def _stacked_after(graph: Graph, prefix: list[Value], appended: Value,
                   stacked: Value) -> list[Node]:
    """``stacked = Concat(Unsqueeze(prefix[0], 0), ..., appended', axis=0)``, with `appended`
    reshaped to ``[len(appended), *Shape(prefix[0])]``: every element has the first one's
    shape, and a loop that runs no iteration gives a scan output whose element shape is
    unknown (NumPy and OpenVINO give ``(0, 0, ...)``, which no join with the first elements
    accepts; OpenVINO's Concat returned a wrong empty shape without an error).

    The target shape is ``Shape(first) * [0, 1, ...] + Shape(appended) * [1, 0, ...]`` where
    the rank is known, and the empty tensor is flattened before it is reshaped: OpenVINO's
    CPU plugin kept the input's shape in a Reshape of an empty tensor to a computed shape of
    the same rank, and computed ``[0, 0, 5]`` for ``Concat([0], [2, 5])`` of shapes next to
    the loop (an in-place join of a zero-trip Loop's shape)."""
    zero = _const(graph, f"{stacked.name}_axis0", [0])
    nodes: list[Node] = []
    parts = []
    for k, v in enumerate(prefix):
        u = Value(f"{stacked.name}_first{k}")
        nodes.append(Node("Unsqueeze", [v, zero], [u], version=13, name=f"{stacked.name}_first{k}"))
        parts.append(u)
    rank = prefix[0].type.rank if isinstance(prefix[0].type, TensorType) else None
    first_shape = Value(f"{stacked.name}_first_shape")
    nodes.append(Node("Shape", [parts[0]], [first_shape], version=13,
                      name=f"{stacked.name}_first_shape"))
    steps_shape = Value(f"{stacked.name}_steps_all")
    nodes.append(Node("Shape", [appended], [steps_shape], version=13,
                      name=f"{stacked.name}_steps_all"))
    target = Value(f"{stacked.name}_steps_shape")
    if rank is not None:
        kept, count = Value(f"{stacked.name}_kept"), Value(f"{stacked.name}_count")
        nodes += [
            Node("Mul", [first_shape, _const(graph, f"{stacked.name}_rest", [0] + [1] * rank)],
                 [kept], version=14, name=f"{stacked.name}_kept"),
            Node("Mul", [steps_shape, _const(graph, f"{stacked.name}_lead", [1] + [0] * rank)],
                 [count], version=14, name=f"{stacked.name}_count"),
            Node("Add", [kept, count], [target], version=14,
                 name=f"{stacked.name}_steps_shape")]
    else:
        count = _slice(graph, nodes, steps_shape, 0, 1, f"{stacked.name}_steps")
        rest = _slice(graph, nodes, first_shape, 1, 2**62, f"{stacked.name}_rest")
        nodes.append(Node("Concat", [count, rest], [target], {"axis": 0}, version=13,
                          name=f"{stacked.name}_steps_shape"))
    flat = Value(f"{appended.name}_flat")
    nodes.append(Node("Reshape", [appended, _const(graph, f"{stacked.name}_flat", [-1])],
                      [flat], version=14, name=f"{appended.name}_flat"))
    steps = Value(f"{appended.name}_shaped", appended.type)
    # allowzero: the target is exact, and a first element with a zero dim asks for 0 itself
    nodes.append(Node("Reshape", [flat, target], [steps], {"allowzero": 1}, version=14,
                      name=f"{appended.name}_shaped"))
    nodes.append(Node("Concat", [*parts, steps], [stacked], {"axis": 0}, version=13,
                      name=f"{stacked.name}_join"))
    return nodes


def _is_plain_stack(concat: Node, rank: int | None) -> bool:
    axis, new_axis = int(concat.attrs.get("axis", 0)), int(concat.attrs.get("new_axis", 0))
    return bool(new_axis) and (axis == 0 or (rank is not None and axis == -rank - 1))


def joined_from_stack(graph: Graph, concat: Node, stacked: Value, rank: int | None,
                      out: Value | None = None) -> list:
    """Nodes computing the ``ConcatFromSequence`` node `concat`'s result from `stacked` (its
    elements, of rank `rank`, stacked on a new axis 0), then the value holding it: `out`
    (a new value when None), or `stacked` itself when that is the result; integer constants
    go to `graph`'s initializers."""
    axis, new_axis = int(concat.attrs.get("axis", 0)), int(concat.attrs.get("new_axis", 0))
    name = concat.outputs[0].name
    if new_axis:
        if axis < 0:
            axis += rank + 1
        if axis == 0:
            return [stacked]
        perm = [*range(1, axis + 1), 0, *range(axis + 1, rank + 1)]
        out = out if out is not None else Value(name, concat.outputs[0].type)
        return [Node("Transpose", [stacked], [out], {"perm": perm}, version=13,
                     name=concat.name), out]
    if axis < 0:
        axis += rank
    nodes: list = []
    moved = stacked
    if axis != 0:
        perm = [*range(1, axis + 1), 0, *range(axis + 1, rank + 1)]
        moved = Value(f"{name}_moved")
        nodes.append(Node("Transpose", [stacked], [moved], {"perm": perm}, version=13,
                          name=f"{concat.name}_move"))
    # merge axes `axis` and `axis + 1`: shape[:axis] + [-1] + shape[axis + 2:]
    shape = Value(f"{name}_shape")
    nodes.append(Node("Shape", [moved], [shape], version=13, name=f"{concat.name}_shape"))
    pieces = []
    if axis:
        pieces.append(_slice(graph, nodes, shape, 0, axis, f"{name}_before"))
    minus_one = _const(graph, f"{name}_minus_one", [-1])
    pieces.append(minus_one)
    pieces.append(_slice(graph, nodes, shape, axis + 2, 2**62, f"{name}_after"))
    target = Value(f"{name}_target")
    nodes.append(Node("Concat", pieces, [target], {"axis": 0}, version=13,
                      name=f"{concat.name}_target"))
    out = out if out is not None else Value(name, concat.outputs[0].type)
    nodes.append(Node("Reshape", [moved, target], [out], version=14, name=concat.name))
    return [*nodes, out]


def _const(graph: Graph, name: str, values: list[int]) -> Value:
    v = Value(name, TensorType(DataType.INT64, (len(values),)), np.array(values, np.int64))
    graph.initializers.append(v)
    return v


def _slice(graph: Graph, nodes: list, v: Value, start: int, end: int, name: str) -> Value:
    out = Value(name)
    nodes.append(Node("Slice", [v, _const(graph, f"{name}_start", [start]),
                                _const(graph, f"{name}_end", [end])], [out], version=13,
                      name=name))
    return out

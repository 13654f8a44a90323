"""What the portability rules look at: every loop and node of a model with where it sits, and
the loop features runtimes differ on, read from the IR alone.

A `Site` is one node (a loop, or any node for the op rules) with the chain of enclosing
loops and If branches that leads to it, written as the file names them. The predicates below
answer one question each about a loop; the rule table combines them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..ir.graph import Graph, Node, Value
from ..ir.loop import UNBOUNDED_TRIP_COUNT, Carried, Concat, Loop
from ..ir.operands import SHAPE_OPERANDS
from ..ir.static_values import const_value
from ..ir.traits import ELEMENTWISE, Trait, has, traits
from ..ir.types import DataType, TensorType

_FLAVOUR = {"onnx.Loop": "Loop", "onnx.Scan": "Scan", "openvino.Loop": "Loop",
            "openvino.TensorIterator": "TensorIterator", "network": "Loop"}


def node_label(node: Node) -> str:
    """``Loop 'name'`` as the file names the node; a nameless node by its first output."""
    op = _FLAVOUR.get(node.origin, "Loop") if isinstance(node, Loop) else \
        node.meta.get("read_as", node.op_type)
    if node.name:
        return f"{op} '{node.name}'"
    out = node.outputs[0].name if node.outputs and node.outputs[0].name else "?"
    return f"{op} (producing '{out}')"


@dataclass
class Site:
    """`node` in `graph`, below the enclosing nodes `path` (outermost first)."""

    node: Node
    graph: Graph
    path: tuple[str, ...]
    loop_depth: int  # enclosing loops, not counting If branches
    root: Graph | None = None  # the model's graph (its meta: ir_version, opsets)

    @property
    def where(self) -> str:
        return " > ".join([*self.path, node_label(self.node)])


def sites(graph: Graph) -> Iterator[Site]:
    """Every node of `graph` and its subgraphs at any depth, pre-order."""

    def visit(g: Graph, path: tuple[str, ...], depth: int) -> Iterator[Site]:
        for n in g.nodes:
            yield Site(n, g, path, depth, graph)
            subs = n.subgraphs()
            for attr, value in n.attrs.items():
                if isinstance(value, Graph) and value in subs:
                    label = node_label(n) if isinstance(n, Loop) else f"{node_label(n)}.{attr}"
                    yield from visit(value, (*path, label), depth + isinstance(n, Loop))

    yield from visit(graph, (), 0)


def trip_count_value(loop: Loop) -> int | None:
    """The constant trip count, when there is one and it is a bound (not 'unbounded')."""
    c = const_value(loop.trip_count)
    if c is None or c.size != 1:
        return None
    n = int(c.reshape(-1)[0])
    if n >= UNBOUNDED_TRIP_COUNT or (n < 0 and loop.negative_trip_count == "unbounded"):
        return None
    return max(n, 0)


def through_identity(v: Value | None) -> Value | None:
    while v is not None and v.producer is not None and v.producer.op_type == "Identity":
        v = v.producer.inputs[0]
    return v


def has_condition(loop: Loop) -> bool:
    """Whether a body-computed condition can end the loop (a while loop): the condition
    result is neither absent, nor the incoming condition passed through, nor constant true."""
    r = through_identity(loop.condition_result)
    if r is None or (loop.condition_param is not None and r is loop.condition_param):
        return loop.precondition is not None
    c = const_value(r)
    if c is not None and c.size == 1 and bool(c.reshape(-1)[0]):
        return loop.precondition is not None
    return True


def count_kind(loop: Loop) -> str:
    """How the number of iterations is decided: ``"constant"`` (a constant trip count),
    ``"sliced"`` (the length of the sliced inputs), ``"input"`` (a trip count computed at run
    time), ``"while"`` (a condition computed in the body) or ``"unbounded"`` (nothing)."""
    if has_condition(loop):
        return "while"
    if trip_count_value(loop) is not None:
        return "constant"
    if loop.sliced:
        return "sliced"
    if loop.trip_count is not None and const_value(loop.trip_count) is None:
        return "input"
    return "unbounded"


def scan_outputs(loop: Loop) -> list[Concat]:
    return [p for p in loop.output_ports if isinstance(p, Concat)]


def shape_of(v: Value | None):
    """`v`'s shape as far as it is known (a constant's, or the declared type's), else None."""
    if v is None:
        return None
    if v.const is not None and v.producer is None:
        return tuple(np.shape(v.const))
    t = v.type
    return t.shape if isinstance(t, TensorType) else None


def scan_axis_source(v: Value | None, axis: int) -> Loop | None:
    """The loop whose concatenated output `v` is, when `axis` is its concatenation axis and
    the loop's iteration count is not a constant (so that axis has a run-time length)."""
    p = v.producer if v is not None else None
    if not isinstance(p, Loop):
        return None
    port = p.output_ports[v.index]
    if isinstance(port, Concat) and port.axis == axis and count_kind(p) != "constant":
        return p
    return None


def growing_carried(loop: Loop) -> list[Carried]:
    """Carried values whose shape changes between iterations: the result has another rank
    or another static dimension than the initial value, or it is a ``Concat`` of the
    carried value itself with more data (the shape grows every iteration)."""
    out = []
    for c in loop.carried:
        a, b = shape_of(c.value), shape_of(c.result)
        changed = a is not None and b is not None and (
            len(a) != len(b) or any(isinstance(x, int) and isinstance(y, int) and x != y
                                    for x, y in zip(a, b)))
        if changed or (c.result is not None and _concat_of(c.result, c.param)):
            out.append(c)
    return out


def _concat_of(v: Value, param: Value) -> bool:
    """Is `v` a ``Concat`` of `param` with more data, directly or as an ``If`` output that
    some branch computes so (``if keep: rows.append(row)``)?"""
    v = through_identity(v)
    p = v.producer if v is not None else None
    if p is None:
        return False
    if p.op_type == "Concat":
        return len(p.inputs) > 1 and any(through_identity(u) is param for u in p.inputs)
    if p.op_type == "If":
        i = p.outputs.index(v)
        return any(i < len(g.outputs) and _concat_of(g.outputs[i], param)
                   for g in p.subgraphs())
    return False


#: Ops whose output shape depends on the values of their data input.
_DATA_SHAPED = {"NonZero", "Compress", "Unique", "NonMaxSuppression", "StringSplit"}
#: Ops whose output's values are only the shape of their input.
_FIXED_SHAPE = {"Shape", "Size"}
#: Ops whose output keeps a changing shape of an input (besides the element-wise ones and
#: those of the input's shape, `Trait.SAME_SHAPE`).
_SHAPE_KEEPING = {"Concat", "Pad", "Tile", "Expand", "Transpose", "Unsqueeze", "Squeeze",
                  "Flatten"}


def shape_varying(loop: Loop) -> set[int]:
    """uids of the body values (and carried parameters) whose shape may differ from one
    iteration to the next: shapes computed from values that change per iteration (the
    iteration number, carried or sliced values), data-dependent shapes, carried values that
    grow, and whatever is computed from those. An over-approximation through nested
    subgraphs (a node reading such a value is taken to vary)."""
    varying = {v.uid for v in (loop.iteration_param, loop.condition_param) if v is not None}
    varying |= {p.param.uid for p in loop.carried} | {p.param.uid for p in loop.sliced}
    shaped = {c.param.uid for c in growing_carried(loop)}
    while True:
        before = (len(varying), len(shaped))
        for n in loop.body.nodes:
            reads = n.reads()
            if n.op_type in _FIXED_SHAPE:  # the shape of a value whose shape never changes
                if any(v.uid in shaped for v in reads):
                    varying.update(v.uid for v in n.outputs)
            elif any(v.uid in varying for v in reads):
                varying.update(v.uid for v in n.outputs)
            ins = list(n.inputs)
            by_value = any(i < len(ins) and ins[i] is not None and ins[i].uid in varying
                           for i in SHAPE_OPERANDS.get(n.op_type, ()))
            by_data = n.op_type in _DATA_SHAPED and any(v.uid in varying for v in reads)
            # A changing shape flows on through element-wise ops and joins; other ops (a
            # slice of constant bounds, a reduction) may well fix it, and are not followed.
            keeps = bool(traits(n.op_type, n.domain) & (ELEMENTWISE | Trait.SAME_SHAPE))
            by_shape = (keeps or n.op_type in _SHAPE_KEEPING) and \
                any(v.uid in shaped for v in reads)
            if by_value or by_data or by_shape:
                shaped.update(v.uid for v in n.outputs)
        for c in loop.carried:
            if c.result is not None and c.result.uid in shaped:
                shaped.add(c.param.uid)
        if (len(varying), len(shaped)) == before:
            return shaped


def varying_scan_outputs(loop: Loop) -> list[Concat]:
    """Scan outputs whose per-iteration piece may change shape between iterations."""
    shaped = shape_varying(loop)
    return [p for p in scan_outputs(loop) if p.result is not None and p.result.uid in shaped]


def condition_problem(loop: Loop) -> str | None:
    """How the loop's condition (initial or per-iteration) is not a boolean with one element,
    or None when both are (or are unknown)."""
    for what, v in (("initial condition", loop.initial_condition),
                    ("condition", loop.condition_result)):
        if v is None:
            continue
        t = v.type
        if v.const is not None and v.producer is None:
            arr = np.asarray(v.const)
            dtype, shape = DataType.from_numpy(arr.dtype), arr.shape
        elif isinstance(t, TensorType):
            dtype, shape = t.dtype, t.shape
        else:
            continue
        if dtype is not None and dtype != DataType.BOOL:
            return f"the {what} '{v.name}' is {dtype}, not bool"
        if shape is not None and all(isinstance(d, int) for d in shape) and \
                int(np.prod(shape, dtype=np.int64)) != 1:
            return f"the {what} '{v.name}' has shape {list(shape)}, not one element"
    return None


def passthrough_carried(loop: Loop) -> list[Carried]:
    """Carried values whose body result is the body parameter itself (the file writes the
    same name as a body input and output)."""
    return [c for c in loop.carried if c.result is c.param]


def branch_initializer_outputs(node: Node) -> list[tuple[str, Value]]:
    """(branch, value) for each If branch output that is an initializer of the branch
    itself rather than a value some node of the branch computes."""
    out = []
    for attr in ("then_branch", "else_branch"):
        g = node.attrs.get(attr)
        if not isinstance(g, Graph):
            continue
        own = {v.uid for v in g.initializers}
        out += [(attr, v) for v in g.outputs if v.uid in own]
    return out


def branch_rank_mismatch(node: Node) -> list[tuple[int, int, int]]:
    """(output index, then rank, else rank) where both branches' ranks are known and differ."""
    then, other = node.attrs.get("then_branch"), node.attrs.get("else_branch")
    if not isinstance(then, Graph) or not isinstance(other, Graph):
        return []
    out = []
    for i, (a, b) in enumerate(zip(then.outputs, other.outputs)):
        sa, sb = shape_of(a), shape_of(b)
        if sa is not None and sb is not None and len(sa) != len(sb):
            out.append((i, len(sa), len(sb)))
    return out


def dynamic_inputs(graph: Graph) -> list[Value]:
    """Graph inputs (not initializers) with a dimension or rank that is not a number."""
    out = []
    for v in graph.inputs:
        if v.const is not None:
            continue
        s = shape_of(v)
        if s is None or not all(isinstance(d, int) for d in s):
            out.append(v)
    return out



#: ops between a carried value and the Concat that appends to it: they keep its length
#: (Gather: a beam search reordering its sequences); a Slice may not (a sliding window)
_THROUGH = ("Reshape", "Unsqueeze", "Gather")  # and the ops of `Trait.SAME_SHAPE`


#: ops whose output is at least as large as their first input (elementwise, broadcasting):
#: a carried value grown before them is still grown after them
_KEEP_GROWTH = Trait.SAME_SHAPE | Trait.BROADCAST


def grows_each_iteration(c: Carried) -> bool:
    """Is the carried value's next value a Concat of itself with something (a list appended
    to, a growing KV cache) or a Pad of itself (``x = F.pad(x, ...)``), possibly followed by
    elementwise ops? Then its shape changes every iteration."""
    p = c.result.producer
    while p is not None and traits(p.op_type, p.domain) & _KEEP_GROWTH:
        p = p.inputs[0].producer if p.inputs and p.inputs[0] is not None else None
    if p is None or p.op_type not in ("Concat", "Pad"):
        return False
    if p.op_type == "Pad":
        pads = p.inputs[1] if len(p.inputs) > 1 else None
        if pads is not None and pads.const is not None and not pads.const.any():
            return False  # a Pad of nothing
        todo = [v for v in p.inputs[:1] if v is not None]
    else:
        todo = [v for v in p.inputs if v is not None]
    seen = set()
    while todo:
        v = todo.pop()
        if v is c.param:
            return True
        q = v.producer
        if v.uid in seen or q is None or not (q.op_type in _THROUGH or has(q, Trait.SAME_SHAPE)):
            continue
        seen.add(v.uid)
        todo.extend(u for u in q.inputs[:1] if u is not None)
    return False

"""The mark transform: chosen body tensors, at any depth, become outputs of the graph.

A body tensor lives inside the bodies of loops ``L1 ⊃ L2 ⊃ ... ⊃ Ld``. Marking it adds, in
`stack` mode, a `Concat` port (new axis 0) to ``Ld`` over the tensor, then a `Concat` port to
each enclosing loop over the port just added, and a graph output over the outermost one: the
output's leading ``d`` axes are the step indices of ``L1 .. Ld`` and the rest is the tensor,
so nothing but scan outputs is added and every runtime that runs the loops runs the marked
file (ONNX Runtime, OpenVINO, the JAX backend's compiled scans). It needs every inner loop to
run the same number of steps at every outer step and the tensor to keep its shape. So that a
runtime that stacks pieces of different lengths without complaint (OpenVINO fills the rest
with whatever memory held) cannot pass off a wrong trace, each inner loop also counts its
steps in a carried value, stacked the same way (`Marked.counts`), and the reader checks them.

`thread` mode (ragged traces) threads a sequence through every enclosing loop as a carried
value, ``SequenceInsert``-ing the tensor at each innermost step, and a second one with the step
indices (an int64 row of ``d`` counters, each loop counting its steps in a carried value):
inner loops may run any number of steps and the tensor may change shape. Sequences run on the
NumPy backend and ONNX Runtime, not in OpenVINO.

`mark(graph, tensors, mode)` marks a copy and returns it with the `Marked` record of each
output; `MarkTensors` is the same as an in-place pass (the ``mark`` transform).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedError
from ..ir.builder import Builder, unique_name
from ..ir.clone import clone_graph
from ..ir.graph import Graph, Value
from ..ir.loop import Carried, Concat, Last
from ..ir.types import DataType, SequenceType, TensorType, tensor
from ..passes.base import Pass
from .names import BodyTensor, TensorIndex

MODES = ("stack", "thread")


@dataclass
class Marked:
    """One marked tensor: graph output `values` holds its per-step values (stack mode: the
    leading ``len(loops)`` axes are the steps; thread mode: a sequence, one entry per step);
    in thread mode `steps` is the output with the step indices (a sequence of int64 rows)."""

    key: str
    tensor: str
    loops: list[str]
    kind: str
    values: str
    steps: str | None
    mode: str
    counts: tuple[str, ...] = ()


def resolve(graph: Graph, tensors=None) -> list[tuple[BodyTensor, str]]:
    """The body tensors `tensors` names (or, for None, every loop's carried values and
    condition), with their kinds (``carried``, ``condition``, ``body``)."""
    index = TensorIndex(graph)
    defaults = index.defaults()
    if tensors is None:
        return defaults
    kinds = {t.key: k for t, k in defaults}
    out, seen = [], set()
    for name in tensors:
        t = index.lookup(name)
        if t.key not in seen:
            seen.add(t.key)
            out.append((t, kinds.get(t.key, "body")))
    return out


def mark(graph: Graph, tensors=None, mode: str = "stack") -> tuple[Graph, dict[str, Marked]]:
    """A copy of `graph` with the named body tensors (default: every carried value and loop
    condition) as extra outputs; returns it and ``{output name: Marked}``."""
    copy = clone_graph(graph)
    p = MarkTensors(tensors, mode)
    p(copy)
    return copy, p.marked


class MarkTensors(Pass):
    """Expose body tensors as graph outputs, through scan outputs of every enclosing loop.

    Applies to: the body tensors named (qualified or bare names, see `inspect.names`), or
        with no names every loop's carried results and condition result, at any depth of
        Loop nesting (not inside If branches).
    Returns: the number of tensors marked; `marked` maps each new graph output's name to
        its `Marked` record.
    Guarantees: the graph's existing outputs keep their values; each new output holds the
        tensor's value at every step of every enclosing loop, in execution order (stack mode:
        stacked, one leading axis per loop; thread mode: a sequence plus step indices).
    """

    name = "mark"

    def __init__(self, tensors=None, mode: str = "stack"):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}")
        self.tensors = None if tensors is None else list(tensors)
        self.mode = mode
        self.marked: dict[str, Marked] = {}

    def __call__(self, graph: Graph) -> int:
        self.marked = {}
        taken = _names(graph)
        for i, (t, kind) in enumerate(resolve(graph, self.tensors)):
            base = _unique(f"trace{i}:{t.key}", taken)
            counts: tuple[str, ...] = ()
            if self.mode == "stack":
                values, steps = _stack(graph, t, base, taken), None
                counts = tuple(_stack_count(graph, t, d, base, taken)
                               for d in range(1, len(t.path)))
            else:
                values, steps = _thread(graph, t, base, taken)
            self.marked[values] = Marked(t.key, t.name, list(t.loop_names), kind, values,
                                         steps, self.mode, counts)
        return len(self.marked)


def _names(graph: Graph) -> set[str]:
    names = {v.name for v in [*graph.inputs, *graph.initializers, *graph.outputs]}
    for _, n in graph.walk():
        names.update(v.name for v in n.outputs)
        for g in n.subgraphs():
            names.update(v.name for v in [*g.inputs, *g.initializers])
    return names


def _unique(name: str, taken: set[str]) -> str:
    """`name`, or ``name~2``, ``name~3`` ... when it is taken (then taken too)."""
    return unique_name(name, taken, "{}~{}", 2)


def _builder(g: Graph, taken: set[str]) -> Builder:
    """Nodes appended to `g`, constants added to it, named as `_unique` names."""
    return Builder(g, "", sep="", nodes=g.nodes, taken=taken, again="{}~{}", start=2)


def _tensor_type(v: Value, where: str) -> TensorType:
    t = v.type
    if isinstance(t, SequenceType) or (t is not None and not isinstance(t, TensorType)):
        raise UnsupportedError(f"body tensor '{where}' is a {t}, not a tensor: it cannot be "
                               "traced")
    return t if t is not None else TensorType()


def _stack(graph: Graph, t: BodyTensor, base: str, taken: set[str]) -> str:
    tt = _tensor_type(t.value, t.key)
    shape = tt.shape
    cur = t.value
    for depth in range(len(t.path) - 1, -1, -1):
        if shape is not None:
            shape = (None, *shape)
        name = base if depth == 0 else _unique(f"{base}@{t.loop_names[depth]}", taken)
        out = Value(name, tensor(tt.dtype, shape) if tt.dtype is not None else
                    TensorType(None, shape))
        t.path[depth].add_output(Concat(cur, out, axis=0, new_axis=True))
        cur = out
    graph.outputs.append(cur)
    return cur.name


def _stack_count(graph: Graph, t: BodyTensor, depth: int, base: str, taken: set[str]) -> str:
    """A graph output with the number of steps the loop at `depth` of `t.path` (>= 1) ran at
    each step of its enclosing loops, stacked like `_stack` stacks the values (a carried
    counter of its own, so that the number holds also after zero steps)."""
    loop = t.path[depth]
    i64 = tensor("int64", ())
    zero = _const(t.path[depth - 1].body, f"{base}:n0@{depth}", np.int64(0), taken)
    one = _const(loop.body, f"{base}:n1@{depth}", np.int64(1), taken)
    c = Value(_unique(f"{base}:n@{depth}", taken), i64)
    loop.body.inputs.append(c)
    c_next = _node(loop.body, "Add", [c, one], f"{base}:n+1@{depth}", taken, i64, version=14)
    loop.input_ports.append(Carried(zero, c, c_next))
    cur = Value(_unique(f"{base}:count@{depth}", taken), i64)
    loop.add_output(Last(c_next, cur))
    shape: tuple = ()
    for d in range(depth - 1, -1, -1):
        shape = (None, *shape)
        out = Value(_unique(f"{base}:counts@{depth}.{d}", taken), tensor("int64", shape))
        t.path[d].add_output(Concat(cur, out, axis=0, new_axis=True))
        cur = out
    graph.outputs.append(cur)
    return cur.name


def _const(g: Graph, name: str, value, taken: set[str]) -> Value:
    return _builder(g, taken).const(value, name)


def _node(g: Graph, op: str, inputs, name: str, taken: set[str], type_=None,
          attrs=None, version: int = 13, at: int | None = None) -> Value:
    """``op(inputs)`` appended to `g` (inserted at `at`); the node is named as its output."""
    b = _builder(g, taken)
    out = Value(b.fresh(name), type_)
    return b.node(op, inputs, attrs, out=out, node_name=out.name, version=version, at=at)


def _thread(graph: Graph, t: BodyTensor, base: str, taken: set[str]) -> tuple[str, str]:
    tt = _tensor_type(t.value, t.key)
    if tt.dtype is None:
        raise UnsupportedError(f"body tensor '{t.key}' has no known element type: it cannot "
                               "be traced as a sequence")
    i64 = tensor("int64", ())
    seq_t, row_t = SequenceType(tt), SequenceType(tensor("int64", (len(t.path),)))
    owners = [graph] + [loop.body for loop in t.path[:-1]]  # the graph holding each loop
    # what each level passes down: the sequences (outer values) the loop's ports start from
    vals = _node(graph, "SequenceEmpty", [], f"{base}:empty", taken, seq_t,
                 {"dtype": tt.dtype.onnx}, version=11, at=0)
    rows = _node(graph, "SequenceEmpty", [], f"{base}:empty_steps", taken, row_t,
                 {"dtype": DataType.INT64.onnx}, version=11, at=0)
    params: list[tuple[Value, Value]] = []
    counters: list[Value] = []
    for depth, loop in enumerate(t.path):
        body = loop.body
        zero = _const(owners[depth], f"{base}:zero{depth}", np.int64(0), taken)
        one = _const(body, f"{base}:one{depth}", np.int64(1), taken)
        c = Value(_unique(f"{base}:step{depth}", taken), i64)
        body.inputs.append(c)
        c_next = _node(body, "Add", [c, one], f"{base}:next{depth}", taken, i64, version=14)
        loop.input_ports.append(Carried(zero, c, c_next))
        counters.append(c)
        pv = Value(_unique(f"{base}:seq{depth}", taken), seq_t)
        pr = Value(_unique(f"{base}:rows{depth}", taken), row_t)
        body.inputs += [pv, pr]
        params.append((pv, pr))
    inner = t.path[-1].body
    axes = _const(inner, f"{base}:axes", np.array([0], np.int64), taken)
    pieces = [_node(inner, "Unsqueeze", [c, axes], f"{base}:s{k}", taken, tensor("int64", (1,)))
              for k, c in enumerate(counters)]
    row = pieces[0] if len(pieces) == 1 else _node(
        inner, "Concat", pieces, f"{base}:row", taken, tensor("int64", (len(pieces),)),
        {"axis": 0})
    res_v = _node(inner, "SequenceInsert", [params[-1][0], t.value], f"{base}:ins", taken,
                  seq_t, version=11)
    res_r = _node(inner, "SequenceInsert", [params[-1][1], row], f"{base}:ins_steps", taken,
                  row_t, version=11)
    for depth in range(len(t.path) - 1, -1, -1):
        loop = t.path[depth]
        pv, pr = params[depth]
        init_v, init_r = (vals, rows) if depth == 0 else params[depth - 1]
        loop.input_ports += [Carried(init_v, pv, res_v), Carried(init_r, pr, res_r)]
        last_v = Value(base if depth == 0 else _unique(f"{base}@{depth}", taken), seq_t)
        last_r = Value(_unique(f"{base}:steps", taken) if depth == 0 else
                       _unique(f"{base}:steps@{depth}", taken), row_t)
        loop.add_output(Last(res_v, last_v))
        loop.add_output(Last(res_r, last_r))
        res_v, res_r = last_v, last_r
    graph.outputs += [res_v, res_r]
    return res_v.name, res_r.name

"""Model state as graph inputs and outputs: the pure function behind a stateful model.

A graph with variables (`ir.state`) computes, in one run, its outputs and the next value of
each variable from its inputs and the value each variable holds at the start. Written out,
that is a graph without state nodes:

- the variable's value at the start of the run: graph input ``<variable id>``;
- whether it has been assigned (for the init value's sake): graph input
  ``<variable id>/is_set`` (a boolean scalar), in `expose_state` only;
- the value ``Assign`` stores for the next run: graph output ``<variable id>/next``.

A name that is taken gets a ``_k`` suffix; `StatePorts` says which names were chosen.

`step_graph(graph, assigned)` is what `Model` runs (`itergraph.stateful`): the variables in
`assigned` read their input; the others read their init value (or zeros), so no state input
is needed for them and no branch is left to decide at run time (the JAX backend compiles a
straight-line function; two variants cover a model's life: before and after the first run).
`expose_state` is what the ONNX writer writes (ONNX has no state): every variable gets its
value and ``is_set`` inputs and an ``If`` chooses between the value and the init value.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import UnsupportedError, where
from ..ir.clone import clone_graph
from ..ir.graph import Graph, Node, Value
from ..ir.state import Variable, has_state, variables, zero_shape
from ..ir.types import DataType, TensorType
from .base import Pass


@dataclass
class StatePorts:
    """The graph input and output names given to each variable (by id)."""

    inputs: dict[str, str] = field(default_factory=dict)
    flags: dict[str, str] = field(default_factory=dict)
    outputs: dict[str, str] = field(default_factory=dict)
    types: dict[str, TensorType] = field(default_factory=dict)


def step_graph(graph: Graph, assigned: frozenset[str] | set[str]) -> tuple[Graph, StatePorts]:
    """A copy of main graph `graph` with its variables as inputs and outputs (module
    docstring); the variables in `assigned` read a state input, the others their init value.
    The copy's inputs: `graph`'s, then the state inputs; its outputs: `graph`'s, then the
    next values. `graph` is not changed."""
    copy = clone_graph(graph)
    ports = _rewrite(copy, assigned=frozenset(assigned), flags=False)
    return copy, ports


def expose_state(graph: Graph) -> StatePorts:
    """Rewrite main graph `graph` in place: every variable gets a value input, an ``is_set``
    input and a next-value output; its ``ReadValue`` becomes an ``If`` on ``is_set``."""
    return _rewrite(graph, assigned=frozenset(), flags=True)


class StateIO(Pass):
    """Variables become graph inputs and outputs (`expose_state`).

    Applies to: the ``org.openvinotoolkit`` ``ReadValue``/``Assign`` nodes of the main graph
    (`ir.state`); a graph without them is left alone.

    Returns: the number of variables exposed.

    Guarantees: the graph's own outputs come first and keep their values when each variable's
    input holds its value at the start of the run and ``<id>/is_set`` says whether it has been
    assigned (false on the first run: the input's value is then not read); output
    ``<id>/next`` is the value to feed as ``<id>`` (with ``is_set`` true) to the next run.
    Errors: `ir.state.variables`'s.
    """

    name = "state_io"

    def __call__(self, graph: Graph) -> int:
        if not has_state(graph):
            return 0
        return len(expose_state(graph).inputs)

    def applicable(self, graph: Graph) -> bool:
        return has_state(graph)


state_io = StateIO()


def _rewrite(graph: Graph, assigned: frozenset[str], flags: bool) -> StatePorts:
    ports = StatePorts()
    table = variables(graph)
    taken = {v.name for v in [*graph.inputs, *graph.outputs]}
    replaced: dict[int, list[Node]] = {}
    for var in table.values():
        ports.types[var.id] = var.type
        state = None
        if flags or var.id in assigned:
            state = Value(_fresh(var.id, taken), var.type)
            graph.inputs.append(state)
            ports.inputs[var.id] = state.name
        if flags:
            flag = Value(_fresh(f"{var.id}/is_set", taken), TensorType(DataType.BOOL, ()))
            graph.inputs.append(flag)
            ports.flags[var.id] = flag.name
            replaced[id(var.read)] = [_choose(graph, var, flag, state)]
        elif state is not None:
            replaced[id(var.read)] = [_identity(state, var.read)]
        else:
            replaced[id(var.read)] = [_identity(_initial(graph, var), var.read)]
        if var.assign is not None:
            new = var.assign.inputs[0]
            keep = _identity(new, var.assign)  # the Assign's own readers still see new_value
            out = Value(_fresh(f"{var.id}/next", taken), var.type)
            emit = Node("Identity", [new], [out], version=1, name=out.name)
            replaced[id(var.assign)] = [keep, emit]
            graph.outputs.append(out)
            ports.outputs[var.id] = out.name
    nodes: list[Node] = []
    for n in graph.nodes:
        nodes.extend(replaced.get(id(n), [n]))
    graph.nodes = nodes
    return ports


def _fresh(name: str, taken: set[str]) -> str:
    out, k = name, 1
    while out in taken:
        out, k = f"{name}_{k}", k + 1
    taken.add(out)
    return out


def _identity(source: Value, node: Node) -> Node:
    """An ``Identity`` of `source` that takes over `node`'s one output value."""
    ident = Node("Identity", [source], [], version=1, name=node.name)
    ident.meta.update(node.meta)
    target = node.outputs[0]
    node.outputs = []
    ident.adopt(target)
    return ident


def _initial(graph: Graph, var: Variable) -> Value:
    """The value a never-assigned variable holds: its init input, else zeros."""
    if var.init is not None:
        return var.init
    try:
        shape = zero_shape(var.type)
    except UnsupportedError as e:
        raise UnsupportedError(f"{where(var.read)}: {e}") from None
    zeros = Value(f"{var.id}/zeros", TensorType(var.type.dtype, shape),
                  const=np.zeros(shape, dtype=var.type.dtype.numpy))
    graph.initializers.append(zeros)
    return zeros


def _choose(graph: Graph, var: Variable, flag: Value, state: Value) -> Node:
    """``If(is_set) then state else initial value``, taking over the ReadValue's output."""
    branches = []
    for side, source in (("then", state), ("else", None)):
        g = Graph(f"{var.id}/{side}")
        if source is None:
            source = _initial(g, var) if var.init is None else var.init
        out = Value(f"{var.id}/{side}/out", var.type)
        g.add(Node("Identity", [source], [out], version=1))
        g.outputs = [out]
        branches.append(g)
    node = Node("If", [flag], [], {"then_branch": branches[0], "else_branch": branches[1]},
                version=graph.opset("") or 21, name=var.read.name)
    node.meta.update(var.read.meta)
    target = var.read.outputs[0]
    var.read.outputs = []
    node.adopt(target)
    return node

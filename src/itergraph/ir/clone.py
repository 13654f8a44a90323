"""Deep copies of graphs and nodes with fresh `Value` objects.

`clone_graph(g)` copies `g` and every subgraph below it: each value *defined* in the copied
region (graph inputs, initializers, node outputs, at any depth) gets a fresh `Value` with the
same name, type, constant data and a copy of its ``meta`` (less the private ``_`` keys:
backend caches); a value used but defined outside
the region (an outer-scope capture) stays the very same object, so the copy reads the same
outer values as the original. `clone_node(n, mapping)` copies one node the same way, its inputs
translated through `mapping` (uid -> `Value`) where present.

Attribute values that are not graphs (ints, strings, NumPy arrays, types) are shared, not
copied: the IR treats them as immutable. Canonical `Loop` nodes are rebuilt port by port.
"""

from __future__ import annotations

from .graph import Graph, Node, Value
from .loop import Carried, Concat, Invariant, Last, Loop, Sliced

#: The `Loop` flags a clone copies (`ir.loop.loop_flags`: every one).
HANDLES_LOOP_FLAGS = frozenset({"negative_trip_count", "strict_slices", "equal_slices"})
IGNORES_LOOP_FLAGS: dict[str, str] = {}

def _public(meta: dict) -> dict:
    """A copy of `meta` without private keys (a string, or a tuple whose first item is a
    string, starting with ``_``): caches that backends keep on IR objects (e.g. port layouts)
    would describe the original, not the copy."""

    def private(k) -> bool:
        head = k[0] if isinstance(k, tuple) and k else k
        return isinstance(head, str) and head.startswith("_")

    return {k: v for k, v in meta.items() if not private(k)}


def clone_value(v: Value) -> Value:
    """A fresh value with `v`'s name, type, constant data and a copy of its meta."""
    c = Value(v.name, v.type, v.const)
    c.meta = _public(v.meta)
    return c


def clone_graph(graph: Graph, mapping: dict[int, Value] | None = None) -> Graph:
    """A deep copy of `graph`; `mapping` (uid -> Value) collects old -> new for every value
    the copy defines and may pre-map outer values to replacements."""
    m = {} if mapping is None else mapping
    inputs = [_fresh(v, m) for v in graph.inputs]
    inits = [_fresh(v, m) for v in graph.initializers]
    g = Graph(graph.name, inputs, (), (), inits, graph.opset_imports)
    g.meta = _public(graph.meta)
    for n in graph.nodes:
        g.nodes.append(clone_node(n, m))
    g.outputs = [_get(v, m) for v in graph.outputs]
    return g


def clone_node(node: Node, mapping: dict[int, Value]) -> Node:
    """A copy of `node` reading ``mapping``-translated inputs, with fresh outputs (recorded in
    `mapping`) and deep-copied subgraphs."""
    if isinstance(node, Loop):
        return _clone_loop(node, mapping)
    attrs = {}
    for k, a in node.attrs.items():
        if isinstance(a, Graph):
            a = clone_graph(a, mapping)
        elif isinstance(a, list) and a and all(isinstance(x, Graph) for x in a):
            a = [clone_graph(x, mapping) for x in a]
        attrs[k] = a
    n = Node(node.op_type, [_get(v, mapping) for v in node.inputs],
             [_fresh(v, mapping) for v in node.outputs], attrs,
             domain=node.domain, version=node.version, name=node.name)
    n.meta = _public(node.meta)
    return n


def _clone_loop(loop: Loop, m: dict[int, Value]) -> Loop:
    ports_in = []
    for p in loop.input_ports:  # outer values first: they are not defined by the body
        ports_in.append((p, _get(p.value, m)))
    body = clone_graph(loop.body, m)
    new_ports: list = []
    for p, value in ports_in:
        if isinstance(p, Invariant):
            new_ports.append(Invariant(value, _get(p.param, m)))
        elif isinstance(p, Sliced):
            new_ports.append(Sliced(value, _get(p.param, m), p.axis, p.start, p.end, p.stride,
                                    p.part_size, p.keep_axis))
        else:
            new_ports.append(Carried(value, _get(p.param, m), _get(p.result, m)))
    outs: list = []
    for p in loop.output_ports:
        out = _fresh(p.output, m)
        if isinstance(p, Last):
            outs.append(Last(_get(p.result, m), out))
        else:
            outs.append(Concat(_get(p.result, m), out, p.axis, p.reverse, p.new_axis,
                               _get(p.length, m), p.empty_error))
    new = Loop(body, new_ports, outs, trip_count=_get(loop.trip_count, m),
               initial_condition=_get(loop.initial_condition, m),
               condition_result=_get(loop.condition_result, m),
               condition_param=_get(loop.condition_param, m),
               precondition=_get(loop.precondition, m),
               iteration_param=_get(loop.iteration_param, m), name=loop.name,
               origin=loop.origin, origin_attrs=loop.origin_attrs,
               negative_trip_count=loop.negative_trip_count,
               strict_slices=loop.strict_slices, equal_slices=loop.equal_slices)
    for k, a in loop.attrs.items():  # attributes besides the body (rare), shared
        if k != "body":
            new.attrs[k] = a
    new.meta = _public(loop.meta)
    return new


def _fresh(v: Value, m: dict[int, Value]) -> Value:
    c = clone_value(v)
    m[v.uid] = c
    return c


def _get(v: Value | None, m: dict[int, Value]) -> Value | None:
    if v is None:
        return None
    return m.get(v.uid, v)

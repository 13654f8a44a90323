"""Walking and editing graphs: topological order, uses, input replacement."""

from __future__ import annotations

from ..errors import ModelError
from .graph import Graph, Node, Value
from .loop import Loop


def replace_input(node: Node, old: Value, new: Value) -> None:
    """Make `node` read `new` wherever it read `old` (loop ports included)."""
    if isinstance(node, Loop):
        node.replace_input(old, new)
    else:
        node.inputs = [new if v is old else v for v in node.inputs]


def replace_all_uses(graph: Graph, old: Value, new: Value) -> None:
    """Replace every use of `old` in `graph` and all its subgraphs (captures included)."""
    for _, n in graph.walk():
        if any(v is old for v in n.inputs):
            replace_input(n, old, new)
    for g in [graph, *(sg for _, n in graph.walk() for sg in n.subgraphs())]:
        g.outputs = [new if v is old else v for v in g.outputs]
        for _, n in g.walk():
            if isinstance(n, Loop):
                for p in n.input_ports:
                    if getattr(p, "result", None) is old:
                        p.result = new
                for p in n.output_ports:
                    if p.result is old:
                        p.result = new
                for attr in ("condition_result", "precondition"):
                    if getattr(n, attr) is old:
                        setattr(n, attr, new)


def toposort(graph: Graph) -> None:
    """Reorder `graph.nodes` topologically (stable). Raises `ModelError` on a cycle.

    Inputs defined outside the graph (captures) and inside subgraphs count as available.
    """
    producer = {}
    for n in graph.nodes:
        for v in n.outputs:
            producer[v.uid] = n

    def deps(n: Node) -> list[Node]:
        uses = n.reads()
        return [producer[v.uid] for v in uses if v.uid in producer and producer[v.uid] is not n]

    order: list[Node] = []
    state: dict[int, int] = {}  # id(node) -> 1 visiting, 2 done
    for root in graph.nodes:
        if state.get(id(root)) == 2:
            continue
        stack = [(root, iter(deps(root)))]
        state[id(root)] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                state[id(node)] = 2
                order.append(node)
            elif state.get(id(nxt)) == 1:
                raise ModelError(
                    f"graph '{graph.name}': cycle through {nxt.op_type} node '{nxt.name}'"
                )
            elif state.get(id(nxt)) is None:
                state[id(nxt)] = 1
                stack.append((nxt, iter(deps(nxt))))
    graph.nodes = order


def all_graphs(graph: Graph) -> list[Graph]:
    """`graph` and every subgraph below it, outermost first."""
    out = [graph]
    for _, n in graph.walk():
        out.extend(n.subgraphs())
    return out


def loops(graph: Graph) -> list[tuple[Loop, int]]:
    """Every canonical loop with its nesting depth (0 = in `graph` itself), pre-order."""
    out: list[tuple[Loop, int]] = []

    def visit(g: Graph, depth: int) -> None:
        for n in g.nodes:
            if isinstance(n, Loop):
                out.append((n, depth))
            for sg in n.subgraphs():
                visit(sg, depth + (1 if isinstance(n, Loop) else 0))

    visit(graph, 0)
    return out


def needed_nodes(graph: Graph, outputs: list[Value | None]) -> list[Node]:
    """Nodes of `graph` that `outputs` depend on (captures of subgraphs included), in graph
    order (dead code dropped)."""
    producer = {v.uid: n for n in graph.nodes for v in n.outputs}
    live: set[int] = set()
    stack = [producer[v.uid] for v in outputs if v is not None and v.uid in producer]
    while stack:
        n = stack.pop()
        if id(n) in live:
            continue
        live.add(id(n))
        stack += [producer[v.uid] for v in n.reads() if v.uid in producer]
    return [n for n in graph.nodes if id(n) in live]

"""An ``If`` whose condition is known before the run becomes the branch it would take."""

from __future__ import annotations

from ..ir.clone import clone_graph
from ..ir.graph import Graph, Node
from ..ir.static_values import static_value
from .base import Pass


class InlineIf(Pass):
    """Replace each ``If`` with a static condition by the nodes of the branch it takes.

    Applies to: every standard-domain ``If`` node at any depth (main graph, loop bodies,
    branches) whose ``cond`` is a one-element tensor known before the run: a constant, or an
    expression of constants and static shapes (`static_values`: ``Equal(Gather(Shape(x),
    0), 1)``...; shapes as the values' types state them: ``infer-shapes`` first makes more of
    them static). The chosen branch (``then_branch`` when true) is copied into the node's
    graph in its place, its initializers becoming initializers of that graph; each output of
    the ``If`` is then produced by an ``Identity`` of the branch's output, so every reader
    (nodes, loop ports, graph outputs) keeps reading the very same value. An inlined branch
    that itself holds static ``If`` nodes is inlined too.

    Returns: the number of ``If`` nodes replaced.

    Guarantees: every output keeps its value for every input (the branch not taken was never
    run). Node and value names of the branch are kept; writers make them unique.
    """

    name = "inline_if"
    in_place = True

    def __call__(self, graph: Graph) -> int:
        done = 0
        while True:
            nodes: list[Node] = []
            for n in graph.nodes:
                branch = _taken(n) if n.op_type == "If" and n.domain == "" else None
                if branch is None:
                    nodes.append(n)
                else:
                    nodes.extend(_inline(graph, n, branch))
                    done += 1
            changed = len(nodes) != len(graph.nodes) or any(
                a is not b for a, b in zip(nodes, graph.nodes, strict=True))
            graph.nodes = nodes
            if not changed:
                break
        for n in list(graph.nodes):
            for g in n.subgraphs():
                done += self(g)
        return done


inline_if = InlineIf()


def _taken(node: Node) -> Graph | None:
    cond = static_value(node.inputs[0]) if node.inputs else None
    if cond is None or cond.size != 1:
        return None
    key = "then_branch" if bool(cond.reshape(())) else "else_branch"
    branch = node.attrs.get(key)
    if not isinstance(branch, Graph) or len(branch.outputs) != len(node.outputs):
        return None
    return branch


def _inline(graph: Graph, node: Node, branch: Graph) -> list[Node]:
    copy = clone_graph(branch)
    graph.initializers.extend(copy.initializers)
    out = list(copy.nodes)
    for result, target in zip(copy.outputs, list(node.outputs), strict=True):
        ident = Node("Identity", [result], [], version=1,
                     name=f"{node.name}_{target.name}" if node.name else "")
        ident.adopt(target)
        out.append(ident)
    node.outputs = []
    return out


"""Values, nodes and graphs: the core of the IR.

Data flow is by object reference. A node's input is the `Value` object some node (or graph
input, or initializer) produced; names are labels for people and for writers, never used for
look-up. A node in a subgraph (a loop body, an If branch) may take as input a `Value` that
belongs to an enclosing graph: that is an outer-scope capture, at any depth.

Op vocabulary: the standard ONNX operators (domain ``""``, with the opset version they were
read under) plus the canonical `Loop` of :mod:`itergraph.ir.loop` (domain ``"itergraph"``).
Frontends of other formats translate their operators into this vocabulary.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from .types import Type

_ids = itertools.count()


class Value:
    """One SSA value: a graph input, an initializer (``const`` set), or a node output."""

    __slots__ = ("name", "type", "producer", "index", "const", "uid", "meta")

    def __init__(self, name: str = "", type: Type | None = None, const: Any = None):
        self.name = name
        self.type = type
        self.producer: Node | None = None
        self.index = 0  # output index in `producer`
        self.const = const  # numpy array for initializers / constants
        self.uid = next(_ids)
        self.meta: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"Value({self.name!r}, {self.type})"


#: The name files may give the standard ONNX domain, which the IR spells ``""``; the one
#: place it is written outside the frontends (a label for it, and `canonical_domain`).
ONNX_DOMAIN = "ai.onnx"
#: ONNX Runtime's contrib domain (``Attention``, ``FusedConv``, ``GreedySearch`` ...)
MICROSOFT_DOMAIN = "com.microsoft"


def canonical_domain(domain: str) -> str:
    """`domain` as the IR spells it: the standard domain is ``""``, however a file names it."""
    return "" if domain == ONNX_DOMAIN else domain


class Node:
    """One operator application.

    `inputs` may hold ``None`` for an omitted optional input (ONNX empty name). `attrs` maps
    attribute names to Python values: int, float, str, bytes, lists of those, numpy arrays
    (tensor attributes), `Type`, `Graph` or list of `Graph` (subgraphs).
    """

    def __init__(
        self,
        op_type: str,
        inputs: Iterable[Value | None] = (),
        outputs: Iterable[Value] | int = 1,
        attrs: dict[str, Any] | None = None,
        *,
        domain: str = "",
        version: int | None = None,
        name: str = "",
    ):
        self.op_type = op_type
        # one spelling of the standard domain: files may also write it ONNX_DOMAIN
        self.domain = canonical_domain(domain)
        self.version = version
        self.name = name
        self.attrs: dict[str, Any] = dict(attrs or {})
        self.meta: dict[str, Any] = {}
        self._inputs: list[Value | None] = list(inputs)
        if isinstance(outputs, int):
            outputs = [Value() for _ in range(outputs)]
        self.outputs: list[Value] = []
        for v in outputs:
            self.adopt(v)

    def adopt(self, v: Value) -> None:
        """Make `v` this node's next output (its producer and index set)."""
        v.producer = self
        v.index = len(self.outputs)
        self.outputs.append(v)

    @property
    def inputs(self) -> list[Value | None]:
        return self._inputs

    @inputs.setter
    def inputs(self, values: Iterable[Value | None]) -> None:
        self._inputs = list(values)

    def reads(self) -> list[Value]:
        """Every value this node reads, deduplicated in a fixed order: its inputs, then what its
        subgraphs capture at any depth (`captured`).

        This is the one answer to "what does this node depend on?" for every consumer: the
        verifier, the backends' planners, the passes and the writers.
        """
        return _unique([*(v for v in self.inputs if v is not None), *self.captured()])

    def captured(self) -> list[Value]:
        """Outer values this node's subgraphs read, at any depth, including `body_results`
        that are defined outside the subgraph."""
        results = self.body_results()
        return _unique([v for g in self.subgraphs() for v in g.captures(results)])

    def body_results(self) -> list[Value]:
        """Values this node takes from its subgraphs besides their outputs (a loop's port
        results, condition and precondition). Such a value may be a body value or, read like a
        capture, a value of an enclosing scope."""
        return []

    def subgraphs(self) -> list[Graph]:
        """Graphs held in attributes (If branches, loop bodies), in attribute order."""
        out: list[Graph] = []
        for v in self.attrs.values():
            if isinstance(v, Graph):
                out.append(v)
            elif isinstance(v, list) and v and all(isinstance(g, Graph) for g in v):
                out.extend(v)
        return out

    def __repr__(self) -> str:
        return f"<{self.op_type} {self.name!r}>"


def _unique(values: Iterable[Value]) -> list[Value]:
    seen: set[int] = set()
    out: list[Value] = []
    for v in values:
        if v.uid not in seen:
            seen.add(v.uid)
            out.append(v)
    return out


class Graph:
    """A list of nodes in topological order, with inputs, outputs and initializers.

    A top-level graph carries `opset_imports` (domain -> version); subgraphs inherit them.
    """

    def __init__(
        self,
        name: str = "",
        inputs: Iterable[Value] = (),
        outputs: Iterable[Value] = (),
        nodes: Iterable[Node] = (),
        initializers: Iterable[Value] = (),
        opset_imports: dict[str, int] | None = None,
    ):
        self.name = name
        self.inputs: list[Value] = list(inputs)
        self.outputs: list[Value] = list(outputs)
        self.nodes: list[Node] = list(nodes)
        self.initializers: list[Value] = list(initializers)
        self.opset_imports: dict[str, int] = dict(opset_imports or {})
        self.meta: dict[str, Any] = {}

    def add(self, node: Node) -> Node:
        self.nodes.append(node)
        return node

    def defined(self) -> set[int]:
        """uids of the values defined in this graph itself (not in subgraphs)."""
        ids = {v.uid for v in self.inputs}
        ids.update(v.uid for v in self.initializers)
        for n in self.nodes:
            ids.update(v.uid for v in n.outputs)
        return ids

    def captures(self, results: Iterable[Value | None] = ()) -> list[Value]:
        """Values used in this graph or its subgraphs but defined in an enclosing scope.

        `results` are further values the owning node takes from this graph (see
        `Node.body_results`); those defined outside it count as captures too. Ordered by first
        use, without duplicates.
        """
        defined = self.defined()
        used = [v for n in self.nodes for v in n.reads()]
        used += [v for v in [*self.outputs, *results] if v is not None]
        return _unique(v for v in used if v.uid not in defined)

    def walk(self) -> Iterator[tuple[Graph, Node]]:
        """Every (graph, node) pair, descending into subgraphs at any depth (pre-order)."""
        for n in self.nodes:
            yield self, n
            for g in n.subgraphs():
                yield from g.walk()

    def opset(self, domain: str = "") -> int | None:
        return self.opset_imports.get(domain)

    def __repr__(self) -> str:
        return f"<Graph {self.name!r}: {len(self.nodes)} nodes>"


def reads(node: Node) -> list[Value]:
    """Every value `node` reads: inputs, captures at any depth, a loop's outer port results."""
    return node.reads()
